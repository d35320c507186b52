// The search for the cheapest equivalent form (rewrite.hpp: derive).
//
// Why directed rewriting with look-ahead rather than equality saturation: products are
// associative, and an e-graph that knows associativity and the library's expanding rules
// (NE, CRB, P-split, def-*) grows without bound (egg's documentation warns about exactly
// that), while the derivations we need are short chains in which at most a few steps do
// not pay for themselves (distribute, then L4, then collect). So: rounds of bounded
// best-first exploration, each committing the cheapest form it saw if that is strictly
// cheaper than where the round started.
//
// Termination: each round expands at most Options::expansions forms, none deeper than
// Options::lookahead moves nor larger than the size bound (Options::max_nodes, or twice the
// current form's size plus 40); a committed round strictly
// lowers the cost, and there are at most Options::rounds of them.
#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <unordered_set>

#include "algebra/arms.hpp"
#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "rewrite/moves.hpp"
#include "rewrite/rewrite.hpp"
#include "support/error.hpp"

namespace soa::rewrite {
namespace {

using ir::Expr;

constexpr const char* kNormalise =
    "reference 4: (AB)* = B* A*, (A + B)* = A* + B*, (A^-1)* = (A*)^-1, (AB)^-1 = B^-1 A^-1";

constexpr const char* kProductRule =
    "reference 7: d(A B) = dA B + A dB, d(A*) = (dA)*, d(A^-1) = -A^-1 dA A^-1, d(qd) = d(qdd) = d(T) = d(f0) = 0";

struct State {
  Expr expr;
  Cost cost;
  int depth = 0;
  int parent = -1;
  std::string rule, citation;
  Site site;  // in the parent's form
};

struct Queued {
  Cost cost;
  int depth;
  int index;
};

// Min-heap order: cheaper first, then shallower, then older (deterministic).
struct Later {
  bool operator()(const Queued& a, const Queued& b) const {
    if (a.cost < b.cost) return false;
    if (b.cost < a.cost) return true;
    if (a.depth != b.depth) return a.depth > b.depth;
    return a.index > b.index;
  }
};

struct Context {
  std::vector<const Rule*> rules;
  std::optional<ir::Shape> shape;
  std::size_t max_nodes = 0;
  const Options* options = nullptr;
};

// A step rewriting `before` at `site`. Printers mark the site by its node, and forms share
// nodes (normalize returns canonical subtrees as they are, a rule's right side is placed
// as it is), so `before` is a copy in which every node has one place.
Step step_at(std::string rule, std::string citation, const Expr& before, const Site& site, Expr after) {
  Step s;
  s.rule = std::move(rule);
  s.citation = std::move(citation);
  s.before = ir::copy(before);
  s.after = std::move(after);
  s.site_in_before = node_at(s.before, site.path).get();
  if (site.kind == Site::Kind::Factors) {
    s.begin = site.begin;
    s.end = site.end;
  }
  return s;
}

Step make_step(const State& parent, const State& child) {
  Step s = step_at(child.rule, child.citation, parent.expr, child.site, child.expr);
  s.cost_after = child.cost;
  return s;
}

// One round: the cheapest form within reach of `start`, as the steps leading to it (empty
// when nothing strictly cheaper was found).
std::vector<Step> explore(const Expr& start, const Cost& start_cost, const Context& cx) {
  const Options& o = *cx.options;
  std::vector<State> states{{start, start_cost, 0, -1, {}, {}, {}}};
  std::unordered_set<Expr, ir::ExprHash> visited{start};
  std::priority_queue<Queued, std::vector<Queued>, Later> queue;
  queue.push({start_cost, 0, 0});
  int best = 0;
  std::size_t expanded = 0;
  while (!queue.empty() && expanded < o.expansions) {
    const Queued q = queue.top();
    queue.pop();
    if (q.depth >= o.lookahead) continue;
    ++expanded;
    const Expr from = states[q.index].expr;
    for (auto& m : moves(from, cx.rules)) {
      if (!visited.insert(m.result).second) continue;
      if (ir::node_count(m.result) > cx.max_nodes) continue;
      const Cost c = cost(m.result, *o.definitions, cx.shape);
      // Never explore through a worse complexity order, nor through forms that cost many
      // more sweeps than the start: those are not detours a short derivation takes.
      if (c.order > start_cost.order || c.sweeps > start_cost.sweeps + o.sweep_slack) continue;
      const int index = static_cast<int>(states.size());
      states.push_back(
          {std::move(m.result), c, q.depth + 1, q.index, std::move(m.rule), std::move(m.citation), std::move(m.site)});
      if (c < states[best].cost) best = index;
      queue.push({c, q.depth + 1, index});
    }
  }
  std::vector<Step> path;
  for (int i = best; states[i].parent >= 0; i = states[i].parent)
    path.push_back(make_step(states[states[i].parent], states[i]));
  std::reverse(path.begin(), path.end());
  return path;
}

// Every identity holds for each arm alone (003 Part II sec. 5: the aggregate operator forms
// "have precisely the same structure as the single arm case", e.g. eq. 5.2b), so a rule of
// the whole robot's symbols is also a rule of arm i's: rename each symbol X to Xi. Named
// "MINV[1]", "L4[2] (reversed)", "L4[1]*".
Rule for_arm(const Rule& r, int arm) {
  Rule a = r;
  a.name = fmt::format("{}[{}]{}", r.identity, arm, r.name.substr(r.identity.size()));
  a.lhs = ir::on_arm(r.lhs, arm);
  a.rhs = ir::on_arm(r.rhs, arm);
  return a;
}

bool whole_robot_rule(const Rule& r) { return ir::arms_in(r.lhs).empty() && ir::arms_in(r.rhs).empty(); }

std::optional<ir::Shape> shape_of(const Expr& e) {
  try {
    return ir::infer_shape(e);
  } catch (const ir::ShapeError&) {
    return std::nullopt;
  }
}

// ---- derivatives ----------------------------------------------------------------------------

// The library's definition of `e` when it is a Defined or Compound symbol of the whole
// robot (calM = H phi M phi* H*, phitilde = phi - I, ...), else null.
const ir::Definition* defined(const Expr& e, const ir::Definitions& defs) {
  if (!e.is(ir::Op::Symbol) || !e.info() || e.arm() != 0) return nullptr;
  if (e.info()->role != ir::Role::Defined && e.info()->role != ir::Role::Compound) return nullptr;
  return defs.of(e.info()->id);
}

// Under every d(...)/dq_i, the symbols the library defines replaced by their definitions,
// each recorded once in `used`.
Expr expand_under_derivatives(const Expr& e, const ir::Definitions& defs, bool inside, std::vector<ir::Cited>& used) {
  if (inside && e.is(ir::Op::Symbol)) {
    const ir::Definition* d = defined(e, defs);
    if (!d) return e;
    if (std::none_of(used.begin(), used.end(), [&](const ir::Cited& c) { return c.identity == d->source.identity; }))
      used.push_back(d->source);
    return expand_under_derivatives(d->body, defs, true, used);
  }
  if (e.kids().empty()) return e;
  std::vector<Expr> kids;
  for (const Expr& k : e.kids())
    kids.push_back(expand_under_derivatives(k, defs, inside || e.is(ir::Op::Derivative), used));
  return ir::rebuild(e, std::move(kids));
}

// d(e)/dq_i by the rules of differentiation, down to single operators: sums and scalings
// term by term, products by the product rule, (dA)* for d(A*), -A^-1 dA A^-1 for d(A^-1);
// the state's vectors (qd, qdd, T, f0) do not depend on q.
Expr d_of(const Expr& e) {
  using ir::Op;
  switch (e.op()) {
    case Op::Identity:
    case Op::Zero: return ir::zero();
    case Op::Symbol:
      if (e.info() && e.info()->role == ir::Role::Input) return ir::zero();
      return ir::derivative(e);
    case Op::Scale: return ir::scale(e.coef(), d_of(e.kid(0)));
    case Op::Sum: {
      std::vector<Expr> terms;
      for (const Expr& t : e.kids()) terms.push_back(d_of(t));
      return ir::sum(std::move(terms));
    }
    case Op::Product: {
      std::vector<Expr> terms;
      for (std::size_t j = 0; j < e.kids().size(); ++j) {
        std::vector<Expr> f;
        for (std::size_t k = 0; k < e.kids().size(); ++k) f.push_back(k == j ? d_of(e.kid(k)) : ir::copy(e.kid(k)));
        terms.push_back(ir::product(std::move(f)));
      }
      return ir::sum(std::move(terms));
    }
    case Op::Adjoint: return ir::adjoint(d_of(e.kid(0)));
    case Op::Inverse: return ir::neg(ir::product({ir::copy(e), d_of(e.kid(0)), ir::copy(e)}));
    case Op::Derivative: return ir::derivative(e);
  }
  return ir::derivative(e);
}

// Every d(...)/dq_i of `e` taken apart by d_of.
Expr push_derivatives(const Expr& e) {
  if (e.is(ir::Op::Derivative)) return d_of(e.kid(0));
  if (e.kids().empty()) return e;
  std::vector<Expr> kids;
  for (const Expr& k : e.kids()) kids.push_back(push_derivatives(k));
  return ir::rebuild(e, std::move(kids));
}

// Does `e` hold a derivative of something other than a single primitive operator?
bool compound_derivative(const Expr& e, const ir::Definitions& defs) {
  if (e.is(ir::Op::Derivative)) return !e.kid(0).is(ir::Op::Symbol) || defined(e.kid(0), defs);
  return std::any_of(e.kids().begin(), e.kids().end(), [&](const Expr& k) { return compound_derivative(k, defs); });
}

}  // namespace

Derivation derive(const Expr& input, const std::vector<Rule>& rules, const Options& options) {
  if (!options.definitions)
    throw InternalError("rewrite::derive needs the library's definitions (Options::definitions)");
  Context cx;
  cx.options = &options;
  // The input's arms decide the rule instances. A form reached from the input only holds
  // the arms' symbols and the whole robot's symbols it started with (rules never add an
  // arm), so the whole robot's rules are only needed when the input has such symbols.
  const std::vector<int> arms = ir::arms_in(input);
  const bool whole = arms.empty() || ir::mentions_whole_robot(input);
  std::vector<Rule> instances;
  for (const auto& r : rules) {
    if (r.guards.serial_only && !options.serial_chain) continue;
    if (r.guards.introduces_vector && !options.allow_new_vectors) continue;
    if (!whole_robot_rule(r)) {
      cx.rules.push_back(&r);
      continue;
    }
    for (int arm : arms) instances.push_back(for_arm(r, arm));
    if (whole || !ir::mentions_whole_robot(r.lhs)) cx.rules.push_back(&r);
  }
  for (const auto& r : instances) cx.rules.push_back(&r);
  cx.shape = shape_of(input);
  const std::size_t n = ir::node_count(input);
  cx.max_nodes = options.max_nodes ? options.max_nodes : 2 * n + 40;

  Derivation d;
  d.input = input;
  d.shape = cx.shape;
  d.input_cost = cost(input, *options.definitions, cx.shape);
  Expr current = normalize(input);
  Cost current_cost = cost(current, *options.definitions, cx.shape);
  if (ir::print(current) != ir::print(input)) {
    Step s;
    s.rule = "normalise";
    s.citation = kNormalise;
    s.before = input;
    s.after = current;
    s.site_in_before = input.get();
    s.cost_after = current_cost;
    d.steps.push_back(std::move(s));
  }
  // The route the caller chose: each rule at its first match, before anything else.
  for (const std::string& name : options.via) {
    const auto it = std::find_if(cx.rules.begin(), cx.rules.end(), [&](const Rule* r) { return r->name == name; });
    if (it == cx.rules.end())
      throw UserError(fmt::format("--via {}: no rule of the identity library has this name", name));
    const std::vector<Site> sites = find_matches(current, (*it)->lhs);
    if (sites.empty())
      throw UserError(fmt::format("--via {}: the rule ({} = ...) does not apply to {}", name, ir::print((*it)->lhs),
                                  ir::print(current)));
    const Site& site = sites.front();
    Step s = step_at((*it)->name, (*it)->citation, current, site, normalize(replace_at(current, site, (*it)->rhs)));
    current = s.after;
    current_cost = s.cost_after = cost(current, *options.definitions, cx.shape);
    d.steps.push_back(std::move(s));
  }
  // d(...)/dq_i of anything but a single operator (reference 7): first what the library
  // defines under it, by its definitions, then the rules of differentiation down to single
  // operators, whose derivatives the library's D-* rules give in the search below.
  if (compound_derivative(current, *options.definitions)) {
    const auto record = [&](std::string rule, std::string citation, Expr after) {
      Step s;
      s.rule = std::move(rule);
      s.citation = std::move(citation);
      s.before = current;
      s.after = std::move(after);
      s.site_in_before = current.get();
      current = s.after;
      current_cost = s.cost_after = cost(current, *options.definitions, cx.shape);
      d.steps.push_back(std::move(s));
    };
    std::vector<ir::Cited> used;
    const Expr expanded = normalize(expand_under_derivatives(current, *options.definitions, false, used));
    if (!used.empty()) {
      std::string names, citations;
      for (const ir::Cited& c : used) {
        names += (names.empty() ? "" : ", ") + c.identity;
        citations += (citations.empty() ? "" : "; ") + c.citation;
      }
      record(names, citations, expanded);
    }
    record("product rule", kProductRule, normalize(push_derivatives(current)));
  }
  for (std::size_t round = 0; round < options.rounds; ++round) {
    // The size bound follows the committed form: an expression with k calM^-1 grows by
    // MINV k times, each a committed improvement, which a bound fixed by the input's size
    // would stop half way.
    if (!options.max_nodes) cx.max_nodes = std::max(cx.max_nodes, 2 * ir::node_count(current) + 40);
    std::vector<Step> path = explore(current, current_cost, cx);
    if (path.empty()) break;
    current = path.back().after;
    current_cost = path.back().cost_after;
    for (auto& s : path) d.steps.push_back(std::move(s));
  }
  d.final = current;
  d.cost = current_cost;
  return d;
}

std::vector<std::string> rules_used(const Derivation& d) {
  std::vector<std::string> names;
  for (const auto& s : d.steps) names.push_back(s.rule);
  return names;
}

std::string explain(const Derivation& d) {
  std::string out = fmt::format("input: {}   ({})\n", ir::print(d.input), to_string(d.input_cost));
  for (const auto& s : d.steps) {
    ir::PrintOptions marked;
    marked.mark = s.site_in_before;
    marked.mark_begin = s.begin;
    marked.mark_end = s.end;
    out += fmt::format("{} [{}]: {}\n    = {}   ({})\n", s.rule, s.citation, ir::print(s.before, marked),
                       ir::print(s.after), to_string(s.cost_after));
  }
  out += fmt::format("final: {}   ({})\n", ir::print(present(d.final)), to_string(d.cost));
  return out;
}

}  // namespace soa::rewrite
