// Simulate a Panda falling under gravity (no joint torques, no damping) with soac-generated
// forward dynamics, integrated by classical Runge-Kutta, and report how well the total
// energy is conserved: the drift shrinks as dt^4 when the dynamics are right.
//
// Kinetic energy is qd' calM(q) qd / 2 (generated mass matrix). The potential energy's
// rate is qd' g(q) with g(q) = C(q, 0) the gravity torque (generated bias kernel), so it is
// integrated alongside the state.
#include <array>
#include <cmath>
#include <cstdio>

#include "panda.hpp"

namespace {

constexpr int n = soa_gen::panda::nv;
using Vec = std::array<double, n>;

struct State {
  Vec q{}, qd{};
  double potential = 0.0;
};

State derivative(const State& s) {
  static const Vec zero{};
  Vec zero_torque{}, qdd{}, gravity{};
  soa_gen::panda::forward_dynamics(s.q.data(), s.qd.data(), zero_torque.data(), qdd.data());
  soa_gen::panda::bias(s.q.data(), zero.data(), gravity.data());
  State d;
  d.q = s.qd;
  d.qd = qdd;
  for (int i = 0; i < n; ++i) d.potential += s.qd[i] * gravity[i];
  return d;
}

State axpy(const State& s, double h, const State& d) {
  State r;
  for (int i = 0; i < n; ++i) {
    r.q[i] = s.q[i] + h * d.q[i];
    r.qd[i] = s.qd[i] + h * d.qd[i];
  }
  r.potential = s.potential + h * d.potential;
  return r;
}

double energy(const State& s) {
  std::array<double, n * n> M{};
  soa_gen::panda::mass_matrix(s.q.data(), M.data());
  double kinetic = 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) kinetic += 0.5 * s.qd[i] * M[i + n * j] * s.qd[j];
  return kinetic + s.potential;
}

// Returns the largest |energy drift| and sets `exchanged` to the largest kinetic energy
// reached: the scale the drift is judged against.
double simulate(double dt, double duration, bool print, double& exchanged) {
  State s;
  s.q = {0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8, 0.02, 0.02};
  const double e0 = energy(s);
  double worst = 0.0;
  exchanged = 0.0;
  const int steps = static_cast<int>(std::lround(duration / dt));
  for (int k = 1; k <= steps; ++k) {
    const State k1 = derivative(s);
    const State k2 = derivative(axpy(s, dt / 2, k1));
    const State k3 = derivative(axpy(s, dt / 2, k2));
    const State k4 = derivative(axpy(s, dt, k3));
    for (int i = 0; i < n; ++i) {
      s.q[i] += dt / 6 * (k1.q[i] + 2 * k2.q[i] + 2 * k3.q[i] + k4.q[i]);
      s.qd[i] += dt / 6 * (k1.qd[i] + 2 * k2.qd[i] + 2 * k3.qd[i] + k4.qd[i]);
    }
    s.potential += dt / 6 * (k1.potential + 2 * k2.potential + 2 * k3.potential + k4.potential);
    worst = std::max(worst, std::abs(energy(s) - e0));
    exchanged = std::max(exchanged, std::abs(s.potential));
    if (print && k % (steps / 4) == 0)
      std::printf("  t = %4.2f s  q1 = %+8.4f  energy drift = %.3e J\n", k * dt, s.q[1], energy(s) - e0);
  }
  return worst;
}

}  // namespace

int main() {
  std::printf("Panda, free fall from rest, generated forward dynamics, RK4 for 2 s\n");
  double exchanged = 0.0;
  const double coarse = simulate(2e-3, 2.0, true, exchanged);
  const double fine = simulate(1e-3, 2.0, false, exchanged);
  std::printf("energy exchanged with gravity: %.2f J\n", exchanged);
  std::printf("max |energy drift|: dt = 2 ms: %.3e J, dt = 1 ms: %.3e J (ratio %.1f; RK4 expects about 16)\n", coarse,
              fine, coarse / fine);
  // The drift must be small against the energy exchanged, and fall with dt as a
  // fourth-order method's does: wrong dynamics give a drift that does not converge.
  const bool ok = fine < 1e-5 * exchanged && coarse / fine > 10.0 && coarse / fine < 25.0;
  std::printf("%s\n", ok ? "energy conserved" : "ENERGY NOT CONSERVED");
  return ok ? 0 : 1;
}
