// Baxter carrying a bar: the bar (examples/robots/bar.urdf, 2 kg) is a free body whose two
// grasp frames are welded to the grippers (carry.soa). Released from rest at Baxter's zero
// pose with no joint torques, arms and bar fall together under gravity. The generated
// constrained forward dynamics is integrated by classical Runge-Kutta; the run reports the
// total energy (welds between bodies do no net work) and each grasp's relative twist, and
// the grasp forces holding the bar.
#include <array>
#include <cmath>
#include <cstdio>

#include "carry.hpp"
#include "rk4.hpp"

namespace {

namespace gen = soa_gen::carry;
constexpr int nq = gen::nq, nv = gen::nv;
constexpr int tips = 4;  // bar_left, bar_right (welded), left_gripper, right_gripper (partners)

using State = example::State<nq, nv>;

State derivative(const State& s) {
  return example::derivative<nq, nv>(
      s,
      [](const double* q, const double* qd, double* qdd) {
        static const std::array<double, nv> zero_torque{};
        gen::constrained_forward_dynamics(q, qd, zero_torque.data(), qdd);
      },
      [](const double* q, const double* qd, double* g) { gen::bias(q, qd, g); }, example::object_last_rate<nq, nv>);
}

double energy(const State& s) {
  std::array<double, nv * nv> M{};
  gen::mass_matrix(s.q.data(), M.data());
  return example::energy<nq, nv>(s, M);
}

// The largest entry of the grasps' relative twists. Each grasp frame coincides with its
// gripper at the start and the weld keeps it so: the relative twist is the difference of
// the two frames' twists, rows 0-5 minus 12-17 and 6-11 minus 18-23 of J qd.
double relative_twist(const State& s) {
  std::array<double, 6 * tips * nv> J{};
  gen::jacobian(s.q.data(), J.data());
  double worst = 0.0;
  for (int r = 0; r < 12; ++r) {
    double v = 0.0;
    for (int c = 0; c < nv; ++c) v += (J[r + 6 * tips * c] - J[r + 12 + 6 * tips * c]) * s.qd[c];
    worst = std::max(worst, std::abs(v));
  }
  return worst;
}

example::Run simulate(double dt, double duration, bool print) {
  const auto report = [print](double t, const State& s, double drift) {
    if (!print) return;
    const std::array<double, nv> zero{};
    std::array<double, 6 * tips> f{};
    gen::constraint_forces(s.q.data(), s.qd.data(), zero.data(), f.data());
    std::printf(
        "  t = %4.2f s  bar centre z = %+.3f m  energy drift = %+.3e J  |relative twist| = %.1e  "
        "grasp forces on the bar |f_left| = %.1f N, |f_right| = %.1f N\n",
        t, s.q[nv - 4], drift, relative_twist(s), std::hypot(f[3], f[4], f[5]), std::hypot(f[9], f[10], f[11]));
  };
  State s;  // Baxter at q = 0; the bar where bar.urdf's grasp frames meet the grippers
  s.q[nv - 6] = 0.908972330;
  s.q[nv - 4] = 0.320976;
  s.q[nq - 1] = 1.0;
  return example::simulate(
      s, dt, duration, derivative, energy, relative_twist, [](const State&) {}, report);
}

}  // namespace

int main() {
  std::printf("Baxter carrying a 2 kg bar in both grippers, falling from rest, RK4 for 1 s\n");
  const example::Run coarse = simulate(2e-3, 1.0, true);
  const example::Run fine = simulate(1e-3, 1.0, false);
  std::printf("energy exchanged with gravity: %.2f J; largest speed %.2f\n", fine.exchanged, fine.speed);
  std::printf(
      "max |energy drift|: dt = 2 ms: %.3e J, dt = 1 ms: %.3e J (ratio %.1f); max |relative twist|: %.1e, %.1e\n",
      coarse.drift, fine.drift, coarse.drift / fine.drift, coarse.error, fine.error);
  // Arms and bar must move, the energy must hold as a fourth-order method's does, and each
  // grasp must move with its gripper (its drift the integrator's, shrinking with dt).
  const bool ok = fine.speed > 0.1 && example::energy_held(coarse, fine) &&
                  fine.error < 1e-6 * std::max(1.0, fine.speed) && coarse.error > fine.error;
  std::printf("%s\n", ok ? "held object consistent" : "HELD OBJECT INCONSISTENT");
  return ok ? 0 : 1;
}
