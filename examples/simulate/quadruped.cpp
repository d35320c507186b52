// solo12 (a 2.5 kg quadruped on a free-flyer) standing on four point contacts, its twelve
// joints held by springs about a crouched pose and otherwise free: gravity pushes the body
// down, the springs push it back, and the feet stay where they are while the legs roll
// about them. The generated constrained forward dynamics is integrated by classical
// Runge-Kutta (the free-flyer's quaternion included, rk4.hpp), and the run reports what
// ideal point contacts must keep: the total energy (kinetic, gravity, springs: a contact
// does no work on a point that does not move) and the feet's velocities (zero from the
// start).
#include <array>
#include <cmath>
#include <cstdio>

#include "rk4.hpp"
#include "solo.hpp"

namespace {

namespace gen = soa_gen::solo;
constexpr int nq = gen::nq, nv = gen::nv, feet = gen::tips;
using State = example::State<nq, nv>;

// The crouched pose the springs (5 N m / rad at every joint) hold: legs FL, FR, HL, HR (HAA,
// HFE, KFE each) after the free-flyer, the base 0.25 m above the ground, level.
example::JointSprings<nq, nv> make_springs() {
  const std::array<double, 12> legs = {0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6};
  example::JointSprings<nq, nv> k;
  k.rest[2] = 0.25;
  k.rest[6] = 1.0;
  for (int j = 0; j < 12; ++j) k.rest[7 + j] = legs[j], k.stiffness[7 + j] = 5.0;
  return k;
}

const example::JointSprings<nq, nv> springs = make_springs();

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

// The largest velocity of a foot's point: the linear rows of J qd.
double foot_speed(const State& s) {
  std::array<double, 6 * feet * nv> J{};
  gen::jacobian(s.q.data(), J.data());
  return example::largest_tip_velocity<feet, nv>(J, s.qd, true);
}

struct Stance {
  example::Run run;
  double sag = 0.0;  // how far the base sinks below its start
};

Stance simulate(double dt, double duration, bool print) {
  const auto report = [print](double t, const State& s, double drift) {
    if (!print) return;
    const std::array<double, nv> T = springs.torque(s.q.data());
    std::array<double, 6 * feet> f{};
    gen::constraint_forces(s.q.data(), s.qd.data(), T.data(), f.data());
    std::printf(
        "  t = %4.2f s  base height %.4f m  energy drift = %+.3e J  feet speed %.1e m/s  "
        "FL force [%+.2f %+.2f %+.2f] N (torque %.0e)\n",
        t, s.q[2], drift, foot_speed(s), f[3], f[4], f[5], std::max({std::abs(f[0]), std::abs(f[1]), std::abs(f[2])}));
  };
  State s;
  s.q = springs.rest;  // at rest
  Stance stance;
  const auto sag = [&stance](const State& x) { stance.sag = std::max(stance.sag, 0.25 - x.q[2]); };
  stance.run = example::simulate(s, dt, duration, derivative, energy, foot_speed, sag, report);
  return stance;
}

}  // namespace

int main() {
  std::printf("solo12 on four point contacts, joints on springs, released at rest, RK4 for 1 s\n");
  const Stance coarse = simulate(2e-3, 1.0, true);
  const Stance fine = simulate(1e-3, 1.0, false);
  std::printf("energy exchanged with gravity: %.3f J; the base sags by up to %.1f mm\n", fine.run.exchanged,
              1e3 * fine.sag);
  std::printf("max |energy drift|: dt = 2 ms: %.3e J, dt = 1 ms: %.3e J (ratio %.1f); max feet speed: %.1e, %.1e m/s\n",
              coarse.run.drift, fine.run.drift, coarse.run.drift / fine.run.drift, coarse.run.error, fine.run.error);
  // The body must move (the contacts leave it free), the energy must hold as a fourth-order
  // method's does, and the feet must stay at rest.
  const bool ok = fine.sag > 1e-3 && example::energy_held(coarse.run, fine.run) && fine.run.error < 1e-9;
  std::printf("%s\n", ok ? "quadruped stance consistent" : "QUADRUPED STANCE INCONSISTENT");
  return ok ? 0 : 1;
}
