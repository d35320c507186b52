// Deterministic printers for the operator IR.
//
// Contract: Ascii output is the language's own syntax and parses back to an equal Expr
// (print(parse(print(e))) == print(e)); Unicode uses the papers' symbols (φ ψ Ω Υ ℳ) for
// people; Latex compiles inside $...$. Precedence, loosest first: sum, product, scale,
// postfix (* and ^-1). Negative scale terms print as subtraction.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "algebra/expr.hpp"

namespace soa::ir {

enum class Syntax { Ascii, Unicode, Latex };

struct PrintOptions {
  Syntax syntax = Syntax::Ascii;
  // Optionally mark one subterm (derivation output): the node `mark`, or, when `mark` is a
  // Product and mark_end > mark_begin, only its factors [mark_begin, mark_end). Marked text
  // is wrapped in [ ] for Ascii/Unicode and, for Latex, in `latex_mark` applied to it:
  // \underline{...} by default; the HTML page of a derivation asks for KaTeX's
  // \htmlClass{soa-mark} so that its style sheet draws the mark.
  const Node* mark = nullptr;
  std::size_t mark_begin = 0;
  std::size_t mark_end = 0;
  std::string_view latex_mark = "\\underline";
};

std::string print(const Expr& e, const PrintOptions& options = {});
inline std::string print(const Expr& e, Syntax s) { return print(e, PrintOptions{s}); }

std::string format_number(double c);

}  // namespace soa::ir
