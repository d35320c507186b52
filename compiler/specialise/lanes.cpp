#include "specialise/lanes.hpp"

#include "specialise/chains.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace soa::specialise {

namespace {

using Term = ChainTerm;
using Facts = ChainFacts;

struct Factored {
  int key;  // the shared factor (a node, or kOne for a literal term)
  int x;    // the lane's factor (a node, or kOne)
  bool sub;
  int occurrence = 0;  // how many of the lane's terms before this one share its factor
};

// A step of a group: a shared factor and its occurrence. A lane may have a factor twice
// (-calM^-1 d tau where two of d tau's entries are one value, as when two joints' columns are
// the same vector: docs/performance.md, "The reference frame"): the lanes' first uses of it
// are one step, their second uses another.
using StepKey = std::pair<int, int>;
StepKey key_of(const Factored& fa) { return {fa.key, fa.occurrence}; }

// One group of `width` roots, or none.
bool plan_group(const Facts& f, const int* roots, int width, LaneGroup& g, std::vector<int>& links_out,
                std::vector<int>& products_out) {
  std::vector<std::vector<Term>> terms(width);
  std::vector<int> links;
  std::array<bool, kMaxLanes> pair{};
  links_out.clear();
  products_out.clear();
  // A root -(chain) is its chain negated at the end (exact): every lane of a group or none.
  const auto negated = [&](int root) { return f.op(root) == ScalarOp::Neg; };
  for (int l = 0; l < width; ++l) {
    if (negated(roots[l]) != negated(roots[0])) return false;
    const int chain = negated(roots[l]) ? f.p.nodes[roots[l]].a : roots[l];
    if (!linearise(f, chain, terms[l], links, pair[l])) return false;
    links_out.insert(links_out.end(), links.begin(), links.end());
    // The negated chain's own node (a one-term chain is no link of its own).
    if (chain != roots[l]) links_out.push_back(chain);
  }
  // How many lanes mention each node as a term or a factor of one: a factor in two or
  // more lanes is what they share.
  std::map<int, int> lanes_with;
  for (int l = 0; l < width; ++l) {
    std::vector<int> mentioned;
    for (const Term& t : terms[l]) {
      const ScalarNode& n = f.p.nodes[t.node];
      if (n.op == ScalarOp::Mul) {
        mentioned.push_back(n.a);
        mentioned.push_back(n.b);
      } else {
        mentioned.push_back(t.node);
      }
    }
    std::sort(mentioned.begin(), mentioned.end());
    mentioned.erase(std::unique(mentioned.begin(), mentioned.end()), mentioned.end());
    for (int m : mentioned) ++lanes_with[m];
  }
  const auto count = [&](int x) { return lanes_with.at(x); };
  std::vector<std::vector<Factored>> lane(width);
  for (int l = 0; l < width; ++l) {
    for (const Term& t : terms[l]) {
      const ScalarNode& n = f.p.nodes[t.node];
      Factored fa{t.node, kOne, t.sub};
      if (n.op == ScalarOp::Const) {
        fa = {kOne, t.node, t.sub};
      } else if (n.op == ScalarOp::Mul) {
        products_out.push_back(t.node);
        const int ca = count(n.a), cb = count(n.b);
        // The factor more lanes share; between equals, a literal is the lane's own (it
        // becomes a constant vector), else the later node is the shared one.
        bool a_shared = ca > cb || (ca == cb && f.op(n.b) == ScalarOp::Const && f.op(n.a) != ScalarOp::Const) ||
                        (ca == cb && f.op(n.a) != ScalarOp::Const && f.op(n.b) != ScalarOp::Const && n.a > n.b);
        fa = a_shared ? Factored{n.a, n.b, t.sub} : Factored{n.b, n.a, t.sub};
      }
      lane[l].push_back(fa);
    }
    std::map<int, int> uses_of;
    for (Factored& fa : lane[l]) fa.occurrence = uses_of[fa.key]++;
  }
  // Every lane shares at least half its terms' factors with another lane: a lane that
  // shares little (the last row of one column beside the first rows of the next) would
  // pass the count of terms a step below on its partners' sharing and shift every later
  // group off its column's rows.
  std::map<StepKey, int> lanes_at;  // key -> the lanes with a term at it
  for (int l = 0; l < width; ++l)
    for (const Factored& fa : lane[l]) ++lanes_at[key_of(fa)];
  for (int l = 0; l < width; ++l) {
    int shared = 0;
    for (const Factored& fa : lane[l]) shared += lanes_at[key_of(fa)] >= 2 ? 1 : 0;
    if (2 * shared < static_cast<int>(lane[l].size())) return false;
  }
  // One order of the steps that every lane's order respects (Kahn's algorithm; among the
  // ready keys the one earliest in the lanes, so a plan is deterministic).
  std::map<StepKey, std::pair<int, int>> rank;  // key -> (position, lane) of its first mention
  std::map<StepKey, std::vector<StepKey>> next;
  std::map<StepKey, int> before;
  for (int l = 0; l < width; ++l)
    for (std::size_t k = 0; k < lane[l].size(); ++k) {
      const StepKey key = key_of(lane[l][k]);
      const std::pair<int, int> r{static_cast<int>(k), l};
      auto [it, fresh] = rank.emplace(key, r);
      if (!fresh) it->second = std::min(it->second, r);
      before.emplace(key, 0);
      // t(k-1) before t(k), except between the first two of a pair; both come before t3.
      if (k > 0 && !(pair[l] && k == 1)) {
        next[key_of(lane[l][k - 1])].push_back(key);
        ++before[key];
      }
      if (pair[l] && k == 2) {
        next[key_of(lane[l][0])].push_back(key);
        ++before[key];
      }
    }
  std::vector<StepKey> order;
  std::vector<StepKey> ready;
  for (const auto& [key, n] : before)
    if (n == 0) ready.push_back(key);
  while (!ready.empty()) {
    const auto best = std::min_element(ready.begin(), ready.end(),
                                       [&](const StepKey& a, const StepKey& b) { return rank[a] < rank[b]; });
    const StepKey key = *best;
    ready.erase(best);
    order.push_back(key);
    for (const StepKey& m : next[key])
      if (--before[m] == 0) ready.push_back(m);
  }
  if (order.size() != before.size()) return false;  // the lanes disagree on the order
  int terms_total = 0;
  for (int l = 0; l < width; ++l) terms_total += static_cast<int>(lane[l].size());
  // Worth it: at least two terms a step, three a lane (a short chain costs more to pack
  // than to compute).
  if (terms_total < 2 * static_cast<int>(order.size()) || terms_total < 3 * width) return false;

  g = LaneGroup{};
  g.width = width;
  g.negate = negated(roots[0]);
  for (int l = 0; l < width; ++l) g.root[l] = roots[l];
  std::map<StepKey, int> step_of;
  for (const StepKey& key : order) {
    step_of[key] = static_cast<int>(g.steps.size());
    g.steps.push_back(LaneStep{key.first, {}});
  }
  for (int l = 0; l < width; ++l) {
    if (pair[l] && step_of[key_of(lane[l][1])] < step_of[key_of(lane[l][0])]) std::swap(lane[l][0], lane[l][1]);
    for (std::size_t k = 0; k < lane[l].size(); ++k) {
      const Factored& fa = lane[l][k];
      g.steps[step_of[key_of(fa)]].lane[l] = LaneTerm{fa.x, fa.sub, k == 0};
    }
  }
  return true;
}

}  // namespace

LanePlan plan_lanes(const ScalarProgram& p, int width, bool narrow, int column_rows) {
  LanePlan plan;
  const int size = static_cast<int>(p.nodes.size());
  plan.removed.assign(size, 0);
  width = std::min(width, kMaxLanes);
  if (width < 2) return plan;
  const Facts f(p);
  // A root at its last output position (Contract).
  std::vector<int> last(size, -1);
  for (std::size_t o = 0; o < p.outputs.size(); ++o) last[p.outputs[o]] = static_cast<int>(o);
  const auto considered = [&](int o) {
    const int n = p.outputs[o];
    const auto chain = [&](int x) {
      const ScalarOp op = p.nodes[x].op;
      return op == ScalarOp::Add || op == ScalarOp::Sub || op == ScalarOp::Mul;
    };
    // -(chain): the chain used by the negation alone.
    const auto negated_chain = [&](int x) {
      const int c = p.nodes[x].a;
      return p.nodes[x].op == ScalarOp::Neg && chain(c) && f.uses[c] == 1 && !f.output[c];
    };
    return last[n] == o && f.uses[n] == 0 && (chain(n) || negated_chain(n));
  };
  std::vector<char> candidate(size, 0), needed(size, 0);
  std::vector<int> links, products;
  // Lanes out[i .. i+w): planned and recorded, or not.
  const auto try_group = [&](int i, int w) {
    int roots[kMaxLanes];
    for (int l = 0; l < w; ++l) roots[l] = p.outputs[i + l];
    LaneGroup g;
    if (!plan_group(f, roots, w, g, links, products)) return false;
    g.first_output = i;
    for (int x : links) candidate[x] = 1;
    for (int x : products)
      if (!f.output[x]) candidate[x] = 1;
    for (int l = 0; l < w; ++l) candidate[roots[l]] = 1;
    for (const LaneStep& s : g.steps) {
      if (s.shared >= 0) needed[s.shared] = 1;
      for (int l = 0; l < w; ++l) {
        if (s.lane[l].x >= 0) needed[s.lane[l].x] = 1;
        plan.terms += s.lane[l].x != kAbsent ? 1 : 0;
      }
    }
    plan.steps += static_cast<int>(g.steps.size());
    plan.groups.push_back(std::move(g));
    return true;
  };
  const std::vector<int> widths =
      width > 2 ? (narrow ? std::vector<int>{width, 2} : std::vector<int>{width}) : std::vector<int>{2};
  const int outputs = static_cast<int>(p.outputs.size());
  for (int o = 0; o < outputs;) {
    if (!considered(o)) {
      ++o;
      continue;
    }
    int end = o;  // the run [o, end), within one column when column_rows is given
    while (end < outputs && considered(end) && (end == o || column_rows <= 0 || end % column_rows != 0)) ++end;
    for (int i = o; i < end;) {
      int taken = 0;
      for (int w : widths)
        if (!taken && i + w <= end && try_group(i, w)) taken = w;
      // A whole column's last two or three rows: a group of their own, so that its groups
      // cover it (a Gram matrix's runs are part columns: its groups stay as they were).
      if (!taken && end - o == column_rows && end - i >= 2 && end - i < width && column_rows % width == end - i &&
          try_group(i, end - i))
        taken = end - i;
      i += taken ? taken : 1;
    }
    o = end;
  }
  // Removed: a candidate no group reads whose every user is removed (users come later).
  std::vector<int> live_users(size, 0);
  for (int i = size - 1; i >= 0; --i) {
    const ScalarNode& n = p.nodes[i];
    plan.removed[i] = candidate[i] && !needed[i] && live_users[i] == 0;
    if (!plan.removed[i]) {
      if (arity(n.op) >= 1) ++live_users[n.a];
      if (arity(n.op) == 2) ++live_users[n.b];
    }
  }
  return plan;
}

DotTable gathered_factors(const LanePlan& plan, int nodes) {
  DotTable t;
  t.removed = plan.removed;
  t.factor_of.assign(nodes, -1);
  const auto gather = [&](int x) {
    if (x < 0 || t.factor_of[x] >= 0) return;
    t.factor_of[x] = static_cast<int>(t.factors.size());
    t.factors.push_back(x);
    t.negated.push_back(0);
  };
  for (const LaneGroup& g : plan.groups)
    for (const LaneStep& s : g.steps) {
      gather(s.shared);
      for (int l = 0; l < g.width; ++l) gather(s.lane[l].x);
    }
  return t;
}

LanePlan renumbered(const LanePlan& plan, const std::vector<int>& new_of) {
  LanePlan r = plan;
  const auto node = [&](int& x) {
    if (x >= 0) x = new_of[x];
  };
  for (LaneGroup& g : r.groups) {
    for (int l = 0; l < g.width; ++l) node(g.root[l]);
    for (LaneStep& s : g.steps) {
      node(s.shared);
      for (int l = 0; l < g.width; ++l) node(s.lane[l].x);
    }
  }
  if (!plan.removed.empty()) {
    r.removed.assign(plan.removed.size(), 0);
    for (std::size_t i = 0; i < plan.removed.size(); ++i) r.removed[new_of[i]] = plan.removed[i];
  }
  return r;
}

std::array<double, kMaxLanes> evaluate_group(const LaneGroup& g, const std::vector<double>& value) {
  std::array<double, kMaxLanes> acc{};
  for (const LaneStep& s : g.steps)
    for (int l = 0; l < g.width; ++l) {
      const LaneTerm& t = s.lane[l];
      if (t.x == kAbsent) continue;
      const double x = t.x == kOne ? 1.0 : value[t.x];
      const double product = s.shared == kOne ? x : x * value[s.shared];
      acc[l] = t.first ? (t.sub ? -product : product) : t.sub ? acc[l] - product : acc[l] + product;
    }
  if (g.negate)
    for (int l = 0; l < g.width; ++l) acc[l] = -acc[l];
  return acc;
}

LaneColumns lane_columns(const LanePlan& plan, const ScalarProgram& p, int min_rows) {
  LaneColumns r;
  for (std::size_t i = 0; i < plan.groups.size(); ++i) r.rest.push_back(static_cast<int>(i));
  if (min_rows <= 0) return r;
  // Candidate columns: runs of groups over consecutive outputs, each output once.
  std::vector<int> uses(p.nodes.size(), 0);  // per node: its output positions
  for (int o : p.outputs) ++uses[o];
  std::vector<int> order(plan.groups.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return plan.groups[a].first_output < plan.groups[b].first_output; });
  // A group fits a column's steps: the same shared factors, every lane a node.
  const auto fits = [&](const LaneGroup& g, const LaneColumn& c) {
    if (g.negate != c.negate || g.steps.size() != c.shared.size()) return false;
    for (int l = 0; l < g.width; ++l)
      if (uses[g.root[l]] != 1) return false;
    for (std::size_t k = 0; k < g.steps.size(); ++k) {
      const LaneStep& s = g.steps[k];
      if (s.shared != c.shared[k] || s.shared < 0) return false;
      for (int l = 0; l < g.width; ++l)
        if (s.lane[l].x < 0) return false;
    }
    return true;
  };
  struct Candidate {
    LaneColumn column;
    std::vector<int> groups, widths;
    int rows = 0;
  };
  std::vector<Candidate> candidates;
  for (std::size_t i = 0; i < order.size();) {
    const LaneGroup& g0 = plan.groups[order[i]];
    Candidate c;
    c.column.first_output = g0.first_output;
    c.column.negate = g0.negate;
    for (const LaneStep& s : g0.steps) {
      c.column.shared.push_back(s.shared);
      c.column.sub.push_back(static_cast<char>(s.lane[0].sub));
    }
    std::size_t j = i;
    while (j < order.size()) {
      const LaneGroup& g = plan.groups[order[j]];
      if (g.first_output != c.column.first_output + c.rows || !fits(g, c.column)) break;
      c.groups.push_back(order[j]);
      c.widths.push_back(g.width);
      c.rows += g.width;
      ++j;
    }
    if (c.groups.empty()) {
      ++i;
      continue;
    }
    candidates.push_back(std::move(c));
    i = j;
  }
  // The height that covers the most rows: a candidate at least that high is taken cut to it
  // where a group ends there (a column whose last rows' group lines up with its others', and
  // one whose does not, are then alike).
  const auto cut = [](const Candidate& c, int h) {  // groups of c making h rows, or 0
    int rows = 0, groups = 0;
    while (rows < h && groups < static_cast<int>(c.groups.size())) rows += c.widths[groups++];
    return rows == h ? groups : 0;
  };
  std::set<int> heights;
  for (const Candidate& c : candidates)
    if (c.rows >= std::max(2, min_rows)) heights.insert(c.rows);
  int best = 0, covered = 0;
  for (int h : heights) {
    int rows = 0;
    for (const Candidate& c : candidates) rows += cut(c, h) ? h : 0;
    if (rows >= covered) best = h, covered = rows;
  }
  if (best == 0) return r;
  r.rows = best;
  for (Candidate& c : candidates) {
    const int groups = cut(c, best);
    c.groups.resize(groups);
    c.rows = groups ? best : 0;
  }
  std::map<std::vector<ColumnFactor>, int> vector_of;
  std::vector<char> taken(plan.groups.size(), 0);
  for (Candidate& c : candidates) {
    if (c.rows != r.rows) continue;
    for (std::size_t k = 0; k < c.column.shared.size(); ++k) {
      std::vector<ColumnFactor> x;
      for (int gi : c.groups)
        for (int l = 0; l < plan.groups[gi].width; ++l) {
          const LaneTerm& t = plan.groups[gi].steps[k].lane[l];
          x.push_back({t.x, t.sub != static_cast<bool>(c.column.sub[k])});
        }
      const auto [it, fresh] = vector_of.emplace(x, static_cast<int>(r.vectors.size()));
      if (fresh) r.vectors.push_back(std::move(x));
      c.column.vector.push_back(it->second);
    }
    for (int gi : c.groups) taken[gi] = 1;
    r.columns.push_back(std::move(c.column));
  }
  r.rest.clear();
  for (std::size_t i = 0; i < plan.groups.size(); ++i)
    if (!taken[i]) r.rest.push_back(static_cast<int>(i));
  return r;
}

LaneColumns renumbered(const LaneColumns& columns, const std::vector<int>& new_of) {
  LaneColumns r = columns;
  for (std::vector<ColumnFactor>& v : r.vectors)
    for (ColumnFactor& x : v) x.node = new_of[x.node];
  for (LaneColumn& c : r.columns)
    for (int& n : c.shared) n = new_of[n];
  return r;
}

std::vector<double> evaluate_column(const LaneColumns& columns, int c, const std::vector<double>& value) {
  const LaneColumn& col = columns.columns[c];
  std::vector<double> acc(columns.rows, -0.0);
  for (std::size_t k = 0; k < col.shared.size(); ++k) {
    const std::vector<ColumnFactor>& x = columns.vectors[col.vector[k]];
    const double y = col.sub[k] ? -value[col.shared[k]] : value[col.shared[k]];
    for (int row = 0; row < columns.rows; ++row)
      acc[row] = acc[row] + (x[row].negated ? -value[x[row].node] : value[x[row].node]) * y;
  }
  if (col.negate)
    for (double& a : acc) a = -a;
  return acc;
}

}  // namespace soa::specialise
