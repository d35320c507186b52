// What the simulations share: a fixed-base robot's state with its potential energy
// integrated alongside (its rate is qd' g(q), g(q) = C(q, 0) the gravity torque, so that
// no potential-energy kernel is needed), one classical Runge-Kutta step, and the kinetic
// energy from a column-major mass matrix.
#pragma once

#include <array>

namespace example {

template <int n>
struct State {
  std::array<double, n> q{}, qd{};
  double potential = 0.0;
};

// s + h d, every component.
template <int n>
State<n> axpy(const State<n>& s, double h, const State<n>& d) {
  State<n> r;
  for (int i = 0; i < n; ++i) {
    r.q[i] = s.q[i] + h * d.q[i];
    r.qd[i] = s.qd[i] + h * d.qd[i];
  }
  r.potential = s.potential + h * d.potential;
  return r;
}

// The derivative of s: qd, the accelerations `accelerations(q, qd, qdd)` gives, and qd' g.
template <int n, class Accelerations, class Gravity>
State<n> derivative(const State<n>& s, Accelerations accelerations, Gravity gravity) {
  static const std::array<double, n> zero{};
  std::array<double, n> g{};
  State<n> d;
  d.q = s.qd;
  accelerations(s.q.data(), s.qd.data(), d.qd.data());
  gravity(s.q.data(), zero.data(), g.data());
  for (int i = 0; i < n; ++i) d.potential += s.qd[i] * g[i];
  return d;
}

// One classical Runge-Kutta step of length dt.
template <int n, class Derivative>
void rk4_step(State<n>& s, double dt, Derivative f) {
  const State<n> k1 = f(s);
  const State<n> k2 = f(axpy(s, dt / 2, k1));
  const State<n> k3 = f(axpy(s, dt / 2, k2));
  const State<n> k4 = f(axpy(s, dt, k3));
  for (int i = 0; i < n; ++i) {
    s.q[i] += dt / 6 * (k1.q[i] + 2 * k2.q[i] + 2 * k3.q[i] + k4.q[i]);
    s.qd[i] += dt / 6 * (k1.qd[i] + 2 * k2.qd[i] + 2 * k3.qd[i] + k4.qd[i]);
  }
  s.potential += dt / 6 * (k1.potential + 2 * k2.potential + 2 * k3.potential + k4.potential);
}

// qd' M qd / 2 + the potential, M column-major (n x n).
template <int n>
double energy(const State<n>& s, const std::array<double, n * n>& M) {
  double kinetic = 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) kinetic += 0.5 * s.qd[i] * M[i + n * j] * s.qd[j];
  return kinetic + s.potential;
}

}  // namespace example
