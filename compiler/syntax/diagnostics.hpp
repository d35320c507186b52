// Turning a span of source text into a message a person can act on.
//
// Contract
// - location(): "file:line:col", 1-based; the column counts UTF-8 code points, so a
//   message about "φ $" points at column 3, not at byte 4.
// - caret(): two lines joined by '\n' (no trailing newline): the source line holding the
//   span's start, then a marker line with '^' under the first character of the span and '~'
//   under the rest of it (cut at the end of that line). Tabs are copied into the marker line
//   and combining marks take no room, so the marker lines up in a terminal.
// - fail(): throws soa::UserError("file:line:col: error: message", caret(...)).
// Spans past the end of the text are clamped to the end (e.g. "expected ')'" at EOF).
#pragma once

#include <string>

#include "algebra/expr.hpp"
#include "syntax/syntax.hpp"

namespace soa::syntax {

std::string location(const Source& src, ir::Span span);
std::string caret(const Source& src, ir::Span span);
[[noreturn]] void fail(const Source& src, ir::Span span, const std::string& message);

// The same, for a place kept from an earlier parse.
std::string location(const Located& where);
[[noreturn]] void fail(const Located& where, const std::string& message);

}  // namespace soa::syntax
