// Derivatives of a sweep program's output with respect to its inputs: the generic
// runtime's route, forward-mode differentiation of the executor with a dual number.
//
// Contract
// - A derivative is taken with respect to some of the program's inputs (`wrt`: indices into
//   program.inputs, in the order the columns are wanted). Each input contributes its
//   tangent directions: nv for q (the configuration's tangent space, below), its size for
//   every other input (qd, qdd, T, f0, ...).
// - The tangent space of q (docs/mathematics.md, "Derivatives"): one direction per velocity
//   coordinate, ordered as qd. Revolute and prismatic joints: dq = 1. A ball joint's
//   direction c is the rotation about the child frame's axis c (quaternion rate
//   q x [e_c / 2, 0]), a free-flyer's directions are [omega; v] in its own body frame
//   (quaternion as for a ball, position rate R(q) v). So d/dq along qd is d/dt: a
//   derivative with respect to q is what Pinocchio calls the derivative in the tangent
//   space, with qd's angular-first order.
// - Output: derivative_layout(): the base output's entries (rows x cols, column-major) per
//   direction, the directions one after another: block d of out (rows * cols numbers) is
//   d(output)/d(direction d). A vector output's derivative is thus a rows x D matrix; an
//   N x N matrix's derivative with respect to q is N matrices, block i = d/dq_i.
// - differentiate() runs the executor once with S = Eigen's AutoDiffScalar (all
//   directions at once); the robot's numbers are constants. It agrees with the central
//   finite differences of interp::eval_dense (tests/unit/test_derivatives.cpp) and is the
//   reference the specialised derivative kernels are checked against to rounding.
#pragma once

#include <utility>
#include <vector>

#include "exec/constants.hpp"
#include "exec/execute.hpp"
#include "exec/sweep_ir.hpp"

namespace soa::exec {

// What a derivative kernel forms (docs/mathematics.md section 7).
// - Jacobian: d(output)/d(wrt), as above.
// - Coriolis: of tau = calM qdd + C (inputs q, qd, qdd; wrt qd), the Coriolis matrix
//   Cor = (d tau/dqd + calM Z) / 2 at qdd = 0, Z the joints' own cross products
//   (coriolis_tangents): calM_dot - 2 Cor is skew and Cor qd is C without gravity. Its
//   inputs are q and qd (the value does not depend on qdd); its output N x N.
// - Christoffel: the same program; d Cor / d qd, the Christoffel symbols of the first kind
//   (004 section 5): N matrices, block k = Cor at qd = e_k (Cor is linear in qd), entry
//   (i, j) of block k = Gamma_ijk, so that Cor = sum_k Gamma_..k qd_k. Its input is q.
enum class DerivativeForm { Jacobian, Coriolis, Christoffel };

// The number of tangent directions input `input` (an index into program.inputs) has.
int tangent_size(const SweepProgram& program, int input, int nq, int nv, int n, int m);

// The layout of the derivative of `program` with respect to `wrt`: the inputs as the
// program's, the output rows x (cols * directions).
Layout derivative_layout(const SweepProgram& program, const std::vector<int>& wrt, int nq, int nv, int n, int m);

// The tangent directions of q at configuration q: for direction d (0 .. nv-1), the rate of
// each entry of q it moves, as (index into q, rate) pairs (contract above). S is double,
// the tracing scalar or a dual number: the rates of quaternions depend on q.
template <class S>
std::vector<std::vector<std::pair<int, S>>> config_tangents(const RobotConstants<double>& robot, const S* q) {
  std::vector<std::vector<std::pair<int, S>>> t(static_cast<std::size_t>(robot.nv));
  const S half(0.5), one(1.0);
  // Quaternion [x y z w] at qq moved by a rotation about the body's axis c: q x [e_c/2, 0].
  auto rotation = [&](const S* qq, int q_at, int v_at) {
    const S &x = qq[0], &y = qq[1], &z = qq[2], &w = qq[3];
    // [v w] x [e/2 0] = [w e/2 + v x e/2, -v.e/2]
    const S rate[3][4] = {{half * w, half * z, -half * y, -half * x},
                          {-half * z, half * w, half * x, -half * y},
                          {half * y, -half * x, half * w, -half * z}};
    for (int c = 0; c < 3; ++c)
      for (int e = 0; e < 4; ++e) t[static_cast<std::size_t>(v_at + c)].emplace_back(q_at + e, rate[c][e]);
  };
  for (const BodyConstants<double>& b : robot.bodies) {
    const S* qb = q + b.q_offset;
    switch (b.joint) {
      case JointKind::Revolute:
      case JointKind::Prismatic: t[static_cast<std::size_t>(b.v_offset)].emplace_back(b.q_offset, one); break;
      case JointKind::Ball: rotation(qb, b.q_offset, b.v_offset); break;
      case JointKind::Free: {
        rotation(qb + 3, b.q_offset + 3, b.v_offset);
        // Position rate R(q) v, R the normalised quaternion's rotation (as the executor's).
        const M3<S> R = quaternion_rotation(qb + 3);
        for (int c = 0; c < 3; ++c)
          for (int r = 0; r < 3; ++r)
            t[static_cast<std::size_t>(b.v_offset + 3 + c)].emplace_back(b.q_offset + r, R[3 * r + c]);
        break;
      }
    }
  }
  return t;
}

// Every direction of the inputs `wrt` at `in` (the program's input layout `l`), in order:
// the rates of the input entries it moves, as (index into in, rate) pairs.
template <class S>
std::vector<std::vector<std::pair<int, S>>> input_tangents(const SweepProgram& program, const Layout& l,
                                                           const RobotConstants<double>& robot,
                                                           const std::vector<int>& wrt, const S* in) {
  std::vector<std::vector<std::pair<int, S>>> out;
  for (int w : wrt) {
    const Layout::Slot slot = l.inputs[static_cast<std::size_t>(w)];
    if (program.vars[program.inputs[static_cast<std::size_t>(w)]].space == Space::Config) {
      for (auto direction : config_tangents(robot, in + slot.offset)) {
        for (auto& entry : direction) entry.first += slot.offset;
        out.push_back(std::move(direction));
      }
    } else {
      for (int j = 0; j < slot.size; ++j) out.push_back({{slot.offset + j, S(1.0)}});
    }
  }
  return out;
}

// The directions of the Coriolis form, one per qd entry k, scaled by 1/2: qd_k at rate 1/2
// and qdd at rate Z(qd) e_k / 2, so that the derivative of tau along it is column k of
// (d tau/dqd + calM Z) / 2. Z is block-diagonal over the joints: 0 for a 1-dof joint,
// omega~ for a ball joint, [[omega~, 0], [v~, omega~]] for a free-flyer ([omega; v] = its
// qd). `qd` is the input at offset qd_at, qdd's offset is qdd_at.
template <class S>
std::vector<std::vector<std::pair<int, S>>> coriolis_tangents(const RobotConstants<double>& robot, const S* qd,
                                                              int qd_at, int qdd_at) {
  std::vector<std::vector<std::pair<int, S>>> t(static_cast<std::size_t>(robot.nv));
  const S half(0.5);
  for (int k = 0; k < robot.nv; ++k) t[static_cast<std::size_t>(k)].emplace_back(qd_at + k, half);
  // Column c of w~ (w x e_c), halved, into rows `row`.. of direction k.
  auto cross_column = [&](const S* w, int c, int k, int row) {
    const int a = (c + 1) % 3, b = (c + 2) % 3;  // w x e_c = w_b e_a - w_a e_b
    t[static_cast<std::size_t>(k)].emplace_back(qdd_at + row + a, half * w[b]);
    t[static_cast<std::size_t>(k)].emplace_back(qdd_at + row + b, -(half * w[a]));
  };
  for (const BodyConstants<double>& b : robot.bodies) {
    const int o = b.v_offset;
    const S* w = qd + o;  // omega, first in a ball's and a free-flyer's qd
    switch (b.joint) {
      case JointKind::Revolute:
      case JointKind::Prismatic: break;
      case JointKind::Ball:
        for (int c = 0; c < 3; ++c) cross_column(w, c, o + c, o);
        break;
      case JointKind::Free:
        for (int c = 0; c < 3; ++c) {
          cross_column(w, c, o + c, o);               // omega~ e_c
          cross_column(qd + o + 3, c, o + c, o + 3);  // v~ e_c
          cross_column(w, c, o + 3 + c, o + 3);       // omega~ e_c, for the linear rates
        }
        break;
    }
  }
  return t;
}

// The layout of a kernel of this form (program, wrt as for derivative_layout): Jacobian as
// derivative_layout; Coriolis without the qdd input (the last); Christoffel with q alone,
// N x N^2.
Layout form_layout(const SweepProgram& program, const std::vector<int>& wrt, DerivativeForm form, int nq, int nv, int n,
                   int m);

// d(output)/d(inputs wrt) at `in` (the program's input layout), into `out`
// (derivative_layout). Throws what execute throws.
void differentiate(const SweepProgram& program, const RobotConstants<double>& robot, const double* in,
                   const std::vector<int>& wrt, double* out);

// The Coriolis or Christoffel form (above) at `in` (form_layout's inputs), into `out`. The
// program is tau's, with inputs q, qd, qdd in that order.
void quadratic_form(const SweepProgram& program, const RobotConstants<double>& robot, DerivativeForm form,
                    const double* in, double* out);

}  // namespace soa::exec
