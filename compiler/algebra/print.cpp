#include "algebra/print.hpp"

#include <fmt/format.h>

#include <cmath>

#include "algebra/vocabulary.hpp"

namespace soa::ir {
namespace {

enum Prec { kSum = 0, kProduct = 1, kScale = 2, kPostfix = 3 };

int precedence(const Expr& e) {
  switch (e.op()) {
    case Op::Sum: return kSum;
    case Op::Product: return kProduct;
    case Op::Scale: return kScale;
    default: return kPostfix;
  }
}

class Printer {
public:
  explicit Printer(const PrintOptions& o) : o_(o) {}

  std::string run(const Expr& e) { return node(e, kSum); }

private:
  const PrintOptions& o_;

  std::string open_mark() const { return o_.syntax == Syntax::Latex ? std::string(o_.latex_mark) + "{" : "["; }
  std::string close_mark() const { return o_.syntax == Syntax::Latex ? "}" : "]"; }

  bool whole_marked(const Expr& e) const {
    return o_.mark == e.get() && !(e.is(Op::Product) && o_.mark_end > o_.mark_begin);
  }

  // Print e in a context that needs at least precedence `ctx`.
  std::string node(const Expr& e, int ctx) {
    std::string s = bare(e);
    if (precedence(e) < ctx) s = paren(s);
    if (whole_marked(e)) s = open_mark() + s + close_mark();
    return s;
  }

  std::string paren(const std::string& s) const {
    return o_.syntax == Syntax::Latex ? "\\left(" + s + "\\right)" : "(" + s + ")";
  }

  // An arm index (vocabulary.hpp) prints as a subscript: psi1 is ψ₁ and \psi_{1}; a base
  // that has a subscript of its own is braced first, {f_0}_{1}, so that LaTeX accepts it.
  std::string symbol(const Expr& e) const {
    const auto found = lookup_indexed(e.name());
    if (!found || o_.syntax == Syntax::Ascii) return e.name();
    const SymbolInfo& info = *found->info;
    const int arm = found->arm;
    if (o_.syntax == Syntax::Latex) {
      const std::string base(info.latex);
      if (arm == 0) return base;
      return fmt::format("{}_{{{}}}", base.find('_') == std::string::npos ? base : "{" + base + "}", arm);
    }
    std::string s(info.unicode.empty() ? info.name : info.unicode);
    // U+2080 + d, SUBSCRIPT ZERO..NINE: E2 82 80+d in UTF-8.
    if (arm > 0) s += std::string{'\xE2', '\x82', static_cast<char>(0x80 + arm)};
    return s;
  }

  // {X}^{s}. When X ends in a superscript of its own (A^-1*), the outer one goes on an empty
  // atom, {{X}^{-1}}{}^{*}: amsmath's accents (\tilde, \dot, \bar) otherwise make
  // {{\tilde{\phi}}^{-1}}^{*} a "Double superscript" error.
  static std::string latex_script(const Expr& e, const std::string& inner, const char* script) {
    const bool nested = e.kid(0).is(Op::Adjoint) || e.kid(0).is(Op::Inverse);
    return "{" + inner + "}" + (nested ? "{}" : "") + "^{" + script + "}";
  }

  std::string bare(const Expr& e) {
    switch (e.op()) {
      case Op::Symbol: return symbol(e);
      case Op::Identity: return o_.syntax == Syntax::Latex ? "\\mathbb{I}" : "I";
      case Op::Zero: return "0";
      case Op::Sum: {
        std::string s;
        for (std::size_t i = 0; i < e.kids().size(); ++i) {
          const Expr& t = e.kid(i);
          const bool negative = t.is(Op::Scale) && t.coef() < 0;
          if (negative && !whole_marked(t)) {
            s += i == 0 ? "-" : " - ";
            const double c = -t.coef();
            if (c != 1.0) s += format_number(c) + (o_.syntax == Syntax::Latex ? "\\," : " ");
            // Like a standalone Scale: "A - H psi K" reads as A + (-1)(H psi K).
            s += node(t.kid(0), kProduct);
          } else {
            if (i > 0) s += " + ";
            s += node(t, kSum + 1);
          }
        }
        return s;
      }
      case Op::Product: {
        const bool ranged = o_.mark == e.get() && o_.mark_end > o_.mark_begin;
        const std::string sep = o_.syntax == Syntax::Latex ? " \\, " : " ";
        std::string s;
        for (std::size_t i = 0; i < e.kids().size(); ++i) {
          if (i > 0) s += sep;
          if (ranged && i == o_.mark_begin) s += open_mark();
          s += node(e.kid(i), kScale + 1);
          if (ranged && i + 1 == o_.mark_end) s += close_mark();
        }
        return s;
      }
      case Op::Scale: {
        const double c = e.coef();
        std::string prefix = c == -1.0 ? "-" : format_number(c) + (o_.syntax == Syntax::Latex ? "\\," : " ");
        return prefix + node(e.kid(0), kProduct);
      }
      case Op::Adjoint: {
        const std::string inner = node(e.kid(0), kPostfix);
        return o_.syntax == Syntax::Latex ? latex_script(e, inner, "*") : inner + "*";
      }
      case Op::Inverse: {
        const std::string inner = node(e.kid(0), kPostfix);
        switch (o_.syntax) {
          case Syntax::Latex: return latex_script(e, inner, "-1");
          case Syntax::Unicode: return inner + "⁻¹";
          case Syntax::Ascii: return inner + "^-1";
        }
        break;
      }
      case Op::Derivative: {
        const std::string inner = node(e.kid(0), kSum);
        switch (o_.syntax) {
          case Syntax::Latex: return "\\frac{\\partial}{\\partial q_i}\\left(" + inner + "\\right)";
          case Syntax::Unicode: return "∂(" + inner + ")/∂qᵢ";
          case Syntax::Ascii: return "d(" + inner + ")/dq_i";
        }
        break;
      }
    }
    return "?";
  }
};

}  // namespace

std::string format_number(double c) {
  if (std::isfinite(c) && c == std::round(c) && std::fabs(c) < 1e15)
    return fmt::format("{}", static_cast<long long>(c));
  return fmt::format("{}", c);
}

std::string print(const Expr& e, const PrintOptions& options) { return Printer(options).run(e); }

}  // namespace soa::ir
