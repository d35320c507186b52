// Matching rule left-hand sides inside expressions (rewrite.hpp: find_matches).
//
// The identities' symbols are concrete (phi, H, ...), so matching is literal equality on
// canonical forms: the interesting part is *where*. Products are associative but not
// commutative: a product pattern matches every contiguous run of factors. Sums are
// commutative and kept sorted with like terms combined: a sum pattern matches every sum
// that contains its terms. Adjoint forms need no special case: normalisation has pushed
// every star onto a symbol, and rules_from_identities() adds each rule's adjoint.
#include <algorithm>
#include <cmath>

#include "rewrite/rewrite.hpp"
#include "support/error.hpp"

namespace soa::rewrite {
namespace {

using ir::Expr;
using ir::Op;

struct Term {
  Expr body;
  double coef;
};

std::vector<Term> terms_of(const Expr& sum, double c) {
  std::vector<Term> out;
  for (const auto& t : sum.kids()) out.push_back(t.is(Op::Scale) ? Term{t.kid(0), c * t.coef()} : Term{t, c});
  return out;
}

bool close(double a, double b) { return std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b)); }

// The sum `e` contains lambda x (every term of `want`) for one lambda.
void match_sum(const Expr& e, const std::vector<std::size_t>& path, const std::vector<Term>& want,
               std::vector<Site>& out) {
  const std::vector<Term> have = terms_of(e, 1.0);
  if (want.size() > have.size()) return;
  std::vector<bool> used(have.size(), false);
  std::vector<std::size_t> picked;
  double lambda = 0.0;
  for (const auto& w : want) {
    bool found = false;
    for (std::size_t j = 0; j < have.size() && !found; ++j) {
      if (used[j] || have[j].body != w.body) continue;
      if (picked.empty()) lambda = have[j].coef / w.coef;
      if (!close(have[j].coef, lambda * w.coef)) return;
      used[j] = true;
      picked.push_back(j);
      found = true;
    }
    if (!found) return;
  }
  std::sort(picked.begin(), picked.end());
  Site s;
  s.path = path;
  s.factor = lambda;
  if (picked.size() == have.size() && lambda == 1.0) {
    s.kind = Site::Kind::Node;
  } else {
    s.kind = Site::Kind::Terms;
    s.terms = std::move(picked);
  }
  out.push_back(std::move(s));
}

void match_factors(const Expr& e, const std::vector<std::size_t>& path, const Expr& pattern, std::vector<Site>& out) {
  const auto f = e.kids();
  const auto p = pattern.kids();
  for (std::size_t i = 0; i + p.size() <= f.size(); ++i) {
    bool ok = true;
    for (std::size_t j = 0; ok && j < p.size(); ++j) ok = f[i + j] == p[j];
    if (!ok) continue;
    Site s;
    s.kind = Site::Kind::Factors;
    s.path = path;
    s.begin = i;
    s.end = i + p.size();
    out.push_back(std::move(s));
  }
}

// Pre-order walk; `want` is the pattern's terms when it is a sum (or a scaled sum).
void walk(const Expr& e, std::vector<std::size_t>& path, const Expr& pattern, const std::vector<Term>& want,
          std::vector<Site>& out) {
  const std::uint64_t need = pattern.get()->symbols;
  if ((e.get()->symbols & need) != need) return;  // a symbol of the pattern is not in e
  if (!want.empty()) {
    if (e.is(Op::Sum)) match_sum(e, path, want, out);
  } else if (pattern.is(Op::Product)) {
    if (e.is(Op::Product)) match_factors(e, path, pattern, out);
  } else if (e == pattern) {
    out.push_back(Site{Site::Kind::Node, path, 0, 0, {}, 1.0});
  }
  for (std::size_t i = 0; i < e.kids().size(); ++i) {
    path.push_back(i);
    walk(e.kid(i), path, pattern, want, out);
    path.pop_back();
  }
}

Expr replace_here(const Expr& e, const Site& site, const Expr& replacement) {
  const Expr repl = ir::scale(site.factor, replacement);
  switch (site.kind) {
    case Site::Kind::Node: return repl;
    case Site::Kind::Factors: {
      SOA_ASSERT(e.is(Op::Product) && site.end <= e.kids().size() && site.begin < site.end, "bad factor site");
      std::vector<Expr> f(e.kids().begin(), e.kids().begin() + static_cast<long>(site.begin));
      f.push_back(repl);
      f.insert(f.end(), e.kids().begin() + static_cast<long>(site.end), e.kids().end());
      return ir::product(std::move(f));
    }
    case Site::Kind::Terms: {
      SOA_ASSERT(e.is(Op::Sum), "bad term site");
      std::vector<Expr> t;
      std::size_t next = 0;
      for (std::size_t i = 0; i < e.kids().size(); ++i) {
        if (next < site.terms.size() && site.terms[next] == i) {
          ++next;
          continue;
        }
        t.push_back(e.kid(i));
      }
      t.push_back(repl);
      return ir::sum(std::move(t));
    }
  }
  return repl;
}

Expr replace_along(const Expr& e, const Site& site, std::size_t depth, const Expr& repl) {
  if (depth == site.path.size()) return replace_here(e, site, repl);
  const std::size_t i = site.path[depth];
  SOA_ASSERT(i < e.kids().size(), "bad site path");
  std::vector<Expr> kids(e.kids().begin(), e.kids().end());
  kids[i] = replace_along(e.kid(i), site, depth + 1, repl);
  return ir::rebuild(e, std::move(kids));
}

}  // namespace

std::vector<Site> find_matches(const Expr& target, const Expr& pattern) {
  std::vector<Site> out;
  std::vector<std::size_t> path;
  if (pattern.is(Op::Scale) && !pattern.kid(0).is(Op::Sum)) {
    // X = (1/c) (c X)
    out = find_matches(target, pattern.kid(0));
    for (auto& s : out) s.factor /= pattern.coef();
    return out;
  }
  std::vector<Term> want;
  if (pattern.is(Op::Sum)) want = terms_of(pattern, 1.0);
  if (pattern.is(Op::Scale)) want = terms_of(pattern.kid(0), pattern.coef());
  walk(target, path, pattern, want, out);
  return out;
}

const Expr& node_at(const Expr& root, std::span<const std::size_t> path) {
  const Expr* e = &root;
  for (std::size_t i : path) {
    SOA_ASSERT(i < e->kids().size(), "bad site path");
    e = &e->kid(i);
  }
  return *e;
}

Expr replace_at(const Expr& target, const Site& site, const Expr& replacement) {
  return replace_along(target, site, 0, replacement);
}

}  // namespace soa::rewrite
