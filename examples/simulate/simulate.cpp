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
#include "rk4.hpp"

namespace {

constexpr int n = soa_gen::panda::nv;
using State = example::State<n>;

State derivative(const State& s) {
  return example::derivative<n>(
      s,
      [](const double* q, const double* qd, double* qdd) {
        static const std::array<double, n> zero_torque{};
        soa_gen::panda::forward_dynamics(q, qd, zero_torque.data(), qdd);
      },
      [](const double* q, const double* qd, double* g) { soa_gen::panda::bias(q, qd, g); });
}

double energy(const State& s) {
  std::array<double, n * n> M{};
  soa_gen::panda::mass_matrix(s.q.data(), M.data());
  return example::energy<n>(s, M);
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
    example::rk4_step(s, dt, derivative);
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
