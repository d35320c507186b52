// MuJoCo (Debian libmujoco-dev 2.2.2) as an independent numerical oracle for the
// interpreter: inverse dynamics, bias, mass matrix and forward dynamics of a URDF robot,
// returned in OUR joint order and OUR velocity coordinates.
//
// How the model is made exact (each pitfall is explained where it is handled):
// - <visual>/<collision> are deleted (the meshes are not shipped) and
//   <mujoco><compiler fusestatic="false" balanceinertia="true" discardvisual="true"/></mujoco>
//   is added, so that every URDF link stays a MuJoCo body of the same name and the invalid
//   tensors of hyq/anymal_b/talos_reduced load at all.
// - MuJoCo's compiled inertias are not exact (balanceinertia changes some; its eigen-solver
//   stops at ~1e-7), so every body's mass, com and rotational inertia is rewritten from the
//   URDF link's own <inertial> (parsed here, independently of runtime/model/urdf.cpp, which
//   merges fixed links: comparing against the per-link model also checks that merge).
// - Passive terms (damping, friction loss, armature, stiffness) are zeroed.
// - A free-flyer gets a <freejoint name="root_joint"/> in the root body: the first model is
//   saved with mj_saveLastXML, the joint inserted, the XML reloaded, and the geometry that
//   the saved XML rounds to ~6 digits copied back exactly from the first model by name.
//
// Velocity coordinates. Our free-flyer qd = [omega; v] (both in the body frame, v the
// velocity of the body origin); MuJoCo's free-joint qvel = [xdot (world); omega (body)].
// With R the body-to-world rotation, qvel = S qd where S is a permutation with R on the
// linear block; S is orthogonal. Then
//   M_ours = S^T M_mj S,  T_ours = S^T T_mj,  qacc_mj = S qdd + sdot,
// with sdot = [R (omega x v); 0] on the free joint (d/dt of R v), zero elsewhere. Revolute
// and prismatic joints map one to one (by joint name; qpos = q + qpos0).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/kinematics.hpp"
#include "model/robot.hpp"

struct mjModel_;
struct mjData_;

namespace soa::test {

class MujocoOracle {
public:
  // `robot` must have been loaded from `urdf_path`; it has a free-flyer root iff it was
  // loaded with LoadOptions{floating = true}, and the MuJoCo model gets one too. Throws
  // std::runtime_error when MuJoCo refuses the file or the two models do not correspond
  // (a joint or link missing on one side, different dof counts).
  // `welds`: links welded to the world by MuJoCo equality constraints (<weld body1=link>,
  // holding the link's pose at qpos0, i.e. our neutral configuration; "a=b" welds link a to
  // link b, holding their relative pose at qpos0: <weld body1=a body2=b>); `points`: links
  // whose origin is held there (<connect body1=link anchor="0 0 0">, a point contact).
  // They are soft (solref, solimp): an impedance near 1 (`impedance`) approaches ideal ones.
  // `object_path`: the URDF of the free body `robot` holds (model/robot.hpp with_object, its
  // free joint 'root_joint'; a fixed-base robot): added to MuJoCo's model as one more body
  // tree with a free joint of that name, at the world origin at qpos0 (our neutral
  // configuration), so that welds may name its links.
  MujocoOracle(const Robot& robot, const std::string& urdf_path, const std::vector<std::string>& welds = {},
               const std::vector<std::string>& points = {}, double impedance = 0.9999,
               const std::string& object_path = "");

  int nv() const { return nv_; }
  // The loaded model and its data, for callers that time MuJoCo's own calls (benchmarks/).
  // After inverse_dynamics(q, qd, qdd) the data holds qpos, qvel and qacc in MuJoCo's
  // coordinates for that state.
  mjModel_* model() const { return m_; }
  mjData_* data() const { return d_; }

  // T = M(q) qdd + C(q, qd) (gravity included, no external forces).
  VecX inverse_dynamics(const VecX& q, const VecX& qd, const VecX& qdd);
  // C(q, qd): inverse dynamics with qdd = 0 in OUR coordinates (which is not MuJoCo's
  // qfrc_bias on a free-flyer: our qdd = 0 is MuJoCo's qacc = sdot).
  VecX bias(const VecX& q, const VecX& qd);
  MatX mass_matrix(const VecX& q);
  // qdd = M^-1 (tau - C) through MuJoCo's own sparse factorisation (mj_factorM, mj_solveM).
  VecX forward_dynamics(const VecX& q, const VecX& qd, const VecX& tau);
  // qdd of mj_forward with the model's constraints (the welds), tau as qfrc_applied.
  VecX constrained_forward_dynamics(const VecX& q, const VecX& qd, const VecX& tau);
  // Sets qpos, qvel and qfrc_applied for mj_forward (MuJoCo's coordinates), as the above does.
  void set_state(const VecX& q, const VecX& qd, const VecX& tau);

private:
  struct JointMap {
    JointKind kind;
    int q_offset, v_offset;  // ours
    int qposadr, dofadr;     // MuJoCo's
    int body;                // MuJoCo's id of the body the joint moves
  };

  void set_positions(const VecX& q);    // qpos, kinematics, com-based positions, S_
  void set_velocities(const VecX& qd);  // qvel, com-based velocities, sdot_

  struct FreeModel {
    void operator()(mjModel_* m) const;
  };
  struct FreeData {
    void operator()(mjData_* d) const;
  };

  std::unique_ptr<mjModel_, FreeModel> model_;
  std::unique_ptr<mjData_, FreeData> data_;
  mjModel_* m_ = nullptr;  // model_.get(), data_.get(): the names MuJoCo's API reads best with
  mjData_* d_ = nullptr;
  int nq_ = 0, nv_ = 0;
  std::vector<JointMap> joints_;
  MatX S_;     // qvel = S qd (depends on q only)
  VecX sdot_;  // qacc = S qdd + sdot (depends on q and qd)
};

}  // namespace soa::test
