// Per-body blocks of the spatial operators for one robot and state.
//
// Contract (docs/mathematics.md section 2)
// - phi(k) = phi(p(k), k) = [[R, l~ R], [0, R]], R frame k -> frame p(k), l = O_k - O_p(k)
//   in frame p(k). For a root, phi(world, k) (used only to bring gravity in).
// - Hstar(k) = H*(k), 6 x nv(k). M(k) the spatial inertia about O_k in frame k.
// - a(k) the velocity-dependent acceleration bias, with gravity folded into the roots:
//   a(root) += phi*(world, root) [0; -g] (the base accelerates upward, reference 2).
//   b(k) = [omega x J omega; m omega x (omega x p)].
// - V, alpha, f and T come from an independent recursive Newton-Euler pass (not from
//   operator products), so that identities such as EOM check something.
// - The articulated quantities (Riccati, 001 eqs. 40-44 / reference 3) are computed from
//   the blocks; a body whose D(k) is singular is reported by link name.
#pragma once

#include <Eigen/Dense>

#include <random>
#include <string>
#include <vector>

#include "model/robot.hpp"

namespace soa {

using Mat6 = Eigen::Matrix<double, 6, 6>;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6X = Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6>;
using MatX = Eigen::MatrixXd;
using VecX = Eigen::VectorXd;

Eigen::Matrix3d skew(const Eigen::Vector3d& v);
// phi = [[R, l~ R], [0, R]] (reference 2).
Mat6 make_phi(const Eigen::Matrix3d& R, const Eigen::Vector3d& l);
// Spatial inertia about the frame origin from mass, com and inertia about the com.
Mat6 spatial_inertia(double mass, const Eigen::Vector3d& com, const Eigen::Matrix3d& I_com);

struct State {
  VecX q, qd, qdd;  // nq, nv, nv
  VecX f0;          // 6 per tip frame
};

// The neutral configuration (zero angles, identity quaternions).
VecX neutral_configuration(const Robot& robot);
// Unless every quaternion in q (free-flyers, ball joints) has unit norm to 1e-6, a UserError
// "WHERE: q: the quaternion of joint 'J' (values A to B) has norm X, expected 1 (to 1e-06)":
// for a state given from outside, which the kinematics would normalise quietly and another
// library reading the same numbers might not.
void check_unit_quaternions(const Robot& robot, const VecX& q, const std::string& where);
// q moved by t along tangent direction d (an index into qd; runtime/exec/derivative.hpp's
// convention), exactly: a revolute or prismatic joint's coordinate by t, a ball joint or a
// free-flyer's orientation rotated by angle t about its own axis d, a free-flyer's origin by
// t along its own axis (for finite differences in the tangent space).
VecX moved_configuration(const Robot& robot, const VecX& q, int d, double t);
// Uniform random joint angles in [-pi, pi], displacements in [-0.1, 0.1], random unit
// quaternions, velocities and accelerations in [-1, 1], tip forces in [-1, 1].
State random_state(const Robot& robot, int tips, std::mt19937_64& rng);

struct BodyBlocks {
  Mat6 phi;     // phi(p(k), k)  (phi(world, k) for a root)
  Mat6X Hstar;  // H*(k), 6 x nv(k)
  Mat6 M;
  Vec6 V, a, b, alpha, f;  // recursive Newton-Euler quantities
  Vec6 abar;               // V x H* qd: dV/dt = phi* abar at qdd = 0 (vocabulary.def)
};

struct TipBlocks {
  int frame = -1;  // index into Robot::frames
  int body = -1;
  Mat6 phi;  // phi(O_body, tip frame) = B block (reference 3, B)
};

struct Kinematics {
  std::vector<BodyBlocks> body;
  std::vector<TipBlocks> tips;
  VecX T;  // inverse dynamics of (q, qd, qdd, f0): T = H f with f = phi(M alpha + b + B f0)
  VecX C;  // the same recursion with qdd = 0 and f0 = 0: Coriolis, centrifugal and gravity
};

// Tips are frame indices (Robot::frames). Throws UserError on a malformed state.
Kinematics compute_kinematics(const Robot& robot, const State& state, const std::vector<int>& tips);

struct Articulated {
  std::vector<Mat6> P, taubar, psi, R, Upsilon;  // psi[k] = psi(p(k), k)
  std::vector<MatX> D, Dinv, G;                  // nv x nv, nv x nv, 6 x nv
};

// Riccati, composite-body and Upsilon recursions (reference 3). Throws UserError naming
// the link when some D(k) is singular (relative to the body's inertia scale).
Articulated compute_articulated(const Robot& robot, const Kinematics& kin);

// Fails with a UserError naming the first link whose articulated inertia is singular at
// the neutral configuration (a massless leaf behind a joint): called by the loaders.
void check_articulated(const Robot& robot);

}  // namespace soa
