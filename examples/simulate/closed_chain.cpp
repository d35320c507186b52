// Baxter with both grippers welded to the world, falling under gravity from rest with no
// joint torques: each arm (7 joints, 2 fingers) keeps the freedom its weld leaves it. The
// generated constrained forward dynamics is integrated by classical Runge-Kutta, and the
// run reports what ideal welds must keep: the total energy (welds do no work on frames that
// do not move) and the welded frames' twists J qd (zero from the start).
//
// Potential energy is integrated alongside the state, as in simulate.cpp (rk4.hpp).
#include <array>
#include <cmath>
#include <cstdio>

#include "baxter.hpp"
#include "rk4.hpp"

namespace {

namespace gen = soa_gen::baxter;
constexpr int n = gen::nv;
constexpr int tips = 2;
using Vec = std::array<double, n>;

using State = example::State<n>;

State derivative(const State& s) {
  return example::derivative<n>(
      s,
      [](const double* q, const double* qd, double* qdd) {
        static const std::array<double, n> zero_torque{};
        gen::constrained_forward_dynamics(q, qd, zero_torque.data(), qdd);
      },
      [](const double* q, const double* qd, double* g) { gen::bias(q, qd, g); });
}

double energy(const State& s) {
  std::array<double, n * n> M{};
  gen::mass_matrix(s.q.data(), M.data());
  return example::energy<n>(s, M);
}

// The largest entry of the welded frames' twists J qd.
double twist(const State& s) {
  std::array<double, 6 * tips * n> J{};
  gen::jacobian(s.q.data(), J.data());
  return example::largest_tip_velocity<tips, n>(J, s.qd);
}

example::Run simulate(double dt, double duration, bool print) {
  const auto report = [print](double t, const State& s, double drift) {
    if (!print) return;
    Vec zero{};
    std::array<double, 6 * tips> f{};
    gen::constraint_forces(s.q.data(), s.qd.data(), zero.data(), f.data());
    std::printf("  t = %4.2f s  energy drift = %.3e J  |J qd| = %.1e  left weld force [%+.1f %+.1f %+.1f] N\n", t,
                drift, twist(s), f[3], f[4], f[5]);
  };
  State s;
  for (int i = 0; i < n; ++i) s.q[i] = 0.3 * std::sin(1.0 + i);  // a bent pose, at rest
  return example::simulate(
      s, dt, duration, derivative, energy, twist, [](const State&) {}, report);
}

}  // namespace

int main() {
  std::printf("Baxter, both grippers welded to the world, falling from rest, RK4 for 1 s\n");
  const example::Run coarse = simulate(2e-3, 1.0, true);
  const example::Run fine = simulate(1e-3, 1.0, false);
  std::printf("energy exchanged with gravity: %.2f J; largest joint speed %.2f rad/s\n", fine.exchanged, fine.speed);
  std::printf("max |energy drift|: dt = 2 ms: %.3e J, dt = 1 ms: %.3e J (ratio %.1f); max |J qd|: %.1e, %.1e\n",
              coarse.drift, fine.drift, coarse.drift / fine.drift, coarse.error, fine.error);
  // The arms must move (the welds leave them free directions), the energy must hold as a
  // fourth-order method's does, and the welded frames must stay at rest.
  const bool ok =
      fine.speed > 0.1 && example::energy_held(coarse, fine) && fine.error < 1e-8 * std::max(1.0, fine.speed);
  std::printf("%s\n", ok ? "closed chain consistent" : "CLOSED CHAIN INCONSISTENT");
  return ok ? 0 : 1;
}
