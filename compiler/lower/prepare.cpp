// Passes 1 and 2 of lower.hpp: expand derived symbols, push adjoints, factor vector sums.
#include "lower/lower.hpp"

#include "algebra/definitions.hpp"
#include "support/error.hpp"

namespace soa::lower {

using ir::Expr;
using ir::Op;

namespace {

struct Term {
  double coef;
  std::vector<Expr> factors;  // the last one is the vector
};

// The terms of a vector expression, with the trailing vector sums distributed:
// A (x + y) contributes A x and A y.
void terms_of(const Expr& e, double coef, std::vector<Expr> prefix, std::vector<Term>& out) {
  switch (e.op()) {
    case Op::Zero: return;
    case Op::Scale: terms_of(e.kid(0), coef * e.coef(), std::move(prefix), out); return;
    case Op::Sum:
      for (const Expr& k : e.kids()) terms_of(k, coef, prefix, out);
      return;
    case Op::Product: {
      const auto kids = e.kids();
      for (std::size_t i = 0; i + 1 < kids.size(); ++i) {
        Expr f = kids[i];
        if (f.is(Op::Scale)) {
          coef *= f.coef();
          f = f.kid(0);
        }
        if (f.is(Op::Zero)) return;
        if (!f.is(Op::Identity)) prefix.push_back(f);
      }
      terms_of(kids.back(), coef, std::move(prefix), out);
      return;
    }
    default: prefix.push_back(e); out.push_back({coef, std::move(prefix)});
  }
}

// Sum of the terms with common first factors pulled out, in first-occurrence order.
Expr build(const std::vector<Term>& terms) {
  std::vector<Expr> parts;
  std::vector<char> used(terms.size(), 0);
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (used[i]) continue;
    const Term& t = terms[i];
    if (t.factors.size() == 1) {  // a lone vector: combine like terms
      double c = 0.0;
      for (std::size_t j = i; j < terms.size(); ++j)
        if (!used[j] && terms[j].factors.size() == 1 && terms[j].factors[0] == t.factors[0]) {
          c += terms[j].coef;
          used[j] = 1;
        }
      if (c != 0.0) parts.push_back(ir::scale(c, t.factors[0]));
      continue;
    }
    std::vector<std::size_t> group;
    for (std::size_t j = i; j < terms.size(); ++j)
      if (!used[j] && terms[j].factors.size() >= 2 && terms[j].factors[0] == t.factors[0]) group.push_back(j);
    bool same_coef = true;
    for (std::size_t j : group) {
      used[j] = 1;
      same_coef &= terms[j].coef == t.coef;
    }
    const double c = same_coef ? t.coef : 1.0;
    std::vector<Term> rest;
    for (std::size_t j : group)
      rest.push_back({terms[j].coef / c, std::vector<Expr>(terms[j].factors.begin() + 1, terms[j].factors.end())});
    parts.push_back(ir::scale(c, ir::product({t.factors[0], build(rest)})));
  }
  if (parts.empty()) return ir::zero();
  return parts.size() == 1 ? parts[0] : ir::sum(std::move(parts));
}

}  // namespace

Expr expand(const Expr& e, const ir::Definitions& definitions) {
  static constexpr ir::Role kKeep[] = {ir::Role::Compound};
  return definitions.expand(e, kKeep);
}

Expr factor(const Expr& e) {
  std::vector<Term> terms;
  terms_of(e, 1.0, {}, terms);
  return build(terms);
}

}  // namespace soa::lower
