// Pass 3 of lower.hpp: operator factors -> per-body statements; then schedule() into loops.
#include "lower/lower.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "algebra/vocabulary.hpp"
#include "lower/schedule.hpp"
#include "rewrite/cost.hpp"
#include "support/error.hpp"

namespace soa::lower {

using exec::Block;
using exec::Quantity;
using exec::Space;
using exec::VExpr;
using exec::VKind;
using ir::Expr;
using ir::Op;

namespace {

Space space_of(ir::Dim d) {
  switch (d) {
    case ir::Dim::Joint: return Space::Joint;
    case ir::Dim::Spatial: return Space::Spatial;
    case ir::Dim::Tip: return Space::Tip;
    case ir::Dim::One: break;
  }
  throw InternalError("lower: a vector width is not a space");
}

// A per-body value under construction and the operator factors fused into it since it was
// last stored in a var (written order, for statement labels).
struct Value {
  VExpr e;
  std::string label;
};

std::string join(std::string_view factor, std::string_view inner) {
  return inner.empty() ? std::string(factor) : fmt::format("{} {}", factor, inner);
}

bool trivial(const VExpr& e) {
  return e.kind() == VKind::Var || e.kind() == VKind::Read || e.kind() == VKind::Zero || e.space() == Space::Tip;
}

bool contains_edge(const VExpr& e) {
  switch (e.kind()) {
    case VKind::EdgeIn:
    case VKind::EdgeOut: return true;
    case VKind::Apply: return contains_edge(e.operand());
    case VKind::Sum:
      for (const auto& [c, t] : e.terms())
        if (contains_edge(t)) return true;
      return false;
    default: return false;
  }
}

// A sum with like heads merged by linearity: c1 X(a) + c2 X(b) = X(c1 a + c2 b) for X an
// edge or the same block. Sharing one phi between two operands is 001 eq. 50's
// z(k) = phi(k,k-1) [G(k-1) T(k-1) + taubar(k-1) z(k-1)].
VExpr vsum(std::vector<std::pair<double, VExpr>> terms, Space space) {
  const VExpr flat = exec::sum(std::move(terms), space);
  if (flat.kind() != VKind::Sum) return flat;
  const auto& t = flat.terms();
  auto same_head = [](const VExpr& a, const VExpr& b) {
    if (a.kind() != b.kind()) return false;
    if (a.kind() == VKind::Apply) return a.block() == b.block();
    return a.kind() == VKind::EdgeIn || a.kind() == VKind::EdgeOut;
  };
  std::vector<std::pair<double, VExpr>> out;
  std::vector<char> used(t.size(), 0);
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (used[i]) continue;
    std::vector<std::pair<double, VExpr>> inner;
    for (std::size_t j = i; j < t.size(); ++j)
      if (!used[j] && same_head(t[i].second, t[j].second)) {
        used[j] = 1;
        inner.emplace_back(t[j].first, t[j].second.operand());
      }
    if (inner.size() < 2) {
      out.push_back(t[i]);
      continue;
    }
    const VExpr& head = t[i].second;
    const VExpr operand = vsum(std::move(inner), head.operand().space());
    if (head.kind() == VKind::Apply)
      out.emplace_back(1.0, exec::apply(head.block(), operand));
    else if (head.kind() == VKind::EdgeIn)
      out.emplace_back(1.0, exec::edge_in(operand));
    else
      out.emplace_back(1.0, exec::edge_out(operand));
  }
  return exec::sum(std::move(out), space);
}

std::string joined_labels(const std::vector<Value>& parts) {
  std::string s;
  for (const Value& v : parts)
    if (!v.label.empty()) s += (s.empty() ? "" : ", ") + v.label;
  return s;
}

std::optional<std::pair<Expr, Expr>> gram_form(const Expr& x, const ir::Definitions& defs);

// A Gram form's weight c D^-1: {c, true} (split by D's factors, Lowerer::gram_columns).
std::pair<double, bool> split_weight(const Expr& weight) {
  const bool scaled = weight.is(Op::Scale);
  const Expr& w = scaled ? weight.kid(0) : weight;
  const bool dinv = w.is(Op::Inverse) && w.kid(0).is(Op::Symbol) && w.kid(0).info()->id == ir::Sym::D;
  return {scaled ? weight.coef() : 1.0, dinv};
}

class Lowerer {
public:
  Lowerer(const ir::Algebra& algebra, const LowerOptions& o) : algebra_(algebra), opt_(o) { q_ = input("q"); }

  exec::SweepProgram vector_program(const Expr& e, Space rows, std::string source) {
    const Value v = e.is(Op::Zero) ? Value{exec::zero(rows), ""} : value(e);  // a 0 has no shape of its own
    const int out = output_var(v);
    exec::SweepProgram p = program(std::move(source));
    p.output = {opt_.output, vars_[out].space, std::nullopt, out};
    p.loops = phased_loops({out});
    return p;
  }

  // The loops of a vector program with tip-space solves (sweep_ir.hpp Solve): each solve
  // splits the statements in two, those it needs (scheduled before it, its matrix's
  // column statements into its column loops) and the rest, which may read its result.
  std::vector<exec::Loop> phased_loops(const std::vector<int>& outputs) {
    const int var_count = static_cast<int>(vars_.size());
    std::vector<exec::Stmt> pending = stmts_;
    std::vector<exec::Loop> loops;
    // Schedules what `needs` needs; the statements placed leave `pending`.
    const auto phase = [&](const std::vector<int>& needs, int unit) {
      Schedule s = schedule(pending, var_count, needs, unit);
      std::vector<char> done(static_cast<std::size_t>(var_count + exec::kQuantityCount), 0);
      for (const auto* part : {&s.loops, &s.column_loops})
        for (const exec::Loop& l : *part)
          for (const exec::Stmt& st : l.body) done[defined_value(st, var_count)] = 1;
      std::erase_if(pending, [&](const exec::Stmt& st) { return done[defined_value(st, var_count)]; });
      return s;
    };
    if (springs_ >= 0 || errors_ >= 0) {
      // fg and ex first: they read only the kinematics, and a solve's right-hand side may
      // read them.
      std::vector<int> needs = {var_count + static_cast<int>(Quantity::Transform)};
      if (springs_ >= 0) needs.push_back(var_count + static_cast<int>(Quantity::Velocity));
      Schedule s = phase(needs, -1);
      loops.insert(loops.end(), s.loops.begin(), s.loops.end());
      if (springs_ >= 0) loops.push_back(exec::Loop{exec::Direction::Inward, {}, nullptr, springs_, -1});
      if (errors_ >= 0) loops.push_back(exec::Loop{exec::Direction::Inward, {}, nullptr, -1, errors_});
    }
    for (const PendingSolve& sv : solves_) {
      Schedule s = phase({sv.rhs, sv.a, sv.wa}, sv.unit);
      loops.insert(loops.end(), s.loops.begin(), s.loops.end());
      exec::Loop solve;
      solve.solve = std::make_shared<const exec::Solve>(
          exec::Solve{exec::Columns{Space::Tip, sv.unit, std::move(s.column_loops), sv.a, exec::Fill::Gram, sv.wa},
                      sv.rhs, sv.dst});
      loops.push_back(std::move(solve));
    }
    Schedule rest = schedule(pending, var_count, outputs, -1);
    loops.insert(loops.end(), rest.loops.begin(), rest.loops.end());
    return loops;
  }

  void no_solves(const std::string& source) const {
    if (!solves_.empty() || springs_ >= 0 || errors_ >= 0)
      throw UserError(
          fmt::format("{}: a tip-space inverse, fg or ex is lowered in a vector's program; a Gram form "
                      "containing one is not (apply it to a vector, e.g. a kernel input)",
                      source));
  }

  exec::SweepProgram column_program(const Expr& op, Space cols, exec::Fill fill, std::string source) {
    const int unit = fresh(cols, "e");
    const int out = output_var(apply(op, {exec::var(unit, cols), ""}));
    exec::SweepProgram p = program(std::move(source));
    p.output = {opt_.output, vars_[out].space, cols, -1};
    if (!solves_.empty() || springs_ >= 0 || errors_ >= 0) {
      // With a tip-space solve ((J calM^-1 J*)^-1 itself, Lambda): every column runs the
      // whole vector program on its e_j, the factorisation included. The runtime repeats
      // it per column; specialised code computes it once (CSE: the same operations on the
      // same values), then one pair of substitutions per column.
      p.columns = exec::Columns{cols, unit, phased_loops({out}), out, fill};
      return p;
    }
    Schedule s = schedule(stmts_, static_cast<int>(vars_.size()), {out}, unit);
    p.loops = std::move(s.loops);
    p.columns = exec::Columns{cols, unit, std::move(s.column_loops), out, fill};
    return p;
  }

  // A* W A as a Gram matrix (exec::Fill::Gram): per column j, the inward sweeps of A e_j
  // and W A e_j; then out(i,j) = (A e_i) . (W A e_j).
  exec::SweepProgram gram_program(const Expr& half, const Expr& weight, Space cols, std::string source) {
    const int unit = fresh(cols, "e");
    const auto [a, wa] = gram_columns(half, weight, unit, cols, "y", "w");
    no_solves(source);
    Schedule s = schedule(stmts_, static_cast<int>(vars_.size()), {a, wa}, unit);
    exec::SweepProgram p = program(std::move(source));
    p.output = {opt_.output, cols, cols, -1};
    p.loops = std::move(s.loops);
    p.columns = exec::Columns{cols, unit, std::move(s.column_loops), a, exec::Fill::Gram, wa};
    return p;
  }

  // A Gram form's two vars per column j: A e_j and W A e_j. A weight c D^-1 is split by D's
  // factors, D = L_D Delta_D L_D* per body (the sweep IR's blocks L_D^-1, Delta_D^-1): the
  // column becomes L_D^-1 A e_j and its partner c Delta_D^-1 L_D^-1 A e_j, whose dot products
  // are the same entries, (A e_i)* D^-1 (A e_j). A free-flyer's 6 x 6 block then costs each
  // column a triangular solve (30 operations) and 6 products, not a 6 x 6 product (66).
  std::pair<int, int> gram_columns(const Expr& half, const Expr& weight, int unit, Space cols, const char* a_name,
                                   const char* wa_name) {
    const Value column = apply(half, {exec::var(unit, cols), ""});
    if (const auto [c, split] = split_weight(weight); split) {
      const int a = output_var(block(Block::LDinv, column), a_name);
      const Value wa = block(Block::DeltaInv, {exec::var(a, vars_[a].space), ""});
      return {a, output_var({vsum({{c, wa.e}}, wa.e.space()), wa.label}, wa_name)};  // c = 1: wa unscaled
    }
    const int a = output_var(column, a_name);
    return {a, output_var(apply(weight, {exec::var(a, vars_[a].space), ""}), wa_name)};
  }

  std::vector<exec::LoweringStep> steps;  // the ways taken, for SweepProgram::lowering

private:
  const ir::Algebra& algebra_;
  const LowerOptions& opt_;
  std::vector<exec::Var> vars_;
  std::vector<exec::Stmt> stmts_;
  std::map<std::string, int> inputs_;
  std::array<bool, exec::kQuantityCount> have_{};
  struct PendingSolve {
    int unit, a, wa, rhs, dst;
  };
  std::vector<PendingSolve> solves_;  // in the order their values are needed
  int springs_ = -1;                  // the Tip var fg, once an expression reads it
  int errors_ = -1;                   // the Tip var ex, likewise
  std::map<std::string, int> counters_;
  int q_ = -1;

  // ---- vars, inputs, quantities ---------------------------------------------------------

  int fresh(Space s, std::string name = {}) {
    if (name.empty()) {
      const std::string prefix = s == Space::Spatial ? "z" : s == Space::Joint ? "y" : "t";
      name = fmt::format("{}{}", prefix, ++counters_[prefix]);
    }
    vars_.push_back({std::move(name), s});
    return static_cast<int>(vars_.size()) - 1;
  }

  int input(const std::string& name) {
    if (auto it = inputs_.find(name); it != inputs_.end()) return it->second;
    if (!opt_.inputs.empty() && std::find(opt_.inputs.begin(), opt_.inputs.end(), name) == opt_.inputs.end())
      throw UserError(
          fmt::format("kernel '{}': the expression needs input '{}', which is not declared", opt_.name, name));
    // q, the configuration, is not an operator-language name; the others are the Inputs of
    // the vocabulary.
    Space s = Space::Config;
    if (name != "q") {
      const ir::SymbolInfo* info = ir::lookup(name);
      if (!info || info->role != ir::Role::Input || name != info->name)
        throw UserError(
            fmt::format("kernel '{}': unknown input '{}' (inputs are q, {})", opt_.name, name, input_names()));
      s = space_of(info->rows);
    }
    const int id = fresh(s, name);
    inputs_[name] = id;
    return id;
  }

  void require(Quantity x) {
    if (have_[static_cast<int>(x)]) return;
    int arg = -1;
    switch (x) {
      case Quantity::Transform: arg = q_; break;
      case Quantity::Velocity:
      case Quantity::BiasA:
      case Quantity::BiasAbar:
        require(Quantity::Transform);
        if (x != Quantity::Velocity) require(Quantity::Velocity);  // abar: V at k, a: at the parent
        arg = input("qd");
        break;
      case Quantity::BiasB: require(Quantity::Velocity); break;
      case Quantity::Articulated:
      case Quantity::Composite: require(Quantity::Transform); break;
      case Quantity::Upsilon: require(Quantity::Articulated); break;
    }
    have_[static_cast<int>(x)] = true;
    stmts_.push_back(exec::compute(x, arg));
  }

  exec::SweepProgram program(std::string source) {
    exec::SweepProgram p;
    p.name = opt_.name;
    p.source = std::move(source);
    if (!opt_.inputs.empty()) {
      for (const std::string& name : opt_.inputs) p.inputs.push_back(input(name));
    } else {
      if (auto it = inputs_.find("q"); it != inputs_.end()) p.inputs.push_back(it->second);
      for (const ir::SymbolInfo& s : ir::vocabulary())
        if (s.role == ir::Role::Input)
          if (auto it = inputs_.find(std::string(s.name)); it != inputs_.end()) p.inputs.push_back(it->second);
    }
    p.vars = vars_;
    p.lowering = steps;
    return p;
  }

  // ---- values ---------------------------------------------------------------------------

  Value materialize(const Value& v) {
    if (trivial(v.e)) return v;
    const int id = fresh(v.e.space());
    stmts_.push_back(v.e.space() == Space::Tip ? exec::tip_assign(id, v.e, v.label.empty() ? "tips" : v.label)
                                               : exec::assign(id, v.e, v.label.empty() ? "copy" : v.label));
    return {exec::var(id, v.e.space()), ""};
  }

  // The var holding v: v's own, or a new one called `name` (default: the output's name).
  int output_var(const Value& v, const std::string& name = {}) {
    if (v.e.kind() == VKind::Var) return v.e.var();
    const int id = fresh(v.e.space(), name.empty() ? opt_.output : name);
    // A tip-space value is a combination of tip vars (B* terms are vars already: PickOff).
    stmts_.push_back(v.e.space() == Space::Tip ? exec::tip_assign(id, v.e, v.label.empty() ? "tips" : v.label)
                                               : exec::assign(id, v.e, v.label.empty() ? "copy" : v.label));
    return id;
  }

  Value leaf(const Expr& s) {
    const ir::SymbolInfo& info = *s.info();
    switch (info.role) {
      case ir::Role::Input: return {exec::var(input(s.name()), space_of(info.rows)), ""};
      case ir::Role::Quantity: {
        // Per tip, by the springs and weld-errors steps (sweep_ir.hpp Loop), made on first use.
        if (info.id == ir::Sym::fg || info.id == ir::Sym::ex) {
          const bool springs = info.id == ir::Sym::fg;
          int& var = springs ? springs_ : errors_;
          if (var < 0) {
            require(springs ? Quantity::Velocity : Quantity::Transform);
            var = fresh(Space::Tip, std::string(info.name));
          }
          return {exec::var(var, Space::Tip), ""};
        }
        const Quantity q = quantity_of(info.id);
        require(q);
        return {exec::read(q), ""};
      }
      case ir::Role::Defined: throw InternalError(fmt::format("lower: '{}' survived expand()", s.name()));
      case ir::Role::Block:
      case ir::Role::Shift:
      case ir::Role::Recursion:
      case ir::Role::PickOff:
      case ir::Role::Compound: break;
    }
    throw UserError(fmt::format("'{}' is an operator, not a vector: it needs something to act on", s.name()));
  }

  // The model quantity a Quantity symbol reads.
  static Quantity quantity_of(ir::Sym s) {
    if (s == ir::Sym::V) return Quantity::Velocity;
    if (s == ir::Sym::a) return Quantity::BiasA;
    if (s == ir::Sym::abar) return Quantity::BiasAbar;
    if (s == ir::Sym::b) return Quantity::BiasB;
    throw InternalError(fmt::format("lower: '{}' is not a model quantity", ir::name_of(s)));
  }

  static std::string input_names() {
    std::string names;
    for (const ir::SymbolInfo& s : ir::vocabulary())
      if (s.role == ir::Role::Input) names += fmt::format("{}{}", names.empty() ? "" : ", ", s.name);
    return names;
  }

  Value value(const Expr& e) {
    switch (e.op()) {
      case Op::Symbol: return leaf(e);
      case Op::Zero: return {exec::zero(space_of(ir::infer_shape(e).rows)), ""};
      case Op::Scale: {
        const Value v = value(e.kid(0));
        return {vsum({{e.coef(), v.e}}, v.e.space()), v.label};
      }
      case Op::Sum: {
        std::vector<Value> parts;
        std::vector<std::pair<double, VExpr>> terms;
        for (const Expr& k : e.kids()) {
          parts.push_back(value(k));
          terms.emplace_back(1.0, parts.back().e);
        }
        return {vsum(std::move(terms), parts[0].e.space()), joined_labels(parts)};
      }
      case Op::Product: {
        const auto kids = e.kids();
        if (ir::infer_shape(kids.front()).rows == ir::Dim::One)
          throw UserError(fmt::format("{}: a scalar product of vectors has no sweep form", ir::print(e)));
        Value v = value(kids.back());
        for (std::size_t i = kids.size() - 1; i-- > 0;) v = apply(kids[i], std::move(v));
        return v;
      }
      default: throw UserError(fmt::format("{} is not a vector expression", ir::print(e)));
    }
  }

  // ---- operators applied to values ------------------------------------------------------

  Value apply(const Expr& op, Value y) {
    switch (op.op()) {
      case Op::Identity: return y;
      case Op::Zero: return {exec::zero(y.e.space()), ""};
      case Op::Scale: {
        const Value v = apply(op.kid(0), std::move(y));
        return {vsum({{op.coef(), v.e}}, v.e.space()), v.label};
      }
      case Op::Sum: {
        y = materialize(y);  // every term reads it
        std::vector<Value> parts;
        std::vector<std::pair<double, VExpr>> terms;
        for (const Expr& k : op.kids()) {
          parts.push_back(apply(k, y));
          terms.emplace_back(1.0, parts.back().e);
        }
        return {vsum(std::move(terms), parts[0].e.space()), join(fmt::format("({})", ir::print(op)), y.label)};
      }
      case Op::Product:
        for (auto it = op.kids().rbegin(); it != op.kids().rend(); ++it) y = apply(*it, std::move(y));
        return y;
      case Op::Symbol: return symbol(op, false, std::move(y));
      case Op::Adjoint:
        if (op.kid(0).is(Op::Symbol)) return symbol(op.kid(0), true, std::move(y));
        return apply(expand(op, algebra_.definitions), std::move(y));
      case Op::Inverse: return solve(op.kid(0), std::move(y));
      case Op::Derivative: break;  // refused by lower()
    }
    throw InternalError("lower: unknown IR node");
  }

  Value block(Block b, const Value& y) {
    if (auto q = exec::block_source(b)) require(*q);
    return {exec::apply(b, y.e), join(exec::to_string(b), y.label)};
  }

  VExpr in_edge(const Value& y) {
    require(Quantity::Transform);
    return exec::edge_in(contains_edge(y.e) ? materialize(y).e : y.e);
  }

  // The operand is read at the parent once per child: keep it a stored value.
  VExpr out_edge(const Value& y) {
    require(Quantity::Transform);
    return exec::edge_out(materialize(y).e);
  }

  // phi y / psi y: z(k) = y(k) + sum_c phi(k,c) [taubar(c)] z(c) (reference 5).
  Value recursion(const Value& y, bool psi, bool adjoint) {
    const int z = fresh(Space::Spatial);
    const VExpr self = exec::var(z, Space::Spatial);
    if (psi) require(Quantity::Articulated);
    require(Quantity::Transform);
    VExpr rec;
    if (!adjoint)
      rec = exec::edge_in(psi ? exec::apply(Block::Taubar, self) : self);
    else
      rec = psi ? exec::apply(Block::TaubarStar, exec::edge_out(self)) : exec::edge_out(self);
    const std::string name = std::string(psi ? "psi" : "phi") + (adjoint ? "*" : "");
    stmts_.push_back(exec::assign(z, vsum({{1.0, y.e}, {1.0, rec}}, Space::Spatial), join(name, y.label)));
    return {self, ""};
  }

  VExpr tip_in_of(const VExpr& y) {
    switch (y.kind()) {
      case VKind::Var: return exec::tip_in(y.var());
      case VKind::Zero: return exec::zero(Space::Spatial);
      case VKind::Sum: {
        std::vector<std::pair<double, VExpr>> t;
        for (const auto& [c, x] : y.terms()) t.emplace_back(c, tip_in_of(x));
        return vsum(std::move(t), Space::Spatial);
      }
      default: throw InternalError("lower: a tip-space value that is not a sum of tip vars");
    }
  }

  // The per-body block of a Block symbol, and of its adjoint.
  static std::pair<Block, Block> blocks_of(ir::Sym s) {
    using ir::Sym;
    switch (s) {
      case Sym::H: return {Block::H, Block::Hstar};
      case Sym::M: return {Block::M, Block::M};
      case Sym::P: return {Block::P, Block::P};
      case Sym::R: return {Block::R, Block::R};
      case Sym::Upsilon: return {Block::Upsilon, Block::Upsilon};
      case Sym::D: return {Block::D, Block::D};
      case Sym::G: return {Block::G, Block::Gstar};
      case Sym::tau: return {Block::Tau, Block::TauStar};
      case Sym::taubar: return {Block::Taubar, Block::TaubarStar};
      default: throw InternalError(fmt::format("lower: '{}' has no per-body block", ir::name_of(s)));
    }
  }

  Value symbol(const Expr& s, bool adj, Value y) {
    const ir::SymbolInfo& info = *s.info();
    const std::string label = s.name() + (adj ? "*" : "");
    switch (info.role) {
      case ir::Role::Block: {
        const auto [plain, star] = blocks_of(info.id);
        return block(adj ? star : plain, y);
      }
      case ir::Role::Recursion: return recursion(y, info.id == ir::Sym::psi, adj);
      case ir::Role::Shift: return {adj ? out_edge(y) : in_edge(y), join(label, y.label)};
      case ir::Role::PickOff: {
        if (!adj) return {tip_in_of(y.e), join(label, y.label)};
        const int t = fresh(Space::Tip);
        stmts_.push_back(exec::tip_assign(t, y.e, join(label, y.label)));
        return {exec::var(t, Space::Tip), ""};
      }
      case ir::Role::Compound: {  // by its library definition, labelled as itself
        const Value v = apply(*algebra_.definitions.expand_symbol(s, adj), {y.e, ""});
        return {v.e, join(label, y.label)};
      }
      case ir::Role::Defined: throw InternalError(fmt::format("lower: '{}' survived expand()", s.name()));
      case ir::Role::Input:
      case ir::Role::Quantity: break;
    }
    throw UserError(fmt::format("'{}' is a vector, not an operator: it can only stand last", s.name()));
  }

  // ---- inverses ---------------------------------------------------------------------------

  Value solve(const Expr& x, Value y) {
    if (!x.is(Op::Identity) && ir::tip_square(x)) return tip_solve(x, std::move(y));
    switch (x.op()) {
      case Op::Identity: return y;
      case Op::Inverse: return apply(x.kid(0), std::move(y));
      case Op::Scale: {
        const Value v = solve(x.kid(0), std::move(y));
        return {vsum({{1.0 / x.coef(), v.e}}, v.e.space()), v.label};
      }
      case Op::Symbol: return solve_symbol(x, false, std::move(y));
      case Op::Adjoint:
        if (x.kid(0).is(Op::Symbol)) return solve_symbol(x.kid(0), true, std::move(y));
        return solve(expand(x, algebra_.definitions), std::move(y));
      case Op::Product: {  // (F1 ... Fm)^-1 = Fm^-1 ... F1^-1 for square factors
        for (const Expr& f : x.kids())
          if (!f.is(Op::Identity) && ir::infer_shape(f).rows != ir::infer_shape(f).cols)
            throw UserError(
                fmt::format("no sweep form for the inverse of {}: it has non-square factors", ir::print(x)));
        for (const Expr& f : x.kids()) y = solve(f, std::move(y));
        return y;
      }
      case Op::Sum: return substitute(x, std::move(y));
      case Op::Zero:
      case Op::Derivative: break;
    }
    throw UserError(fmt::format("no sweep form for the inverse of {}", ir::print(x)));
  }

  // X^-1 y with X tip-space (6m x 6m): 000 eq. 5.11's small solve. X must have the Gram form
  // A* W A of the library's gram way (the rewritten Lambda_c^-1 = B* psi* H* D^-1 H psi B):
  // its columns are formed like a Gram matrix's, then factored and solved (sweep_ir Solve).
  Value tip_solve(const Expr& x, Value y) {
    const ir::LoweringWay* gram = algebra_.lowering("gram");
    const Expr expanded = expand(x, algebra_.definitions);
    const auto g = gram ? gram_form(expanded, algebra_.definitions) : std::nullopt;
    if (!g)
      throw UserError(
          fmt::format("no sweep form for the inverse of {}: a tip-space matrix is solved in the Gram "
                      "form A* W A (W a symmetric per-body block), as J calM^-1 J* becomes by MINV "
                      "and L4 (rewrite first)",
                      ir::print(x)));
    const int rhs = output_var(y, "y_c");
    const int unit = fresh(Space::Tip, "e_c");
    const auto [a, wa] = gram_columns(g->first, g->second, unit, Space::Tip, "A_c", "WA_c");
    const int z = fresh(Space::Tip, "z_c");
    solves_.push_back({unit, a, wa, rhs, z});
    steps.push_back({"tip-solve", gram->source.identity, gram->source.citation,
                     fmt::format("({})^-1 applied once: X = A* W A with A = {}, W = {} formed column by column over "
                                 "the 6m tip directions, X = L D L*, then two substitutions (000 eq. 5.11)",
                                 ir::print(x), ir::print(g->first), ir::print(g->second))});
    return {exec::var(z, Space::Tip), join(fmt::format("({})^-1", ir::print(x)), y.label)};
  }

  Value solve_symbol(const Expr& s, bool adj, Value y) {
    const ir::SymbolInfo& info = *s.info();
    if (info.role == ir::Role::Defined)  // lower() refuses these before expand()
      throw InternalError(fmt::format("lower: '{}^-1' survived the check for inverses of defined operators", s.name()));
    if (info.id == ir::Sym::D) return block(Block::Dinv, y);
    if (info.id == ir::Sym::M) return block(Block::Minv, y);
    if (const ir::Definition* d = algebra_.definitions.of_inverse(info.id)) {  // phi^-1 = I - E_phi
      const Value v = apply(adj ? ir::adjoint_of(d->body) : d->body, y);
      return {v.e, join(s.name() + (adj ? "*^-1" : "^-1"), "")};
    }
    throw UserError(fmt::format("no sweep form for the inverse of {}{}", s.name(), adj ? "*" : ""));
  }

  // (s I + X)^-1 y with X strictly causal or anticausal: z = (y - X z) / s, body by body;
  // X z at body k reads z only at k's children (parent), which are already done.
  Value substitute(const Expr& x, const Value& y) {
    const auto [s, rest] = ir::identity_part(x);
    if (s == 0.0 || rest.empty()) throw UserError(fmt::format("no sweep form for the inverse of {}", ir::print(x)));
    const Space sp = y.e.space();
    const int z = fresh(sp);
    const Value Xz = apply(rest.size() == 1 ? rest[0] : ir::sum(rest), {exec::var(z, sp), ""});
    const std::string label = fmt::format("({})^-1", ir::print(x));
    stmts_.push_back(exec::assign(z, vsum({{1.0 / s, y.e}, {-1.0 / s, Xz.e}}, sp), join(label, y.label)));
    return {exec::var(z, sp), ""};
  }
};

// The first inverse of a Defined operator (calM^-1, ...), which has no sweep of its own.
const Expr* inverse_of_defined(const Expr& e) {
  if (e.is(Op::Inverse)) {
    const Expr& k = e.kid(0).is(Op::Adjoint) ? e.kid(0).kid(0) : e.kid(0);
    if (k.is(Op::Symbol) && k.info() && k.info()->role == ir::Role::Defined) return &k;
  }
  for (const Expr& k : e.kids())
    if (const Expr* found = inverse_of_defined(k)) return found;
  return nullptr;
}

// The first symbol that names an arm (J1, calM2, ...), if any.
const Expr* arm_symbol(const Expr& e) {
  if (e.is(Op::Symbol) && e.arm() > 0) return &e;
  for (const Expr& k : e.kids())
    if (const Expr* found = arm_symbol(k)) return found;
  return nullptr;
}

// Is `f` one symmetric per-body block (D^-1, D, M^-1, M, P, R) that may weight a Gram form?
bool symmetric_block(const Expr& f) {
  const Expr& s = f.is(Op::Inverse) ? f.kid(0) : f;
  if (!s.is(Op::Symbol) || !s.info()) return false;
  const ir::SymbolInfo& info = *s.info();
  return info.role == ir::Role::Block && info.symmetric && (!f.is(Op::Inverse) || info.invertible);
}

// x = A* W A with W a symmetric per-body block: {A, W}. Both MINV's calM^-1 = (I - H psi
// K)* D^-1 (I - H psi K) (001 Identity 6) and Lambda's derived B* psi* H* D^-1 H psi B
// (002 eq. 4.9) have this form.
std::optional<std::pair<Expr, Expr>> gram_form(const Expr& x, const ir::Definitions& defs) {
  if (!x.is(Op::Product)) return std::nullopt;
  const auto kids = x.kids();
  for (std::size_t m = 1; m + 1 < kids.size(); ++m) {
    if (!symmetric_block(kids[m])) continue;
    const Expr left = ir::product(std::vector<Expr>(kids.begin(), kids.begin() + static_cast<std::ptrdiff_t>(m)));
    const Expr right = ir::product(std::vector<Expr>(kids.begin() + static_cast<std::ptrdiff_t>(m) + 1, kids.end()));
    if (expand(ir::adjoint(right), defs) == expand(left, defs)) return std::pair{right, kids[m]};
  }
  return std::nullopt;
}

// The composite-body way from the library's identity (CRB-H): its last side is the causal
// part plus the rest, C + A with A the adjoint of C less its diagonal; the lowering computes
// the columns of C. nullopt when the library does not allow the way or `x` is not what the
// identity's first side means.
std::optional<Expr> composite_body_part(const Expr& x, const ir::Algebra& algebra) {
  const ir::LoweringWay* way = algebra.lowering("composite-body");
  if (!way) return std::nullopt;
  if (expand(way->sides.front(), algebra.definitions) != x) return std::nullopt;
  const Expr& last = way->sides.back();
  if (!last.is(Op::Sum) || last.kids().size() != 2 || rewrite::causality(last.kid(0)) != rewrite::Causality::Causal)
    throw UserError(
        fmt::format("identity {}: the composite-body way needs a last side 'causal part + the rest' "
                    "(not {})",
                    way->source.identity, ir::print(last)));
  return last.kid(0);
}

exec::LoweringStep step(std::string way, const ir::LoweringWay* w, std::string what) {
  return {std::move(way), w ? w->source.identity : "", w ? w->source.citation : "", std::move(what)};
}

}  // namespace

exec::SweepProgram lower(const Expr& e, const ir::Algebra& algebra, const LowerOptions& options) {
  if (ir::needs_coordinate(e))
    throw UserError(
        fmt::format("{}: d(...)/dq_i and X_i name one coordinate i and have no sweep form; a kernel takes "
                    "the derivative with respect to all of q at once, d(EXPRESSION)/dq (grammar/README.md)",
                    ir::print(e)));
  // A sweep program runs over one robot's bodies; an arm is a robot of its own.
  if (const Expr* arm = arm_symbol(e))
    throw UserError(
        fmt::format("'{}' names arm {}: sweep programs are lowered per robot, so generate an arm's "
                    "kernels from that arm's URDF (soac eval and soac derive handle several arms)",
                    arm->name(), arm->arm()));
  if (const Expr* s = inverse_of_defined(e))
    throw UserError(
        fmt::format("{}: {}^-1 has no sweep form of its own: rewrite first (soac derive shows how; for "
                    "calM^-1 the library's MINV, 001 Identity 6: calM^-1 = (I - H psi K)* D^-1 (I - H psi K))",
                    ir::print(e), s->name()));
  const ir::Shape shape = ir::infer_shape(e);
  Lowerer lowerer(algebra, options);
  const std::string source = ir::print(e);
  if (shape.cols == ir::Dim::One) {
    if (shape.rows == ir::Dim::One) throw UserError(fmt::format("{}: a scalar has no sweep form", source));
    Expr x = expand(e, algebra.definitions);
    if (const ir::LoweringWay* ne = algebra.lowering("newton-euler")) {
      const Expr factored = factor(x);
      if (factored != x)
        lowerer.steps.push_back(
            step("newton-euler", ne, fmt::format("common left factors pulled out: {}", ir::print(factored))));
      x = factored;
    }
    lowerer.steps.push_back(step("sweeps", nullptr,
                                 "the factors applied to the vector from the right, each "
                                 "recursion one sweep, consecutive sweeps of one direction fused"));
    return lowerer.vector_program(x, space_of(shape.rows), source);
  }
  if (shape.rows == ir::Dim::One) throw UserError(fmt::format("{}: a row vector has no sweep form", source));
  Expr x = expand(e, algebra.definitions);
  // A scalar factor takes its operand's way (lower.hpp): c A* W A = A* (c W) A, and c calM
  // has the causal part c C.
  double c = 1.0;
  if (x.is(Op::Scale)) {
    c = x.coef();
    x = x.kid(0);
  }
  if (const auto causal = composite_body_part(x, algebra)) {
    lowerer.steps.push_back(step("composite-body", algebra.lowering("composite-body"),
                                 fmt::format("column j is {} e_j, an inward sweep from body(j); the rows below "
                                             "body(j) by symmetry",
                                             ir::print(*causal))));
    return lowerer.column_program(ir::scale(c, *causal), Space::Joint, exec::Fill::SymmetricFromAncestors, source);
  }
  if (const ir::LoweringWay* gram = algebra.lowering("gram"))
    if (const auto g = gram_form(x, algebra.definitions)) {
      lowerer.steps.push_back(
          step("gram", gram,
               split_weight(g->second).second
                   ? fmt::format("A* W A with A = {}, W = {} = L_D^-* Delta_D^-1 L_D^-1 (D = L_D Delta_D "
                                 "L_D* per body): per column L_D^-1 A e_j and Delta_D^-1 L_D^-1 "
                                 "A e_j, entry (i,j) their dot product",
                                 ir::print(g->first), ir::print(g->second))
                   : fmt::format("A* W A with A = {}, W = {}: per column A e_j and W A e_j, "
                                 "entry (i,j) = (A e_i) . (W A e_j)",
                                 ir::print(g->first), ir::print(g->second))));
      return lowerer.gram_program(g->first, ir::scale(c, g->second), space_of(shape.cols), source);
    }
  lowerer.steps.push_back(step("columns", nullptr, "column j is the expression applied to e_j, by sweeps"));
  return lowerer.column_program(ir::scale(c, x), space_of(shape.cols), exec::Fill::Full, source);
}

}  // namespace soa::lower
