#include "lower/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "support/error.hpp"

namespace soa::lower {

using exec::Direction;
using exec::Quantity;
using exec::Stmt;
using exec::VExpr;
using exec::VKind;

namespace {

Where compose(Where outer, Where inner) {
  if (outer == Where::Self) return inner;
  if (inner == Where::Self || inner == outer) return outer;
  throw InternalError("sweep IR: an edge read nested in an edge of the other direction");
}

void collect(const VExpr& e, Where w, std::vector<Read>& out) {
  switch (e.kind()) {
    case VKind::Var:
    case VKind::TipIn: out.push_back({false, e.var(), w}); return;
    case VKind::Read: out.push_back({true, static_cast<int>(e.quantity()), w}); return;
    case VKind::Zero: return;
    case VKind::Sum:
      for (const auto& [c, t] : e.terms()) collect(t, w, out);
      return;
    case VKind::Apply:
      if (auto q = exec::block_source(e.block())) out.push_back({true, static_cast<int>(*q), w});
      collect(e.operand(), w, out);
      return;
    case VKind::EdgeIn: {  // phi(k,c) is stored at the child c
      const Where c = compose(w, Where::Children);
      out.push_back({true, static_cast<int>(Quantity::Transform), c});
      collect(e.operand(), c, out);
      return;
    }
    case VKind::EdgeOut:  // phi(p(k),k) is stored at k
      out.push_back({true, static_cast<int>(Quantity::Transform), w});
      collect(e.operand(), compose(w, Where::Parent), out);
      return;
  }
}

Read q(Quantity x, Where w) { return {true, static_cast<int>(x), w}; }

}  // namespace

std::vector<Read> reads(const Stmt& s) {
  std::vector<Read> out;
  if (s.kind != Stmt::Kind::Compute) {
    collect(s.rhs, Where::Self, out);
    return out;
  }
  switch (s.quantity) {
    case Quantity::Transform: return {{false, s.arg, Where::Self}};
    case Quantity::BiasAbar: return {q(Quantity::Velocity, Where::Self), {false, s.arg, Where::Self}};
    case Quantity::Velocity:
    case Quantity::BiasA:
      return {q(Quantity::Transform, Where::Self), q(Quantity::Velocity, Where::Parent), {false, s.arg, Where::Self}};
    case Quantity::BiasB: return {q(Quantity::Velocity, Where::Self)};
    case Quantity::Articulated:
      return {q(Quantity::Transform, Where::Children), q(Quantity::Articulated, Where::Children)};
    case Quantity::Composite: return {q(Quantity::Transform, Where::Children), q(Quantity::Composite, Where::Children)};
    case Quantity::Upsilon:
      return {q(Quantity::Transform, Where::Self), q(Quantity::Articulated, Where::Self),
              q(Quantity::Upsilon, Where::Parent)};
  }
  return out;
}

int defined_value(const Stmt& s, int var_count) {
  return s.kind == Stmt::Kind::Compute ? var_count + static_cast<int>(s.quantity) : s.dst;
}

namespace {

struct Group {
  std::vector<int> members;                 // statement indices, in execution order
  std::optional<Direction> direction;       // required by edge reads inside the group
  std::vector<std::pair<int, Where>> uses;  // (group, where) read from other groups
  bool variant = false;
};

class Scheduler {
public:
  Scheduler(const std::vector<Stmt>& st, int var_count) : st_(st), nvars_(var_count) {
    const int S = static_cast<int>(st.size());
    def_.assign(static_cast<std::size_t>(var_count + exec::kQuantityCount), -1);
    rd_.resize(static_cast<std::size_t>(S));
    for (int i = 0; i < S; ++i) {
      const int t = defined_value(st[i], nvars_);
      SOA_ASSERT(def_[t] == -1, "sweep IR: a value defined twice");
      def_[t] = i;
      rd_[i] = reads(st[i]);
    }
  }

  Schedule run(const std::vector<int>& outputs, int unit) {
    mark_live(outputs);
    find_groups();
    mark_variant(unit);
    order_groups();
    Schedule s;
    s.loops = place(false);
    s.column_loops = place(true);
    return s;
  }

private:
  const std::vector<Stmt>& st_;
  int nvars_;
  std::vector<int> def_;
  std::vector<std::vector<Read>> rd_;
  std::vector<char> live_;
  std::vector<int> group_of_;
  std::vector<Group> groups_;
  std::vector<int> order_;  // groups, topologically

  int def_of(const Read& r) const { return def_[r.quantity ? nvars_ + r.id : r.id]; }

  void mark_live(const std::vector<int>& outputs) {
    live_.assign(st_.size(), 0);
    std::vector<int> stack;
    for (int v : outputs)
      if (def_[v] >= 0) stack.push_back(def_[v]);
    while (!stack.empty()) {
      const int i = stack.back();
      stack.pop_back();
      if (live_[i]) continue;
      live_[i] = 1;
      for (const Read& r : rd_[i])
        if (const int d = def_of(r); d >= 0 && !live_[d]) stack.push_back(d);
    }
  }

  // Tarjan's strongly connected components over the live statements.
  void find_groups() {
    const int S = static_cast<int>(st_.size());
    std::vector<int> index(S, -1), low(S, 0), stack;
    std::vector<char> on(S, 0);
    int counter = 0;
    group_of_.assign(S, -1);
    std::function<void(int)> visit = [&](int v) {
      index[v] = low[v] = counter++;
      stack.push_back(v);
      on[v] = 1;
      for (const Read& r : rd_[v]) {
        const int w = def_of(r);
        if (w < 0) continue;
        if (index[w] < 0) {
          visit(w);
          low[v] = std::min(low[v], low[w]);
        } else if (on[w]) {
          low[v] = std::min(low[v], index[w]);
        }
      }
      if (low[v] != index[v]) return;
      Group g;
      for (int w = -1; w != v;) {
        w = stack.back();
        stack.pop_back();
        on[w] = 0;
        g.members.push_back(w);
        group_of_[w] = static_cast<int>(groups_.size());
      }
      groups_.push_back(std::move(g));
    };
    for (int i = 0; i < S; ++i)
      if (live_[i] && index[i] < 0) visit(i);
    for (std::size_t g = 0; g < groups_.size(); ++g) analyse(static_cast<int>(g));
  }

  std::string describe(const Group& g) const {
    std::set<std::string> labels;
    for (int i : g.members) labels.insert(st_[i].label);
    std::string s;
    for (const auto& l : labels) s += (s.empty() ? "" : ", ") + l;
    return s;
  }

  // Direction and execution order inside a group; its reads of other groups.
  void analyse(int gi) {
    Group& g = groups_[gi];
    std::sort(g.members.begin(), g.members.end());
    std::vector<std::pair<int, int>> self_edges;  // (reader, defined-before)
    for (int i : g.members) {
      for (const Read& r : rd_[i]) {
        const int d = def_of(r);
        if (d < 0) continue;
        if (group_of_[d] != gi) {
          g.uses.emplace_back(group_of_[d], r.where);
          continue;
        }
        if (r.where == Where::Self) {
          self_edges.emplace_back(i, d);
          continue;
        }
        const Direction dir = r.where == Where::Children ? Direction::Inward : Direction::Outward;
        if (g.direction && *g.direction != dir)
          throw UserError(fmt::format("no sweep form for {}: the recursion runs both inward and outward", describe(g)));
        g.direction = dir;
      }
    }
    // Kahn over the same-body reads, lowest statement index first.
    std::vector<int> order;
    std::vector<int> pending(g.members);
    while (!pending.empty()) {
      auto ready = std::find_if(pending.begin(), pending.end(), [&](int i) {
        for (const auto& [a, b] : self_edges)
          if (a == i && std::find(pending.begin(), pending.end(), b) != pending.end()) return false;
        return true;
      });
      if (ready == pending.end())
        throw UserError(
            fmt::format("no sweep form for {}: a value at body k would need itself at body k "
                        "(the inverse of I plus an operator that is not strictly causal)",
                        describe(g)));
      order.push_back(*ready);
      pending.erase(ready);
    }
    g.members = std::move(order);
  }

  void mark_variant(int unit) {
    if (unit < 0) return;
    bool changed = true;
    while (changed) {
      changed = false;
      for (Group& g : groups_) {
        if (g.variant) continue;
        for (int i : g.members)
          for (const Read& r : rd_[i]) {
            const int d = def_of(r);
            if ((!r.quantity && r.id == unit) || (d >= 0 && groups_[group_of_[d]].variant)) g.variant = true;
          }
        changed |= g.variant;
      }
    }
  }

  void order_groups() {
    const int G = static_cast<int>(groups_.size());
    std::vector<char> done(G, 0);
    auto first = [&](int g) {
      return groups_[g].members.empty() ? 0 : *std::min_element(groups_[g].members.begin(), groups_[g].members.end());
    };
    for (int step = 0; step < G; ++step) {
      int best = -1;
      for (int g = 0; g < G; ++g) {
        if (done[g]) continue;
        bool ready = true;
        for (const auto& [h, w] : groups_[g].uses) ready &= static_cast<bool>(done[h]);
        if (ready && (best < 0 || first(g) < first(best))) best = g;
      }
      SOA_ASSERT(best >= 0, "schedule: cyclic groups");
      done[best] = 1;
      order_.push_back(best);
    }
  }

  // Earliest loop for every group of one region, loops alternating from `start`.
  int assign(bool variant, Direction start, std::vector<int>& loop) const {
    auto dir = [start](int l) {
      return l % 2 == 0 ? start : (start == Direction::Inward ? Direction::Outward : Direction::Inward);
    };
    int count = 0;
    loop.assign(groups_.size(), -1);
    for (int g : order_) {
      const Group& gr = groups_[g];
      if (gr.variant != variant) continue;
      int l = 0;
      for (const auto& [h, w] : gr.uses)
        if (groups_[h].variant == variant) l = std::max(l, loop[h]);
      for (;; ++l) {
        if (gr.direction && *gr.direction != dir(l)) continue;
        bool ok = true;
        for (const auto& [h, w] : gr.uses) {
          if (groups_[h].variant != variant || loop[h] != l) continue;
          if ((w == Where::Children && dir(l) != Direction::Inward) ||
              (w == Where::Parent && dir(l) != Direction::Outward))
            ok = false;
        }
        if (ok) break;
      }
      loop[g] = l;
      count = std::max(count, l + 1);
    }
    return count;
  }

  std::vector<exec::Loop> place(bool variant) const {
    std::vector<exec::Loop> best;
    for (Direction start : {Direction::Outward, Direction::Inward}) {
      std::vector<int> loop;
      const int count = assign(variant, start, loop);
      std::vector<exec::Loop> loops(static_cast<std::size_t>(count));
      for (int l = 0; l < count; ++l)
        loops[l].direction = l % 2 == 0 ? start : (start == Direction::Inward ? Direction::Outward : Direction::Inward);
      for (int g : order_)
        if (loop[g] >= 0)
          for (int i : groups_[g].members) loops[loop[g]].body.push_back(st_[i]);
      std::erase_if(loops, [](const exec::Loop& l) { return l.body.empty(); });
      if (start == Direction::Outward || loops.size() < best.size()) best = std::move(loops);
    }
    return best;
  }
};

}  // namespace

Schedule schedule(const std::vector<Stmt>& statements, int var_count, const std::vector<int>& outputs, int unit) {
  return Scheduler(statements, var_count).run(outputs, unit);
}

}  // namespace soa::lower
