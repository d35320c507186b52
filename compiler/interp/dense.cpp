// Dense evaluation: every factor as a full matrix. I and 0 stay symbolic (a scaled identity)
// until something next to them fixes their size, so no shape pass is needed here.
#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "interp/interpreter.hpp"
#include "support/error.hpp"

namespace soa::interp {
namespace {

struct Value {
  bool scalar_identity = false;  // s * I of a size not yet known
  double s = 0.0;
  MatX m;

  static Value identity(double s) { return {true, s, {}}; }
  static Value matrix(MatX m) { return {false, 0.0, std::move(m)}; }
};

MatX materialise(const Value& v, long size) {
  SOA_ASSERT(v.scalar_identity || v.m.rows() == size, "identity partner of another size");
  return v.scalar_identity ? MatX(v.s * MatX::Identity(size, size)) : v.m;
}

Value eval(const Evaluation& ev, const ir::Expr& e);

// d(e)/dq_i at ev's state by differences along the tangent direction i (kinematics.hpp,
// moved_configuration: exact rotations), fourth order: (8 (f(h) - f(-h)) - (f(2h) -
// f(-2h))) / 12h with h = ev.step (1e-3), so truncation (h^4) and rounding (1e-16 / h) both stay
// near 1e-12 of the value's scale. Each point is a fresh evaluation of the whole model.
MatX derivative(const Evaluation& ev, const ir::Expr& e) {
  if (ev.coordinate < 0 || ev.coordinate >= ev.N)
    throw UserError(
        fmt::format("{} needs a coordinate i (0 to {}): soac eval --coordinate I gives one, soac verify checks several",
                    ir::print(ir::derivative(e)), ev.N - 1));
  const double h = ev.step;
  auto at = [&](double t) {
    State s = ev.state;
    s.q = moved_configuration(*ev.robot, ev.state.q, ev.coordinate, t);
    Evaluation moved = prepare(*ev.robot, s, ev.tips, *ev.definitions);
    moved.coordinate = ev.coordinate;
    moved.step = ev.step;
    moved.kin.T = ev.kin.T;  // T is an input, not a function of q
    return eval(moved, e).m;
  };
  return (8.0 * (at(h) - at(-h)) - (at(2 * h) - at(-2 * h))) / (12.0 * h);
}

Value eval(const Evaluation& ev, const ir::Expr& e) {
  using ir::Op;
  switch (e.op()) {
    case Op::Symbol: return Value::matrix(dense_symbol(ev, e));
    case Op::Identity: return Value::identity(1.0);
    case Op::Zero: return Value::identity(0.0);
    case Op::Scale: {
      Value v = eval(ev, e.kid(0));
      if (v.scalar_identity)
        v.s *= e.coef();
      else
        v.m *= e.coef();
      return v;
    }
    case Op::Adjoint: {
      Value v = eval(ev, e.kid(0));
      if (!v.scalar_identity) v.m.transposeInPlace();
      return v;
    }
    case Op::Derivative: {
      // Without a symbol the operand is a constant multiple of I (fold_zeros has run).
      const auto has_symbol = [](const auto& self, const ir::Expr& x) -> bool {
        return x.is(Op::Symbol) ||
               std::any_of(x.kids().begin(), x.kids().end(), [&](const ir::Expr& k) { return self(self, k); });
      };
      if (!has_symbol(has_symbol, e.kid(0))) return Value::identity(0.0);
      return Value::matrix(derivative(ev, e.kid(0)));
    }
    case Op::Inverse: {
      Value v = eval(ev, e.kid(0));
      if (v.scalar_identity) {
        if (v.s == 0.0) throw UserError("cannot invert 0");
        v.s = 1.0 / v.s;
        return v;
      }
      if (v.m.rows() != v.m.cols())
        throw UserError(fmt::format("cannot invert {}: it is {} x {}", ir::print(e.kid(0)), v.m.rows(), v.m.cols()));
      const ir::Shape shape = ir::infer_shape(e.kid(0));
      if (shape.rows == ir::Dim::Tip && shape.row_arm == 0) return Value::matrix(held_inverse(ev, v.m, e.kid(0)));
      Eigen::FullPivLU<MatX> lu(v.m);
      if (!lu.isInvertible())
        throw UserError(fmt::format("cannot invert {}: it is singular here", ir::print(e.kid(0))));
      return Value::matrix(lu.inverse());
    }
    case Op::Sum: {
      Value acc = Value::identity(0.0);
      for (const auto& t : e.kids()) {
        Value v = eval(ev, t);
        if (acc.scalar_identity && v.scalar_identity) {
          acc.s += v.s;
        } else if (acc.scalar_identity) {
          // A zero start adds nothing; s I needs a square partner (shape checking says so).
          acc = acc.s == 0.0 ? std::move(v) : Value::matrix(materialise(acc, v.m.rows()) + v.m);
        } else if (!v.scalar_identity) {
          acc.m += v.m;
        } else if (v.s != 0.0) {
          acc.m += materialise(v, acc.m.rows());
        }
      }
      return acc;
    }
    case Op::Product: {
      Value acc = Value::identity(1.0);
      for (const auto& f : e.kids()) {
        Value v = eval(ev, f);
        if (v.scalar_identity) {
          if (acc.scalar_identity)
            acc.s *= v.s;
          else
            acc.m *= v.s;
        } else if (acc.scalar_identity) {
          acc = Value::matrix(acc.s * v.m);
        } else {
          if (acc.m.cols() != v.m.rows())
            throw InternalError(fmt::format("dense product size mismatch at {}", ir::print(f)));
          acc.m = acc.m * v.m;
        }
      }
      return acc;
    }
  }
  throw InternalError("unknown IR node");
}

}  // namespace

MatX eval_dense(const Evaluation& ev, const ir::Expr& e) {
  check_arms(ev, e);
  const ir::Expr folded = fold_zeros(e);
  if (folded.is(ir::Op::Zero)) {
    const ir::Shape shape = ir::infer_shape(e);
    return MatX::Zero(rows(ev, shape.rows, shape.row_arm, e), rows(ev, shape.cols, shape.col_arm, e));
  }
  Value v = eval(ev, folded);
  if (v.scalar_identity)
    throw UserError(fmt::format("cannot tell the size of {}: nothing around it fixes it", ir::print(e)));
  return v.m;
}

MatX constraint_rows(const Evaluation& ev) {
  const auto frame = [&](int t) -> const Frame& { return ev.robot->frames[static_cast<std::size_t>(ev.tips[t])]; };
  bool constrained = false;
  for (int t = 0; t < ev.m; ++t) constrained = constrained || frame(t).held != 0;
  if (!constrained) return MatX::Identity(6 * ev.m, 6 * ev.m);
  // Phi(0, t): the force transform from tip t's frame to the world's (the bodies' phi from
  // the root down, then the tip's B block); t's coordinates of a world motion are Phi* m.
  const auto world = [&](int t) {
    Mat6 Phi = ev.kin.tips[static_cast<std::size_t>(t)].phi;
    for (int b = ev.kin.tips[static_cast<std::size_t>(t)].body; b >= 0; b = ev.robot->bodies[b].parent)
      Phi = ev.kin.body[static_cast<std::size_t>(b)].phi * Phi;
    return Phi;
  };
  int count = 0;
  for (int t = 0; t < ev.m; ++t) count += std::popcount(static_cast<unsigned>(frame(t).held));
  MatX Q = MatX::Zero(count, 6 * ev.m);
  int row = 0;
  for (int t = 0; t < ev.m; ++t) {
    const Frame& f = frame(t);
    if (!f.held) continue;
    Mat6 relative = Mat6::Zero();  // X(t,u) = Phi(0,t)* Phi(0,u)^-*
    int u = -1;
    if (f.held_to >= 0) {
      u = static_cast<int>(std::find(ev.tips.begin(), ev.tips.end(), f.held_to) - ev.tips.begin());
      SOA_ASSERT(u < ev.m, "a weld's partner frame is not a tip");
      relative = world(t).transpose() * world(u).transpose().inverse();
    }
    for (int r = 0; r < 6; ++r) {
      if (!(f.held & (1u << r))) continue;
      Q(row, 6 * t + r) = 1.0;
      if (u >= 0) Q.row(row).segment<6>(6 * u) -= relative.row(r);
      ++row;
    }
  }
  return Q;
}

MatX held_inverse(const Evaluation& ev, const MatX& X, const ir::Expr& what) {
  const MatX Q = constraint_rows(ev);
  SOA_ASSERT(X.rows() == 6 * ev.m && X.cols() == 6 * ev.m, "held_inverse of a matrix not 6m x 6m");
  Eigen::FullPivLU<MatX> lu(Q * X * Q.transpose());
  if (!lu.isInvertible()) throw UserError(fmt::format("cannot invert {}: it is singular here", ir::print(what)));
  return Q.transpose() * lu.inverse() * Q;
}

SaddlePoint saddle_point(const Evaluation& ev, const VecX& T, const VecX& Jdot_qd) {
  const MatX M = eval_dense(ev, ir::symbol(ir::Sym::calM));
  const MatX Q = constraint_rows(ev);
  const MatX J = Q * eval_dense(ev, ir::symbol(ir::Sym::J));
  const int N = static_cast<int>(M.rows()), c = static_cast<int>(J.rows());
  MatX K = MatX::Zero(N + c, N + c);
  K.topLeftCorner(N, N) = M;
  K.topRightCorner(N, c) = J.transpose();
  K.bottomLeftCorner(c, N) = J;
  VecX rhs(N + c);
  rhs << T - ev.kin.C, -Q * Jdot_qd;
  const VecX x = K.fullPivLu().solve(rhs);
  return {x.head(N), Q.transpose() * x.tail(c)};
}

}  // namespace soa::interp
