// Internal to compiler/syntax: running the PEGTL grammar and building IR from its parse tree.
// parse.cpp implements this; module.cpp uses it for the declarations of a .soa file.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "algebra/expr.hpp"
#include "syntax/grammar.hpp"
#include "syntax/syntax.hpp"

namespace soa::syntax::detail {

using Node = tao::pegtl::parse_tree::node;
using Input = tao::pegtl::memory_input<tao::pegtl::tracking_mode::lazy>;

// Spans are 32-bit byte offsets; refuse texts they cannot address. Also refuses
// parentheses nested deeper than kMaxNesting, before the recursive parser meets them.
void check_size(const Source& src);

// How deep text and IR may nest (syntax.hpp): the parser and every pass after it recurse on
// nesting, while flat sums and products of any length are fine. kMaxNesting bounds
// parentheses and postfix operators in a row; kMaxDepth the operator tree, which 'let'
// definitions inlined into each other can deepen beyond what the text shows.
inline constexpr int kMaxNesting = 200;
inline constexpr int kMaxDepth = 1000;
// Throws UserError at the first node nested deeper than kMaxDepth. check_shape and
// check_sides call it first.
void check_depth(const Source& src, const ir::Expr& e);

// An input over the source's own buffer, so that node pointers convert to byte offsets.
inline Input input_over(const Source& src) {
  return Input(src.text.data(), src.text.data() + src.text.size(), src.name);
}

// Turn a failed must<> into a UserError at the right place with a human message.
[[noreturn]] void report(const Source& src, const grammar::SyntaxError& error);

// Parse one `Rule` from the current position of `in` (advancing it) into a parse tree.
template <typename Rule>
std::unique_ptr<Node> parse_tree(const Source& src, Input& in) {
  try {
    return tao::pegtl::parse_tree::parse<Rule, grammar::selector, tao::pegtl::nothing, grammar::control>(in);
  } catch (const grammar::SyntaxError& e) {
    report(src, e);
  }
}

// Builds IR from `expression` and `equation` nodes. Names resolve against the vocabulary
// (each name also with an arm digit: psi1, calM2), `I`, and `definitions` (the `let`s in
// scope, possibly none; they take no arm digit). Holds references only; make
// a new one after adding a definition.
class Builder {
public:
  Builder(const Source& src, const std::vector<Definition>* definitions);

  ir::Expr expression(const Node& n) const;
  std::vector<ir::Expr> equation(const Node& n) const;
  ir::Span span(const Node& n) const;

private:
  struct Candidate {
    std::string_view text;
    int definition;  // index into *definitions_, or -1 for a vocabulary name or I
  };

  const Source& src_;
  const std::vector<Definition>* definitions_;
  std::vector<Candidate> candidates_;  // longest first

  ir::Expr product(const Node& n) const;
  void factor(const Node& f, double& coef, std::vector<ir::Expr>& out, const Node*& first_number) const;
  std::vector<ir::Expr> split(const Node& word) const;
  [[noreturn]] void unknown_word(const Node& word) const;
  // The arm digit (1-9) at text[at] that a vocabulary name `c` ending there takes, or 0.
  int arm_digit(const Candidate& c, std::string_view text, std::size_t at) const;
  ir::Expr resolve(const Candidate& c, int arm, ir::Span span) const;
};

// Shape checks that report through diagnostics (ShapeError -> UserError with location).
void check_shape(const Source& src, const ir::Expr& e);
void check_sides(const Source& src, const std::vector<ir::Expr>& sides);

}  // namespace soa::syntax::detail
