#include "specialise/dot_table.hpp"

#include <algorithm>
#include <deque>

#include "specialise/chains.hpp"

namespace soa::specialise {

namespace {

struct Term {
  int x, s;  // nodes (or kOneFactor for x)
  bool sub;
};

}  // namespace

DotTable dot_table(const ScalarProgram& p, int min_terms) {
  DotTable t;
  const int size = static_cast<int>(p.nodes.size());
  if (min_terms <= 0) return t;
  const ChainFacts f(p);
  // Roots: output nodes no other node reads, taken at their first position, in order.
  std::vector<int> first_position(size, -1), position_count(size, 0);
  for (std::size_t o = 0; o < p.outputs.size(); ++o) {
    const int r = p.outputs[o];
    if (first_position[r] < 0) first_position[r] = static_cast<int>(o);
    ++position_count[r];
  }
  std::vector<std::vector<Term>> chains;
  std::vector<int> roots;
  std::vector<int> chain_refs(size, 0);  // per Mul node: how often chains take it as a term
  std::vector<ChainTerm> terms;
  std::vector<int> links;
  std::vector<std::vector<int>> chain_links;
  int total = 0;
  for (std::size_t o = 0; o < p.outputs.size(); ++o) {
    const int r = p.outputs[o];
    if (first_position[r] != static_cast<int>(o) || f.uses[r] != 0) continue;
    bool pair = false;
    if (!linearise(f, r, terms, links, pair) || terms.size() < 2) continue;
    std::vector<Term> chain;
    for (const ChainTerm& ct : terms) {
      const ScalarNode& n = p.nodes[ct.node];
      if (n.op == ScalarOp::Mul) {
        chain.push_back({n.a, n.b, ct.sub});
        ++chain_refs[ct.node];
      } else {
        chain.push_back({kOneFactor, ct.node, ct.sub});
      }
    }
    // Stored as its node so that a product another node also reads stays one value.
    for (std::size_t k = 0; k < terms.size(); ++k)
      if (p.nodes[terms[k].node].op == ScalarOp::Mul) chain[k].x = -3 - terms[k].node;  // resolved below
    chains.push_back(std::move(chain));
    roots.push_back(r);
    chain_links.push_back(links);
    total += static_cast<int>(terms.size());
  }
  if (total < min_terms || chains.empty()) return t;

  // Products read elsewhere are computed as usual and taken as plain values.
  t.removed.assign(size, 0);
  for (std::size_t c = 0; c < chains.size(); ++c) {
    t.removed[roots[c]] = 1;
    for (int l : chain_links[c]) t.removed[l] = 1;
    for (Term& term : chains[c]) {
      if (term.x > -3) continue;
      const int mul = -3 - term.x;
      if (f.uses[mul] == chain_refs[mul] && !f.output[mul]) {
        t.removed[mul] = 1;
        term.x = p.nodes[mul].a;
        term.s = p.nodes[mul].b;
      } else {
        term.x = kOneFactor;
        term.s = mul;
      }
    }
  }
  // Colours: a product's factors apart (breadth first over the products' graph); a plain
  // value is an s factor (colour 1).
  std::vector<std::vector<int>> partner(size);
  std::vector<int> colour(size, -1);
  for (const auto& chain : chains)
    for (const Term& term : chain)
      if (term.x >= 0) {
        partner[term.x].push_back(term.s);
        partner[term.s].push_back(term.x);
      } else {
        colour[term.s] = 1;
      }
  for (const auto& chain : chains)
    for (const Term& term : chain)
      for (int start : {term.x, term.s}) {
        if (start < 0 || colour[start] >= 0) continue;
        colour[start] = 0;
        std::deque<int> queue{start};
        while (!queue.empty()) {
          const int u = queue.front();
          queue.pop_front();
          for (int v : partner[u])
            if (colour[v] < 0) {
              colour[v] = 1 - colour[u];
              queue.push_back(v);
            }
        }
      }
  // Orient each product x = colour 0, s = colour 1 where the colours allow.
  for (auto& chain : chains)
    for (Term& term : chain)
      if (term.x >= 0 && colour[term.x] == 1 && colour[term.s] == 0) std::swap(term.x, term.s);
  // Signs: a - x s = a + (-x) s exactly, so a factor may be stored negated. Choose per
  // factor (breadth first again, 1.0 never negated) so that terms become additions.
  std::vector<int> flip(size, -1);
  {
    std::vector<std::vector<std::pair<int, int>>> edges(size);  // (other factor, sub)
    std::deque<int> queue;
    for (const auto& chain : chains)
      for (const Term& term : chain) {
        if (term.x >= 0) {
          edges[term.x].push_back({term.s, term.sub});
          edges[term.s].push_back({term.x, term.sub});
        } else if (flip[term.s] < 0) {
          flip[term.s] = term.sub ? 1 : 0;
          queue.push_back(term.s);
        }
      }
    const auto spread = [&] {
      while (!queue.empty()) {
        const int u = queue.front();
        queue.pop_front();
        for (const auto& [v, sub] : edges[u])
          if (flip[v] < 0) {
            flip[v] = flip[u] ^ sub;
            queue.push_back(v);
          }
      }
    };
    spread();
    for (const auto& chain : chains)
      for (const Term& term : chain)
        for (int start : {term.x, term.s})
          if (start >= 0 && flip[start] < 0) {
            flip[start] = 0;
            queue.push_back(start);
            spread();
          }
    for (auto& chain : chains)
      for (Term& term : chain) term.sub = term.sub != ((term.x >= 0 && flip[term.x] == 1) != (flip[term.s] == 1));
  }
  // g: 1.0 (when some term needs it), colour 0 in order of first use, then colour 1.
  // The longest chains first: a Gram matrix's diagonal entry (i,i) runs over all of column
  // i's rows, which then lie in row order; entry (i,j) reads a stretch of each.
  std::vector<int> by_length(chains.size());
  for (std::size_t c = 0; c < chains.size(); ++c) by_length[c] = static_cast<int>(c);
  std::stable_sort(by_length.begin(), by_length.end(),
                   [&](int a, int b) { return chains[a].size() > chains[b].size(); });
  t.factor_of.assign(size, -1);
  int one = -1;
  for (int side = 0; side < 2; ++side)
    for (int c : by_length)
      for (const Term& term : chains[c])
        for (int node : {term.x, term.s}) {
          if (node == kOneFactor) {
            if (side == 0 && one < 0) {
              one = static_cast<int>(t.factors.size());
              t.factors.push_back(kOneFactor);
              t.negated.push_back(false);
            }
            continue;
          }
          if (colour[node] != side || t.factor_of[node] >= 0) continue;
          t.factor_of[node] = static_cast<int>(t.factors.size());
          t.factors.push_back(node);
          t.negated.push_back(flip[node] == 1);
        }
  const auto index = [&](int node) { return node == kOneFactor ? one : t.factor_of[node]; };
  for (std::size_t c = 0; c < chains.size(); ++c) {
    DotTable::Entry e;
    e.first_run = static_cast<int>(t.runs.size());
    for (const Term& term : chains[c]) {
      const int x = index(term.x), s = index(term.s);
      if (!t.runs.empty() && static_cast<int>(t.runs.size()) > e.first_run) {
        DotTable::Run& last = t.runs.back();
        if (last.sub == term.sub && last.x + last.count == x && last.s + last.count == s) {
          ++last.count;
          continue;
        }
      }
      t.runs.push_back({x, s, 1, term.sub});
    }
    e.runs = static_cast<int>(t.runs.size()) - e.first_run;
    e.first_position = static_cast<int>(t.positions.size());
    for (std::size_t o = 0; o < p.outputs.size(); ++o)
      if (p.outputs[o] == roots[c]) t.positions.push_back(static_cast<int>(o));
    e.position_count = static_cast<int>(t.positions.size()) - e.first_position;
    t.entries.push_back(e);
    t.terms += static_cast<int>(chains[c].size());
  }
  return t;
}

void evaluate(const DotTable& t, const std::vector<double>& value, double* out) {
  std::vector<double> g(t.factors.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    g[i] = t.factors[i] == kOneFactor ? 1.0 : value[t.factors[i]];
    if (t.negated[i]) g[i] = -g[i];
  }
  for (const DotTable::Entry& e : t.entries) {
    const DotTable::Run* r = t.runs.data() + e.first_run;
    double acc = g[r->x] * g[r->s];
    if (r->sub) acc = -acc;  // a first term whose factor is held negated
    for (int i = 0, k0 = 1; i < e.runs; ++i, ++r, k0 = 0)
      for (int k = k0; k < r->count; ++k) {
        const double term = g[r->x + k] * g[r->s + k];
        acc = r->sub ? acc - term : acc + term;
      }
    for (int k = 0; k < e.position_count; ++k) out[t.positions[e.first_position + k]] = acc;
  }
}

}  // namespace soa::specialise
