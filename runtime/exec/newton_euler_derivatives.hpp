// The derivatives of inverse dynamics by the Newton-Euler sensitivity recursion: d tau/dq and
// d tau/dqd in O(N * depth) with a handful of operations per pair of related joints
// (docs/mathematics.md section 7, "The sensitivity recursion").
//
// Contract
// - newton_euler_derivatives(r, q, qd, qdd, out) writes [d tau/dq, d tau/dqd] of tau(q, qd,
//   qdd) = calM qdd + C (inverse dynamics with gravity, no tip forces) into out, nv x 2nv
//   column-major: exec/derivative.hpp's layout for wrt = (q, qd), q in its tangent space.
//   It is templated on the scalar: S = double (a second route beside the dual numbers of
//   exec::differentiate, which it must equal to rounding) and the tracing scalar (the
//   specialised inverse_dynamics_derivatives kernel is this arithmetic for one robot).
// - Why it is cheap. Every quantity is taken in one inertial frame at its origin, called the
//   world frame below (with one root that is not a free-flyer, the root body's frame where
//   it is now). Moving
//   q_i along its tangent direction s (a column of joint i's H* in the world frame) moves the
//   subtree of i rigidly, so every world-frame quantity of that subtree that is carried by
//   the bodies (joint axes, inertias, velocities relative to i's parent p) changes by the
//   cross product with s. Summed over a subtree, the change of the force F_k it transmits is
//       dF_k = s x* F_k - R_k beta_s + B_k w_s            (k in the subtree of i),
//   with w_s = s x V_p, beta_s = s x a_p + V_p x w_s, R_k the composite inertia, and B_k w =
//   -(Rdot_k w + w x* h_k) built from two more composites: Rdot_k, the sum of the bodies'
//   inertia rates, and h_k, their summed momenta. Since tau_k = H_k F_k and H_k moves too,
//   d tau_k = (s x H_k*)* F_k + H_k dF_k, whose first term cancels s x* F_k ((s x)* = -s x*):
//       d tau_k / dq_s  = -(R_k H_k*) . beta_s + (-Rdot_k H_k* + H_k* x* h_k) . w_s,
//       d tau_k / dqd_s = -(-Rdot_k H_k* + H_k* x* h_k) . s - (R_k H_k*) . gamma_s,
//   gamma_s = s x (V_p + V_i): two 6-vectors per column of k, dotted with three per column
//   of each ancestor i. Above i (k a proper ancestor) H_k does not move and d tau_k =
//   H_k dF_i: one 6-vector per column of i, dotted with each ancestor's columns.
// - Conventions as the executor's: spatial vectors angular first, H*(k) constant in the
//   child frame (so d/dt of its world image is V_k x H_k*), gravity as the roots' base
//   acceleration [0; -g], quaternions normalised as the executor's joint_transform does.
#pragma once

#include <array>
#include <vector>

#include "exec/constants.hpp"
#include "exec/small.hpp"
#include "exec/spatial.hpp"

namespace soa::exec {

namespace sensitivity {

// x x y for motion vectors: [wx x wy; wx x vy + vx x wy].
template <class S>
SVec<S> cross_motion(const SVec<S>& x, const SVec<S>& y) {
  return spatial(cross(top(x), top(y)), cross(top(x), bottom(y)) + cross(bottom(x), top(y)));
}

// x x* f for a motion x and a force f: [wx x n + vx x f; wx x f].
template <class S>
SVec<S> cross_force(const SVec<S>& x, const SVec<S>& f) {
  return spatial(cross(top(x), top(f)) + cross(bottom(x), bottom(f)), cross(top(x), bottom(f)));
}

template <class S>
S sdot(const SVec<S>& a, const SVec<S>& b) {
  S acc = a[0] * b[0];
  for (int i = 1; i < 6; ++i) acc = acc + a[i] * b[i];
  return acc;
}

// a . b + c . d (or a . b - c . d) as one sum of twelve products, term after term: an entry
// of d tau is then a single chain, which the back-ends compute several entries at a time
// (the LLVM back-end's lane groups: the rows of one column share b and d).
template <class S>
S sdot2(const SVec<S>& a, const SVec<S>& b, const SVec<S>& c, const SVec<S>& d, bool subtract) {
  S acc = sdot(a, b);
  for (int i = 0; i < 6; ++i) acc = subtract ? acc - c[i] * d[i] : acc + c[i] * d[i];
  return acc;
}

// A motion vector of frame (R, p) (at its origin, in its axes) in the world frame at the
// world origin: [R w; R v + p x R w].
template <class S>
SVec<S> to_world(const M3<S>& R, const V3<S>& p, const SVec<S>& x) {
  const V3<S> w = mul(R, top(x));
  return spatial(w, mul(R, bottom(x)) + cross(p, w));
}

// The rate of a world-frame inertia (m, h, J) carried by the velocity V = [w; u]: m' = 0,
// h' = m u + w x h, J' = w~J - J w~ + 2 (u.h) 1 - u h^T - h u^T (docs/mathematics.md 7).
template <class S>
Inertia<S> inertia_rate(const Inertia<S>& I, const SVec<S>& V) {
  const V3<S> w = top(V), u = bottom(V);
  const M3<S> A = cross_left(w, I.J);  // w~ J; (w~ J)^T = -J w~
  const S uh = dot(u, I.h);
  M3<S> J;  // symmetric: each entry computed once, then mirrored
  for (int r = 0; r < 3; ++r)
    for (int c = r; c < 3; ++c)
      J[3 * r + c] = J[3 * c + r] = A[3 * r + c] + A[3 * c + r] - u[r] * I.h[c] - I.h[r] * u[c];
  for (int d = 0; d < 3; ++d) J[4 * d] = J[4 * d] + (uh + uh);
  return {S(0.0), scale(I.m, u) + cross(w, I.h), J};
}

}  // namespace sensitivity

// `label(k, what)` is called before the operations of body k's part `what` are done (the
// specialiser labels its code with it).
template <class S, class Label>
void newton_euler_derivatives(const RobotConstants<S>& r, const S* q, const S* qd, const S* qdd, S* out,
                              Label&& label) {
  using namespace sensitivity;
  const int n = r.n(), nv = r.nv;
  const S zero(0.0);
  for (int i = 0; i < 2 * nv * nv; ++i) out[i] = zero;
  auto dq = [&](int row, int col) -> S& { return out[col * nv + row]; };
  auto dqd = [&](int row, int col) -> S& { return out[(nv + col) * nv + row]; };

  struct Body {
    M3<S> R;
    V3<S> p;
    std::array<SVec<S>, 6> H;  // H*(k)'s columns in the world frame
    SVec<S> V, a;
    std::array<SVec<S>, 6> w, beta, gamma;  // per column: s x V_p, s x a_p + V_p x w, s x (V_p + V)
    Inertia<S> R_, Rdot;                    // composite inertia and inertia rate (after the inward pass)
    SVec<S> h, F;                           // composite momentum and force
  };
  std::vector<Body> B(static_cast<std::size_t>(n));
  const SVec<S> none = svec_zero<S>(6);
  // The reference frame. With one root that is not a free-flyer, it is the root body's frame
  // where the root is now, an inertial frame like the world's (the recursion holds in any):
  // the root's pose is the identity, its joint's columns constant, each pose below it one
  // rotation shorter, and only gravity is turned into it (a Panda's first joint turns about
  // gravity, so its angle drops out). On a free-flyer the world frame stays: the base's
  // rotation makes every body's quantities dense and alike, which the generated C++ computes
  // four bodies at a time; in the base's frame fewer steps are alike and the kernel ran slower
  // (docs/performance.md, "The reference frame").
  int roots = 0, the_root = -1;
  for (int k = 0; k < n; ++k)
    if (r.bodies[static_cast<std::size_t>(k)].parent < 0) ++roots, the_root = k;
  const bool in_root_frame = roots == 1 && r.bodies[static_cast<std::size_t>(the_root)].joint != JointKind::Free;
  const auto gravity_here = [&] {
    const BodyConstants<S>& b = r.bodies[static_cast<std::size_t>(the_root)];
    return mul_t(joint_transform(b, q + b.q_offset).R, r.gravity);
  };
  const V3<S> gravity = in_root_frame ? gravity_here() : r.gravity;
  const SVec<S> base_a = spatial(v3_zero<S>(), -gravity);  // the roots' base acceleration [0; -g]

  // Outward: poses, H* columns, velocities, accelerations (001 eq. 23's alpha in the world
  // frame) and the bodies' own inertia, momentum and force.
  for (int k = n - 1; k >= 0; --k) {
    const BodyConstants<S>& b = r.bodies[static_cast<std::size_t>(k)];
    Body& x = B[static_cast<std::size_t>(k)];
    label(k, "world-frame pose, joint columns, velocity and acceleration");
    const Transform<S> X = joint_transform(b, q + b.q_offset);
    const bool is_root = b.parent < 0;
    const Body* parent = is_root ? nullptr : &B[static_cast<std::size_t>(b.parent)];
    if (is_root && in_root_frame) {
      x.R = m3_identity<S>();
      x.p = v3_zero<S>();
    } else {
      x.R = is_root ? X.R : mul(parent->R, X.R);
      x.p = is_root ? X.l : parent->p + mul(parent->R, X.l);
    }
    const SVec<S>& Vp = is_root ? none : parent->V;
    const SVec<S>& ap = is_root ? base_a : parent->a;
    SVec<S> rate = none, accel = none;  // H* qd and H* qdd
    for (int c = 0; c < b.nv; ++c) {
      SVec<S> e = svec_zero<S>(b.nv);
      e[c] = S(1.0);
      x.H[c] = to_world(x.R, x.p, hstar_apply(b, e));
      for (int i = 0; i < 6; ++i) {
        rate[i] = rate[i] + x.H[c][i] * qd[b.v_offset + c];
        accel[i] = accel[i] + x.H[c][i] * qdd[b.v_offset + c];
      }
    }
    x.V = Vp + rate;
    // d/dt (H* qd) = H* qdd + V x H* qd, and V x H* qd = V_p x H* qd = -sum_c w_c qd_c.
    x.a = ap + accel;
    label(k, "s x V_p, beta and gamma");
    for (int c = 0; c < b.nv; ++c) {
      x.w[c] = cross_motion(x.H[c], Vp);
      x.beta[c] = cross_motion(x.H[c], ap) + cross_motion(Vp, x.w[c]);
      // s x (V_p + V) = 2 w + s x H* qd, whose last term vanishes for a 1-dof joint (s x s = 0).
      x.gamma[c] = x.w[c] + x.w[c];
      if (b.nv > 1) x.gamma[c] = x.gamma[c] + cross_motion(x.H[c], rate);
      for (int i = 0; i < 6; ++i) x.a[i] = x.a[i] - x.w[c][i] * qd[b.v_offset + c];
    }
    label(k, "world-frame inertia");
    x.R_ = inertia_congruence(Transform<S>{x.R, x.p}, b.M);  // about the world origin
    label(k, "inertia rate, momentum and force");
    x.Rdot = inertia_rate(x.R_, x.V);
    x.h = inertia_apply(x.R_, x.V);
    x.F = inertia_apply(x.R_, x.a) + cross_force(x.V, x.h);
  }

  // Inward: the composites are complete at k once its children have been added (children
  // come first in the numbering); then every pair of k's columns with its ancestors' is set.
  for (int k = 0; k < n; ++k) {
    const BodyConstants<S>& b = r.bodies[static_cast<std::size_t>(k)];
    Body& x = B[static_cast<std::size_t>(k)];
    for (int c = 0; c < b.nv; ++c) {
      const SVec<S>& s = x.H[c];
      const int col = b.v_offset + c;
      const bool proper = b.parent >= 0;  // k has ancestors: their rows, k's columns, through dF_k
      label(k, "R H*, B* H* and dF");
      const SVec<S> Y = inertia_apply(x.R_, s);
      const SVec<S> Z = cross_force(s, x.h) - inertia_apply(x.Rdot, s);  // B_k* H_k*
      SVec<S> dF_q = none, dF_qd = none;
      if (proper) {
        const SVec<S> Bw = inertia_apply(x.Rdot, x.w[c]) + cross_force(x.w[c], x.h);  // -B_k w
        dF_q = cross_force(s, x.F) - inertia_apply(x.R_, x.beta[c]) - Bw;
        dF_qd = inertia_apply(x.Rdot, s) + cross_force(s, x.h) - inertia_apply(x.R_, x.gamma[c]);
      }
      label(k, "d tau/dq and d tau/dqd with its ancestors");
      // k and i = k or an ancestor of k: the rows of k, the columns of i.
      for (int i = k; i >= 0; i = r.bodies[static_cast<std::size_t>(i)].parent) {
        const BodyConstants<S>& bi = r.bodies[static_cast<std::size_t>(i)];
        const Body& xi = B[static_cast<std::size_t>(i)];
        for (int e = 0; e < bi.nv; ++e) {
          dq(col, bi.v_offset + e) = sdot2(Z, xi.w[e], Y, xi.beta[e], true);
          dqd(col, bi.v_offset + e) = -sdot2(Z, xi.H[e], Y, xi.gamma[e], false);
        }
      }
      // The proper ancestors a of k: their rows, k's columns.
      for (int a = b.parent; a >= 0; a = r.bodies[static_cast<std::size_t>(a)].parent) {
        const BodyConstants<S>& ba = r.bodies[static_cast<std::size_t>(a)];
        const Body& xa = B[static_cast<std::size_t>(a)];
        for (int e = 0; e < ba.nv; ++e) {
          dq(ba.v_offset + e, col) = sdot(xa.H[e], dF_q);
          dqd(ba.v_offset + e, col) = sdot(xa.H[e], dF_qd);
        }
      }
    }
    if (b.parent < 0) continue;
    label(k, "composites into the parent");
    Body& xp = B[static_cast<std::size_t>(b.parent)];
    xp.R_ = xp.R_ + x.R_;
    xp.Rdot = xp.Rdot + x.Rdot;
    xp.h = xp.h + x.h;
    xp.F = xp.F + x.F;
  }
}

template <class S>
void newton_euler_derivatives(const RobotConstants<S>& r, const S* q, const S* qd, const S* qdd, S* out) {
  newton_euler_derivatives(r, q, qd, qdd, out, [](int, const char*) {});
}

// S = double, for the tests and the generic runtime's callers.
void newton_euler_derivatives(const RobotConstants<double>& r, const double* q, const double* qd, const double* qdd,
                              double* out);

}  // namespace soa::exec
