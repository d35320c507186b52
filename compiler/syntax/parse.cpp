// Expressions and equations: parse tree -> IR, name splitting, syntax error messages.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "algebra/vocabulary.hpp"
#include "support/error.hpp"
#include "syntax/diagnostics.hpp"
#include "syntax/parser.hpp"

namespace soa::syntax {
namespace detail {
namespace {

namespace p = tao::pegtl;
namespace g = grammar;

// ---- syntax error messages ----------------------------------------------------------

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// From `at`, past whitespace and comments to the next token. A failed must<> may stand
// before or after the trivia in front of the offending token, depending on the rule.
std::size_t skip_trivia(std::string_view text, std::size_t at) {
  while (at < text.size()) {
    if (is_space(text[at])) {
      ++at;
    } else if (text[at] == '#') {
      const std::size_t nl = text.find('\n', at);
      at = nl == std::string_view::npos ? text.size() : nl + 1;
    } else {
      break;
    }
  }
  return at;
}

// The end of the last token before `at`: where a missing ';' belongs. Scans from the start
// because only a forward pass knows which '#' starts a comment and which sits in a string.
std::size_t previous_token_end(std::string_view text, std::size_t at) {
  std::size_t last = 0;
  bool comment = false, string = false;
  for (std::size_t i = 0; i < at && i < text.size(); ++i) {
    const char c = text[i];
    if (comment) {
      comment = c != '\n';
    } else if (string) {
      string = c != '"' && c != '\n';
      if (c != '\n') last = i + 1;
    } else if (c == '#') {
      comment = true;
    } else if (!is_space(c)) {
      string = c == '"';
      last = i + 1;
    }
  }
  return last;
}

// Length in bytes of whatever `Rule` matches at `at` (0 if nothing).
template <typename Rule>
std::size_t match_length(std::string_view text, std::size_t at) {
  p::memory_input<p::tracking_mode::lazy> in(text.data() + at, text.data() + text.size(), "");
  return p::parse<Rule>(in) ? static_cast<std::size_t>(in.current() - (text.data() + at)) : 0;
}

// The token at `at` as a reader would name it: a word, a number or one character.
std::size_t token_length(std::string_view text, std::size_t at) {
  if (std::size_t n = match_length<g::word_text>(text, at)) return n;
  if (std::size_t n = match_length<g::number>(text, at)) return n;
  if (std::size_t n = match_length<p::utf8::any>(text, at)) return n;
  return at < text.size() ? 1 : 0;
}

// The token as the message names it: in quotes, or as U+XXXX for a control character.
std::string quoted(std::string_view text, std::size_t at, std::size_t length) {
  const auto first = static_cast<unsigned char>(text[at]);
  if (length == 1 && (first < 0x20 || first == 0x7F)) return fmt::format("U+{:04X}", first);
  return fmt::format("'{}'", text.substr(at, length));
}

}  // namespace

void report(const Source& src, const g::SyntaxError& error) {
  const std::string_view text = src.text;
  const g::Expectation& want = error.expected;
  if (want.place == g::Place::Exact)
    fail(src, {static_cast<std::uint32_t>(error.offset), static_cast<std::uint32_t>(error.offset)}, want.message);

  const std::size_t at = skip_trivia(text, error.offset);
  const auto here = [&](std::size_t length) {
    return ir::Span{static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(at + length)};
  };
  if (at >= text.size()) {
    const std::size_t end = want.place == g::Place::AfterPrevious ? previous_token_end(text, at) : at;
    const auto where = static_cast<std::uint32_t>(end);
    fail(src, {where, where},
         fmt::format("{}{} the end of the input", want.message,
                     want.place == g::Place::AfterPrevious ? " before" : ", found"));
  }

  // A character the language has no use for is the real problem, whatever was expected.
  const std::size_t cp = match_length<p::utf8::any>(text, at);
  if (cp == 0) fail(src, here(1), fmt::format("invalid UTF-8 byte 0x{:02X}", static_cast<unsigned char>(text[at])));
  if (match_length<g::token_start>(text, at) == 0)
    fail(src, here(cp), fmt::format("unexpected character {}", quoted(text, at, cp)));

  // "calM^-2": the exponent, sign and all, is what is wrong.
  if (want.exponent) {
    const std::size_t sign = text[at] == '-' || text[at] == '+' ? 1 : 0;
    const std::size_t rest = at + sign < text.size() ? token_length(text, at + sign) : 0;
    const std::size_t length = sign + (rest > 0 && match_length<g::token_start>(text, at + sign) ? rest : 0);
    fail(src, here(length), fmt::format("{}, found {}", want.message, quoted(text, at, length)));
  }

  // "A * B" and "A ^-1": a postfix operator separated from its operand by a space.
  if (want.after_operand && at > 0 && is_space(text[at - 1])) {
    const std::size_t postfix = std::max(match_length<g::inverse_op>(text, at), match_length<g::adjoint_op>(text, at));
    if (postfix > 0)
      fail(src, here(postfix),
           fmt::format("'{}' must follow its operand with no space in between (a product is "
                       "written by juxtaposition: 'A B'; the adjoint of A is 'A*')",
                       text.substr(at, postfix)));
  }
  if (want.unmatched_paren && text[at] == ')') fail(src, here(1), "unmatched ')'");

  const std::size_t length = token_length(text, at);
  const std::string found = quoted(text, at, length);
  if (want.place == g::Place::AfterPrevious) {
    const auto end = static_cast<std::uint32_t>(previous_token_end(text, at));
    fail(src, {end, end}, fmt::format("{} before {}", want.message, found));
  }
  fail(src, here(length), fmt::format("{}, found {}", want.message, found));
}

void check_size(const Source& src) {
  if (src.text.size() >= std::numeric_limits<std::uint32_t>::max())
    throw UserError(fmt::format("{}: cannot read: larger than 4 GiB", src.name));
  // Parentheses, before the (recursive) parser sees them; comments and citations skipped.
  const std::string_view text = src.text;
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '#' || c == '"') {
      // A comment ends at the newline, a citation at its quote or (unterminated) the newline.
      const std::size_t end = c == '#' ? text.find('\n', i + 1) : text.find_first_of("\"\n", i + 1);
      i = end == std::string_view::npos ? text.size() : end;
    } else if (c == '(' && ++depth > kMaxNesting) {
      const auto at = static_cast<std::uint32_t>(i);
      fail(src, {at, at + 1}, fmt::format("parentheses nested more than {} deep", kMaxNesting));
    } else if (c == ')' && depth > 0) {
      --depth;
    }
  }
}

void check_depth(const Source& src, const ir::Expr& e) {
  // Bounded recursion: never deeper than the limit itself.
  const auto deepest = [](const auto& self, const ir::Expr& x, int depth) -> const ir::Expr* {
    if (depth > kMaxDepth) return &x;
    for (const auto& k : x.kids())
      if (const ir::Expr* found = self(self, k, depth + 1)) return found;
    return nullptr;
  };
  if (const ir::Expr* found = deepest(deepest, e, 1))
    fail(src, found->span().known() ? found->span() : e.span(),
         fmt::format("expression nested more than {} operators deep", kMaxDepth));
}

// ---- shapes -------------------------------------------------------------------------

void check_shape(const Source& src, const ir::Expr& e) {
  check_depth(src, e);
  try {
    ir::infer_shape(e);
  } catch (const ir::ShapeError& err) {
    fail(src, err.where().known() ? err.where() : e.span(), err.what());
  }
}

void check_sides(const Source& src, const std::vector<ir::Expr>& sides) {
  SOA_ASSERT(sides.size() >= 2, "an equation with fewer than two sides");
  for (const auto& side : sides) check_depth(src, side);
  std::size_t i = 1;
  try {
    // Side 0 against each other side; the shapes those checks settle on must agree too,
    // which only matters when side 0 alone leaves its size open (a lone 0, say).
    const ir::Shape shape = ir::check_equation(sides[0], sides[1]);
    for (i = 2; i < sides.size(); ++i) {
      const ir::Shape other = ir::check_equation(sides[0], sides[i]);
      if (other != shape)
        throw ir::ShapeError(fmt::format("the sides differ in shape: {} is {} but {} is {}", ir::print(sides[1]),
                                         ir::to_string(shape), ir::print(sides[i]), ir::to_string(other)),
                             sides[i].span());
    }
  } catch (const ir::ShapeError& err) {
    const ir::Span fallback = sides[std::min(i, sides.size() - 1)].span();
    fail(src, err.where().known() ? err.where() : fallback, err.what());
  }
}

// ---- IR from the parse tree -------------------------------------------------------------

namespace {

// A definition's body placed at its point of use: every node gets the span of the use, so
// that shape errors point at text the reader can see (and spans never mix two sources).
ir::Expr respan(const ir::Expr& e, ir::Span s) {
  std::vector<ir::Expr> kids;
  for (const auto& k : e.kids()) kids.push_back(respan(k, s));
  switch (e.op()) {
    case ir::Op::Symbol: return ir::symbol(e.name(), s);
    case ir::Op::Identity: return ir::identity(s);
    case ir::Op::Zero: return ir::zero(s);
    case ir::Op::Sum: return ir::sum(std::move(kids), s);
    case ir::Op::Product: return ir::product(std::move(kids), s);
    case ir::Op::Scale: return ir::scale(e.coef(), kids.front(), s);
    case ir::Op::Adjoint: return ir::adjoint(kids.front(), s);
    case ir::Op::Inverse: return ir::inverse(kids.front(), s);
    case ir::Op::Derivative: return ir::derivative(kids.front(), s);
  }
  SOA_ASSERT(false, "respan: unknown node kind");
  return e;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

template <typename Rule>
bool is(const Node& n) {
  return n.is_type<Rule>();
}

}  // namespace

Builder::Builder(const Source& src, const std::vector<Definition>* definitions) : src_(src), definitions_(definitions) {
  for (std::string_view name : ir::splittable_names()) candidates_.push_back({name, -1});
  if (definitions_)
    for (std::size_t i = 0; i < definitions_->size(); ++i)
      candidates_.push_back({(*definitions_)[i].name, static_cast<int>(i)});
  // Longest first, so that among splits with equally few pieces the first piece is the
  // longest one (longest match with backtracking).
  std::stable_sort(candidates_.begin(), candidates_.end(),
                   [](const Candidate& a, const Candidate& b) { return a.text.size() > b.text.size(); });
}

ir::Span Builder::span(const Node& n) const {
  const char* base = src_.text.data();
  return {static_cast<std::uint32_t>(n.m_begin.data - base), static_cast<std::uint32_t>(n.m_end.data - base)};
}

ir::Expr Builder::expression(const Node& n) const {
  SOA_ASSERT(is<g::expression>(n), "expression(): not an expression node");
  std::vector<ir::Expr> terms;
  for (const auto& c : n.children) {
    if (is<g::product>(*c))
      terms.push_back(product(*c));
    else if (is<g::plus_term>(*c))
      terms.push_back(product(*c->children.front()));
    else  // negated or minus_term: the span includes the '-'
      terms.push_back(ir::neg(product(*c->children.front()), span(*c)));
  }
  if (terms.size() == 1) return terms.front();
  return ir::sum(std::move(terms), span(n));
}

std::vector<ir::Expr> Builder::equation(const Node& n) const {
  SOA_ASSERT(is<g::equation>(n), "equation(): not an equation node");
  std::vector<ir::Expr> sides;
  for (const auto& c : n.children) sides.push_back(expression(*c));
  return sides;
}

ir::Expr Builder::product(const Node& n) const {
  double coef = 1.0;
  const Node* first_number = nullptr;
  std::vector<ir::Expr> operators;
  for (const auto& f : n.children) factor(*f, coef, operators, first_number);
  if (operators.empty()) fail(src_, span(*first_number), "a number must scale an operator, as in '2 phi'");
  if (!std::isfinite(coef)) fail(src_, span(n), "the numbers in this product multiply to infinity");
  // Each number is nonzero (factor), but their product may underflow: a zero coefficient
  // would print as 0, which reads back as the zero operator.
  if (coef == 0.0)
    fail(src_, span(n), "the numbers in this product multiply to zero: write 0, the zero operator, instead");
  if (coef == 1.0) return operators.size() == 1 ? operators.front() : ir::product(std::move(operators), span(n));
  // Numbers anywhere in a product are one coefficient in front: H 2 K = 2 (H K).
  const ir::Span rest{operators.front().span().begin, operators.back().span().end};
  ir::Expr body = operators.size() == 1 ? operators.front() : ir::product(std::move(operators), rest);
  return ir::scale(coef, std::move(body), span(n));
}

void Builder::factor(const Node& f, double& coef, std::vector<ir::Expr>& out, const Node*& first_number) const {
  const Node& operand = *f.children.front();
  const std::span<const std::unique_ptr<Node>> postfixes(f.children.begin() + 1, f.children.end());

  std::vector<ir::Expr> pieces;
  if (is<g::number>(operand) && operand.string_view() == "0") {
    pieces.push_back(ir::zero(span(operand)));
  } else if (is<g::number>(operand)) {
    if (!postfixes.empty())
      fail(src_, span(*postfixes.front()),
           is<g::adjoint_op>(*postfixes.front()) ? "a number has no adjoint: '*' applies to operators"
                                                 : "a number has no inverse: '^-1' applies to operators "
                                                   "(write 0.5 for 2^-1)");
    const std::string_view digits = operand.string_view();
    double value = 0.0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(value))
      fail(src_, span(operand), fmt::format("the number {} is out of range", digits));
    if (value == 0.0) fail(src_, span(operand), "a zero coefficient: write 0, the zero operator, instead");
    coef *= value;
    if (!first_number) first_number = &operand;
    return;
  } else if (is<g::paren>(operand)) {
    // The span widens to cover the parentheses.
    pieces.push_back(ir::with_span(expression(*operand.children.front()), span(operand)));
  } else if (is<g::sensitivity>(operand)) {
    pieces.push_back(ir::derivative(expression(*operand.children.front()), span(operand)));
  } else {
    pieces = split(operand);
  }

  if (postfixes.size() > static_cast<std::size_t>(kMaxNesting))
    fail(src_, span(*postfixes[static_cast<std::size_t>(kMaxNesting)]),
         fmt::format("more than {} postfix operators in a row", kMaxNesting));
  // Postfix operators bind to the last name of a split word: "HpsiK*" is H psi K*.
  ir::Expr last = pieces.back();
  for (const auto& op : postfixes) {
    const ir::Span s{last.span().begin, span(*op).end};
    last = is<g::adjoint_op>(*op) ? ir::adjoint(last, s) : ir::inverse(last, s);
  }
  pieces.back() = last;
  out.insert(out.end(), pieces.begin(), pieces.end());
}

ir::Expr Builder::resolve(const Candidate& c, int arm, ir::Span s) const {
  if (c.definition >= 0) return respan((*definitions_)[static_cast<std::size_t>(c.definition)].body, s);
  if (c.text == "I") return ir::identity(s);
  const ir::SymbolInfo* info = ir::lookup(c.text);
  SOA_ASSERT(info != nullptr, fmt::format("splittable name '{}' is not in the vocabulary", c.text));
  return ir::symbol(ir::indexed_name(info->name, arm), s);
}

int Builder::arm_digit(const Candidate& c, std::string_view text, std::size_t at) const {
  // Only vocabulary names take an arm (vocabulary.hpp); no name starts with a digit, so a
  // digit after a name can only be that name's arm, and splitting stays unambiguous.
  if (c.definition >= 0 || c.text == "I" || at >= text.size()) return 0;
  const char d = text[at];
  return d >= '1' && d <= '0' + ir::kMaxArm ? d - '0' : 0;
}

std::vector<ir::Expr> Builder::split(const Node& word) const {
  const std::string_view text = word.string_view();
  const std::uint32_t base = span(word).begin;
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  // fewest[i]: fewest names that spell text[i..]; choice[i]: the first of them.
  std::vector<std::size_t> fewest(text.size() + 1, kNone), choice(text.size() + 1, 0);
  fewest[text.size()] = 0;
  auto length = [&](const Candidate& c, std::size_t at) {
    return c.text.size() + (arm_digit(c, text, at + c.text.size()) > 0 ? 1 : 0);
  };
  for (std::size_t i = text.size(); i-- > 0;) {
    for (std::size_t c = 0; c < candidates_.size(); ++c) {
      if (!text.substr(i).starts_with(candidates_[c].text)) continue;
      const std::size_t rest = fewest[i + length(candidates_[c], i)];
      if (rest != kNone && rest + 1 < fewest[i]) {
        fewest[i] = rest + 1;
        choice[i] = c;
      }
    }
  }
  if (fewest[0] == kNone) unknown_word(word);

  std::vector<ir::Expr> pieces;
  for (std::size_t i = 0; i < text.size();) {
    const Candidate& c = candidates_[choice[i]];
    const std::size_t n = length(c, i);
    const auto begin = static_cast<std::uint32_t>(base + i);
    pieces.push_back(resolve(c, arm_digit(c, text, i + c.text.size()), {begin, static_cast<std::uint32_t>(begin + n)}));
    i += n;
  }
  return pieces;
}

void Builder::unknown_word(const Node& word) const {
  const std::string_view text = word.string_view();

  std::vector<std::string_view> known;
  for (const ir::SymbolInfo& s : ir::vocabulary()) known.push_back(s.name);
  known.push_back("I");
  if (definitions_)
    for (const Definition& d : *definitions_) known.push_back(d.name);

  // A name in the wrong case ("omega") or misspelt by a letter or so ("Omaga", "Hx") is
  // the likeliest mistake. A single letter gets no guess: every one-letter name is one edit
  // away from "A", so a suggestion there would be noise.
  std::string_view suggestion;
  std::size_t best = std::max<std::size_t>(1, text.size() / 3) + 1;
  for (std::string_view k : known) {
    if (text.size() < 2) break;
    const bool same_letters = std::equal(text.begin(), text.end(), k.begin(), k.end(), [](char x, char y) {
      return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    });
    const std::size_t d = same_letters ? 0 : edit_distance(text, k);
    if (d < best) best = d, suggestion = k;
  }
  std::string hint;
  if (!suggestion.empty()) {
    hint = fmt::format("did you mean '{}'? ", suggestion);
  } else {
    // Otherwise say where splitting got stuck: the end of the longest prefix that splits.
    std::vector<bool> reach(text.size() + 1, false);
    reach[0] = true;
    std::size_t stuck = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (!reach[i]) continue;
      stuck = i;
      for (const Candidate& c : candidates_)
        if (text.substr(i).starts_with(c.text))
          reach[i + c.text.size() + (arm_digit(c, text, i + c.text.size()) > 0 ? 1 : 0)] = true;
    }
    if (stuck > 0) hint = fmt::format("no known name starts at '{}'; ", text.substr(stuck));
  }
  std::string list;
  for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
  fail(src_, span(word), fmt::format("unknown name '{}' ({}known names: {})", text, hint, list));
}

}  // namespace detail

// ---- public entry points --------------------------------------------------------------

ir::Expr parse_expression(std::shared_ptr<const Source> src, const Module* scope) {
  SOA_ASSERT(src != nullptr, "parse_expression without a source");
  detail::check_size(*src);
  detail::Input in = detail::input_over(*src);
  const auto root = detail::parse_tree<grammar::expression_input>(*src, in);
  const detail::Builder builder(*src, scope ? &scope->definitions : nullptr);
  ir::Expr e = builder.expression(*root->children.front());
  detail::check_shape(*src, e);
  return e;
}

std::vector<ir::Expr> parse_equation(std::shared_ptr<const Source> src, const Module* scope) {
  SOA_ASSERT(src != nullptr, "parse_equation without a source");
  detail::check_size(*src);
  detail::Input in = detail::input_over(*src);
  const auto root = detail::parse_tree<grammar::equation_input>(*src, in);
  const detail::Builder builder(*src, scope ? &scope->definitions : nullptr);
  std::vector<ir::Expr> sides = builder.equation(*root->children.front());
  detail::check_sides(*src, sides);
  return sides;
}

}  // namespace soa::syntax
