// Random robots for property tests: every identity and kernel is checked on trees with
// mixed joint kinds, arbitrary axes and physically valid inertias.
//
// Reproducibility: only raw std::mt19937_64 output is used (its sequence is fixed by the
// standard); the std:: distributions are implementation-defined, so a seed would give
// different robots with different standard libraries.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "model/robot.hpp"
#include "support/error.hpp"

namespace soa {
namespace {

class Sampler {
public:
  explicit Sampler(unsigned long long seed) : rng_(seed) {}

  // Uniform in [lo, hi) from the top 53 bits.
  double uniform(double lo, double hi) {
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    return lo + (hi - lo) * u;
  }

  // Uniform in [0, count); the modulo bias is irrelevant for the small counts used here.
  int index(int count) { return static_cast<int>(rng_() % static_cast<unsigned long long>(count)); }

  Eigen::Vector3d unit_vector() {
    const double z = uniform(-1.0, 1.0);
    const double phi = uniform(0.0, 2.0 * std::numbers::pi);
    const double r = std::sqrt(std::max(0.0, 1.0 - z * z));
    return Eigen::Vector3d(r * std::cos(phi), r * std::sin(phi), z);
  }

  // Uniformly distributed rotation (Shoemake, "Uniform random rotations", Graphics Gems III).
  Eigen::Matrix3d rotation() {
    const double u1 = uniform(0.0, 1.0);
    const double a = 2.0 * std::numbers::pi * uniform(0.0, 1.0);
    const double b = 2.0 * std::numbers::pi * uniform(0.0, 1.0);
    const double s = std::sqrt(1.0 - u1), t = std::sqrt(u1);
    return Eigen::Quaterniond(t * std::cos(b), s * std::sin(a), s * std::cos(a), t * std::sin(b))
        .normalized()
        .toRotationMatrix();
  }

  Eigen::Vector3d box(double half) {
    return Eigen::Vector3d(uniform(-half, half), uniform(-half, half), uniform(-half, half));
  }

private:
  std::mt19937_64 rng_;
};

JointKind random_kind(Sampler& s, const RandomTreeOptions& options) {
  // Revolute joints dominate real robots, so they get twice the weight of the others.
  std::vector<JointKind> kinds = {JointKind::Revolute, JointKind::Revolute};
  if (options.allow_prismatic) kinds.push_back(JointKind::Prismatic);
  if (options.allow_ball) kinds.push_back(JointKind::Ball);
  return kinds[s.index(static_cast<int>(kinds.size()))];
}

}  // namespace

Robot random_tree(unsigned long long seed, const RandomTreeOptions& options) {
  const int n = options.bodies;
  if (n < 1) throw UserError(fmt::format("random tree: needs at least one body (got {})", n));
  Sampler s(seed);
  Robot robot;
  robot.name = "random_tree";
  robot.source = fmt::format("random tree (seed {}, {} bodies)", seed, n);
  robot.bodies.resize(n);

  // Bodies are made base first (creation order c), so body k = n-1-c hangs off an
  // already-made body and every parent index exceeds its child's.
  for (int c = 0; c < n; ++c) {
    const int k = n - 1 - c;
    Body& b = robot.bodies[k];
    b.name = fmt::format("b{}", k);
    b.joint_name = fmt::format("j{}", k);
    if (c == 0) {
      b.parent = -1;
    } else {
      const bool branch = c >= 2 && s.uniform(0.0, 1.0) < options.branching;
      const int parent_c = branch ? s.index(c - 1) : c - 1;  // not the latest, or the latest
      b.parent = n - 1 - parent_c;
    }
    if (c == 0 && options.floating) {
      b.joint = JointKind::Free;  // X_tree stays the identity (robot.hpp)
    } else {
      b.joint = random_kind(s, options);
      b.axis = s.unit_vector();
      b.origin_R = s.rotation();
      b.origin_p = s.box(0.5);
    }
    b.mass = s.uniform(0.5, 3.0);
    b.com = s.box(0.2);
    // Principal moments from the second moments (a, b, c) of a mass distribution along the
    // principal axes: l1 = m (b + c), ... satisfy the triangle inequality strictly.
    const double ax = s.uniform(0.005, 0.05), ay = s.uniform(0.005, 0.05), az = s.uniform(0.005, 0.05);
    const Eigen::Vector3d moments = b.mass * Eigen::Vector3d(ay + az, ax + az, ax + ay);
    const Eigen::Matrix3d Q = s.rotation();
    b.inertia = Q * moments.asDiagonal() * Q.transpose();
    b.inertia = 0.5 * (b.inertia + b.inertia.transpose()).eval();
  }
  finalize(robot);
  return robot;
}

Robot random_arms(unsigned long long seed, int arms, const RandomTreeOptions& options) {
  if (arms < 1) throw UserError(fmt::format("random arms: needs at least one arm (got {})", arms));
  Robot robot;
  robot.name = "random_arms";
  robot.source = fmt::format("random arms (seed {}, {} arms of {} bodies)", seed, arms, options.bodies);
  // Arm 1 takes the highest body indices: finalize() walks the roots from the highest
  // index down, so arm 1 comes first in joint-space order (Robot::roots()).
  for (int i = arms; i >= 1; --i) {
    const Robot arm = random_tree(seed + static_cast<unsigned long long>(i - 1), options);
    const int offset = robot.size();
    for (Body b : arm.bodies) {
      b.name = fmt::format("a{}_{}", i, b.name);
      b.joint_name = fmt::format("a{}_{}", i, b.joint_name);
      if (b.parent >= 0) b.parent += offset;
      robot.bodies.push_back(std::move(b));
    }
  }
  finalize(robot);
  return robot;
}

}  // namespace soa
