// The executor's template definition. Included by execute.cpp (S = double) and by the
// specialiser (S = its tracing scalar); nothing else should include it.
#pragma once

#include <algorithm>
#include <cmath>
#include <type_traits>

#include <fmt/format.h>

#include "exec/execute.hpp"
#include "exec/spatial.hpp"
#include "support/error.hpp"

namespace soa::exec {
namespace detail {

// Runs one program on one workspace; every array it writes is the workspace's.
template <class S>
class Executor {
public:
  Executor(const SweepProgram& p, const RobotConstants<S>& r, Workspace<S>& w, Observer* obs)
      : p_(p),
        r_(r),
        obs_(obs),
        X_(w.X_),
        V_(w.V_),
        a_(w.a_),
        abar_(w.abar_),
        b_(w.b_),
        art_(w.art_),
        R_(w.R_),
        ups_(w.ups_),
        vals_(w.vals_),
        config_(w.config_),
        unit_(w.unit_),
        A_(w.A_),
        WA_(w.WA_),
        half_rows_(w.half_rows_),
        solve_unit_(w.solve_unit_),
        solve_A_(w.solve_A_),
        solve_WA_(w.solve_WA_),
        solve_X_(w.solve_X_),
        solve_held_(w.solve_held_),
        solve_rel_(w.solve_rel_),
        solve_own_(w.solve_own_),
        lay_(w.layout_) {}

  void run(const S* in, S* out) {
    const Layout& lay = lay_;
    for (std::size_t i = 0; i < p_.inputs.size(); ++i) load(p_.inputs[i], in + lay.inputs[i].offset);
    run_loops(p_.loops);
    if (!p_.columns) {
      store(p_.output.var, out);
      return;
    }
    const Columns& c = *p_.columns;
    const int cols = lay.cols;
    const bool gram = c.fill == Fill::Gram;
    // Gram: the columns of A and W A, kept until every column is known.
    const int half_rows = half_rows_;
    S *A = A_.data(), *WA = WA_.data();
    for_each_column(c, cols, unit_, [&](int j) {
      if (!gram) {
        store(c.result, out + static_cast<std::ptrdiff_t>(j) * lay.rows);
        return;
      }
      store(c.result, A + static_cast<std::ptrdiff_t>(j) * half_rows);
      store(c.weighted, WA + static_cast<std::ptrdiff_t>(j) * half_rows);
    });
    if (c.fill == Fill::SymmetricFromAncestors) symmetric_fill(out, lay.rows);
    if (gram) gram_fill(A, WA, half_rows, cols, c.space, out);
  }

private:
  using Articulated = typename Workspace<S>::Articulated;
  const SweepProgram& p_;
  const RobotConstants<S>& r_;
  Observer* obs_;
  int column_ = -1;
  std::vector<Transform<S>>& X_;
  std::vector<SVec<S>>&V_, &a_, &abar_, &b_;
  std::vector<Articulated>& art_;
  std::vector<Inertia<S>>& R_;
  std::vector<SMat<S>>& ups_;
  std::vector<std::vector<SVec<S>>>& vals_;  // [var][body, or tip for Tip vars]
  std::vector<S>& config_;                   // q
  std::vector<S>&unit_, &A_, &WA_;
  const int half_rows_;
  std::vector<S>&solve_unit_, &solve_A_, &solve_WA_, &solve_X_;
  const std::vector<int>& solve_held_;
  std::vector<Transform<S>>& solve_rel_;
  std::vector<SVec<S>>& solve_own_;
  const Layout& lay_;

  const BodyConstants<S>& body(int k) const { return r_.bodies[k]; }

  // ---- inputs and outputs -------------------------------------------------------------

  void load(int v, const S* src) {
    const Space s = p_.vars[v].space;
    if (s == Space::Config) {
      std::copy(src, src + r_.nq, config_.begin());
      return;
    }
    for (std::size_t i = 0; i < vals_[v].size(); ++i) {
      const int k = static_cast<int>(i);
      const int off = s == Space::Joint ? body(k).v_offset : 6 * k;
      const int size = s == Space::Joint ? body(k).nv : 6;
      SVec<S>& x = vals_[v][i];
      x.n = size;
      for (int j = 0; j < size; ++j) x[j] = src[off + j];
    }
  }

  void store(int v, S* dst) const {
    const Space s = p_.vars[v].space;
    for (std::size_t i = 0; i < vals_[v].size(); ++i) {
      const int k = static_cast<int>(i);
      const int off = s == Space::Joint ? body(k).v_offset : 6 * k;
      for (int j = 0; j < vals_[v][i].n; ++j) dst[off + j] = vals_[v][i][j];
    }
  }

  bool ancestor_or_self(int i, int k) const {  // is body i on the path from k to its root?
    for (int b = k; b >= 0; b = body(b).parent)
      if (b == i) return true;
    return false;
  }

  // Per entry of a Joint or Tip space vector, the body it belongs to (a tip's: its body's).
  std::vector<int> owners(Space s) const {
    std::vector<int> owner;
    if (s == Space::Tip) {
      for (const auto& t : r_.tips) owner.insert(owner.end(), 6, t.body);
      return owner;
    }
    owner.resize(static_cast<std::size_t>(r_.nv));
    for (int k = 0; k < r_.n(); ++k)
      for (int j = 0; j < body(k).nv; ++j) owner[body(k).v_offset + j] = k;
    return owner;
  }

  // CRB-H (004 eq. 5.45): column j is exact in the rows of body(j) and its ancestors. By
  // blocks of bodies, so that no table of joint owners is needed (nothing is allocated);
  // exact entries are never written, so the order of the blocks does not matter.
  void symmetric_fill(S* out, int rows) const {
    for (int bc = 0; bc < r_.n(); ++bc)
      for (int br = 0; br < r_.n(); ++br) {
        if (ancestor_or_self(br, bc)) continue;
        const bool mirror = ancestor_or_self(bc, br);
        for (int jc = 0; jc < body(bc).nv; ++jc)
          for (int jr = 0; jr < body(br).nv; ++jr) {
            const int c = body(bc).v_offset + jc, r = body(br).v_offset + jr;
            out[c * rows + r] = mirror ? out[r * rows + c] : S(0.0);
          }
      }
  }

  // out(i,j) = (A e_i) . (W A e_j), i <= j, in row order; the executor does not branch on
  // values, so the zeros of A outside the ancestors are multiplied here and fold away only
  // in specialised code (O(N^3) here, O(N^2 d) there, d = common ancestor dofs).
  // `which`: the unit vectors' indices when the columns are a selection of the space's (a
  // solve's held rows), else nullptr (column j is e_j).
  void gram_fill(const S* A, const S* WA, int rows, int cols, Space space, S* out,
                 const std::vector<int>* which = nullptr) const {
    const std::vector<int> owner = obs_ ? owners(space) : std::vector<int>{};
    for (int j = 0; j < cols; ++j) {
      const S* wa = WA + static_cast<std::ptrdiff_t>(j) * rows;
      for (int i = 0; i <= j; ++i) {
        const S* a = A + static_cast<std::ptrdiff_t>(i) * rows;
        if (obs_) obs_->enter(j, owner[which ? (*which)[i] : i], step_statement(Step::Gram));
        S x = a[0] * wa[0];
        for (int r = 1; r < rows; ++r) x = x + a[r] * wa[r];
        out[static_cast<std::ptrdiff_t>(j) * cols + i] = x;
        out[static_cast<std::ptrdiff_t>(i) * cols + j] = x;
      }
    }
  }

  // Column j of an operator-valued result, for j < cols: e_j into c.unit, c.loops run, then
  // `done(j)` stores what it needs.
  template <class Done>
  void for_each_column(const Columns& c, int cols, std::vector<S>& unit, Done done) {
    std::fill(unit.begin(), unit.end(), S(0.0));
    for (column_ = 0; column_ < cols; ++column_) {
      unit[column_] = S(1.0);
      load(c.unit, unit.data());
      unit[column_] = S(0.0);
      run_loops(c.loops);
      done(column_);
    }
    column_ = -1;
  }

  // ---- loops ----------------------------------------------------------------------------

  // The pose of tip t relative to tip u, as a Transform (R: t's axes in u's, l: t's origin
  // in u's coordinates), from the bodies' transforms up to their nearest common ancestor:
  // phi_t_apply(result, V_u) is u's twist in t's coordinates, phi_apply(result, f) a force
  // at t expressed at u.
  Transform<S> relative_pose(int t, int u) const {
    const int kt = r_.tips[t].body, ku = r_.tips[u].body;
    int common = kt;
    while (common >= 0 && !ancestor_or_self(common, ku)) common = body(common).parent;
    // The tip's pose in the frame of body `common` (the world's when -1).
    const auto pose = [&](int tip) {
      const Transform<S>& B = r_.tips[tip].X;
      if (r_.tips[tip].body == common) return B;
      const Transform<S> T = pose_below(r_.tips[tip].body, common);
      return Transform<S>{mul(T.R, B.R), T.l + mul(T.R, B.l)};
    };
    const Transform<S> Pt = pose(t), Pu = pose(u);
    return Transform<S>{mul(transpose(Pu.R), Pt.R), mul_t(Pu.R, Pt.l - Pu.l)};
  }

  // Body k's pose in the frame of its ancestor `stop` (the world's when -1), composed from
  // `stop` down.
  Transform<S> pose_below(int k, int stop) const {
    const int p = body(k).parent;
    if (p == stop) return X_[k];
    const Transform<S> T = pose_below(p, stop);
    return Transform<S>{mul(T.R, X_[k].R), T.l + mul(T.R, X_[k].l)};
  }

  // X z = y on the held rows (sweep_ir.hpp Solve). A held row j of tip t (direction r) is the
  // constraint row q_j = e_r at t, and, when t is welded to a partner u, minus row r of
  // X(t,u) (u's twist in t's coordinates) at u. The columns X q_j* and their Gram entries
  // form Q X Q* as in run(); it is factored in place as L D L* (lower triangle: L; upper
  // triangle: L D, the entries before their division, so that a term of a later entry is one
  // product, not two; diagonal: D^-1, so that each pivot is divided by once); then
  // L D L* u = Q y and z = Q* u.
  void run_solve(const Solve& sv) {
    const Columns& c = sv.matrix;
    const std::vector<int>& held = solve_held_;  // the tip-space rows kept, in order
    const int cols = static_cast<int>(held.size());
    const int rows = space_size(p_.vars[c.result].space, r_.nq, r_.nv, r_.n(), r_.m());
    S *A = solve_A_.data(), *WA = solve_WA_.data(), *X = solve_X_.data();
    const int outer_column = column_;  // inside an operator-valued result's column loop: restored below
    for (int t = 0; t < r_.m(); ++t)
      if (r_.tips[t].partner >= 0 && r_.tips[t].held) solve_rel_[t] = relative_pose(t, r_.tips[t].partner);
    const auto unit_row = [](int r) {
      SVec<S> e = svec_zero<S>(6);
      e[r] = S(1.0);
      return e;
    };
    std::vector<S>& unit = solve_unit_;
    std::fill(unit.begin(), unit.end(), S(0.0));
    for (int j = 0; j < cols; ++j) {
      const int t = held[j] / 6, u = r_.tips[t].partner;
      column_ = held[j];
      unit[column_] = S(1.0);
      if (u >= 0) {
        const SVec<S> g = phi_apply(solve_rel_[t], unit_row(held[j] % 6));  // q_j* at u
        for (int i = 0; i < 6; ++i) unit[6 * u + i] = unit[6 * u + i] - g[i];
      }
      load(c.unit, unit.data());
      unit[column_] = S(0.0);
      if (u >= 0)
        for (int i = 0; i < 6; ++i) unit[6 * u + i] = S(0.0);
      run_loops(c.loops);
      store(c.result, A + static_cast<std::ptrdiff_t>(j) * rows);
      store(c.weighted, WA + static_cast<std::ptrdiff_t>(j) * rows);
    }
    column_ = outer_column;
    gram_fill(A, WA, rows, cols, Space::Tip, X, &held);
    const auto at = [cols](int i, int j) { return static_cast<std::ptrdiff_t>(j) * cols + i; };
    const auto tip_body = [this, &held](int i) { return r_.tips[held[i] / 6].body; };
    double largest = 0.0;
    if constexpr (std::is_same_v<S, double>)
      for (int j = 0; j < cols; ++j) largest = std::max(largest, std::fabs(X[at(j, j)]));
    for (int j = 0; j < cols; ++j) {
      if (obs_) obs_->enter(-1, tip_body(j), step_statement(Step::Factor));
      S d = X[at(j, j)];
      for (int k = 0; k < j; ++k) d = d - X[at(k, j)] * X[at(j, k)];  // (L D)(j,k) L(j,k)
      if constexpr (std::is_same_v<S, double>)
        if (!(d > 1e-12 * largest)) {
          const TipConstants<S>& tip = r_.tips[held[j] / 6];
          throw UserError(
              fmt::format("{}: the tip-space matrix X is singular at tip frame '{}'{} (its direction {} "
                          "depends on the ones before): the constraints are redundant",
                          p_.name.empty() ? p_.source : p_.name, tip.name,
                          tip.partner >= 0 ? fmt::format(" welded to '{}'", r_.tips[tip.partner].name) : std::string(),
                          directions_to_string(static_cast<Directions>(1u << (held[j] % 6)))));
        }
      const S dinv = S(1.0) / d;
      X[at(j, j)] = dinv;
      for (int i = j + 1; i < cols; ++i) {
        S l = X[at(i, j)];
        for (int k = 0; k < j; ++k) l = l - X[at(k, i)] * X[at(j, k)];  // (L D)(i,k) L(j,k)
        X[at(j, i)] = l;
        X[at(i, j)] = l * dinv;
      }
    }
    // Q y: a welded tip's rows are relative to its partner's.
    std::vector<SVec<S>>& y = vals_[sv.rhs];
    std::vector<SVec<S>>& z = vals_[sv.dst];
    for (int t = 0; t < r_.m(); ++t) {
      solve_own_[t] = y[t];
      if (r_.tips[t].partner >= 0 && r_.tips[t].held)
        solve_own_[t] = y[t] - phi_t_apply(solve_rel_[t], y[r_.tips[t].partner]);
    }
    // L u = Q y, then D L* u' = u.
    S* v_ = unit.data();
    for (int i = 0; i < cols; ++i) {
      if (obs_) obs_->enter(-1, tip_body(i), step_statement(Step::Substitute));
      S v = solve_own_[held[i] / 6][held[i] % 6];
      for (int k = 0; k < i; ++k) v = v - X[at(i, k)] * v_[k];
      v_[i] = v;
    }
    for (int i = cols - 1; i >= 0; --i) {
      if (obs_) obs_->enter(-1, tip_body(i), step_statement(Step::Substitute));
      S v = v_[i] * X[at(i, i)];
      for (int k = i + 1; k < cols; ++k) v = v - X[at(k, i)] * v_[k];
      v_[i] = v;
    }
    // z = Q* u: each tip's own rows, and minus their force at its partner.
    for (int t = 0; t < r_.m(); ++t) solve_own_[t] = svec_zero<S>(6);
    for (int i = 0; i < cols; ++i) solve_own_[held[i] / 6][held[i] % 6] = v_[i];
    for (int t = 0; t < r_.m(); ++t) z[t] = solve_own_[t];
    for (int t = 0; t < r_.m(); ++t)
      if (r_.tips[t].partner >= 0 && r_.tips[t].held) {
        const int u = r_.tips[t].partner;
        z[u] = z[u] - phi_apply(solve_rel_[t], solve_own_[t]);
      }
  }

  // fg (sweep_ir.hpp Loop::springs): for each tip t grasping u, s = [kr e + dr w; kt p + dt v]
  // (model/robot.hpp Spring) is what t exerts on its spring, in t's coordinates at t's
  // origin, and u exerts the opposite, -phi(u,t) s. [e; p] is t's pose relative to u (e =
  // vee(R - R*) / 2, the same in both frames' axes; p the origins' offset in t's axes), [w; v]
  // t's twist relative to u's: the force law is the gradient of kt |p|^2 / 2 + kr (1 - cos
  // angle) plus the damping.
  void run_springs(int dst) {
    std::vector<SVec<S>>& f = vals_[dst];
    for (int t = 0; t < r_.m(); ++t) f[t] = svec_zero<S>(6);
    for (int t = 0; t < r_.m(); ++t) {
      const TipConstants<S>& tip = r_.tips[t];
      const int u = tip.spring_to;
      if (u < 0) continue;
      if (obs_) obs_->enter(-1, tip.body, step_statement(Step::Springs));
      const Transform<S> X = relative_pose(t, u);
      const V3<S> e = vee_half(X.R), p = mul_t(X.R, X.l);
      const TipConstants<S>& other = r_.tips[u];
      const SVec<S> Vt = phi_t_apply(tip.X, V_[tip.body]);
      const SVec<S> Vu = phi_t_apply(X, phi_t_apply(other.X, V_[other.body]));
      const V3<S> w = top(Vt) - top(Vu), v = bottom(Vt) - bottom(Vu);
      const auto& c = tip.spring;  // kt, kr, dt, dr
      const SVec<S> force = spatial(scale(c[1], e) + scale(c[3], w), scale(c[0], p) + scale(c[2], v));
      f[t] = f[t] + force;
      f[u] = f[u] - phi_apply(X, force);
    }
  }

  // ex (sweep_ir.hpp Loop::errors): for each tip t welded to u, [e; p] of t's pose relative
  // to u's as in run_springs; 0 at the other tips.
  void run_errors(int dst) {
    std::vector<SVec<S>>& out = vals_[dst];
    for (int t = 0; t < r_.m(); ++t) {
      out[t] = svec_zero<S>(6);
      const TipConstants<S>& tip = r_.tips[t];
      if (tip.partner < 0 || !tip.held) continue;
      if (obs_) obs_->enter(-1, tip.body, step_statement(Step::WeldErrors));
      const Transform<S> X = relative_pose(t, tip.partner);
      out[t] = spatial(vee_half(X.R), mul_t(X.R, X.l));
    }
  }

  // vee(R - R*) / 2: sin(angle) times the axis of R.
  static V3<S> vee_half(const M3<S>& R) {
    const S half(0.5);
    return {half * (R[7] - R[5]), half * (R[2] - R[6]), half * (R[3] - R[1])};
  }

  // The steps no Stmt of the program stands for -- a Gram entry, the weld errors, the
  // springs, a solve's factorisation and substitutions -- as the Observer is told them: one
  // Stmt per label.
  enum class Step { Gram, WeldErrors, Springs, Factor, Substitute };
  static const Stmt& step_statement(Step step) {
    static const std::array<Stmt, 5> steps = [] {
      std::array<Stmt, 5> s;
      const std::array<const char*, 5> labels = {"Gram (A e_i)* W (A e_j)", "weld errors", "springs", "X = L D L*",
                                                 "L D L* z = y"};
      for (std::size_t i = 0; i < s.size(); ++i) s[i].label = labels[i];
      return s;
    }();
    return steps[static_cast<std::size_t>(step)];
  }

  void run_loops(const std::vector<Loop>& loops) {
    const int n = r_.n();
    for (const Loop& loop : loops) {
      if (loop.springs >= 0) {
        run_springs(loop.springs);
        continue;
      }
      if (loop.errors >= 0) {
        run_errors(loop.errors);
        continue;
      }
      if (loop.solve) {
        run_solve(*loop.solve);
        continue;
      }
      const bool in = loop.direction == Direction::Inward;
      for (int i = 0; i < n; ++i) {
        const int k = in ? i : n - 1 - i;
        for (const Stmt& s : loop.body) {
          if (obs_) obs_->enter(column_, k, s);
          exec(s, k);
        }
      }
    }
  }

  void exec(const Stmt& s, int k) {
    switch (s.kind) {
      case Stmt::Kind::Assign: vals_[s.dst][k] = eval(s.rhs, k); return;
      case Stmt::Kind::TipAssign: {
        if (body(k).tips.empty()) return;
        if (s.rhs.space() == Space::Tip) {
          for (int t : body(k).tips) vals_[s.dst][t] = eval_tip(s.rhs, t);
          return;
        }
        const SVec<S> x = eval(s.rhs, k);
        for (int t : body(k).tips) vals_[s.dst][t] = phi_t_apply(r_.tips[t].X, x);  // B*
        return;
      }
      case Stmt::Kind::Compute: compute(s, k); return;
    }
  }

  // ---- vector expressions ---------------------------------------------------------------

  // A tip-space combination (sums of Tip vars) at tip t.
  SVec<S> eval_tip(const VExpr& e, int t) const {
    switch (e.kind()) {
      case VKind::Var: return vals_[e.var()][t];
      case VKind::Zero: return svec_zero<S>(6);
      case VKind::Sum: return combine(e, [&](const VExpr& term) { return eval_tip(term, t); });
      default: break;
    }
    throw InternalError("eval_tip: a tip-space value is a var or a sum of them");
  }

  // sum_i c_i term_i of a Sum, each term evaluated by `value`.
  template <class Value>
  static SVec<S> combine(const VExpr& e, Value value) {
    SVec<S> acc;
    bool first = true;
    for (const auto& [c, term] : e.terms()) {
      SVec<S> x = value(term);
      if (c != 1.0)
        for (int i = 0; i < x.n; ++i) x[i] = c == -1.0 ? S(-x[i]) : S(S(c) * x[i]);
      acc = first ? x : acc + x;
      first = false;
    }
    return acc;
  }

  SVec<S> eval(const VExpr& e, int k) const {
    switch (e.kind()) {
      case VKind::Var: return vals_[e.var()][k];
      case VKind::Read:
        switch (e.quantity()) {
          case Quantity::Velocity: return V_[k];
          case Quantity::BiasA: return a_[k];
          case Quantity::BiasAbar: return abar_[k];
          default: return b_[k];
        }
      case VKind::Zero: return svec_zero<S>(e.space() == Space::Joint ? body(k).nv : 6);
      case VKind::Sum: return combine(e, [&](const VExpr& term) { return eval(term, k); });
      case VKind::Apply: return apply_block(e.block(), k, eval(e.operand(), k));
      case VKind::EdgeIn: {  // sum_c phi(k,c) x(c): phi(k,c) is stored at the child
        const auto& ch = body(k).children;
        if (ch.empty()) return svec_zero<S>(6);
        SVec<S> acc = phi_apply(X_[ch[0]], eval(e.operand(), ch[0]));
        for (std::size_t i = 1; i < ch.size(); ++i) acc = acc + phi_apply(X_[ch[i]], eval(e.operand(), ch[i]));
        return acc;
      }
      case VKind::EdgeOut: {
        const int p = body(k).parent;
        if (p < 0) return svec_zero<S>(6);
        return phi_t_apply(X_[k], eval(e.operand(), p));
      }
      case VKind::TipIn: {  // sum_t B(k,t) f(t)
        const auto& tips = body(k).tips;
        if (tips.empty()) return svec_zero<S>(6);
        SVec<S> acc = phi_apply(r_.tips[tips[0]].X, vals_[e.var()][tips[0]]);
        for (std::size_t i = 1; i < tips.size(); ++i)
          acc = acc + phi_apply(r_.tips[tips[i]].X, vals_[e.var()][tips[i]]);
        return acc;
      }
    }
    throw InternalError("execute: unknown expression kind");
  }

  // H*(k) u: the joint's motion subspace (reference 2).
  SVec<S> hstar(int k, const SVec<S>& u) const { return hstar_apply(body(k), u); }

  // H(k) x = H*(k)^T x.
  SVec<S> h(int k, const SVec<S>& x) const {
    const BodyConstants<S>& b = body(k);
    SVec<S> u;
    u.n = b.nv;
    switch (b.joint) {
      case JointKind::Revolute: u[0] = dot(b.axis, top(x)); return u;
      case JointKind::Prismatic: u[0] = dot(b.axis, bottom(x)); return u;
      case JointKind::Ball:
        for (int i = 0; i < 3; ++i) u[i] = x[i];
        return u;
      case JointKind::Free: return x;
    }
    throw InternalError("execute: unknown joint kind");
  }

  SMat<S> hstar_matrix(int k) const {  // 6 x nv
    const int nv = body(k).nv;
    SMat<S> Hs = smat_zero<S>(6, nv);
    for (int j = 0; j < nv; ++j) {
      SVec<S> e = svec_zero<S>(nv);
      e[j] = S(1.0);
      const SVec<S> col = hstar(k, e);
      for (int r = 0; r < 6; ++r) Hs(r, j) = col[r];
    }
    return Hs;
  }

  SVec<S> apply_block(Block blk, int k, const SVec<S>& x) const {
    const Articulated& A = art_[k];
    switch (blk) {
      case Block::H: return h(k, x);
      case Block::Hstar: return hstar(k, x);
      case Block::M: return inertia_apply(body(k).M, x);
      case Block::Minv: return mul(inverse_spd(inertia_matrix(body(k).M)), x);
      case Block::P: return mul(A.P, x);
      case Block::R: return inertia_apply(R_[k], x);
      case Block::Upsilon: return mul(ups_[k], x);
      case Block::D: return mul(A.D, x);
      case Block::Dinv: return ldl_solve(A.Dldl, x);
      case Block::LDinv: return unit_lower_solve(A.Dldl.L, x);
      case Block::DeltaInv: return delta_solve(A.Dldl, x);
      case Block::G: return mul(A.G, x);
      case Block::Gstar: return mul_t(A.G, x);
      case Block::Taubar: return x - mul(A.G, h(k, x));            // (1 - G H) x
      case Block::TaubarStar: return x - hstar(k, mul_t(A.G, x));  // (1 - H* G*) x
      case Block::Tau: return mul(A.G, h(k, x));
      case Block::TauStar: return hstar(k, mul_t(A.G, x));
    }
    throw InternalError("execute: unknown block");
  }

  // ---- model quantities (kinematics.cpp conventions) --------------------------------------

  SVec<S> joint_rate(const Stmt& s, int k) const { return vals_[s.arg][k]; }

  void compute(const Stmt& s, int k) {
    const BodyConstants<S>& b = body(k);
    const int p = b.parent;
    switch (s.quantity) {
      case Quantity::Transform: X_[k] = transform(k); return;
      case Quantity::Velocity: {
        const SVec<S> rel = hstar(k, joint_rate(s, k));
        V_[k] = p < 0 ? rel : phi_t_apply(X_[k], V_[p]) + rel;
        return;
      }
      case Quantity::BiasA: {
        // Reference 2: a = [wp x wr; wp x (wp x l_k) + 2 wp x vr + wr x vr], wp the parent's
        // angular velocity in frame k, l_k = R^T l; gravity at a root: + phi*(world,k) [0; -g].
        const Transform<S>& X = X_[k];
        const SVec<S> rel = hstar(k, joint_rate(s, k));
        const V3<S> wr = top(rel), vr = bottom(rel);
        V3<S> at = v3_zero<S>();
        V3<S> ab = cross(wr, vr);
        if (p >= 0) {
          const V3<S> wp = mul_t(X.R, top(V_[p]));
          const V3<S> lk = mul_t(X.R, X.l);
          at = cross(wp, wr);
          ab = cross(wp, cross(wp, lk)) + scale(S(2.0), cross(wp, vr)) + ab;
        } else {
          ab = ab - mul_t(X.R, r_.gravity);
        }
        a_[k] = spatial(at, ab);
        return;
      }
      case Quantity::BiasAbar: {
        // [w x wr; w x vr + v x wr] for V(k) = [w; v], H*(k) qd(k) = [wr; vr] (vocabulary.def).
        const SVec<S> rel = hstar(k, joint_rate(s, k));
        const V3<S> w = top(V_[k]), v = bottom(V_[k]), wr = top(rel), vr = bottom(rel);
        abar_[k] = spatial(cross(w, wr), cross(w, vr) + cross(v, wr));
        return;
      }
      case Quantity::BiasB: {
        const V3<S> w = top(V_[k]);
        const Inertia<S>& M = b.M;
        b_[k] = spatial(cross(w, mul(M.J, w)), cross(w, cross(w, M.h)));
        return;
      }
      case Quantity::Articulated: articulated(k); return;
      case Quantity::Composite: {
        Inertia<S> R = b.M;
        for (int c : b.children) R = R + inertia_congruence(X_[c], R_[c]);
        R_[k] = R;
        return;
      }
      case Quantity::Upsilon: upsilon(k); return;
    }
  }

  Transform<S> transform(int k) const { return joint_transform(body(k), config_.data() + body(k).q_offset); }

  // Riccati (001 eqs. 40-44; reference 3): P = M + sum_c psi P psi*, with psi(k,c) P(c)
  // psi*(k,c) = phi(k,c) P+(c) phi*(k,c) and P+ = taubar P = P - G D G*.
  void articulated(int k) {
    const BodyConstants<S>& b = body(k);
    Articulated& A = art_[k];
    A.P = inertia_matrix(b.M);
    for (int c : b.children) {
      const SMat<S> Pc = congruence6(X_[c], art_[c].Pplus);
      for (int i = 0; i < 36; ++i) A.P.a[i] = A.P.a[i] + Pc.a[i];
    }
    const SMat<S> Hs = hstar_matrix(k);
    const SMat<S> PH = mul(A.P, Hs);  // P H*
    A.D = mul_tn(Hs, PH, true);       // H P H*
    A.Dldl = ldl_spd(A.D);
    A.Dinv = ldl_inverse(A.Dldl);
    A.G = mul(PH, A.Dinv);
    if (b.parent < 0) return;
    A.Pplus = A.P;
    for (int r = 0; r < 6; ++r)
      for (int c = r; c < 6; ++c) {
        S acc = A.P(r, c);
        for (int j = 0; j < b.nv; ++j) acc = acc - A.G(r, j) * PH(c, j);
        A.Pplus(r, c) = A.Pplus(c, r) = acc;
      }
  }

  // Upsilon(k) = psi*(p,k) Upsilon(p) psi(p,k) + H* D^-1 H (reference 3; 002 eq. 3.11).
  void upsilon(int k) {
    const BodyConstants<S>& b = body(k);
    const Articulated& A = art_[k];
    const SMat<S> Hs = hstar_matrix(k);
    SMat<S> U = mul(mul(Hs, A.Dinv), transposed(Hs));
    if (b.parent >= 0) {
      // psi(p,k) = phi(p,k) taubar(k): taubar* (phi* Upsilon(p) phi) taubar.
      const SMat<S> Y = congruence6_t(X_[k], ups_[b.parent]);
      SMat<S> T = mul(A.G, transposed(Hs));  // G H
      for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 6; ++c) T(r, c) = (r == c ? S(1.0) : S(0.0)) - T(r, c);
      const SMat<S> Z = mul_tn(T, mul(Y, T), true);
      for (int i = 0; i < 36; ++i) U.a[i] = U.a[i] + Z.a[i];
    }
    ups_[k] = U;
  }

  static SMat<S> transposed(const SMat<S>& A) {
    SMat<S> T;
    T.rows = A.cols;
    T.cols = A.rows;
    for (int r = 0; r < A.rows; ++r)
      for (int c = 0; c < A.cols; ++c) T(c, r) = A(r, c);
    return T;
  }
};

}  // namespace detail

template <class S>
Workspace<S>::Workspace(const SweepProgram& program, const RobotConstants<S>& robot)
    : program_(program.name.empty() ? program.source : program.name),
      robot_(robot.name),
      n_(robot.n()),
      m_(robot.m()),
      nq_(robot.nq),
      nv_(robot.nv),
      inputs_(program.inputs),
      out_rows_(program.output.rows),
      out_cols_(program.output.cols),
      out_var_(program.output.var),
      layout_(exec::layout(program, robot)) {
  for (const Var& v : program.vars) spaces_.push_back(v.space);
  const auto n = static_cast<std::size_t>(n_);
  X_.resize(n);
  V_.resize(n);
  a_.resize(n);
  abar_.resize(n);
  b_.resize(n);
  art_.resize(n);
  R_.resize(n);
  ups_.resize(n);
  vals_.resize(spaces_.size());
  for (std::size_t v = 0; v < spaces_.size(); ++v) vals_[v].resize(spaces_[v] == Space::Tip ? m_ : n);
  config_.resize(static_cast<std::size_t>(nq_));
  std::size_t solve_rows = 0;
  for (const Solve* sv : solves(program)) {
    const Columns& c = sv->matrix;
    solve_shapes_.push_back({c.unit, c.result, c.weighted, sv->rhs, sv->dst});
    solve_rows = std::max(solve_rows, static_cast<std::size_t>(space_size(spaces_[c.result], nq_, nv_, n_, m_)));
  }
  if (!solve_shapes_.empty()) {
    for (int t = 0; t < m_; ++t)
      for (int r = 0; r < 6; ++r)
        if (robot.tips[t].held & (1u << r)) solve_held_.push_back(6 * t + r);
    const auto cols = solve_held_.size();
    solve_unit_.resize(static_cast<std::size_t>(6 * m_));
    solve_rel_.resize(static_cast<std::size_t>(m_));
    solve_own_.resize(static_cast<std::size_t>(m_));
    solve_A_.resize(solve_rows * cols);
    solve_WA_.resize(solve_rows * cols);
    solve_X_.resize(cols * cols);
  }
  if (!program.columns) return;
  const Columns& c = *program.columns;
  columns_shape_.emplace();
  columns_shape_->space = c.space;
  columns_shape_->unit = c.unit;
  columns_shape_->result = c.result;
  columns_shape_->fill = c.fill;
  columns_shape_->weighted = c.weighted;
  unit_.resize(static_cast<std::size_t>(layout_.cols));
  if (c.fill != Fill::Gram) return;
  half_rows_ = space_size(spaces_[c.result], nq_, nv_, n_, m_);
  A_.resize(static_cast<std::size_t>(half_rows_) * layout_.cols);
  WA_.resize(A_.size());
}

template <class S>
bool Workspace<S>::fits(const SweepProgram& program, const RobotConstants<S>& robot) const {
  if (robot.n() != n_ || robot.m() != m_ || robot.nq != nq_ || robot.nv != nv_) return false;
  if (program.vars.size() != spaces_.size() || program.inputs != inputs_) return false;
  for (std::size_t v = 0; v < spaces_.size(); ++v)
    if (program.vars[v].space != spaces_[v]) return false;
  const Output& o = program.output;
  if (o.rows != out_rows_ || o.cols != out_cols_ || o.var != out_var_) return false;
  const std::vector<const Solve*> sv = solves(program);
  if (sv.size() != solve_shapes_.size()) return false;
  if (!sv.empty()) {  // the same held rows
    std::size_t i = 0;
    for (int t = 0; t < m_; ++t)
      for (int r = 0; r < 6; ++r)
        if (robot.tips[t].held & (1u << r))
          if (i >= solve_held_.size() || solve_held_[i++] != 6 * t + r) return false;
    if (i != solve_held_.size()) return false;
  }
  for (std::size_t i = 0; i < sv.size(); ++i)
    if (solve_shapes_[i] !=
        std::array<int, 5>{sv[i]->matrix.unit, sv[i]->matrix.result, sv[i]->matrix.weighted, sv[i]->rhs, sv[i]->dst})
      return false;
  if (program.columns.has_value() != columns_shape_.has_value()) return false;
  if (!program.columns) return true;
  const Columns &c = *program.columns, &w = *columns_shape_;
  return c.space == w.space && c.unit == w.unit && c.result == w.result && c.fill == w.fill && c.weighted == w.weighted;
}

template <class S>
void Workspace<S>::mismatch(const SweepProgram& program, const RobotConstants<S>& robot) const {
  const std::string name = program.name.empty() ? program.source : program.name;
  throw UserError(fmt::format(
      "execute: the workspace was made for program '{}' ({} vars) on robot '{}' ({} bodies, {} tips, nq {}, "
      "nv {}), not for program '{}' ({} vars) on robot '{}' ({} bodies, {} tips, nq {}, nv {})",
      program_, spaces_.size(), robot_, n_, m_, nq_, nv_, name, program.vars.size(), robot.name, robot.n(), robot.m(),
      robot.nq, robot.nv));
}

template <class S>
void execute(const SweepProgram& program, const RobotConstants<S>& robot, const S* in, S* out, Workspace<S>& workspace,
             Observer* observer) {
  if (!workspace.fits(program, robot)) workspace.mismatch(program, robot);
  detail::Executor<S>(program, robot, workspace, observer).run(in, out);
}

template <class S>
void execute(const SweepProgram& program, const RobotConstants<S>& robot, const S* in, S* out, Observer* observer) {
  Workspace<S> workspace(program, robot);
  detail::Executor<S>(program, robot, workspace, observer).run(in, out);
}

}  // namespace soa::exec
