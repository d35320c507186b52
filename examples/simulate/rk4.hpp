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

// The rate of one free-flyer's coordinates q[qi..qi+6] = [x y z qx qy qz qw] (its origin in
// the world, its orientation) from qd[vi..vi+5] = [omega; v] in its own axes: p' = R v, and
// the quaternion's rate is q x [omega / 2, 0].
template <int nq, int nv>
void free_body_rate(const std::array<double, nq>& q, const std::array<double, nv>& qd, std::array<double, nq>& rate,
                    int qi, int vi) {
  const double x = q[qi + 3], y = q[qi + 4], z = q[qi + 5], w = q[qi + 6];
  const double s = 2.0 / (x * x + y * y + z * z + w * w);  // R of the normalised quaternion
  const double R[3][3] = {{1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)},
                          {s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w)},
                          {s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)}};
  for (int i = 0; i < 3; ++i) rate[qi + i] = R[i][0] * qd[vi + 3] + R[i][1] * qd[vi + 4] + R[i][2] * qd[vi + 5];
  const double a = qd[vi] / 2, b = qd[vi + 1] / 2, c = qd[vi + 2] / 2;
  rate[qi + 3] = w * a + y * c - z * b;
  rate[qi + 4] = w * b + z * a - x * c;
  rate[qi + 5] = w * c + x * b - y * a;
  rate[qi + 6] = -x * a - y * b - z * c;
}

// q' of a free-flyer followed by one-coordinate joints (soac's conventions for --floating).
template <int nq, int nv>
void free_flyer_rate(const std::array<double, nq>& q, const std::array<double, nv>& qd, std::array<double, nq>& rate) {
  static_assert(nq == nv + 1);
  free_body_rate<nq, nv>(q, qd, rate, 0, 0);
  for (int i = 7; i < nq; ++i) rate[i] = qd[i - 1];
}

// q' of one-coordinate joints followed by a held object's free-flyer (soac's conventions for
// --object: the object last in q and qd).
template <int nq, int nv>
void object_last_rate(const std::array<double, nq>& q, const std::array<double, nv>& qd, std::array<double, nq>& rate) {
  static_assert(nq == nv + 1);
  for (int i = 0; i < nv - 6; ++i) rate[i] = qd[i];
  free_body_rate<nq, nv>(q, qd, rate, nv - 6, nv - 6);
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

// What a run measures after every step: the largest |energy drift|, the largest |energy
// exchanged with gravity|, the largest constraint error (the caller's measure) and the
// largest joint speed |qd_i|.
struct Run {
  double drift = 0.0, exchanged = 0.0, error = 0.0, speed = 0.0;
};

// Integrates s by rk4_step for `duration` in steps of dt: energy(s) against its start,
// error(s), then track(s) (anything else the caller records) after every step, and
// report(t, s) at each quarter of the run.
template <int nq, int nv, class Derivative, class Energy, class Error, class Track, class Report>
Run simulate(State<nq, nv> s, double dt, double duration, Derivative derivative, Energy energy, Error error,
             Track track, Report report) {
  const double e0 = energy(s);
  Run run;
  const int steps = static_cast<int>(std::lround(duration / dt));
  for (int k = 1; k <= steps; ++k) {
    rk4_step(s, dt, derivative);
    run.drift = std::max(run.drift, std::abs(energy(s) - e0));
    run.exchanged = std::max(run.exchanged, std::abs(s.potential));
    run.error = std::max(run.error, error(s));
    for (int i = 0; i < nv; ++i) run.speed = std::max(run.speed, std::abs(s.qd[i]));
    track(s);
    if (k % (steps / 4) == 0) report(k * dt, s, energy(s) - e0);
  }
  return run;
}

// Energy held as a fourth-order method holds it: the run at dt/2 drifts by less than 1e-6
// of the energy gravity exchanged, and by a factor above 8 less than the run at dt.
inline bool energy_held(const Run& coarse, const Run& fine) {
  return fine.drift < 1e-6 * fine.exchanged && coarse.drift / fine.drift > 8.0;
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

// Springs on the joints of a robot on a free-flyer (q[7..], qd[6..]): joint i is pulled back
// to rest[i] with stiffness[i] (N m / rad), so that standing robots keep a pose. Their energy
// belongs to the total a simulation holds.
template <int nq, int nv>
struct JointSprings {
  static_assert(nq == nv + 1);
  std::array<double, nq> rest{}, stiffness{};

  std::array<double, nv> torque(const double* q) const {
    std::array<double, nv> T{};
    for (int i = 7; i < nq; ++i) T[i - 1] = -stiffness[i] * (q[i] - rest[i]);
    return T;
  }
  double energy(const double* q) const {
    double e = 0.0;
    for (int i = 7; i < nq; ++i) e += 0.5 * stiffness[i] * (q[i] - rest[i]) * (q[i] - rest[i]);
    return e;
  }
  // The state's derivative under constrained_forward_dynamics(q, qd, T, qdd) with the
  // springs' torques, and the gravity force bias(q, 0, g).
  template <class Dynamics, class Bias>
  State<nq, nv> derivative(const State<nq, nv>& s, Dynamics dynamics, Bias bias) const {
    return example::derivative(
        s,
        [&](const double* q, const double* qd, double* qdd) {
          const std::array<double, nv> T = torque(q);
          dynamics(q, qd, T.data(), qdd);
        },
        bias, free_flyer_rate<nq, nv>);
  }
};

// qd' M qd / 2 + the potential, M column-major (nv x nv).
template <int nq, int nv>
double energy(const State<nq, nv>& s, const std::array<double, nv * nv>& M) {
  double kinetic = 0.0;
  for (int i = 0; i < nv; ++i)
    for (int j = 0; j < nv; ++j) kinetic += 0.5 * s.qd[i] * M[i + nv * j] * s.qd[j];
  return kinetic + s.potential;
}

}  // namespace example
