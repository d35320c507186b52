#include "rewrite/moves.hpp"

#include <unordered_set>

namespace soa::rewrite {
namespace {

using ir::Expr;
using ir::Op;

constexpr const char* kDistribute = "A (B + C) = A B + A C";
constexpr const char* kCollect = "A B + A C = A (B + C)";

template <class F>
void for_each_node(const Expr& e, std::vector<std::size_t>& path, const F& f) {
  f(e, path);
  for (std::size_t i = 0; i < e.kids().size(); ++i) {
    path.push_back(i);
    for_each_node(e.kid(i), path, f);
    path.pop_back();
  }
}

std::vector<Expr> factors_of(const Expr& body) {
  if (body.is(Op::Product)) return {body.kids().begin(), body.kids().end()};
  return {body};
}

Expr product_or_identity(std::vector<Expr> f) {
  if (f.empty()) return ir::identity();
  return ir::product(std::move(f));
}

// Distribution at product `p` (at `path`): each sum factor with its left or right
// neighbour, over all its terms, and (for three or more terms) over one term at a time,
// L (s1 + s2 + s3) -> L (s1 + s2) + L s3, which lets a rule rewrite L s3 without
// duplicating the sweep L over the rest.
void distribute(const Expr& root, const Expr& p, const std::vector<std::size_t>& path, std::vector<Move>& out) {
  const auto f = p.kids();
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (!f[i].is(Op::Sum)) continue;
    const auto terms = f[i].kids();
    for (int side : {-1, +1}) {
      if ((side < 0 && i == 0) || (side > 0 && i + 1 == f.size())) continue;
      const Expr& other = side < 0 ? f[i - 1] : f[i + 1];
      auto times = [&](const Expr& t) { return side < 0 ? ir::product({other, t}) : ir::product({t, other}); };
      Site s;
      s.kind = Site::Kind::Factors;
      s.path = path;
      s.begin = side < 0 ? i - 1 : i;
      s.end = s.begin + 2;
      std::vector<Expr> all;
      for (const auto& t : terms) all.push_back(times(t));
      out.push_back({"distribute", kDistribute, s, replace_at(root, s, ir::sum(std::move(all)))});
      if (terms.size() < 3) continue;
      for (std::size_t j = 0; j < terms.size(); ++j) {
        std::vector<Expr> rest;
        for (std::size_t k = 0; k < terms.size(); ++k)
          if (k != j) rest.push_back(terms[k]);
        const Expr split = ir::sum({times(ir::sum(std::move(rest))), times(terms[j])});
        out.push_back({"distribute", kDistribute, s, replace_at(root, s, split)});
      }
    }
  }
}

// Collection at sum `sum` (at `path`): for each factor that starts (ends) at least two
// terms, the terms starting (ending) with it, with their longest common prefix (suffix).
void collect(const Expr& root, const Expr& sum, const std::vector<std::size_t>& path, std::vector<Move>& out) {
  const auto terms = sum.kids();
  std::vector<std::vector<Expr>> fs;
  std::vector<double> cs;
  for (const auto& t : terms) {
    fs.push_back(factors_of(t.is(Op::Scale) ? t.kid(0) : t));
    cs.push_back(t.is(Op::Scale) ? t.coef() : 1.0);
  }
  for (bool left : {true, false}) {
    std::vector<bool> done(terms.size(), false);
    for (std::size_t i = 0; i < terms.size(); ++i) {
      if (done[i]) continue;
      auto end_factor = [&](std::size_t k, std::size_t depth) -> const Expr& {
        return left ? fs[k][depth] : fs[k][fs[k].size() - 1 - depth];
      };
      std::vector<std::size_t> group{i};
      for (std::size_t j = i + 1; j < terms.size(); ++j)
        if (!done[j] && end_factor(j, 0) == end_factor(i, 0)) group.push_back(j);
      for (std::size_t k : group) done[k] = true;
      if (group.size() < 2) continue;
      std::size_t common = 1;  // length of the shared prefix (suffix)
      for (;; ++common) {
        bool all = true;
        for (std::size_t k : group)
          all = all && common < fs[k].size() && end_factor(k, common) == end_factor(i, common);
        if (!all) break;
      }
      std::vector<Expr> rests;
      for (std::size_t k : group) {
        const auto& f = fs[k];
        std::vector<Expr> rest = left ? std::vector<Expr>(f.begin() + static_cast<long>(common), f.end())
                                      : std::vector<Expr>(f.begin(), f.end() - static_cast<long>(common));
        rests.push_back(ir::scale(cs[k], product_or_identity(std::move(rest))));
      }
      std::vector<Expr> shared = left ? std::vector<Expr>(fs[i].begin(), fs[i].begin() + static_cast<long>(common))
                                      : std::vector<Expr>(fs[i].end() - static_cast<long>(common), fs[i].end());
      std::vector<Expr> whole = shared;
      if (left)
        whole.push_back(ir::sum(std::move(rests)));
      else
        whole.insert(whole.begin(), ir::sum(std::move(rests)));
      Site s;
      s.kind = group.size() == terms.size() ? Site::Kind::Node : Site::Kind::Terms;
      s.path = path;
      if (s.kind == Site::Kind::Terms) s.terms = group;
      out.push_back({"collect", kCollect, s, replace_at(root, s, ir::product(std::move(whole)))});
    }
  }
}

}  // namespace

std::vector<Move> moves(const Expr& e, const std::vector<const Rule*>& rules) {
  std::vector<Move> raw;
  for (const Rule* r : rules)
    for (auto& site : find_matches(e, r->lhs)) {
      Expr result = replace_at(e, site, r->rhs);
      raw.push_back({r->name, r->citation, std::move(site), std::move(result)});
    }
  std::vector<std::size_t> path;
  for_each_node(e, path, [&](const Expr& n, const std::vector<std::size_t>& p) {
    if (n.is(Op::Product)) distribute(e, n, p, raw);
    if (n.is(Op::Sum)) collect(e, n, p, raw);
  });
  std::vector<Move> out;
  std::unordered_set<Expr, ir::ExprHash> seen{e};
  for (auto& m : raw) {
    m.result = normalize(m.result);
    if (seen.insert(m.result).second) out.push_back(std::move(m));
  }
  return out;
}

}  // namespace soa::rewrite
