#include "specialise/step_loops.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <utility>

#include "support/error.hpp"

namespace soa::specialise {

namespace {

constexpr long kMinPackedPercent = 5;  // of a program's operations, in packs (see step_loops)

bool is_op(const ScalarNode& n) { return arity(n.op) > 0; }

// What a step's node shows to the rest of the program, per node (see the contract).
struct Facts {
  std::vector<int> region;    // per node: its step (label), or -1
  std::vector<char> outside;  // read by a computed node of another step, or of none
  std::vector<int> outputs;   // output positions holding it
};

Facts facts_of(const ScalarProgram& p, const DotTable& dots, const LoopOptions& options) {
  const int size = static_cast<int>(p.nodes.size());
  const auto removed = [&](int i) { return !dots.removed.empty() && dots.removed[i]; };
  // Packs of bodies leave negations out of the steps: the same step at two bodies may negate
  // different entries (the signs of their frames), and a negation left out reads its lane.
  // Packs leave sines and cosines out too: a back-end computes a part's angles first, all at
  // once, and a lane reads its own like any value from outside (a body's pose then packs).
  const auto alone = [&](int i) {
    const ScalarOp op = p.nodes[i].op;
    return options.pack > 0 && ((options.vary && op == ScalarOp::Neg) || op == ScalarOp::Sin || op == ScalarOp::Cos);
  };
  Facts f;
  f.region.assign(size, -1);
  for (int i = 0; i < size; ++i)
    if (is_op(p.nodes[i]) && !removed(i) && !alone(i)) f.region[i] = p.nodes[i].label;
  f.outside.assign(size, 0);
  for (int i = 0; i < size; ++i) {
    const ScalarNode& n = p.nodes[i];
    if (!is_op(n) || removed(i)) continue;
    for (int x : {n.a, arity(n.op) == 2 ? n.b : -1})
      if (x >= 0 && (f.region[x] != f.region[i] || f.region[i] < 0)) f.outside[x] = 1;
  }
  f.outputs.assign(size, 0);
  for (int o : p.outputs) ++f.outputs[o];
  return f;
}

// Per step (label) that `counted` marks, its level: 1 + the highest level among the counted
// steps it depends on, through any nodes (0: none); -1 for the others. Steps of one level
// do not depend on one another, and a step depends only on steps of lower levels. Nodes
// [from, to] hold every counted step's.
std::vector<int> step_levels(const ScalarProgram& p, const Facts& f, const std::vector<char>& counted, int from,
                             int to) {
  std::vector<int> level(p.labels.size(), -1);
  std::vector<int> node(static_cast<std::size_t>(to - from + 1), 0);  // 1 + the level it depends on
  const auto at = [&](int x) { return x >= from ? node[static_cast<std::size_t>(x - from)] : 0; };
  for (int i = from; i <= to; ++i) {
    const ScalarNode& n = p.nodes[i];
    if (!is_op(n)) continue;
    const int r = f.region[i];
    const bool step = r >= 0 && counted[r];
    int l = 0;
    for (int x : {n.a, arity(n.op) == 2 ? n.b : -1})
      if (x >= 0 && !(step && f.region[x] == r)) l = std::max(l, at(x));
    // A step's nodes come in program order, other nodes between them: its level is the
    // highest its nodes have read so far (what an earlier node of it passed on lags behind
    // when a later one raises it; step_loops' cycle check catches what that lets through).
    if (step) level[r] = std::max(level[r], l);
    node[static_cast<std::size_t>(i - from)] = step ? level[r] + 1 : l;
  }
  return level;
}

// The step's operations as integers: two steps are alike when these are equal. Values
// from outside the step are numbered in order of first use; `externals` receives them.
std::vector<std::uint64_t> signature(const ScalarProgram& p, const std::vector<int>& nodes, int region, const Facts& f,
                                     const DotTable& dots, const LoopOptions& options, std::vector<int>& externals) {
  std::vector<std::uint64_t> sig;
  sig.reserve(nodes.size() * 8);
  std::map<int, int> position, external;
  externals.clear();
  for (int i : nodes) {
    const ScalarNode& n = p.nodes[i];
    // Packs of bodies: a sum and a difference alike, as signed sums (signed_sum).
    const bool signed_sum_ = options.pack > 0 && options.vary && is_sum(n);
    const SignedSum sum = signed_sum_ ? signed_sum(p, n) : SignedSum{};
    sig.push_back(static_cast<std::uint64_t>(signed_sum_ ? ScalarOp::Add : n.op));
    for (int which = 0; which < arity(n.op); ++which) {
      const int x = signed_sum_ ? sum.x[which] : step_operand(p, n, which);
      const ScalarNode& o = p.nodes[x];
      if (o.op == ScalarOp::Const) {
        std::uint64_t bits = 0;
        std::memcpy(&bits, &o.value, sizeof bits);
        sig.insert(sig.end(), {1, options.vary ? 0 : bits});
      } else if (o.op == ScalarOp::Input) {
        const int group = options.input_group.empty() ? 0 : options.input_group[static_cast<std::size_t>(o.a)];
        sig.insert(sig.end(), {2, static_cast<std::uint64_t>(options.vary ? group : o.a)});
      } else if (f.region[x] == region && position.count(x)) {
        sig.insert(sig.end(), {3, static_cast<std::uint64_t>(position[x])});
      } else {
        const auto [it, added] = external.emplace(x, static_cast<int>(externals.size()));
        if (added) externals.push_back(x);
        // Packs read each lane's operand on its own: which external it is does not matter.
        sig.insert(sig.end(), {4, options.pack > 0 ? 0 : static_cast<std::uint64_t>(it->second)});
      }
    }
    if (options.pack > 0) {  // each lane stores its own values: what leaves the step need not match
      position.emplace(i, static_cast<int>(position.size()));
      continue;
    }
    const int factor = dots.factor_of.empty() ? -1 : dots.factor_of[i];
    // Whether a value is read outside its step does not tell per-body steps apart: a sweep's
    // last body's values are read by no later one (a back-end stores them all alike).
    sig.push_back(static_cast<std::uint64_t>(options.vary ? 0 : f.outside[i]) |
                  (factor < 0             ? 0u
                   : dots.negated[factor] ? 4u
                                          : 2u) |
                  static_cast<std::uint64_t>(f.outputs[i]) << 3);
    position.emplace(i, static_cast<int>(position.size()));
  }
  return sig;
}

// Per vertex of the graph `next`: whether it lies on a cycle (a strongly connected component
// of more than one vertex; the program's own nodes have no self-edges), among the vertices
// not `done`. Tarjan's algorithm, iteratively.
std::vector<char> on_cycle(const std::vector<std::vector<int>>& next, const std::vector<char>& done) {
  const int n = static_cast<int>(next.size());
  std::vector<int> index(n, -1), low(n, 0), stack;
  std::vector<char> on_stack(n, 0), cyclic(n, 0);
  std::vector<std::pair<int, std::size_t>> frames;  // (vertex, next edge)
  int counter = 0;
  for (int root = 0; root < n; ++root) {
    if (done[root] || index[root] >= 0) continue;
    frames.emplace_back(root, 0);
    index[root] = low[root] = counter++;
    stack.push_back(root);
    on_stack[root] = 1;
    while (!frames.empty()) {
      auto& [v, e] = frames.back();
      if (e < next[v].size()) {
        const int w = next[v][e++];
        if (done[w]) continue;
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          on_stack[w] = 1;
          frames.emplace_back(w, 0);
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      const int finished = v;
      frames.pop_back();
      if (!frames.empty()) low[frames.back().first] = std::min(low[frames.back().first], low[finished]);
      if (low[finished] != index[finished]) continue;
      std::vector<int> component;
      for (int w = -1; w != finished;) {
        w = stack.back();
        stack.pop_back();
        on_stack[w] = 0;
        component.push_back(w);
      }
      if (component.size() > 1)
        for (int w : component) cyclic[w] = 1;
    }
  }
  return cyclic;
}

// A topological order of the vertices the computed nodes map to (vertex[i] >= 0), taking
// first, of what is ready, the vertex whose first node comes first in p. Vertices on a
// cycle are left out: the order is then shorter than `live`, the vertices with a node.
struct VertexOrder {
  std::vector<int> order;
  std::vector<std::vector<int>> next;  // the edges, value to reader
  int live = 0;
};

VertexOrder vertex_order(const ScalarProgram& p, const std::vector<int>& vertex, int vertices) {
  const int size = static_cast<int>(p.nodes.size());
  VertexOrder out;
  out.next.assign(vertices, {});
  std::vector<int> indegree(vertices, 0), key(vertices, -1);
  for (int i = 0; i < size; ++i) {
    const ScalarNode& n = p.nodes[i];
    if (vertex[i] < 0) continue;
    if (key[vertex[i]] < 0) key[vertex[i]] = i;
    for (int x : {n.a, arity(n.op) == 2 ? n.b : -1})
      if (x >= 0 && vertex[x] >= 0 && vertex[x] != vertex[i]) {
        out.next[vertex[x]].push_back(vertex[i]);
        ++indegree[vertex[i]];
      }
  }
  using Item = std::pair<int, int>;  // (key, vertex)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  for (int v = 0; v < vertices; ++v) {
    if (key[v] < 0) continue;
    ++out.live;
    if (indegree[v] == 0) ready.emplace(key[v], v);
  }
  while (!ready.empty()) {
    const int v = ready.top().second;
    ready.pop();
    out.order.push_back(v);
    for (int w : out.next[v])
      if (--indegree[w] == 0) ready.emplace(key[w], w);
  }
  return out;
}

// The program's order with each pack's steps together, lane after lane: a topological
// order taking first, of what is ready, what came first in p (a pack: its first node). So
// a column's steps stay about where p has them, one after another up the tree, and a pack
// follows the pack it reads: their values pass in registers. `runs` receives each pack's
// first position and steps.
std::vector<int> pack_order(const ScalarProgram& p, const std::vector<std::vector<int>>& steps,
                            const std::vector<std::vector<int>>& packs, std::vector<std::pair<int, int>>& runs) {
  const int size = static_cast<int>(p.nodes.size()), count = static_cast<int>(packs.size());
  std::vector<int> vertex(size, -1);  // computed nodes: a pack, or count + node
  for (int k = 0; k < count; ++k)
    for (int r : packs[k])
      for (int i : steps[r]) vertex[i] = k;
  for (int i = 0; i < size; ++i)
    if (is_op(p.nodes[i]) && vertex[i] < 0) vertex[i] = count + i;
  const VertexOrder vo = vertex_order(p, vertex, count + size);
  if (static_cast<int>(vo.order.size()) != vo.live) throw InternalError("step_loops: packs that cannot run in order");
  std::vector<int> order;
  for (int i = 0; i < size; ++i)
    if (!is_op(p.nodes[i])) order.push_back(i);
  runs.clear();
  for (int v : vo.order) {
    if (v >= count) {
      order.push_back(v - count);
      continue;
    }
    runs.emplace_back(static_cast<int>(order.size()), static_cast<int>(packs[v].size()));
    for (int r : packs[v]) order.insert(order.end(), steps[r].begin(), steps[r].end());
  }
  return order;
}

}  // namespace

StepLoops step_loops(const ScalarProgram& p, const DotTable& dots, const LoopOptions& options) {
  const int size = static_cast<int>(p.nodes.size());
  const Facts f = facts_of(p, dots, options);

  // The steps, their signatures, and the sets of alike steps worth a loop.
  std::vector<std::vector<int>> steps(p.labels.size());
  for (int i = 0; i < size; ++i)
    if (f.region[i] >= 0) steps[f.region[i]].push_back(i);
  // Worth a loop: fewer lines than the steps written out (a row per step, the step once,
  // the loop's own lines).
  const auto worth = [&](const std::vector<int>& rs) {
    if (options.pack > 0) return rs.size() >= 2;  // two steps side by side already pay
    const long size = static_cast<long>(steps[rs[0]].size());
    const long ops = static_cast<long>(rs.size()) * size;
    return static_cast<int>(rs.size()) >= options.min_instances && ops >= options.min_ops &&
           ops > static_cast<long>(rs.size()) + size + options.loop_lines;
  };
  // Exactly alike steps first (a column's steps at one body); per-body loops gather what is
  // left, so that they do not merge the columns' sets into sets too big to run together.
  std::vector<std::vector<int>> sets;          // per candidate loop: its steps, in program order
  std::vector<int> kind(p.labels.size(), -1);  // per step: its set of alike steps, before any cut
  std::vector<std::vector<int>> kinds;         // those sets: the exactly alike, then packs of bodies'
  std::size_t body_kinds = std::numeric_limits<std::size_t>::max();  // the first kind of packs of bodies
  const auto of_bodies = [&](int r) { return static_cast<std::size_t>(kind[r]) >= body_kinds; };
  std::vector<int> left;
  for (const bool vary : {false, true}) {
    if (vary && !options.vary) break;
    LoopOptions o = options;
    o.vary = vary;
    if (vary) body_kinds = kinds.size();
    std::map<std::vector<std::uint64_t>, std::vector<int>> alike;
    std::vector<int> externals;
    const auto candidate = [&](std::size_t r) {
      const std::vector<int>& nodes = steps[r];
      if (static_cast<int>(nodes.size()) < options.min_size) return;
      // Sin and Cos are not repeated (share.hpp computes the angles' once); packs have no
      // vector square root.
      const bool trig = std::any_of(nodes.begin(), nodes.end(), [&](int i) {
        const ScalarOp op = p.nodes[i].op;
        return op == ScalarOp::Sin || op == ScalarOp::Cos || (options.pack > 0 && op == ScalarOp::Sqrt);
      });
      if (!trig) alike[signature(p, nodes, static_cast<int>(r), f, dots, o, externals)].push_back(static_cast<int>(r));
    };
    if (!vary)
      for (std::size_t r = 0; r < steps.size(); ++r) candidate(r);
    else
      for (int r : left) candidate(static_cast<std::size_t>(r));
    for (auto& [sig, rs] : alike) {
      if (worth(rs)) {
        for (int r : rs) kind[r] = static_cast<int>(kinds.size());
        sets.push_back(rs);
        kinds.push_back(rs);
      } else if (!vary) {
        left.insert(left.end(), rs.begin(), rs.end());
      }
    }
    std::sort(left.begin(), left.end());
  }
  std::sort(sets.begin(), sets.end(), [&](const auto& x, const auto& y) { return steps[x[0]][0] < steps[y[0]][0]; });
  for (auto& s : sets) std::sort(s.begin(), s.end(), [&](int x, int y) { return steps[x][0] < steps[y][0]; });

  // Packs: a set whose steps read one another's values (a sweep's step at each body of a
  // chain, reading its parent's) is cut into sets that do not, each step joining the first
  // that none of its steps it reads is in (the steps in program order: a step reads only
  // earlier ones). Packs of bodies go by what a step depends on through any node, not only
  // what it reads: a body's s x V_p depends on its parent's through the body's pose, a step
  // of another kind, and the two kinds' sets cut by reads alone would each have to run
  // before the other (talos_reduced's s x V_p, beta and gamma: no pack at all). Such a step
  // joins the set after the last one holding a step it depends on (step_levels).
  if (options.pack > 0) {
    std::vector<std::vector<int>> cut;
    std::vector<int> member_of(p.labels.size(), -1);
    std::vector<char> member(p.labels.size(), 0);
    for (const std::vector<int>& set : sets) {
      const std::size_t first = cut.size();
      if (of_bodies(set[0])) {
        int from = size, to = 0;
        for (int r : set) {
          member[r] = 1;
          from = std::min(from, steps[r].front());
          to = std::max(to, steps[r].back());
        }
        const std::vector<int> level = step_levels(p, f, member, from, to);
        for (int r : set) {  // in program order
          const std::size_t c = first + static_cast<std::size_t>(level[r]);
          if (cut.size() <= c) cut.resize(c + 1);
          cut[c].push_back(r);
          member[r] = 0;
        }
        continue;
      }
      for (int r : set) {
        std::set<int> read;  // the sets of `cut` holding a step r reads
        for (int i : steps[r]) {
          const ScalarNode& n = p.nodes[i];
          for (int x : {n.a, arity(n.op) == 2 ? n.b : -1})
            if (x >= 0 && f.region[x] >= 0 && f.region[x] != r && member_of[f.region[x]] >= static_cast<int>(first))
              read.insert(member_of[f.region[x]]);
        }
        std::size_t c = first;
        while (c < cut.size() && read.count(static_cast<int>(c))) ++c;
        if (c == cut.size()) cut.emplace_back();
        cut[c].push_back(r);
        member_of[r] = static_cast<int>(c);
      }
    }
    sets.clear();
    for (std::vector<int>& set : cut)
      if (set.size() >= 2) sets.push_back(std::move(set));
  }
  // A set whose steps read one another's values is not a loop (packs: none, cut above);
  // per-body loops take reads of an earlier step of the set (the instances run in order).
  std::vector<int> set_of_region(p.labels.size(), -1), place(p.labels.size(), -1);
  for (std::size_t c = 0; c < sets.size(); ++c)
    for (std::size_t k = 0; k < sets[c].size(); ++k) {
      set_of_region[sets[c][k]] = static_cast<int>(c);
      place[sets[c][k]] = static_cast<int>(k);
    }
  std::vector<char> alive(sets.size(), 1);
  for (int i = 0; i < size; ++i) {
    const ScalarNode& n = p.nodes[i];
    if (f.region[i] < 0 || set_of_region[f.region[i]] < 0) continue;
    for (int x : {n.a, arity(n.op) == 2 ? n.b : -1})
      if (x >= 0 && f.region[x] >= 0 && f.region[x] != f.region[i] &&
          set_of_region[f.region[x]] == set_of_region[f.region[i]] &&
          !(options.vary && options.pack == 0 && place[f.region[x]] < place[f.region[i]]))
        alive[set_of_region[f.region[i]]] = 0;
  }

  // A topological order with each live set as one vertex (Kahn's, the earliest original
  // node first); sets on a cycle are cut into their runs (the steps that follow each other
  // among the cycle's sets, in program order: per-body loops of two joint types along one
  // chain need each other's values by turns) or, one run already, dissolved, and the order
  // made again.
  std::vector<int> order;
  std::vector<int> emitted_sets;
  // Packs: per node, its run and lane once placed; the runs as (first position, instances).
  std::vector<int> run_of(size, -1), lane_of(size, -1);
  std::vector<std::pair<int, int>> runs;
  std::vector<std::vector<int>> packs;  // their steps, lane by lane
  int run_count = 0;
  bool recut = false;  // packs: the cycles' sets cut again by levels over every set (below)
  // A set's steps cut into runs of at most `pack`, lane by lane where an earlier run's
  // lanes flow: the steps reading from one run together, in its lanes' order (a back-end
  // then passes the values on in one vector, or one shuffle), the others in program order.
  const auto packed = [&](const std::vector<int>& set) {
    std::map<std::pair<int, int>, int> source;  // (run read, lane) -> step; runs not read last
    int unread = 0;
    for (int r : set) {
      std::pair<int, int> key{std::numeric_limits<int>::max(), unread};
      for (int i : steps[r]) {
        const ScalarNode& n = p.nodes[i];
        for (int x : {n.a, arity(n.op) == 2 ? n.b : -1})
          if (x >= 0 && f.region[x] != f.region[i] && run_of[x] >= 0 && key.first == std::numeric_limits<int>::max())
            key = {run_of[x], lane_of[x]};
      }
      if (key.first == std::numeric_limits<int>::max()) ++unread;
      while (source.count(key)) ++key.second;  // two steps reading one lane
      source.emplace(key, r);
    }
    std::vector<std::vector<int>> out;
    int from = -1;
    for (const auto& [key, r] : source) {
      // A run's group starts a new pack when it does not fit the current one.
      if (key.first != from) {
        int group = 0;
        for (auto it = source.lower_bound({key.first, 0}); it != source.end() && it->first.first == key.first; ++it)
          ++group;
        if (out.empty() || static_cast<int>(out.back().size()) + std::min(group, options.pack) > options.pack)
          out.emplace_back();
        from = key.first;
      }
      if (static_cast<int>(out.back().size()) == options.pack) out.emplace_back();
      out.back().push_back(r);
    }
    // Two small steps reading no pack: putting their values side by side costs about what
    // the pack saves (the back-end's vectors start from scalars); they stay apart. Larger
    // ones read few values for their operations (a body's world-frame inertia: its pose).
    std::set<int> sourced;
    for (const auto& [key, r] : source)
      if (key.first != std::numeric_limits<int>::max()) sourced.insert(r);
    for (std::size_t k = 0, n = out.size(); k < n; ++k)
      if (out[k].size() == 2 && steps[out[k][0]].size() < static_cast<std::size_t>(options.pair_min_size) &&
          !sourced.count(out[k][0]) && !sourced.count(out[k][1])) {
        out.push_back({out[k][1]});
        out[k].pop_back();
      }
    for (const std::vector<int>& run : out) {
      for (std::size_t l = 0; l < run.size(); ++l)
        for (int i : steps[run[l]]) {
          run_of[i] = run_count;
          lane_of[i] = static_cast<int>(l);
        }
      ++run_count;
    }
    return out;
  };
  for (;;) {
    const int sets_n = static_cast<int>(sets.size());
    set_of_region.assign(p.labels.size(), -1);
    for (int c = 0; c < sets_n; ++c)
      if (alive[c])
        for (int r : sets[c]) set_of_region[r] = c;
    std::vector<int> vertex(size, -1);  // computed nodes: a live set, or sets_n + node
    for (int i = 0; i < size; ++i) {
      if (!is_op(p.nodes[i])) continue;
      const int c = f.region[i] >= 0 ? set_of_region[f.region[i]] : -1;
      vertex[i] = c >= 0 && alive[c] ? c : sets_n + i;
    }
    const int vertices = sets_n + size;
    const VertexOrder vo = vertex_order(p, vertex, vertices);
    const std::vector<int>& done_vertices = vo.order;
    const std::vector<std::vector<int>>& next = vo.next;
    const int live = vo.live;
    if (static_cast<int>(done_vertices.size()) < live) {
      std::vector<char> done(vertices, 0);
      for (int v : done_vertices) done[v] = 1;
      // Only the sets on a cycle are cut (those after one merely wait for it).
      const std::vector<char> cyclic = on_cycle(next, done);
      std::vector<std::pair<int, int>> in_order;  // (first node, step) of the cycles' sets
      for (int c = 0; c < sets_n; ++c)
        if (alive[c] && cyclic[c])
          for (int r : sets[c]) in_order.emplace_back(steps[r][0], r);
      if (in_order.empty()) throw InternalError("step_loops: the program is not in topological order");
      // Packs: sets cut by their own levels can still close a cycle between two sets whose
      // levels do not line up (a body's pose at one set's level 2 reading the s x V_p at the
      // other's level 1 while a step of that level reads a pose of level 2). Once, the
      // kinds of step of the cycle's sets of packs of bodies are cut again, every step of
      // each by levels counted over all steps, along which every dependency climbs: no cycle
      // is left among them (what still closes one through other sets is cut into runs below).
      if (options.pack > 0 && !recut) {
        recut = true;
        std::vector<char> counted(p.labels.size(), 1);
        const std::vector<int> level = step_levels(p, f, counted, 0, size - 1);
        std::set<int> recut_kinds;
        for (int c = 0; c < sets_n; ++c)
          if (alive[c] && cyclic[c] && of_bodies(sets[c][0])) recut_kinds.insert(kind[sets[c][0]]);
        for (int c = 0; c < sets_n; ++c)
          if (alive[c] && recut_kinds.count(kind[sets[c][0]])) alive[c] = 0;
        // Every step of the kind, those its first cut left alone too.
        std::map<std::pair<int, int>, std::vector<int>> by_level;  // (kind, level) -> steps
        for (int k : recut_kinds)
          for (int r : kinds[static_cast<std::size_t>(k)]) by_level[{k, level[r]}].push_back(r);
        for (auto& [key, set] : by_level) {
          std::sort(set.begin(), set.end(), [&](int x, int y) { return steps[x][0] < steps[y][0]; });
          if (worth(set)) {
            sets.push_back(std::move(set));
            alive.push_back(1);
          }
        }
        continue;
      }
      std::sort(in_order.begin(), in_order.end());
      std::vector<std::vector<std::vector<int>>> runs(sets_n);
      for (std::size_t k = 0; k < in_order.size(); ++k) {
        const int c = set_of_region[in_order[k].second];
        if (k == 0 || set_of_region[in_order[k - 1].second] != c) runs[c].emplace_back();
        runs[c].back().push_back(in_order[k].second);
      }
      for (int c = 0; c < sets_n; ++c) {
        if (runs[c].empty()) continue;
        alive[c] = 0;
        if (runs[c].size() == 1) continue;
        for (auto& run : runs[c])
          if (worth(run)) {
            sets.push_back(std::move(run));
            alive.push_back(1);
          }
      }
      continue;
    }
    if (options.pack > 0) {  // the sets cut into packs in this order; pack_order orders the program
      for (int v : done_vertices)
        if (v < sets_n)
          for (std::vector<int>& run : packed(sets[v]))
            if (run.size() >= 2) packs.push_back(std::move(run));
      // A program with few packs is written out without them: they would save at most half
      // of their few operations, and a pack moves steps out of their order (talos_reduced's
      // inverse dynamics with one pair of steps side by side, 1.3% of its operations, took
      // 1.07 of its time without in two runs: docs/performance.md, "Literals last").
      long packed_ops = 0, ops = 0;
      for (const std::vector<int>& pack : packs) packed_ops += static_cast<long>(pack.size() * steps[pack[0]].size());
      for (const ScalarNode& n : p.nodes) ops += is_op(n) ? 1 : 0;
      if (packed_ops * 100 < ops * kMinPackedPercent) packs.clear();
      break;
    }
    for (int i = 0; i < size; ++i)
      if (!is_op(p.nodes[i])) order.push_back(i);
    for (int v : done_vertices) {
      if (v >= sets_n) {
        order.push_back(v - sets_n);
        continue;
      }
      emitted_sets.push_back(v);
      for (int r : sets[v]) order.insert(order.end(), steps[r].begin(), steps[r].end());
    }
    break;
  }

  if (!packs.empty()) order = pack_order(p, steps, packs, runs);

  StepLoops out;
  out.loop_of.assign(size, -1);
  if (emitted_sets.empty() && runs.empty()) {
    out.program = p;
    out.new_of.resize(size);
    for (int i = 0; i < size; ++i) out.new_of[i] = i;
    return out;
  }
  out.new_of.assign(size, -1);
  for (int i = 0; i < size; ++i) out.new_of[order[i]] = i;
  out.program.input_count = p.input_count;
  out.program.labels = p.labels;
  out.program.nodes.reserve(size);
  for (int old : order) {
    ScalarNode n = p.nodes[old];
    if (n.op != ScalarOp::Input && n.op != ScalarOp::Const) {
      n.a = out.new_of[n.a];
      if (arity(n.op) == 2) n.b = out.new_of[n.b];
    }
    out.program.nodes.push_back(n);
  }
  for (int o : p.outputs) out.program.outputs.push_back(out.new_of[o]);
  for (const auto& [first, instances] : runs) {
    StepLoops::Loop l;
    l.first = first;
    l.size = static_cast<int>(steps[p.nodes[order[first]].label].size());
    l.instances = instances;
    out.loops.push_back(l);
  }
  // In program order: the sets were emitted in the order they run.
  for (int c : emitted_sets) {
    StepLoops::Loop l;
    l.first = out.new_of[steps[sets[c][0]][0]];
    l.size = static_cast<int>(steps[sets[c][0]].size());
    l.instances = static_cast<int>(sets[c].size());
    out.loops.push_back(l);
  }
  for (std::size_t l = 0; l < out.loops.size(); ++l)
    for (int k = 0; k < out.loops[l].size * out.loops[l].instances; ++k)
      out.loop_of[out.loops[l].first + k] = static_cast<int>(l);
  return out;
}

DotTable renumbered(const DotTable& t, const std::vector<int>& new_of) {
  DotTable r = t;
  for (int& x : r.factors)
    if (x >= 0) x = new_of[x];
  const auto move = [&](auto& v, const auto& from, auto none) {
    if (from.empty()) return;
    v.assign(from.size(), none);
    for (std::size_t i = 0; i < from.size(); ++i) v[new_of[i]] = from[i];
  };
  move(r.removed, t.removed, char{0});
  move(r.factor_of, t.factor_of, -1);
  return r;
}

}  // namespace soa::specialise
