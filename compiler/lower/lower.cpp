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
    if (head.kind() == VKind::Apply) out.emplace_back(1.0, exec::apply(head.block(), operand));
    else if (head.kind() == VKind::EdgeIn) out.emplace_back(1.0, exec::edge_in(operand));
    else out.emplace_back(1.0, exec::edge_out(operand));
  }
  return exec::sum(std::move(out), space);
}

std::string joined_labels(const std::vector<Value>& parts) {
  std::string s;
  for (const Value& v : parts)
    if (!v.label.empty()) s += (s.empty() ? "" : ", ") + v.label;
  return s;
}

class Lowerer {
public:
  explicit Lowerer(const LowerOptions& o) : opt_(o) { q_ = input("q"); }

  exec::SweepProgram vector_program(const Expr& e, Space rows, std::string source) {
    const Value v = e.is(Op::Zero) ? Value{exec::zero(rows), ""} : value(e);  // a 0 has no shape of its own
    const int out = output_var(v);
    Schedule s = schedule(stmts_, static_cast<int>(vars_.size()), {out}, -1);
    exec::SweepProgram p = program(std::move(source));
    p.output = {opt_.output, vars_[out].space, std::nullopt, out};
    p.loops = std::move(s.loops);
    return p;
  }

  exec::SweepProgram column_program(const Expr& op, Space cols, exec::Fill fill, std::string source) {
    const int unit = fresh(cols, "e");
    const int out = output_var(apply(op, {exec::var(unit, cols), ""}));
    Schedule s = schedule(stmts_, static_cast<int>(vars_.size()), {out}, unit);
    exec::SweepProgram p = program(std::move(source));
    p.output = {opt_.output, vars_[out].space, cols, -1};
    p.loops = std::move(s.loops);
    p.columns = exec::Columns{cols, unit, std::move(s.column_loops), out, fill};
    return p;
  }

  // A* W A as a Gram matrix (exec::Fill::Gram): per column j, the inward sweeps of A e_j
  // and W A e_j; then out(i,j) = (A e_i) . (W A e_j).
  exec::SweepProgram gram_program(const Expr& half, const Expr& weight, Space cols, std::string source) {
    const int unit = fresh(cols, "e");
    const int a = output_var(apply(half, {exec::var(unit, cols), ""}), "y");
    const int wa = output_var(apply(weight, {exec::var(a, vars_[a].space), ""}), "w");
    Schedule s = schedule(stmts_, static_cast<int>(vars_.size()), {a, wa}, unit);
    exec::SweepProgram p = program(std::move(source));
    p.output = {opt_.output, cols, cols, -1};
    p.loops = std::move(s.loops);
    p.columns = exec::Columns{cols, unit, std::move(s.column_loops), a, exec::Fill::Gram, wa};
    return p;
  }

private:
  const LowerOptions& opt_;
  std::vector<exec::Var> vars_;
  std::vector<exec::Stmt> stmts_;
  std::map<std::string, int> inputs_;
  std::array<bool, exec::kQuantityCount> have_{};
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
      throw UserError(fmt::format("kernel '{}': the expression needs input '{}', which is not declared",
                                  opt_.name, name));
    Space s = Space::Joint;
    if (name == "q") s = Space::Config;
    else if (name == "f0") s = Space::Tip;
    else if (name != "qd" && name != "qdd" && name != "T")
      throw UserError(fmt::format("kernel '{}': unknown input '{}' (inputs are q, qd, qdd, T, f0)", opt_.name, name));
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
        require(Quantity::Transform);
        if (x == Quantity::BiasA) require(Quantity::Velocity);
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
      for (const char* name : {"q", "qd", "qdd", "T", "f0"})
        if (auto it = inputs_.find(name); it != inputs_.end()) p.inputs.push_back(it->second);
    }
    p.vars = vars_;
    return p;
  }

  // ---- values ---------------------------------------------------------------------------

  Value materialize(const Value& v) {
    if (trivial(v.e)) return v;
    const int id = fresh(v.e.space());
    stmts_.push_back(exec::assign(id, v.e, v.label.empty() ? "copy" : v.label));
    return {exec::var(id, v.e.space()), ""};
  }

  // The var holding v: v's own, or a new one called `name` (default: the output's name).
  int output_var(const Value& v, const std::string& name = {}) {
    if (v.e.kind() == VKind::Var) return v.e.var();
    if (v.e.space() == Space::Tip)
      throw NotImplemented("lower: a tip-space output that is not a single B* term");
    const int id = fresh(v.e.space(), name.empty() ? opt_.output : name);
    stmts_.push_back(exec::assign(id, v.e, v.label.empty() ? "copy" : v.label));
    return id;
  }

  Value leaf(const std::string& name) {
    if (name == "qd" || name == "qdd" || name == "T") return {exec::var(input(name), Space::Joint), ""};
    if (name == "f0") return {exec::var(input(name), Space::Tip), ""};
    const Quantity q = name == "V" ? Quantity::Velocity : name == "a" ? Quantity::BiasA : Quantity::BiasB;
    if (name != "V" && name != "a" && name != "b")
      throw UserError(fmt::format("'{}' is an operator, not a vector: it needs something to act on", name));
    require(q);
    return {exec::read(q), ""};
  }

  Value value(const Expr& e) {
    switch (e.op()) {
      case Op::Symbol: return leaf(e.name());
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
      case Op::Symbol: return symbol(op.name(), false, std::move(y));
      case Op::Adjoint:
        if (op.kid(0).is(Op::Symbol)) return symbol(op.kid(0).name(), true, std::move(y));
        return apply(expand(op), std::move(y));
      case Op::Inverse: return solve(op.kid(0), std::move(y));
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
    if (!adjoint) rec = exec::edge_in(psi ? exec::apply(Block::Taubar, self) : self);
    else rec = psi ? exec::apply(Block::TaubarStar, exec::edge_out(self)) : exec::edge_out(self);
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

  Value symbol(const std::string& name, bool adj, Value y) {
    static const std::map<std::string, std::pair<Block, Block>> blocks = {
        {"H", {Block::H, Block::Hstar}},       {"M", {Block::M, Block::M}},
        {"P", {Block::P, Block::P}},           {"R", {Block::R, Block::R}},
        {"Upsilon", {Block::Upsilon, Block::Upsilon}}, {"D", {Block::D, Block::D}},
        {"G", {Block::G, Block::Gstar}},       {"tau", {Block::Tau, Block::TauStar}},
        {"taubar", {Block::Taubar, Block::TaubarStar}},
    };
    if (auto it = blocks.find(name); it != blocks.end()) return block(adj ? it->second.second : it->second.first, y);
    const std::string label = name + (adj ? "*" : "");
    if (name == "phi" || name == "psi") return recursion(y, name == "psi", adj);
    if (name == "E_phi") return {adj ? out_edge(y) : in_edge(y), join(label, y.label)};
    if (name == "E_psi") {  // E_psi = E_phi taubar, E_psi* = taubar* E_phi*
      require(Quantity::Articulated);
      if (adj) return {exec::apply(Block::TaubarStar, out_edge(y)), join(label, y.label)};
      return {in_edge({exec::apply(Block::Taubar, y.e), ""}), join(label, y.label)};
    }
    if (name == "phitilde" || name == "psitilde") {  // E phi = phi E (reference 3)
      const bool psi = name == "psitilde";
      const Value z = recursion(y, psi, adj);
      if (!adj) return {in_edge(psi ? Value{exec::apply(Block::Taubar, z.e), ""} : z), label};
      const VExpr e = out_edge(z);
      return {psi ? exec::apply(Block::TaubarStar, e) : e, label};
    }
    if (name == "K") {  // K = E_phi G, K* = G* E_phi*
      require(Quantity::Articulated);
      if (adj) return {exec::apply(Block::Gstar, out_edge(y)), join(label, y.label)};
      return {in_edge({exec::apply(Block::G, y.e), ""}), join(label, y.label)};
    }
    if (name == "B") {
      if (!adj) return {tip_in_of(y.e), join(label, y.label)};
      const int t = fresh(Space::Tip);
      stmts_.push_back(exec::tip_assign(t, y.e, join(label, y.label)));
      return {exec::var(t, Space::Tip), ""};
    }
    const Expr s = ir::symbol(name);
    if (const Expr d = expand(s); d != s) return apply(adj ? expand(ir::adjoint(s)) : d, std::move(y));
    throw UserError(fmt::format("'{}' is a vector, not an operator: it can only stand last", name));
  }

  // ---- inverses ---------------------------------------------------------------------------

  Value solve(const Expr& x, Value y) {
    switch (x.op()) {
      case Op::Identity: return y;
      case Op::Inverse: return apply(x.kid(0), std::move(y));
      case Op::Scale: {
        const Value v = solve(x.kid(0), std::move(y));
        return {vsum({{1.0 / x.coef(), v.e}}, v.e.space()), v.label};
      }
      case Op::Symbol: return solve_symbol(x.name(), false, std::move(y));
      case Op::Adjoint:
        if (x.kid(0).is(Op::Symbol)) return solve_symbol(x.kid(0).name(), true, std::move(y));
        return solve(expand(x), std::move(y));
      case Op::Product: {  // (F1 ... Fm)^-1 = Fm^-1 ... F1^-1 for square factors
        for (const Expr& f : x.kids())
          if (!f.is(Op::Identity) && ir::infer_shape(f).rows != ir::infer_shape(f).cols)
            throw UserError(fmt::format("no sweep form for the inverse of {}: it has non-square factors",
                                        ir::print(x)));
        for (const Expr& f : x.kids()) y = solve(f, std::move(y));
        return y;
      }
      case Op::Sum: return substitute(x, std::move(y));
      case Op::Zero: break;
    }
    throw UserError(fmt::format("no sweep form for the inverse of {}", ir::print(x)));
  }

  Value solve_symbol(const std::string& name, bool adj, Value y) {
    if (name == "calM")
      throw UserError("calM^-1 has no sweep form of its own: rewrite first (MINV, 001 Identity 6: calM^-1 = "
                      "(I - H psi K)* D^-1 (I - H psi K))");
    if (name == "D") return block(Block::Dinv, y);
    if (name == "M") return block(Block::Minv, y);
    if (name == "phi" || name == "psi") {  // phi^-1 = I - E_phi, psi^-1 = I - E_psi (reference 3)
      y = materialize(y);
      const Value e = symbol(name == "phi" ? "E_phi" : "E_psi", adj, y);
      return {vsum({{1.0, y.e}, {-1.0, e.e}}, Space::Spatial), join(name + (adj ? "*^-1" : "^-1"), "")};
    }
    throw UserError(fmt::format("no sweep form for the inverse of {}{}", name, adj ? "*" : ""));
  }

  // (s I + X)^-1 y with X strictly causal or anticausal: z = (y - X z) / s, body by body;
  // X z at body k reads z only at k's children (parent), which are already done.
  Value substitute(const Expr& x, const Value& y) {
    double s = 0.0;
    std::vector<Expr> rest;
    for (const Expr& t : x.kids()) {
      if (t.is(Op::Identity)) s += 1.0;
      else if (t.is(Op::Scale) && t.kid(0).is(Op::Identity)) s += t.coef();
      else rest.push_back(t);
    }
    if (s == 0.0 || rest.empty())
      throw UserError(fmt::format("no sweep form for the inverse of {}", ir::print(x)));
    const Space sp = y.e.space();
    const int z = fresh(sp);
    const Value Xz = apply(rest.size() == 1 ? rest[0] : ir::sum(rest), {exec::var(z, sp), ""});
    const std::string label = fmt::format("({})^-1", ir::print(x));
    stmts_.push_back(exec::assign(z, vsum({{1.0 / s, y.e}, {-1.0 / s, Xz.e}}, sp), join(label, y.label)));
    return {exec::var(z, sp), ""};
  }
};

bool inverts_mass_matrix(const Expr& e) {
  if (e.is(Op::Inverse)) {
    const Expr& k = e.kid(0).is(Op::Adjoint) ? e.kid(0).kid(0) : e.kid(0);
    if (k.is_symbol("calM")) return true;
  }
  for (const Expr& k : e.kids())
    if (inverts_mass_matrix(k)) return true;
  return false;
}

}  // namespace

// The first symbol that names an arm (J1, calM2, ...), if any.
std::optional<std::pair<std::string, int>> arm_symbol(const Expr& e) {
  if (e.is(Op::Symbol)) {
    const auto indexed = ir::lookup_indexed(e.name());
    if (indexed && indexed->arm > 0) return std::pair{e.name(), indexed->arm};
  }
  for (const Expr& k : e.kids())
    if (auto found = arm_symbol(k)) return found;
  return std::nullopt;
}

// x = A* W A with W a symmetric per-body block (D^-1, D, M, P, R): {A, W}. Both MINV's
// calM^-1 = (I - H psi K)* D^-1 (I - H psi K) (001 Identity 6) and Lambda's derived
// B* psi* H* D^-1 H psi B (002 eq. 4.9) have this form.
std::optional<std::pair<Expr, Expr>> gram_form(const Expr& x) {
  if (!x.is(Op::Product)) return std::nullopt;
  const auto kids = x.kids();
  auto symmetric_block = [](const Expr& f) {
    const Expr& s = f.is(Op::Inverse) ? f.kid(0) : f;
    if (!s.is(Op::Symbol)) return false;
    const std::string& n = s.name();
    return n == "D" || n == "M" || (!f.is(Op::Inverse) && (n == "P" || n == "R"));
  };
  for (std::size_t m = 1; m + 1 < kids.size(); ++m) {
    if (!symmetric_block(kids[m])) continue;
    const Expr left = ir::product(std::vector<Expr>(kids.begin(), kids.begin() + static_cast<std::ptrdiff_t>(m)));
    const Expr right = ir::product(std::vector<Expr>(kids.begin() + static_cast<std::ptrdiff_t>(m) + 1, kids.end()));
    if (expand(ir::adjoint(right)) == expand(left)) return std::pair{right, kids[m]};
  }
  return std::nullopt;
}

exec::SweepProgram lower(const Expr& e, const LowerOptions& options) {
  // A sweep program runs over one robot's bodies; an arm is a robot of its own.
  if (const auto arm = arm_symbol(e))
    throw UserError(fmt::format("'{}' names arm {}: sweep programs are lowered per robot, so generate an arm's "
                                "kernels from that arm's URDF (soac eval and soac derive handle several arms)",
                                arm->first, arm->second));
  if (inverts_mass_matrix(e))
    throw UserError(fmt::format("{}: calM^-1 has no sweep form of its own: rewrite first (MINV, 001 Identity 6: "
                                "calM^-1 = (I - H psi K)* D^-1 (I - H psi K))",
                                ir::print(e)));
  const ir::Shape shape = ir::infer_shape(e);
  Lowerer lowerer(options);
  const std::string source = ir::print(e);
  if (shape.cols == ir::Dim::One) {
    if (shape.rows == ir::Dim::One) throw UserError(fmt::format("{}: a scalar has no sweep form", source));
    return lowerer.vector_program(factor(expand(e)), space_of(shape.rows), source);
  }
  if (shape.rows == ir::Dim::One) throw UserError(fmt::format("{}: a row vector has no sweep form", source));
  const Expr x = expand(e);
  if (x == expand(ir::symbol("calM"))) {
    // CRB-H (004 eq. 5.45): calM = H phi R H* + H R phitilde* H*; the causal part column by
    // column, the rest by symmetry.
    const Expr causal = ir::product({ir::symbol("H"), ir::symbol("phi"), ir::symbol("R"), ir::adjoint(ir::symbol("H"))});
    return lowerer.column_program(causal, Space::Joint, exec::Fill::SymmetricFromAncestors, source);
  }
  if (const auto g = gram_form(x)) return lowerer.gram_program(g->first, g->second, space_of(shape.cols), source);
  return lowerer.column_program(x, space_of(shape.cols), exec::Fill::Full, source);
}

}  // namespace soa::lower
