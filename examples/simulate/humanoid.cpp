// A humanoid's dynamics generated at build time: Talos with a free-flyer (50 dofs, every
// standard kernel, examples/robots/talos_full.urdf). Checks that they fit together on
// random poses -- forward dynamics undoes inverse dynamics, calM^-1 inverts calM -- and
// reads the robot's mass off calM (its free-flyer block's linear part is m I).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "talos.hpp"

namespace g = soa_gen::talos;

int main() {
  constexpr int nq = g::nq, nv = g::nv;
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  double worst_fd = 0.0, worst_inverse = 0.0, mass = 0.0;
  for (int sample = 0; sample < 20; ++sample) {
    std::vector<double> q(nq), qd(nv), qdd(nv), tau(nv), back(nv), M(nv * nv), Minv(nv * nv);
    for (double& x : q) x = unit(rng);
    // The free-flyer's orientation is a unit quaternion (q[3..6]).
    const double norm = std::sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]);
    for (int i = 3; i < 7; ++i) q[i] /= norm;
    for (double& x : qd) x = unit(rng);
    for (double& x : qdd) x = unit(rng);
    g::inverse_dynamics(q.data(), qd.data(), qdd.data(), tau.data());
    g::forward_dynamics(q.data(), qd.data(), tau.data(), back.data());
    for (int i = 0; i < nv; ++i) worst_fd = std::max(worst_fd, std::abs(back[i] - qdd[i]));
    g::mass_matrix(q.data(), M.data());
    g::mass_matrix_inverse(q.data(), Minv.data());
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < nv; ++j) {
        double x = 0.0;
        for (int k = 0; k < nv; ++k) x += M[i + k * nv] * Minv[k + j * nv];
        worst_inverse = std::max(worst_inverse, std::abs(x - (i == j ? 1.0 : 0.0)));
      }
    mass = M[3 + 3 * nv];  // the free-flyer's qd = [omega; v]: calM(3,3) is the mass
  }
  std::printf(
      "humanoid: %d dofs, mass %.3f kg; forward dynamics undoes inverse dynamics to %.1e, "
      "calM^-1 calM = I to %.1e\n",
      nv, mass, worst_fd, worst_inverse);
  const bool ok = worst_fd < 1e-8 && worst_inverse < 1e-8;
  std::printf("humanoid: %s\n", ok ? "dynamics consistent" : "INCONSISTENT");
  return ok ? 0 : 1;
}
