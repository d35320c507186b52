// What the simulations share: a robot's state with its potential energy integrated
// alongside (its rate is qd' g(q), g(q) = C(q, 0) the gravity force, so that no
// potential-energy kernel is needed), one classical Runge-Kutta step, and the kinetic
// energy from a column-major mass matrix. A fixed-base robot has nq = nv and q' = qd; a
// free-flyer's configuration rate is free_flyer_rate() below (soac's conventions, stated in
// every generated header).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>

namespace example {

template <int nq, int nv = nq>
struct State {
  std::array<double, nq> q{};
  std::array<double, nv> qd{};
  double potential = 0.0;
};

// s + h d, every component.
template <int nq, int nv>
State<nq, nv> axpy(const State<nq, nv>& s, double h, const State<nq, nv>& d) {
  State<nq, nv> r;
  for (int i = 0; i < nq; ++i) r.q[i] = s.q[i] + h * d.q[i];
  for (int i = 0; i < nv; ++i) r.qd[i] = s.qd[i] + h * d.qd[i];
  r.potential = s.potential + h * d.potential;
  return r;
}

// q' of joints with one coordinate each (revolute, prismatic): qd itself.
template <int nq, int nv>
void joint_rate(const std::array<double, nq>&, const std::array<double, nv>& qd, std::array<double, nq>& rate) {
  static_assert(nq == nv);
  rate = qd;
}

// q' of a free-flyer followed by one-coordinate joints: q = [x y z qx qy qz qw ...] (the
// base origin in the world, its orientation), qd = [omega; v; ...] in the base's own axes.
// Then p' = R v and the quaternion's rate is q x [omega / 2, 0].
template <int nq, int nv>
void free_flyer_rate(const std::array<double, nq>& q, const std::array<double, nv>& qd, std::array<double, nq>& rate) {
  static_assert(nq == nv + 1);
  const double x = q[3], y = q[4], z = q[5], w = q[6];
  const double s = 2.0 / (x * x + y * y + z * z + w * w);  // R of the normalised quaternion
  const double R[3][3] = {{1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)},
                          {s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w)},
                          {s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)}};
  for (int i = 0; i < 3; ++i) rate[i] = R[i][0] * qd[3] + R[i][1] * qd[4] + R[i][2] * qd[5];
  const double a = qd[0] / 2, b = qd[1] / 2, c = qd[2] / 2;
  rate[3] = w * a + y * c - z * b;
  rate[4] = w * b + z * a - x * c;
  rate[5] = w * c + x * b - y * a;
  rate[6] = -x * a - y * b - z * c;
  for (int i = 7; i < nq; ++i) rate[i] = qd[i - 1];
}

// The derivative of s: q' from `rate(q, qd, q')`, the accelerations `accelerations(q, qd,
// qdd)` gives, and qd' g.
template <int nq, int nv, class Accelerations, class Gravity, class Rate>
State<nq, nv> derivative(const State<nq, nv>& s, Accelerations accelerations, Gravity gravity, Rate rate) {
  static const std::array<double, nv> zero{};
  std::array<double, nv> g{};
  State<nq, nv> d;
  rate(s.q, s.qd, d.q);
  accelerations(s.q.data(), s.qd.data(), d.qd.data());
  gravity(s.q.data(), zero.data(), g.data());
  for (int i = 0; i < nv; ++i) d.potential += s.qd[i] * g[i];
  return d;
}

template <int n, class Accelerations, class Gravity>
State<n> derivative(const State<n>& s, Accelerations accelerations, Gravity gravity) {
  return derivative(s, accelerations, gravity, joint_rate<n, n>);
}

// One classical Runge-Kutta step of length dt.
template <int nq, int nv, class Derivative>
void rk4_step(State<nq, nv>& s, double dt, Derivative f) {
  const State<nq, nv> k1 = f(s);
  const State<nq, nv> k2 = f(axpy(s, dt / 2, k1));
  const State<nq, nv> k3 = f(axpy(s, dt / 2, k2));
  const State<nq, nv> k4 = f(axpy(s, dt, k3));
  for (int i = 0; i < nq; ++i) s.q[i] += dt / 6 * (k1.q[i] + 2 * k2.q[i] + 2 * k3.q[i] + k4.q[i]);
  for (int i = 0; i < nv; ++i) s.qd[i] += dt / 6 * (k1.qd[i] + 2 * k2.qd[i] + 2 * k3.qd[i] + k4.qd[i]);
  s.potential += dt / 6 * (k1.potential + 2 * k2.potential + 2 * k3.potential + k4.potential);
}

// The largest |(J qd)_r| over the rows r of the tips' column-major Jacobian J (6 rows per
// tip, [angular; linear]): every row, or only the linear ones (the tips' points).
template <int tips, int nv>
double largest_tip_velocity(const std::array<double, 6 * tips * nv>& J, const std::array<double, nv>& qd,
                            bool linear_only = false) {
  double worst = 0.0;
  for (int r = 0; r < 6 * tips; ++r) {
    if (linear_only && r % 6 < 3) continue;
    double v = 0.0;
    for (int c = 0; c < nv; ++c) v += J[r + 6 * tips * c] * qd[c];
    worst = std::max(worst, std::abs(v));
  }
  return worst;
}

// qd' M qd / 2 + the potential, M column-major (nv x nv).
template <int nq, int nv>
double energy(const State<nq, nv>& s, const std::array<double, nv * nv>& M) {
  double kinetic = 0.0;
  for (int i = 0; i < nv; ++i)
    for (int j = 0; j < nv; ++j) kinetic += 0.5 * s.qd[i] * M[i + nv * j] * s.qd[j];
  return kinetic + s.potential;
}

}  // namespace example
