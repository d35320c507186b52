// Baxter holding a bar by two compliant grasps (compliant.soa: a spring and damper between
// each of the bar's grasp frames and its gripper, 003 Part II's non-rigid grasps as a force
// law). Released from rest at Baxter's zero pose with no joint torques, arms and bar fall
// under gravity, the bar bouncing in its grasps. The generated compliant forward dynamics is
// integrated by classical Runge-Kutta; the energy balance -- kinetic energy plus the work
// gravity and the grasps took, integrated alongside (qd' g and (J qd)' fg) -- must hold as
// a fourth-order method holds it, and the grasps must keep the bar near the grippers.
#include <array>
#include <cmath>
#include <cstdio>

#include "compliant.hpp"
#include "rk4.hpp"

namespace {

namespace gen = soa_gen::compliant;
constexpr int nq = gen::nq, nv = gen::nv;
constexpr int tips = 4;  // bar_left, left_gripper, bar_right, right_gripper

using State = example::State<nq, nv>;

// The state's derivative; the potential accumulates the power gravity and the grasps take:
// qd' g with g = C(q, 0), and (J qd)' fg, what the tips deliver to their springs and dampers.
State derivative(const State& s) {
  State d = example::derivative<nq, nv>(
      s,
      [](const double* q, const double* qd, double* qdd) {
        static const std::array<double, nv> zero_torque{};
        gen::compliant_forward_dynamics(q, qd, zero_torque.data(), qdd);
      },
      [](const double* q, const double* qd, double* g) { gen::bias(q, qd, g); }, example::object_last_rate<nq, nv>);
  std::array<double, 6 * tips * nv> J{};
  std::array<double, 6 * tips> f{};
  gen::jacobian(s.q.data(), J.data());
  gen::grasp_forces(s.q.data(), s.qd.data(), f.data());
  for (int r = 0; r < 6 * tips; ++r)
    for (int c = 0; c < nv; ++c) d.potential += f[r] * J[r + 6 * tips * c] * s.qd[c];
  return d;
}

double energy(const State& s) {
  std::array<double, nv * nv> M{};
  gen::mass_matrix(s.q.data(), M.data());
  return example::energy<nq, nv>(s, M);
}

// How far each grasp is stretched: |spring force| / stiffness (2e4 N/m), from fg's force
// rows at the bar's frames (the damping's share included), the larger of the two.
double stretch(const State& s) {
  std::array<double, 6 * tips> f{};
  gen::grasp_forces(s.q.data(), s.qd.data(), f.data());
  return std::max(std::hypot(f[3], f[4], f[5]), std::hypot(f[15], f[16], f[17])) / 2e4;
}

example::Run simulate(double dt, double duration, bool print) {
  const auto report = [print](double t, const State& s, double drift) {
    if (!print) return;
    std::array<double, 6 * tips> f{};
    gen::grasp_forces(s.q.data(), s.qd.data(), f.data());
    std::printf(
        "  t = %4.2f s  bar centre z = %+.3f m  energy drift = %+.3e J  grasp forces |f_left| = %.1f N, "
        "|f_right| = %.1f N (stretch %.1f mm)\n",
        t, s.q[nv - 4], drift, std::hypot(f[3], f[4], f[5]), std::hypot(f[15], f[16], f[17]), 1e3 * stretch(s));
  };
  State s;  // Baxter at q = 0; the bar where bar.urdf's grasp frames meet the grippers
  s.q[nv - 6] = 0.908972330;
  s.q[nv - 4] = 0.320976;
  s.q[nq - 1] = 1.0;
  return example::simulate(
      s, dt, duration, derivative, energy, stretch, [](const State&) {}, report);
}

}  // namespace

int main() {
  std::printf("Baxter holding a 2 kg bar by two springs and dampers, falling from rest, RK4 for 1 s\n");
  const example::Run coarse = simulate(1e-3, 1.0, true);
  const example::Run fine = simulate(5e-4, 1.0, false);
  std::printf("energy exchanged with gravity and the grasps: %.2f J; largest speed %.2f\n", fine.exchanged, fine.speed);
  std::printf("max |energy drift|: dt = 1 ms: %.3e J, dt = 0.5 ms: %.3e J (ratio %.1f); largest stretch %.1f mm\n",
              coarse.drift, fine.drift, coarse.drift / fine.drift, 1e3 * fine.error);
  // Arms and bar must move, the energy balance must hold as a fourth-order method's does,
  // and the grasps must hold the bar within 2 cm of the grippers (the springs do stretch).
  const bool ok = fine.speed > 0.1 && example::energy_held(coarse, fine) && fine.error > 1e-4 && fine.error < 2e-2;
  std::printf("%s\n", ok ? "compliant grasps consistent" : "COMPLIANT GRASPS INCONSISTENT");
  return ok ? 0 : 1;
}
