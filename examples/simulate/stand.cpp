// Talos (50 joints on a free-flyer, 99 kg) standing on both feet: the soles welded to the
// ground, the joints of the legs, torso and arms held by springs about a crouched pose, the
// head and grippers free. Released at rest, gravity pulls the pelvis down, the springs push
// it back, and everything above the feet moves. The generated constrained forward dynamics
// is integrated by classical Runge-Kutta (rk4.hpp), and the run reports what ideal welds
// must keep: the total energy (kinetic, gravity, springs: a weld does no work on a frame
// that does not move) and the soles' twists J qd (zero from the start).
#include <array>
#include <cmath>
#include <cstdio>

#include "rk4.hpp"
#include "talos_stand.hpp"

namespace {

namespace gen = soa_gen::talos_stand;
constexpr int nq = gen::nq, nv = gen::nv, soles = gen::tips;
using State = example::State<nq, nv>;

// The springs: stiffness by q index (the generated header lists the joints: q[7..8] torso,
// [9..10] head, [11..17] and [25..31] the arms, [18..24] and [32..38] the grippers,
// [39..44] the left leg, [45..50] the right leg), N m / rad, about a crouched pose: hips,
// knees and ankles bent, elbows bent.
example::JointSprings<nq, nv> make_springs() {
  example::JointSprings<nq, nv> k;
  for (int i = 7; i < nq; ++i) {
    const bool arm = (i >= 11 && i <= 17) || (i >= 25 && i <= 31);
    k.stiffness[i] = i >= 39 || i <= 8 ? 800.0 : arm ? 60.0 : 0.0;  // head, grippers free
  }
  k.rest[2] = 1.0;  // the pelvis 1 m up, level (quaternion [0 0 0 1])
  k.rest[6] = 1.0;
  for (int leg : {39, 45}) {
    k.rest[leg + 2] = -0.4;  // hip pitch (leg_*_3)
    k.rest[leg + 3] = 0.8;   // knee (leg_*_4)
    k.rest[leg + 4] = -0.4;  // ankle pitch (leg_*_5)
  }
  k.rest[14] = k.rest[28] = -0.6;  // elbows (arm_*_4)
  return k;
}

const example::JointSprings<nq, nv> springs = make_springs();
const std::array<double, nq>& rest = springs.rest;

State derivative(const State& s) {
  return springs.derivative(
      s,
      [](const double* q, const double* qd, const double* T, double* qdd) {
        gen::constrained_forward_dynamics(q, qd, T, qdd);
      },
      [](const double* q, const double* qd, double* g) { gen::bias(q, qd, g); });
}

double energy(const State& s) {
  std::array<double, nv * nv> M{};
  gen::mass_matrix(s.q.data(), M.data());
  return example::energy(s, M) + springs.energy(s.q.data());
}

// The largest entry of the soles' twists J qd.
double sole_twist(const State& s) {
  std::array<double, 6 * soles * nv> J{};
  gen::jacobian(s.q.data(), J.data());
  return example::largest_tip_velocity<soles, nv>(J, s.qd);
}

struct Stance {
  example::Run run;
  double sag = 0.0;  // how far the pelvis sinks below its start
};

Stance simulate(double dt, double duration, bool print) {
  const auto report = [print](double t, const State& s, double drift) {
    if (!print) return;
    const std::array<double, nv> T = springs.torque(s.q.data());
    std::array<double, 6 * soles> f{};
    gen::constraint_forces(s.q.data(), s.qd.data(), T.data(), f.data());
    std::printf(
        "  t = %4.2f s  pelvis height %.4f m  energy drift = %+.3e J  |J qd| = %.1e  soles' vertical "
        "forces %.1f, %.1f N\n",
        t, s.q[2], drift, sole_twist(s), f[5], f[11]);
  };
  State s;
  s.q = rest;
  Stance stance;
  const auto sag = [&stance](const State& x) { stance.sag = std::max(stance.sag, rest[2] - x.q[2]); };
  stance.run = example::simulate(s, dt, duration, derivative, energy, sole_twist, sag, report);
  return stance;
}

}  // namespace

int main() {
  std::printf("Talos standing, both soles welded, joints on springs, released at rest, RK4 for 0.5 s\n");
  const Stance coarse = simulate(2e-3, 0.5, true);
  const Stance fine = simulate(1e-3, 0.5, false);
  std::printf(
      "energy exchanged with gravity: %.3f J; the pelvis sags by up to %.1f mm; largest joint speed %.2f rad/s\n",
      fine.run.exchanged, 1e3 * fine.sag, fine.run.speed);
  std::printf("max |energy drift|: dt = 2 ms: %.3e J, dt = 1 ms: %.3e J (ratio %.1f); max |J qd|: %.1e, %.1e\n",
              coarse.run.drift, fine.run.drift, coarse.run.drift / fine.run.drift, coarse.run.error, fine.run.error);
  // The body must move (the welds leave the pelvis six directions), the energy must hold as
  // a fourth-order method's does, and the soles must stay at rest.
  const bool ok = fine.sag > 1e-3 && example::energy_held(coarse.run, fine.run) &&
                  fine.run.error < 1e-8 * std::max(1.0, fine.run.speed);
  std::printf("%s\n", ok ? "humanoid stance consistent" : "HUMANOID STANCE INCONSISTENT");
  return ok ? 0 : 1;
}
