#include "specialise/kernel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "support/error.hpp"

namespace soa::specialise {

namespace {

// C (C23) and C++ (C++20) keywords and C++'s alternative tokens: a name in generated code
// may be none of them.
constexpr std::string_view kKeywords[] = {"alignas",
                                          "alignof",
                                          "and",
                                          "and_eq",
                                          "asm",
                                          "auto",
                                          "bitand",
                                          "bitor",
                                          "bool",
                                          "break",
                                          "case",
                                          "catch",
                                          "char",
                                          "char8_t",
                                          "char16_t",
                                          "char32_t",
                                          "class",
                                          "compl",
                                          "concept",
                                          "const",
                                          "consteval",
                                          "constexpr",
                                          "constinit",
                                          "const_cast",
                                          "continue",
                                          "co_await",
                                          "co_return",
                                          "co_yield",
                                          "decltype",
                                          "default",
                                          "delete",
                                          "do",
                                          "double",
                                          "dynamic_cast",
                                          "else",
                                          "enum",
                                          "explicit",
                                          "export",
                                          "extern",
                                          "false",
                                          "float",
                                          "for",
                                          "friend",
                                          "goto",
                                          "if",
                                          "inline",
                                          "int",
                                          "long",
                                          "mutable",
                                          "namespace",
                                          "new",
                                          "noexcept",
                                          "not",
                                          "not_eq",
                                          "nullptr",
                                          "operator",
                                          "or",
                                          "or_eq",
                                          "private",
                                          "protected",
                                          "public",
                                          "register",
                                          "reinterpret_cast",
                                          "requires",
                                          "restrict",
                                          "return",
                                          "short",
                                          "signed",
                                          "sizeof",
                                          "static",
                                          "static_assert",
                                          "static_cast",
                                          "struct",
                                          "switch",
                                          "template",
                                          "this",
                                          "thread_local",
                                          "throw",
                                          "true",
                                          "try",
                                          "typedef",
                                          "typeid",
                                          "typename",
                                          "typeof",
                                          "typeof_unqual",
                                          "union",
                                          "unsigned",
                                          "using",
                                          "virtual",
                                          "void",
                                          "volatile",
                                          "wchar_t",
                                          "while",
                                          "xor",
                                          "xor_eq"};

bool is_c_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

std::string name_problem(std::string_view name, bool prefix) {
  if (!is_c_identifier(name)) return "is not a C identifier (letters, digits and '_', not starting with a digit)";
  if (std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords))
    return "is a C or C++ keyword";
  if (name == "main") return "is reserved: 'main' is the program's entry point";
  if (name.find("__") != std::string_view::npos) return "is reserved: C and C++ reserve names with a double underscore";
  if (name.front() == '_')
    return "is reserved: the extern \"C\" symbols <prefix>_<kernel> would begin with '_' or hold '__'";
  if (prefix && name.back() == '_') return "would make the extern \"C\" symbols <prefix>_<kernel> hold '__'";
  if (prefix && (name == "std" || name == "Eigen" || name == "soa_gen"))
    return "would hide the namespace of that name from the generated code";
  return {};
}

void check_name(std::string_view name, std::string_view what, bool prefix) {
  if (std::string problem = name_problem(name, prefix); !problem.empty())
    throw UserError(fmt::format("{} '{}' {}", what, comment_safe(name), problem));
}

std::string identifier(std::string_view text) {
  std::string id;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (ok)
      id += c;
    else if (!id.empty() && id.back() != '_')
      id += '_';
  }
  while (!id.empty() && id.back() == '_') id.pop_back();
  if (id.empty() || !name_problem(id, true).empty()) id = "robot_" + id;
  while (!id.empty() && id.back() == '_') id.pop_back();  // "" -> "robot"
  return id;
}

std::string comment_safe(std::string_view text) {
  std::string out;
  const auto escape = [&](std::size_t from, std::size_t n) {
    for (std::size_t i = from; i < from + n; ++i) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      const bool trigraph = c == '?' && i + 1 < text.size() && text[i + 1] == '?';
      const bool closes = c == '*' && i + 1 < text.size() && text[i + 1] == '/';
      if (c < 0x20 || c == 0x7f || c == '\\') {
        escape(i, 1);
      } else if (trigraph || closes) {  // keep the first character, escape the second
        out += static_cast<char>(c);
        escape(i + 1, 1);
        ++i;
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: kept when well formed (shortest form, no surrogates) and visible.
    const int length = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? (c <= 0xef ? 3 : 0) : c >= 0xc2 ? 2 : 0;
    char32_t cp = length == 2 ? c & 0x1f : length == 3 ? c & 0x0f : c & 0x07;
    bool ok = length > 0 && i + length <= text.size();
    for (int j = 1; ok && j < length; ++j) {
      const auto d = static_cast<unsigned char>(text[i + j]);
      ok = (d & 0xc0) == 0x80;
      cp = (cp << 6) | (d & 0x3f);
    }
    ok = ok && !(length == 3 && cp < 0x800) && !(length == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
         !(cp >= 0xd800 && cp <= 0xdfff);
    // C1 controls (NEL ends a line for some tools), invisible and bidi formatting characters,
    // line and paragraph separators, the byte-order mark.
    const bool invisible = cp < 0xa0 || cp == 0xad || (cp >= 0x200b && cp <= 0x200f) ||
                           (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff;
    if (ok && !invisible) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      escape(i, ok ? length : 1);
      i += ok ? length : 1;
    }
  }
  return out;
}

Kernel make_kernel(std::string name, std::string expression, std::string derivation, std::string meaning,
                   const exec::SweepProgram& program, const exec::Layout& layout, ScalarProgram code) {
  Kernel k;
  k.name = std::move(name);
  k.expression = std::move(expression);
  k.derivation = std::move(derivation);
  k.meaning = std::move(meaning);
  // The layout's inputs: the program's, or a prefix of them (a Coriolis form drops qdd).
  SOA_ASSERT(layout.inputs.size() <= program.inputs.size(), "make_kernel: more inputs than the program has");
  for (std::size_t i = 0; i < layout.inputs.size(); ++i)
    k.inputs.push_back(
        {program.vars[program.inputs[i]].name, layout.inputs[i].size, program.vars[program.inputs[i]].space});
  k.output = program.output.name;
  k.row_space = program.output.rows;
  k.col_space = program.output.cols;
  k.rows = layout.rows;
  k.cols = layout.cols;
  k.code = std::move(code);
  SOA_ASSERT(k.code.input_count == layout.input_size && static_cast<int>(k.code.outputs.size()) == layout.output_size(),
             "make_kernel: code and layout disagree");
  return k;
}

}  // namespace soa::specialise
