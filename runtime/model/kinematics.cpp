#include "model/kinematics.hpp"

#include <Eigen/Geometry>

#include <fmt/format.h>

#include <cmath>

#include "support/error.hpp"

namespace soa {
namespace {

constexpr double kPi = 3.14159265358979323846;

Eigen::Quaterniond quaternion_at(const VecX& q, int offset, const Robot& robot, const Body& body) {
  // Stored as [qx qy qz qw] (robot.hpp); Eigen's constructor takes w first.
  Eigen::Quaterniond quat(q[offset + 3], q[offset], q[offset + 1], q[offset + 2]);
  const double norm = quat.norm();
  if (!(norm > 0.5 && norm < 1.5))
    throw UserError(
        fmt::format("{}: joint '{}': quaternion has norm {:.3g}, expected 1", robot.source, body.joint_name, norm));
  quat.normalize();
  return quat;
}

// Rotation (frame k -> parent frame) and offset l (O_k - O_p in the parent frame) of joint k.
void joint_transform(const Robot& robot, const Body& body, const VecX& q, Eigen::Matrix3d& R, Eigen::Vector3d& l) {
  const int o = body.q_offset;
  switch (body.joint) {
    case JointKind::Revolute:
      R = body.origin_R * Eigen::AngleAxisd(q[o], body.axis).toRotationMatrix();
      l = body.origin_p;
      return;
    case JointKind::Prismatic:
      R = body.origin_R;
      l = body.origin_p + body.origin_R * (body.axis * q[o]);
      return;
    case JointKind::Ball:
      R = body.origin_R * quaternion_at(q, o, robot, body).toRotationMatrix();
      l = body.origin_p;
      return;
    case JointKind::Free:
      R = body.origin_R * quaternion_at(q, o + 3, robot, body).toRotationMatrix();
      l = body.origin_p + body.origin_R * q.segment<3>(o);
      return;
  }
}

Mat6X joint_map_adjoint(const Body& body) {
  Mat6X Hs = Mat6X::Zero(6, body.nv());
  switch (body.joint) {
    case JointKind::Revolute: Hs.block<3, 1>(0, 0) = body.axis; break;
    case JointKind::Prismatic: Hs.block<3, 1>(3, 0) = body.axis; break;
    case JointKind::Ball: Hs.block<3, 3>(0, 0).setIdentity(); break;
    case JointKind::Free: Hs.setIdentity(); break;
  }
  return Hs;
}

void check_sizes(const Robot& robot, const State& s, std::size_t tips) {
  auto bad = [&](const char* what, long got, long want) {
    throw UserError(fmt::format("{}: state has {} {} entries, the robot needs {}", robot.source, got, what, want));
  };
  if (s.q.size() != robot.nq) bad("q", s.q.size(), robot.nq);
  if (s.qd.size() != robot.nv) bad("qd", s.qd.size(), robot.nv);
  if (s.qdd.size() != robot.nv) bad("qdd", s.qdd.size(), robot.nv);
  if (s.f0.size() != static_cast<long>(6 * tips)) bad("f0", s.f0.size(), 6 * static_cast<long>(tips));
}

// Recursive Newton-Euler (inward pass) for given accelerations: the independent reference
// that EOM and def-C are checked against. Returns T = H f.
VecX newton_euler(const Robot& robot, const std::vector<BodyBlocks>& body, const std::vector<Vec6>& alpha,
                  const std::vector<TipBlocks>& tips, const VecX* f0, std::vector<Vec6>* f_out) {
  const int n = robot.size();
  std::vector<Vec6> f(n);
  for (int k = 0; k < n; ++k) f[k] = body[k].M * alpha[k] + body[k].b;
  if (f0)
    for (std::size_t t = 0; t < tips.size(); ++t)
      f[tips[t].body] += tips[t].phi * f0->segment<6>(6 * static_cast<long>(t));
  VecX T(robot.nv);
  // Children have smaller indices, so f(k) is complete when the loop reaches k.
  for (int k = 0; k < n; ++k) {
    const Body& b = robot.bodies[k];
    T.segment(b.v_offset, b.nv()) = body[k].Hstar.transpose() * f[k];
    if (b.parent >= 0) f[b.parent] += body[k].phi * f[k];
  }
  if (f_out) *f_out = std::move(f);
  return T;
}

}  // namespace

Eigen::Matrix3d skew(const Eigen::Vector3d& v) {
  Eigen::Matrix3d S;
  S << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return S;
}

Mat6 make_phi(const Eigen::Matrix3d& R, const Eigen::Vector3d& l) {
  Mat6 phi = Mat6::Zero();
  phi.block<3, 3>(0, 0) = R;
  phi.block<3, 3>(0, 3) = skew(l) * R;
  phi.block<3, 3>(3, 3) = R;
  return phi;
}

Mat6 spatial_inertia(double mass, const Eigen::Vector3d& com, const Eigen::Matrix3d& I_com) {
  const Eigen::Matrix3d c = skew(com);
  Mat6 M;
  M.block<3, 3>(0, 0) = I_com - mass * c * c;  // parallel-axis theorem: J about O_k
  M.block<3, 3>(0, 3) = mass * c;
  M.block<3, 3>(3, 0) = -mass * c;
  M.block<3, 3>(3, 3) = mass * Eigen::Matrix3d::Identity();
  return M;
}

void check_unit_quaternions(const Robot& robot, const VecX& q, const std::string& where) {
  constexpr double kUnitTolerance = 1e-6;
  for (const Body& b : robot.bodies) {
    if (b.joint != JointKind::Free && b.joint != JointKind::Ball) continue;
    const int at = b.q_offset + (b.joint == JointKind::Free ? 3 : 0);
    const double norm = q.segment(at, 4).norm();
    if (!(std::abs(norm - 1.0) <= kUnitTolerance))
      throw UserError(
          fmt::format("{}: q: the quaternion of joint '{}' (values {} to {}) has norm {:.17g}, expected 1 (to {:g})",
                      where, b.joint_name, at + 1, at + 4, norm, kUnitTolerance));
  }
}

VecX neutral_configuration(const Robot& robot) {
  VecX q = VecX::Zero(robot.nq);
  for (const Body& b : robot.bodies) {
    if (b.joint == JointKind::Ball) q[b.q_offset + 3] = 1.0;
    if (b.joint == JointKind::Free) q[b.q_offset + 6] = 1.0;
  }
  return q;
}

VecX moved_configuration(const Robot& robot, const VecX& q, int d, double t) {
  VecX out = q;
  for (const Body& b : robot.bodies) {
    const int c = d - b.v_offset;
    if (c < 0 || c >= b.nv()) continue;
    const int at = b.q_offset;
    switch (b.joint) {
      case JointKind::Revolute:
      case JointKind::Prismatic: out[at] += t; break;
      case JointKind::Ball:
      case JointKind::Free: {
        const int qa = b.joint == JointKind::Free ? at + 3 : at;
        const Eigen::Quaterniond r(q[qa + 3], q[qa], q[qa + 1], q[qa + 2]);  // w x y z
        if (c < 3) {
          const Eigen::Quaterniond s = r * Eigen::Quaterniond(Eigen::AngleAxisd(t, Eigen::Vector3d::Unit(c)));
          out.segment<4>(qa) << s.x(), s.y(), s.z(), s.w();
        } else {
          out.segment<3>(at) += t * r.normalized().toRotationMatrix().col(c - 3);
        }
        break;
      }
    }
  }
  return out;
}

State random_state(const Robot& robot, int tips, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::normal_distribution<double> gauss(0.0, 1.0);
  auto random_quaternion = [&](VecX& q, int o) {
    Eigen::Vector4d v(gauss(rng), gauss(rng), gauss(rng), gauss(rng));
    v.normalize();
    q.segment<4>(o) = v;
  };
  State s;
  s.q = VecX(robot.nq);
  for (const Body& b : robot.bodies) {
    switch (b.joint) {
      case JointKind::Revolute: s.q[b.q_offset] = kPi * unit(rng); break;
      case JointKind::Prismatic: s.q[b.q_offset] = 0.1 * unit(rng); break;
      case JointKind::Ball: random_quaternion(s.q, b.q_offset); break;
      case JointKind::Free:
        for (int i = 0; i < 3; ++i) s.q[b.q_offset + i] = unit(rng);
        random_quaternion(s.q, b.q_offset + 3);
        break;
    }
  }
  s.qd = VecX(robot.nv);
  s.qdd = VecX(robot.nv);
  for (int i = 0; i < robot.nv; ++i) s.qd[i] = unit(rng);
  for (int i = 0; i < robot.nv; ++i) s.qdd[i] = unit(rng);
  s.f0 = VecX(6 * tips);
  for (int i = 0; i < 6 * tips; ++i) s.f0[i] = unit(rng);
  return s;
}

Kinematics compute_kinematics(const Robot& robot, const State& state, const std::vector<int>& tips) {
  check_sizes(robot, state, tips.size());
  const int n = robot.size();
  Kinematics kin;
  kin.body.resize(n);
  std::vector<Vec6> alpha0(n);  // accelerations with qdd = 0, for C
  // Outward pass: parents have larger indices, so they are done before their children.
  for (int k = n - 1; k >= 0; --k) {
    const Body& b = robot.bodies[k];
    BodyBlocks& B = kin.body[k];
    Eigen::Matrix3d R;
    Eigen::Vector3d l;
    joint_transform(robot, b, state.q, R, l);
    B.phi = make_phi(R, l);
    B.Hstar = joint_map_adjoint(b);
    B.M = spatial_inertia(b.mass, b.com, b.inertia);

    const auto qd = state.qd.segment(b.v_offset, b.nv());
    const auto qdd = state.qdd.segment(b.v_offset, b.nv());
    const Vec6 rel = B.Hstar * qd;  // [omega_r; v_r]
    Vec6 V_in = Vec6::Zero(), alpha_in = Vec6::Zero(), alpha0_in = Vec6::Zero();
    if (b.parent >= 0) {
      V_in = B.phi.transpose() * kin.body[b.parent].V;
      alpha_in = B.phi.transpose() * kin.body[b.parent].alpha;
      alpha0_in = B.phi.transpose() * alpha0[b.parent];
    }
    B.V = V_in + rel;

    // Reference section 2: classical acceleration bias of O_k in frame k.
    const Eigen::Vector3d wp = V_in.head<3>();
    const Eigen::Vector3d lk = R.transpose() * l;
    const Eigen::Vector3d wr = rel.head<3>(), vr = rel.tail<3>();
    B.a.head<3>() = wp.cross(wr);
    B.a.tail<3>() = wp.cross(wp.cross(lk)) + 2.0 * wp.cross(vr) + wr.cross(vr);
    // V x H* qd (spatial cross product): what the body-frame twist's derivative adds at qdd = 0.
    B.abar << B.V.head<3>().cross(wr), B.V.head<3>().cross(vr) + B.V.tail<3>().cross(wr);
    if (b.parent < 0) {
      // Gravity as an upward base acceleration alpha(world) = [0; -g] (reference 2).
      Vec6 base;
      base << Eigen::Vector3d::Zero(), -robot.gravity;
      B.a += B.phi.transpose() * base;
    }
    B.alpha = alpha_in + B.Hstar * qdd + B.a;
    alpha0[k] = alpha0_in + B.a;

    const Eigen::Vector3d w = B.V.head<3>();
    const Eigen::Matrix3d J = B.M.block<3, 3>(0, 0);
    B.b.head<3>() = w.cross(J * w);
    B.b.tail<3>() = b.mass * w.cross(w.cross(b.com));
  }

  kin.tips.reserve(tips.size());
  for (int f : tips) {
    SOA_ASSERT(f >= 0 && f < static_cast<int>(robot.frames.size()), "tip frame out of range");
    const Frame& fr = robot.frames[f];
    kin.tips.push_back({f, fr.body, make_phi(fr.R, fr.p)});
  }

  std::vector<Vec6> alpha(n), f;
  for (int k = 0; k < n; ++k) alpha[k] = kin.body[k].alpha;
  kin.T = newton_euler(robot, kin.body, alpha, kin.tips, &state.f0, &f);
  for (int k = 0; k < n; ++k) kin.body[k].f = f[k];
  kin.C = newton_euler(robot, kin.body, alpha0, kin.tips, nullptr, nullptr);
  return kin;
}

Articulated compute_articulated(const Robot& robot, const Kinematics& kin) {
  const int n = robot.size();
  Articulated art;
  art.P.assign(n, Mat6::Zero());
  art.R.assign(n, Mat6::Zero());
  art.taubar.resize(n);
  art.psi.resize(n);
  art.Upsilon.resize(n);
  art.D.resize(n);
  art.Dinv.resize(n);
  art.G.resize(n);
  double mass_scale = 0.0;
  for (const Body& b : robot.bodies) mass_scale += b.mass + b.inertia.trace();
  mass_scale = std::max(mass_scale, 1.0);

  // Riccati and composite-body recursions, tip to base (001 eqs. 40-44; reference 3).
  for (int k = 0; k < n; ++k) {
    const Body& b = robot.bodies[k];
    const BodyBlocks& B = kin.body[k];
    art.P[k] += B.M;
    art.R[k] += B.M;
    const Mat6X PHs = art.P[k] * B.Hstar;
    art.D[k] = B.Hstar.transpose() * PHs;
    Eigen::LDLT<MatX> ldlt(art.D[k]);
    const double smallest = art.D[k].selfadjointView<Eigen::Lower>().eigenvalues().minCoeff();
    if (!(smallest > 1e-12 * mass_scale))
      throw UserError(
          fmt::format("{}: link '{}' (joint '{}'): articulated inertia is singular (smallest eigenvalue of "
                      "D = {:.3g}): a massless body behind a movable joint",
                      robot.source, b.name, b.joint_name, smallest));
    art.Dinv[k] = ldlt.solve(MatX::Identity(b.nv(), b.nv()));
    art.G[k] = PHs * art.Dinv[k];
    art.taubar[k] = Mat6::Identity() - art.G[k] * B.Hstar.transpose();
    art.psi[k] = B.phi * art.taubar[k];
    if (b.parent >= 0) {
      // psi P psi* with P+ = taubar P (symmetric since taubar P = P - G D G*).
      const Mat6 Pplus = art.taubar[k] * art.P[k];
      art.P[b.parent] += B.phi * Pplus * B.phi.transpose();
      art.R[b.parent] += B.phi * art.R[k] * B.phi.transpose();
    }
  }
  // Upsilon, base to tip (reference 3; 002 eq. 3.11).
  for (int k = n - 1; k >= 0; --k) {
    const Body& b = robot.bodies[k];
    const Mat6X& Hs = kin.body[k].Hstar;
    art.Upsilon[k] = Hs * art.Dinv[k] * Hs.transpose();
    if (b.parent >= 0) art.Upsilon[k] += art.psi[k].transpose() * art.Upsilon[b.parent] * art.psi[k];
  }
  return art;
}

void check_articulated(const Robot& robot) {
  State s;
  s.q = neutral_configuration(robot);
  s.qd = VecX::Zero(robot.nv);
  s.qdd = VecX::Zero(robot.nv);
  s.f0 = VecX(0);
  compute_articulated(robot, compute_kinematics(robot, s, {}));
}

}  // namespace soa
