// Canonical form and display form (rewrite.hpp). The smart constructors below take
// normalised operands and return a normalised result, so normalize() is one bottom-up pass.
#include <algorithm>
#include <cmath>

#include "algebra/shape.hpp"
#include "algebra/vocabulary.hpp"
#include "rewrite/rewrite.hpp"

namespace soa::rewrite {
namespace {

using ir::Expr;
using ir::Op;

int op_rank(Op op) {
  switch (op) {
    case Op::Identity: return 0;
    case Op::Symbol: return 1;
    case Op::Adjoint: return 2;
    case Op::Inverse: return 3;
    case Op::Product: return 4;
    case Op::Sum: return 5;
    case Op::Scale: return 6;
    case Op::Zero: return 7;
    case Op::Derivative: return 8;
  }
  return 9;
}

const Expr& body_of(const Expr& t) { return t.is(Op::Scale) ? t.kid(0) : t; }
double coef_of(const Expr& t) { return t.is(Op::Scale) ? t.coef() : 1.0; }

Expr add(std::vector<Expr> terms);
Expr prod(std::vector<Expr> factors);
Expr inv(const Expr& x);

Expr scl(double c, const Expr& x) {
  if (c == 0.0 || x.is(Op::Zero)) return ir::zero();
  if (x.is(Op::Scale)) return scl(c * x.coef(), x.kid(0));
  return ir::scale(c, x);  // returns x itself when c == 1
}

bool symmetric(const Expr& s) {
  const ir::SymbolInfo* info = ir::lookup(s.name());
  return info && info->symmetric;
}

// (AB)* = B* A*, (A + B)* = A* + B*, (cA)* = c A*, I* = I, M* = M, (A^-1)* = (A*)^-1.
Expr adj(const Expr& x) {
  switch (x.op()) {
    case Op::Identity:
    case Op::Zero: return x;
    case Op::Symbol: return symmetric(x) ? x : ir::adjoint(x);
    case Op::Adjoint: return x.kid(0);
    case Op::Scale: return scl(x.coef(), adj(x.kid(0)));
    case Op::Sum: {
      std::vector<Expr> terms;
      for (const auto& t : x.kids()) terms.push_back(adj(t));
      return add(std::move(terms));
    }
    case Op::Product: {
      std::vector<Expr> factors;
      for (auto it = x.kids().rbegin(); it != x.kids().rend(); ++it) factors.push_back(adj(*it));
      return prod(std::move(factors));
    }
    case Op::Inverse: return inv(adj(x.kid(0)));
    case Op::Derivative: return ir::derivative(adj(x.kid(0)));  // (d a)* = d(a*)
  }
  return ir::adjoint(x);
}

bool square(const Expr& e) {
  try {
    return ir::infer_shape(e).square();
  } catch (const ir::ShapeError&) {
    return false;
  }
}

// (cA)^-1 = c^-1 A^-1; (AB)^-1 = B^-1 A^-1 only for square factors known to be invertible
// (reference 4: "for square invertible factors"); everything else stays an Inverse node.
Expr inv(const Expr& x) {
  switch (x.op()) {
    case Op::Identity: return x;
    case Op::Inverse: return x.kid(0);
    case Op::Scale: return scl(1.0 / x.coef(), inv(x.kid(0)));
    case Op::Product: {
      const bool split =
          std::all_of(x.kids().begin(), x.kids().end(), [](const Expr& f) { return square(f) && known_invertible(f); });
      if (!split) return ir::inverse(x);
      std::vector<Expr> factors;
      for (auto it = x.kids().rbegin(); it != x.kids().rend(); ++it) factors.push_back(inv(*it));
      return prod(std::move(factors));
    }
    default: return ir::inverse(x);
  }
}

bool inverse_pair(const Expr& a, const Expr& b) {
  return (a.is(Op::Inverse) && a.kid(0) == b) || (b.is(Op::Inverse) && b.kid(0) == a);
}

// Flatten, pull scales out, absorb 0, drop I, cancel adjacent X X^-1.
Expr prod(std::vector<Expr> factors) {
  double c = 1.0;
  std::vector<Expr> out;
  std::vector<Expr> todo(factors.rbegin(), factors.rend());  // a stack, leftmost on top
  while (!todo.empty()) {
    Expr f = std::move(todo.back());
    todo.pop_back();
    if (f.is(Op::Scale)) {
      c *= f.coef();
      todo.push_back(f.kid(0));
      continue;
    }
    if (f.is(Op::Product)) {
      for (auto it = f.kids().rbegin(); it != f.kids().rend(); ++it) todo.push_back(*it);
      continue;
    }
    if (f.is(Op::Zero)) return ir::zero();
    if (f.is(Op::Identity)) continue;
    if (!out.empty() && inverse_pair(out.back(), f)) {
      out.pop_back();
      continue;
    }
    out.push_back(std::move(f));
  }
  if (out.empty()) return scl(c, ir::identity());
  return scl(c, ir::product(std::move(out)));
}

// Flatten (scales distribute over inner sums), combine like terms, sort, factor out a
// common coefficient.
Expr add(std::vector<Expr> terms) {
  std::vector<std::pair<Expr, double>> acc;  // body, coefficient
  std::vector<std::pair<Expr, double>> todo;
  for (auto& t : terms) todo.emplace_back(std::move(t), 1.0);
  while (!todo.empty()) {
    auto [t, c] = std::move(todo.back());
    todo.pop_back();
    if (t.is(Op::Scale)) {
      todo.emplace_back(t.kid(0), c * t.coef());
      continue;
    }
    if (t.is(Op::Sum)) {
      for (const auto& k : t.kids()) todo.emplace_back(k, c);
      continue;
    }
    if (t.is(Op::Zero) || c == 0.0) continue;
    auto it = std::find_if(acc.begin(), acc.end(), [&](const auto& p) { return p.first == t; });
    if (it != acc.end())
      it->second += c;
    else
      acc.emplace_back(std::move(t), c);
  }
  std::erase_if(acc, [](const auto& p) { return p.second == 0.0; });
  if (acc.empty()) return ir::zero();
  // Positive terms first (T - C reads better than -C + T), then the fixed order of bodies.
  std::sort(acc.begin(), acc.end(), [](const auto& a, const auto& b) {
    if ((a.second < 0) != (b.second < 0)) return a.second > 0;
    const int k = compare(a.first, b.first);
    return k != 0 ? k < 0 : a.second < b.second;
  });
  if (acc.size() == 1) return scl(acc[0].second, acc[0].first);
  // A coefficient common to all terms (up to sign) is factored out, and so is the sign of
  // a sum whose terms are all negative: 2 A - 2 B = 2 (A - B), -A - 3 B = -(A + 3 B).
  const double c0 = acc[0].second;
  const bool common =
      std::all_of(acc.begin(), acc.end(), [c0](const auto& p) { return std::fabs(p.second) == std::fabs(c0); });
  const double factor = common ? c0 : (c0 < 0 ? -1.0 : 1.0);
  std::vector<Expr> out;
  for (const auto& [body, c] : acc) out.push_back(scl(c / factor, body));
  return scl(factor, ir::sum(std::move(out)));
}

Expr norm_node(const Expr& e);

// Each result is marked canonical, and a marked tree is returned as it is: a candidate form
// of the search is its parent form with one path rewritten, so only that path is rebuilt.
Expr norm(const Expr& e) {
  if (e.get()->canonical.load(std::memory_order_relaxed)) return e;
  Expr n = norm_node(e);
  n.get()->canonical.store(true, std::memory_order_relaxed);
  return n;
}

Expr norm_node(const Expr& e) {
  switch (e.op()) {
    case Op::Symbol:
    case Op::Identity:
    case Op::Zero: return e;
    case Op::Adjoint: return adj(norm(e.kid(0)));
    case Op::Inverse: return inv(norm(e.kid(0)));
    case Op::Scale: return scl(e.coef(), norm(e.kid(0)));
    case Op::Sum:
    case Op::Product: {
      std::vector<Expr> kids;
      for (const auto& k : e.kids()) kids.push_back(norm(k));
      return e.is(Op::Sum) ? add(std::move(kids)) : prod(std::move(kids));
    }
    case Op::Derivative: {
      Expr x = norm(e.kid(0));
      if (x.is(Op::Zero) || x.is(Op::Identity)) return ir::zero();  // constants
      if (x.is(Op::Scale)) return scl(x.coef(), ir::derivative(x.kid(0)));
      return ir::derivative(std::move(x));
    }
  }
  return e;
}

// ---- display form ---------------------------------------------------------------------------

std::size_t stars(const Expr& e) {
  std::size_t n = e.is(Op::Adjoint) ? 1 : 0;
  for (const auto& k : e.kids()) n += stars(k);
  return n;
}

Expr fold(const Expr& e);

Expr fold_kids(const Expr& e) {
  if (e.kids().empty()) return e;
  std::vector<Expr> kids;
  for (const auto& k : e.kids()) kids.push_back(fold(k));
  return ir::rebuild(e, std::move(kids));
}

// Keep e with folded children, or write it as (e*)* with e* folded inside when that needs
// fewer stars (for a sum, also when it needs as many: (I - H psi K)* reads better than
// I - (H psi K)*).
Expr fold(const Expr& e) {
  Expr kept = fold_kids(e);
  if (!e.is(Op::Sum) && !e.is(Op::Product)) return kept;
  const std::size_t n = stars(kept);
  if (n == 0) return kept;
  Expr flipped = ir::adjoint(fold_kids(adj(e)));
  const std::size_t m = stars(flipped);
  if (m < n || (m == n && e.is(Op::Sum))) return flipped;
  return kept;
}

}  // namespace

int compare(const Expr& a, const Expr& b) {
  const Expr& ab = body_of(a);
  const Expr& bb = body_of(b);
  if (ab.get() != a.get() || bb.get() != b.get()) {
    if (const int k = compare(ab, bb); k != 0) return k;
    const double ca = coef_of(a), cb = coef_of(b);
    return ca < cb ? -1 : ca > cb ? 1 : 0;
  }
  if (a.op() != b.op()) return op_rank(a.op()) < op_rank(b.op()) ? -1 : 1;
  switch (a.op()) {
    case Op::Symbol: return a.name() < b.name() ? -1 : a.name() > b.name() ? 1 : 0;
    case Op::Identity:
    case Op::Zero: return 0;
    default: break;
  }
  const std::size_t n = std::min(a.kids().size(), b.kids().size());
  for (std::size_t i = 0; i < n; ++i)
    if (const int k = compare(a.kid(i), b.kid(i)); k != 0) return k;
  if (a.kids().size() != b.kids().size()) return a.kids().size() < b.kids().size() ? -1 : 1;
  return 0;
}

Expr normalize(const Expr& e) { return norm(e); }

Expr present(const Expr& e) { return fold(norm(e)); }

}  // namespace soa::rewrite
