// The generated inverse dynamics, forward dynamics and mass matrix of a double pendulum
// (soac_generate, gravity 0,0,-1.62) against soac's run-time API on the same robot loaded
// from the URDF (Dynamics::create: the interpreter, and the JIT when soac has LLVM); then
// every standard kernel of a humanoid (Talos, free-flyer) against the interpreter, and the
// constrained dynamics of talos_reduced standing on both soles. Prints
// "consumer: ... agree" and exits 0, or names the first disagreement and exits 1.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "model/robot.hpp"
#include "pendulum.hpp"
#include "standing.hpp"
#include "talos.hpp"
#include "pipeline/dynamics.hpp"

namespace {

using Generated = void (*)(const double* in, double* out);

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

// One kernel on random inputs, generated code against `dynamics`. False on a mismatch.
bool agree(const soa::pipeline::Dynamics& dynamics, const std::string& kernel, Generated generated,
           const char* backend) {
  const soa::exec::Layout& layout = dynamics.layout(kernel);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int sample = 0; sample < 10; ++sample) {
    std::vector<double> in(layout.input_size), expected(layout.output_size()), got(layout.output_size());
    for (double& x : in) x = unit(rng);
    dynamics.run(kernel, in.data(), expected.data());
    generated(in.data(), got.data());
    double scale = 1.0;
    for (double x : expected) scale = std::max(scale, std::abs(x));
    if (max_difference(expected, got) > 1e-9 * scale) {
      std::printf("consumer: %s differs from the %s backend by %g (sample %d)\n", kernel.c_str(), backend,
                  max_difference(expected, got), sample);
      return false;
    }
  }
  return true;
}

}  // namespace

int main() {
  using soa::pipeline::Backend;
  using soa::pipeline::Dynamics;
  soa::Robot robot = soa::load_urdf(CONSUMER_ROBOT);
  robot.gravity = Eigen::Vector3d(0.0, 0.0, -1.62);
  const std::vector<int> tips = robot.default_tips();

  std::vector<Backend> backends{Backend::Runtime};
#ifdef SOA_HAVE_LLVM_JIT
  backends.push_back(Backend::Jit);
#endif
  for (Backend backend : backends) {
    const char* name = backend == Backend::Jit ? "jit" : "runtime";
    const Dynamics dynamics = Dynamics::create(robot, tips, backend);
    if (!agree(dynamics, "inverse_dynamics", pendulum_inverse_dynamics, name) ||
        !agree(dynamics, "forward_dynamics", pendulum_forward_dynamics, name) ||
        !agree(dynamics, "mass_matrix", pendulum_mass_matrix, name))
      return 1;
  }

  // The gravity torque at rest must be the Moon's, not the default Earth's.
  soa::Robot earth = soa::load_urdf(CONSUMER_ROBOT);
  const Dynamics on_earth = Dynamics::create(earth, tips, Backend::Runtime);
  const std::vector<double> rest{0.3, -0.2, 0.0, 0.0, 0.0, 0.0};
  std::vector<double> moon_tau(2), earth_tau(2);
  soa_gen::pendulum::inverse_dynamics(rest.data(), rest.data() + 2, rest.data() + 4, moon_tau.data());
  on_earth.run("inverse_dynamics", rest.data(), earth_tau.data());
  if (std::abs(moon_tau[0] * 9.81 - earth_tau[0] * 1.62) > 1e-9 * std::abs(earth_tau[0]) || moon_tau[0] == 0.0) {
    std::printf("consumer: gravity torque %g is not the Moon's (the Earth's is %g)\n", moon_tau[0], earth_tau[0]);
    return 1;
  }

  // The humanoid: every standard kernel (random inputs: unnormalised quaternions too, which
  // both normalise alike).
  const soa::Robot talos = soa::load_urdf(CONSUMER_HUMANOID, soa::LoadOptions{true});
  const Dynamics humanoid = Dynamics::create(talos, talos.default_tips(), Backend::Runtime);
  if (!agree(humanoid, "inverse_dynamics", talos_inverse_dynamics, "runtime") ||
      !agree(humanoid, "mass_matrix", talos_mass_matrix, "runtime") ||
      !agree(humanoid, "forward_dynamics", talos_forward_dynamics, "runtime") ||
      !agree(humanoid, "mass_matrix_inverse", talos_mass_matrix_inverse, "runtime") ||
      !agree(humanoid, "jacobian", talos_jacobian, "runtime") || !agree(humanoid, "lambda", talos_lambda, "runtime") ||
      !agree(humanoid, "tip_force_correction", talos_tip_force_correction, "runtime"))
    return 1;

  // Standing on both soles (soac_generate WELDS): the welded kernels join the standard ones.
  const soa::Robot reduced = soa::load_urdf(CONSUMER_STANDING, soa::LoadOptions{true});
  const std::vector<int> soles = {*reduced.find_frame("left_sole_link"), *reduced.find_frame("right_sole_link")};
  const Dynamics standing = Dynamics::create(reduced, soles, Backend::Runtime, soa::pipeline::kernel_set("", true));
  if (!agree(standing, "forward_dynamics", standing_forward_dynamics, "runtime") ||
      !agree(standing, "constrained_forward_dynamics", standing_constrained_forward_dynamics, "runtime") ||
      !agree(standing, "constraint_forces", standing_constraint_forces, "runtime"))
    return 1;

  std::printf(
      "consumer: generated and run-time dynamics agree (%zu backends, gravity 0,0,-1.62; the humanoid %d dofs; "
      "standing on both soles)\n",
      backends.size(), talos.nv);
  return 0;
}
