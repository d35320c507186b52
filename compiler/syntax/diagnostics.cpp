#include "syntax/diagnostics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "support/error.hpp"

namespace soa::syntax {
namespace {

bool continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The code point starting at text[i] (i at a lead byte), or 0xFFFD for a malformed one;
// only used to recognise combining marks, so malformed input just counts as a character.
char32_t code_point(std::string_view text, std::size_t i, std::size_t* length) {
  const auto b = static_cast<unsigned char>(text[i]);
  std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
  if (i + n > text.size()) n = 1;
  char32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
  for (std::size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(text[i + k]);
    if (!continuation(c)) {
      n = 1;
      cp = 0xFFFD;
      break;
    }
    cp = (cp << 6) | (c & 0x3F);
  }
  *length = n;
  return n == 1 && b >= 0x80 ? 0xFFFD : cp;
}

// Combining marks sit on the previous character (φ̃ = φ + U+0303), so they take no column
// in a terminal; counting them would push the marker one place right per mark.
bool zero_width(char32_t cp) {
  return (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x1AB0 && cp <= 0x1AFF) || (cp >= 0x1DC0 && cp <= 0x1DFF) ||
         (cp >= 0x20D0 && cp <= 0x20FF) || (cp >= 0xFE20 && cp <= 0xFE2F);
}

struct Line {
  std::size_t begin;   // byte offset of the line's first character
  std::size_t end;     // byte offset of its '\n' (or of the end of the text)
  std::size_t number;  // 1-based
};

Line line_of(std::string_view text, std::size_t at) {
  at = std::min(at, text.size());
  const std::size_t nl = at == 0 ? std::string_view::npos : text.rfind('\n', at - 1);
  const std::size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
  std::size_t end = text.find('\n', at);
  if (end == std::string_view::npos) end = text.size();
  const auto number = static_cast<std::size_t>(std::count(text.begin(), text.begin() + begin, '\n')) + 1;
  return {begin, end, number};
}

}  // namespace

std::string location(const Source& src, ir::Span span) {
  const std::string_view text = src.text;
  const std::size_t at = std::min<std::size_t>(span.begin, text.size());
  const Line line = line_of(text, at);
  std::size_t column = 1;
  for (std::size_t i = line.begin; i < at; ++i)
    if (!continuation(static_cast<unsigned char>(text[i]))) ++column;
  return fmt::format("{}:{}:{}", src.name, line.number, column);
}

std::string caret(const Source& src, ir::Span span) {
  const std::string_view text = src.text;
  const std::size_t at = std::min<std::size_t>(span.begin, text.size());
  const Line line = line_of(text, at);
  std::string_view shown = text.substr(line.begin, line.end - line.begin);
  if (!shown.empty() && shown.back() == '\r') shown.remove_suffix(1);
  const std::size_t stop = std::clamp<std::size_t>(span.end, at, line.begin + shown.size());

  std::string marker;
  for (std::size_t i = line.begin; i < stop;) {
    std::size_t n = 1;
    const char32_t cp = code_point(text, i, &n);
    if (i < at)
      marker += cp == '\t' ? '\t' : zero_width(cp) ? '\0' : ' ';
    else
      marker += i == at ? '^' : zero_width(cp) ? '\0' : '~';
    i += n;
  }
  std::erase(marker, '\0');
  if (stop == at) marker += '^';  // an empty span, or one at the end of the line
  return fmt::format("{}\n{}", shown, marker);
}

void fail(const Source& src, ir::Span span, const std::string& message) {
  throw UserError(fmt::format("{}: error: {}", location(src, span), message), caret(src, span));
}

std::string location(const Located& where) {
  SOA_ASSERT(where.source != nullptr, "location without a source");
  return location(*where.source, where.span);
}

void fail(const Located& where, const std::string& message) {
  SOA_ASSERT(where.source != nullptr, "location without a source");
  fail(*where.source, where.span, message);
}

}  // namespace soa::syntax
