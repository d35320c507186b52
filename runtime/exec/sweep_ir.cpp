#include "exec/sweep_ir.hpp"

#include <fmt/format.h>

#include "support/error.hpp"

namespace soa::exec {

std::string_view to_string(Space s) {
  switch (s) {
    case Space::Config: return "nq";
    case Space::Joint: return "N";
    case Space::Spatial: return "6n";
    case Space::Tip: return "6m";
  }
  return "?";
}

std::string_view to_string(Direction d) { return d == Direction::Inward ? "inward" : "outward"; }

std::string_view to_string(Quantity q) {
  switch (q) {
    case Quantity::Transform: return "phi";
    case Quantity::Velocity: return "V";
    case Quantity::BiasA: return "a";
    case Quantity::BiasAbar: return "abar";
    case Quantity::BiasB: return "b";
    case Quantity::Articulated: return "P";
    case Quantity::Composite: return "R";
    case Quantity::Upsilon: return "Upsilon";
  }
  return "?";
}

std::string_view to_string(Block b) {
  switch (b) {
    case Block::H: return "H";
    case Block::Hstar: return "H*";
    case Block::M: return "M";
    case Block::Minv: return "M^-1";
    case Block::P: return "P";
    case Block::R: return "R";
    case Block::Upsilon: return "Upsilon";
    case Block::D: return "D";
    case Block::Dinv: return "D^-1";
    case Block::LDinv: return "L_D^-1";
    case Block::DeltaInv: return "Delta_D^-1";
    case Block::G: return "G";
    case Block::Gstar: return "G*";
    case Block::Taubar: return "taubar";
    case Block::TaubarStar: return "taubar*";
    case Block::Tau: return "tau";
    case Block::TauStar: return "tau*";
  }
  return "?";
}

Space block_input(Block b) {
  switch (b) {
    case Block::Hstar:
    case Block::D:
    case Block::Dinv:
    case Block::LDinv:
    case Block::DeltaInv:
    case Block::G: return Space::Joint;
    default: return Space::Spatial;
  }
}

Space block_output(Block b) {
  switch (b) {
    case Block::H:
    case Block::D:
    case Block::Dinv:
    case Block::LDinv:
    case Block::DeltaInv:
    case Block::Gstar: return Space::Joint;
    default: return Space::Spatial;
  }
}

std::optional<Quantity> block_source(Block b) {
  switch (b) {
    case Block::H:
    case Block::Hstar:
    case Block::M:
    case Block::Minv: return std::nullopt;
    case Block::R: return Quantity::Composite;
    case Block::Upsilon: return Quantity::Upsilon;
    default: return Quantity::Articulated;
  }
}

// ---- VExpr --------------------------------------------------------------------------------

VKind VExpr::kind() const { return node_->kind; }
Space VExpr::space() const { return node_->space; }
int VExpr::var() const { return node_->var; }
Quantity VExpr::quantity() const { return node_->quantity; }
Block VExpr::block() const { return node_->block; }
const VExpr& VExpr::operand() const { return node_->operand; }
const std::vector<std::pair<double, VExpr>>& VExpr::terms() const { return node_->terms; }

bool operator==(const VExpr& a, const VExpr& b) {
  if (a.get() == b.get()) return true;
  if (!a || !b) return false;
  const VNode& x = *a.get();
  const VNode& y = *b.get();
  if (x.kind != y.kind || x.space != y.space) return false;
  switch (x.kind) {
    case VKind::Var:
    case VKind::TipIn: return x.var == y.var;
    case VKind::Read: return x.quantity == y.quantity;
    case VKind::Zero: return true;
    case VKind::Apply: return x.block == y.block && x.operand == y.operand;
    case VKind::EdgeIn:
    case VKind::EdgeOut: return x.operand == y.operand;
    case VKind::Sum: return x.terms == y.terms;
  }
  return false;
}

namespace {

VExpr make(VNode n) { return VExpr(std::make_shared<const VNode>(std::move(n))); }

VNode node(VKind kind, Space space) {
  VNode n;
  n.kind = kind;
  n.space = space;
  return n;
}

}  // namespace

VExpr var(int id, Space space) {
  SOA_ASSERT(id >= 0, "var: negative id");
  SOA_ASSERT(space != Space::Config, "var: the configuration is read by Compute statements only");
  VNode n = node(VKind::Var, space);
  n.var = id;
  return make(std::move(n));
}

VExpr read(Quantity q) {
  SOA_ASSERT(q == Quantity::Velocity || q == Quantity::BiasA || q == Quantity::BiasAbar || q == Quantity::BiasB,
             "read: only V, a, abar and b are vectors");
  VNode n = node(VKind::Read, Space::Spatial);
  n.quantity = q;
  return make(std::move(n));
}

VExpr zero(Space space) { return make(node(VKind::Zero, space)); }

VExpr sum(std::vector<std::pair<double, VExpr>> terms, Space space) {
  std::vector<std::pair<double, VExpr>> flat;
  for (auto& [c, t] : terms) {
    SOA_ASSERT(t.space() == space, "sum: terms of different spaces");
    if (c == 0.0 || t.kind() == VKind::Zero) continue;
    if (t.kind() == VKind::Sum) {
      for (const auto& [c2, t2] : t.terms()) flat.emplace_back(c * c2, t2);
    } else {
      flat.emplace_back(c, std::move(t));
    }
  }
  if (flat.empty()) return zero(space);
  if (flat.size() == 1 && flat[0].first == 1.0) return flat[0].second;
  VNode n = node(VKind::Sum, space);
  n.terms = std::move(flat);
  return make(std::move(n));
}

VExpr apply(Block b, VExpr operand) {
  SOA_ASSERT(operand.space() == block_input(b), fmt::format("apply {}: operand lives in {}, expected {}", to_string(b),
                                                            to_string(operand.space()), to_string(block_input(b))));
  if (operand.kind() == VKind::Zero) return zero(block_output(b));
  VNode n = node(VKind::Apply, block_output(b));
  n.block = b;
  n.operand = std::move(operand);
  return make(std::move(n));
}

namespace {
VExpr edge(VKind kind, VExpr operand) {
  SOA_ASSERT(operand.space() == Space::Spatial, "edge: operand must be spatial");
  if (operand.kind() == VKind::Zero) return operand;
  VNode n = node(kind, Space::Spatial);
  n.operand = std::move(operand);
  return make(std::move(n));
}
}  // namespace

VExpr edge_in(VExpr operand) { return edge(VKind::EdgeIn, std::move(operand)); }
VExpr edge_out(VExpr operand) { return edge(VKind::EdgeOut, std::move(operand)); }

VExpr tip_in(int tip_var) {
  VNode n = node(VKind::TipIn, Space::Spatial);
  n.var = tip_var;
  return make(std::move(n));
}

Stmt assign(int dst, VExpr rhs, std::string label) {
  Stmt s;
  s.kind = Stmt::Kind::Assign;
  s.dst = dst;
  s.rhs = std::move(rhs);
  s.label = std::move(label);
  return s;
}

Stmt tip_assign(int dst, VExpr rhs, std::string label) {
  SOA_ASSERT(rhs.space() == Space::Spatial || rhs.space() == Space::Tip,
             "tip_assign: B* needs a spatial operand, a combination tip vars");
  Stmt s = assign(dst, std::move(rhs), std::move(label));
  s.kind = Stmt::Kind::TipAssign;
  return s;
}

Stmt compute(Quantity q, int arg) {
  Stmt s;
  s.kind = Stmt::Kind::Compute;
  s.quantity = q;
  s.arg = arg;
  s.label = "kinematics";
  if (q == Quantity::Articulated) s.label = "Riccati";
  if (q == Quantity::Composite) s.label = "composite body";
  if (q == Quantity::Upsilon) s.label = "Upsilon";
  return s;
}

// A solve counts its matrix's column loops; the solve itself is not a sweep.
int SweepProgram::loop_count() const {
  int count = static_cast<int>(columns ? columns->loops.size() : 0);
  for (const Loop& l : loops)
    count += l.solve ? static_cast<int>(l.solve->matrix.loops.size()) : l.springs < 0 && l.errors < 0;
  return count;
}

std::vector<const Solve*> solves(const SweepProgram& p) {
  std::vector<const Solve*> out;
  for (const Loop& l : p.loops)
    if (l.solve) out.push_back(l.solve.get());
  if (p.columns)
    for (const Loop& l : p.columns->loops)
      if (l.solve) out.push_back(l.solve.get());
  return out;
}

// ---- printing -----------------------------------------------------------------------------

namespace {

std::string child_of(std::string_view at) { return at == "k" ? "c" : std::string(at) + "'"; }
std::string parent_of(std::string_view at) { return fmt::format("p({})", at); }

std::string bracket(const VExpr& e, const std::vector<Var>& vars, std::string_view at) {
  const std::string s = print(e, vars, at);
  return e.kind() == VKind::Sum ? "[" + s + "]" : s;
}

std::string coefficient(double c) {
  return c == static_cast<long long>(c) ? fmt::format("{}", static_cast<long long>(c)) : fmt::format("{}", c);
}

std::string compute_text(Quantity q) {
  switch (q) {
    case Quantity::Transform: return "phi(p(k),k) = [[R, l~R], [0, R]] of q(k)";
    case Quantity::Velocity: return "V(k) = phi*(p(k),k) V(p(k)) + H*(k) qd(k)";
    case Quantity::BiasA: return "a(k) = bias(omega(p(k)), H*(k) qd(k)) (+ phi*(world,k) [0; -g] at a root)";
    case Quantity::BiasAbar: return "abar(k) = [w x wr; w x vr + v x wr](k), V = [w; v], H* qd = [wr; vr]";
    case Quantity::BiasB: return "b(k) = [omega x J omega; omega x (omega x m p)](k)";
    case Quantity::Articulated:
      return "P(k) = M(k) + sum_c psi(k,c) P(c) psi*(k,c); D(k) = H(k) P(k) H*(k); "
             "G(k) = P(k) H*(k) D^-1(k)";
    case Quantity::Composite: return "R(k) = M(k) + sum_c phi(k,c) R(c) phi*(k,c)";
    case Quantity::Upsilon: return "Upsilon(k) = psi*(p(k),k) Upsilon(p(k)) psi(p(k),k) + H*(k) D^-1(k) H(k)";
  }
  return "?";
}

void print_stmt(std::string& out, const Stmt& s, const std::vector<Var>& vars, int indent) {
  std::string line(static_cast<std::size_t>(indent), ' ');
  switch (s.kind) {
    case Stmt::Kind::Assign: line += fmt::format("{}(k) = {}", vars[s.dst].name, print(s.rhs, vars, "k")); break;
    case Stmt::Kind::TipAssign:
      if (s.rhs.space() == Space::Tip)
        line += fmt::format("{}(t) = {}  for the tips t at k", vars[s.dst].name, print(s.rhs, vars, "t"));
      else
        line += fmt::format("{}(t) = B*(t,k) {}  for the tips t at k", vars[s.dst].name, bracket(s.rhs, vars, "k"));
      break;
    case Stmt::Kind::Compute: line += compute_text(s.quantity); break;
  }
  out += fmt::format("{}   [{}]\n", line, s.label);
}

void print_loops(std::string& out, const std::vector<Loop>& loops, const std::vector<Var>& vars, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  for (const Loop& l : loops) {
    if (l.errors >= 0) {
      out += fmt::format(
          "{}{}(t) = [vee(R - R*) / 2; R* l](t,u) for each tip t welded to u, 0 elsewhere   [weld errors: "
          "t's pose (R, l) relative to u's]\n",
          pad, vars[l.errors].name);
      continue;
    }
    if (l.springs >= 0) {
      out += fmt::format(
          "{}{}(t) = [kr e + dr w; kt p + dt v](t,u), -phi(u,t) of that at u, for each tip t grasping u   "
          "[springs: relative pose [e; p], twist [w; v]]\n",
          pad, vars[l.springs].name);
      continue;
    }
    if (l.solve) {
      const Solve& s = *l.solve;
      const Columns& c = s.matrix;
      out += fmt::format("{}solve {}(.) = X^-1 {}(.), X ({} x {}) formed once, for each column j: {}(.) = e_j\n", pad,
                         vars[s.dst].name, vars[s.rhs].name, to_string(c.space), to_string(c.space), vars[c.unit].name);
      print_loops(out, c.loops, vars, indent + 4);
      out += fmt::format(
          "{}  X(i,j) = {}(.)_i . {}(.)_j   [Gram form of A* W A]; X = L D L*, then {} by substitution   "
          "[000 eq. 5.11]\n",
          pad, vars[c.result].name, vars[c.weighted].name, vars[s.dst].name);
      continue;
    }
    const bool in = l.direction == Direction::Inward;
    out += fmt::format("{}for k = {} ({}, {}):\n", pad, in ? "1..n" : "n..1", to_string(l.direction),
                       in ? "tip to base" : "base to tip");
    for (const Stmt& s : l.body) print_stmt(out, s, vars, indent + 2);
  }
}

}  // namespace

std::string print(const VExpr& e, const std::vector<Var>& vars, std::string_view at) {
  switch (e.kind()) {
    case VKind::Var: return fmt::format("{}({})", vars.at(e.var()).name, at);
    case VKind::Read: return fmt::format("{}({})", to_string(e.quantity()), at);
    case VKind::Zero: return "0";
    case VKind::Apply: return fmt::format("{}({}) {}", to_string(e.block()), at, bracket(e.operand(), vars, at));
    case VKind::EdgeIn: {
      const std::string c = child_of(at);
      return fmt::format("sum_{} phi({},{}) {}", c, at, c, bracket(e.operand(), vars, c));
    }
    case VKind::EdgeOut: {
      const std::string p = parent_of(at);
      return fmt::format("phi*({},{}) {}", p, at, bracket(e.operand(), vars, p));
    }
    case VKind::TipIn: return fmt::format("sum_t B({},t) {}(t)", at, vars.at(e.var()).name);
    case VKind::Sum: {
      std::string s;
      for (std::size_t i = 0; i < e.terms().size(); ++i) {
        const auto& [c, t] = e.terms()[i];
        const bool negative = c < 0;
        const double mag = negative ? -c : c;
        if (i == 0)
          s += negative ? "-" : "";
        else
          s += negative ? " - " : " + ";
        if (mag != 1.0) s += coefficient(mag) + " ";
        s += bracket(t, vars, at);
      }
      return s;
    }
  }
  return "?";
}

std::string print(const SweepProgram& p) {
  std::string out = fmt::format("sweep program {}: {}\n", p.name.empty() ? "(unnamed)" : p.name, p.source);
  for (const LoweringStep& step : p.lowering)
    out += step.identity.empty()
               ? fmt::format("  lowered by {}: {}\n", step.way, step.what)
               : fmt::format("  lowered by {} ({} [{}]): {}\n", step.way, step.identity, step.citation, step.what);
  out += "  inputs:";
  for (std::size_t i = 0; i < p.inputs.size(); ++i)
    out += fmt::format("{} {} ({})", i ? "," : "", p.vars[p.inputs[i]].name, to_string(p.vars[p.inputs[i]].space));
  out += p.inputs.empty() ? " none\n" : "\n";
  print_loops(out, p.loops, p.vars, 2);
  if (p.columns) {
    const Columns& c = *p.columns;
    out += fmt::format("  for each column j of {}: {}(.) = e_j\n", to_string(c.space), p.vars[c.unit].name);
    print_loops(out, c.loops, p.vars, 4);
    if (c.fill == Fill::Gram) {
      out += fmt::format(
          "  output {} ({} x {}): {}(i,j) = {}(.)_i . {}(.)_j for i <= j, by symmetry for i > j   "
          "[Gram form of A* W A]\n",
          p.output.name, to_string(p.output.rows), to_string(c.space), p.output.name, p.vars[c.result].name,
          p.vars[c.weighted].name);
    } else {
      out += fmt::format("  output {} ({} x {}) = [{}(.) for each j]{}\n", p.output.name, to_string(p.output.rows),
                         to_string(c.space), p.vars[c.result].name,
                         c.fill == Fill::SymmetricFromAncestors
                             ? ", rows of bodies outboard of body(j) by symmetry (CRB-H, 004 eq. 5.45)"
                             : "");
    }
  } else {
    out +=
        fmt::format("  output {} ({}) = {}(.)\n", p.output.name, to_string(p.output.rows), p.vars[p.output.var].name);
  }
  return out;
}

}  // namespace soa::exec
