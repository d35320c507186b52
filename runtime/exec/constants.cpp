#include "exec/constants.hpp"

#include <algorithm>
#include <cmath>

#include "model/kinematics.hpp"
#include "support/error.hpp"

namespace soa::exec {
namespace {

constexpr double kSnap = 1e-14;

double snap(double x) {
  for (double target : {0.0, 1.0, -1.0})
    if (std::abs(x - target) < kSnap) return target;
  return x;
}

M3<double> rotation(const Eigen::Matrix3d& R) {
  M3<double> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[3 * i + j] = snap(R(i, j));
  return r;
}

V3<double> vec(const Eigen::Vector3d& v) { return {v.x(), v.y(), v.z()}; }

AxisKind axis_kind(V3<double>& axis) {
  for (int i = 0; i < 3; ++i) {
    const bool others_zero = std::abs(axis[(i + 1) % 3]) < kSnap && std::abs(axis[(i + 2) % 3]) < kSnap;
    if (!others_zero) continue;
    for (double sign : {1.0, -1.0}) {
      if (std::abs(axis[i] - sign) >= kSnap) continue;
      axis = {0.0, 0.0, 0.0};
      axis[i] = sign;
      return static_cast<AxisKind>(i + (sign < 0 ? 3 : 0));
    }
  }
  return AxisKind::General;
}

}  // namespace

RobotConstants<double> make_constants(const Robot& robot, const std::vector<int>& tip_frames) {
  RobotConstants<double> c;
  c.name = robot.name;
  c.nq = robot.nq;
  c.nv = robot.nv;
  c.gravity = vec(robot.gravity);
  for (const Body& b : robot.bodies) {
    BodyConstants<double> o;
    o.name = b.name;
    o.parent = b.parent;
    o.children = b.children;
    o.joint = b.joint;
    o.nq = b.nq();
    o.nv = b.nv();
    o.q_offset = b.q_offset;
    o.v_offset = b.v_offset;
    o.axis = vec(b.axis);
    o.axis_kind =
        (b.joint == JointKind::Revolute || b.joint == JointKind::Prismatic) ? axis_kind(o.axis) : AxisKind::General;
    o.origin_R = rotation(b.origin_R);
    o.origin_p = vec(b.origin_p);
    // Reference 2: M = [[J, m p~], [-m p~, m I]] with J about O_k (parallel-axis theorem).
    const Mat6 M = spatial_inertia(b.mass, b.com, b.inertia);
    o.M.m = b.mass;
    o.M.h = vec(b.mass * b.com);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) o.M.J[3 * i + j] = M(i, j);
    c.bodies.push_back(std::move(o));
  }
  const bool constrained = std::any_of(tip_frames.begin(), tip_frames.end(), [&](int f) {
    return f >= 0 && f < static_cast<int>(robot.frames.size()) && robot.frames[f].held != 0;
  });
  for (int f : tip_frames) {
    SOA_ASSERT(f >= 0 && f < static_cast<int>(robot.frames.size()), "tip frame out of range");
    const Frame& fr = robot.frames[f];
    int partner = -1;
    if (fr.held && fr.held_to >= 0) {
      const auto it = std::find(tip_frames.begin(), tip_frames.end(), fr.held_to);
      SOA_ASSERT(it != tip_frames.end(), "a weld's partner frame is not a tip");
      partner = static_cast<int>(it - tip_frames.begin());
    }
    int spring_to = -1;
    if (fr.spring.to >= 0) {
      const auto it = std::find(tip_frames.begin(), tip_frames.end(), fr.spring.to);
      SOA_ASSERT(it != tip_frames.end(), "a grasp's other frame is not a tip");
      spring_to = static_cast<int>(it - tip_frames.begin());
    }
    c.bodies[fr.body].tips.push_back(c.m());
    c.tips.push_back({fr.name,
                      fr.body,
                      Transform<double>{rotation(fr.R), vec(fr.p)},
                      constrained ? fr.held : kAllDirections,
                      partner,
                      spring_to,
                      {fr.spring.kt, fr.spring.kr, fr.spring.dt, fr.spring.dr}});
  }
  return c;
}

}  // namespace soa::exec
