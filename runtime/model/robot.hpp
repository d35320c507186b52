// Robot model: an immutable tree of rigid bodies in the SOA numbering.
//
// Contract (docs/mathematics.md section 1)
// - bodies[k] for k = 0..n-1, numbered so that every body's parent has a LARGER index
//   (tip-to-base numbering, as in the papers). parent == -1 means the body hangs from the
//   world (a root); a fixed-base robot's URDF root link and everything welded to it are
//   the world, not bodies.
// - Every body has exactly one movable joint to its parent; URDF fixed joints have been
//   merged away (inertia combined with the parallel-axis theorem) and the merged links are
//   kept as named frames on the body they were welded to.
// - Joint-space vectors (q, qd, qdd, T) are ordered depth-first from the base, children in
//   URDF file order (the order MuJoCo and Pinocchio use): body k's velocity coordinates are
//   v_offset[k] .. v_offset[k] + nv(k) - 1, its configuration coordinates
//   q_offset[k] .. q_offset[k] + nq(k) - 1. Spatial stacked vectors (V, a, b, f, ...) are
//   ordered by body index k (6 entries per body, angular first).
// - Frames: body frame k has its origin O_k on joint k's axis (the URDF child-link frame).
//   The joint transform from the parent frame to frame k is X_tree(k) * X_joint(q_k):
//   X_tree = (origin_R, origin_p) fixed, X_joint a rotation about `axis` (revolute,
//   continuous), a translation along `axis` (prismatic), a quaternion rotation (ball) or a
//   full pose (free-flyer; then X_tree is the identity).
// - Configuration conventions: revolute/prismatic one coordinate; ball a unit quaternion
//   [qx qy qz qw] (nq 4, nv 3, qd = relative angular velocity in body frame k); free-flyer
//   [x y z qx qy qz qw] (position of O_k in the parent frame, orientation) with
//   qd = [omega; v] both in body frame k (v the velocity of O_k).
// - Default tips (default_tips(), used for B, J, Lambda and f0 when no tip is named): one
//   frame per end-effector. A finger is a subtree of at most kMaxFingerBodies bodies; a
//   hand is a body, not a root, with two or more children that are all fingers. Each hand
//   (the highest, when one lies inside another's finger) is one tip, standing for all its
//   fingers; every leaf body outside a hand is a tip of its own (a foot, a head, a flange,
//   a lone finger). Tips come in body order. The frame of a tip starts at the link the
//   fingers hang from (a hand; its body frame when they hang from different links) or at
//   the leaf body's link, and follows fixed joints down while exactly one welded link
//   hangs there: panda -> panda_hand_tcp, talos -> gripper_*_base_link and *_sole_link,
//   anymal -> the *_FOOT frames, ur5 -> wrist_3_link (ee_link and tool0 both hang there).
// - Mimic joints: a movable URDF joint with <mimic> stays an independent degree of freedom;
//   load_urdf() lists such joints in Robot::mimic_joints for the caller to report (the
//   library prints nothing). A <mimic> on a fixed joint has no effect and is not listed.
#pragma once

#include <Eigen/Dense>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace soa {

// Directions of a frame's motion: one bit per row of its twist [angular; linear] in the
// frame's own axes, bit 0 rotation about x ... bit 5 translation along z. A constraint
// holds some of them fixed: a weld all six, a point contact the three translations (the
// contact point's velocity), a loop closure those the mechanism does not fix already.
using Directions = std::uint8_t;
inline constexpr Directions kAllDirections = 0x3f;
inline constexpr Directions kTranslations = 0x38;
// "rx,ry,rz,x,y,z" (the held rows' names, in row order); "none" for 0.
std::string directions_to_string(Directions d);
// The inverse of directions_to_string for a non-empty comma-separated subset of
// rx, ry, rz, x, y, z (each at most once); nullopt otherwise.
std::optional<Directions> parse_directions(std::string_view text);

enum class JointKind { Revolute, Prismatic, Ball, Free };

int nq_of(JointKind k);  // 1, 1, 4, 7
int nv_of(JointKind k);  // 1, 1, 3, 6
const char* to_string(JointKind k);

struct Body {
  std::string name;        // URDF link name
  std::string joint_name;  // URDF joint name (or "root_joint" for an added free-flyer)
  int parent = -1;         // index of the parent body, -1 for the world
  std::vector<int> children;
  JointKind joint = JointKind::Revolute;
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();         // unit, in body frame (revolute/prismatic)
  Eigen::Matrix3d origin_R = Eigen::Matrix3d::Identity();  // X_tree rotation: frame k -> parent
  Eigen::Vector3d origin_p = Eigen::Vector3d::Zero();      // X_tree translation, parent frame
  double mass = 0.0;
  Eigen::Vector3d com = Eigen::Vector3d::Zero();      // centre of mass in body frame
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Zero();  // rotational inertia about the com
  int q_offset = 0;
  int v_offset = 0;
  // The URDF link joint k hangs from (a frame on the parent body, or a world link); empty
  // for an added free-flyer and for models built in code.
  std::string parent_link;
  int nq() const { return nq_of(joint); }
  int nv() const { return nv_of(joint); }
};

// A spring and damper between two frames (003 Part II's non-rigid grasp, as a force law):
// the force it exerts on the frame is -[kr e + dr w; kt p + dt v], [e; p] the frame's pose
// relative to `to` (e = vee(R - R*) / 2, p the offset in the frame's axes) and [w; v] its
// twist relative to `to`; the opposite acts on `to` (docs/mathematics.md section 6).
struct Spring {
  int to = -1;            // the frame at the other end (Robot::frames); -1: no spring
  double kt = 0, kr = 0;  // stiffness: N/m along, N m/rad about the axes
  double dt = 0, dr = 0;  // damping: N s/m, N m s/rad
};

// A named frame rigidly attached to a body (a merged link, or the body's own frame).
struct Frame {
  std::string name;
  int body = -1;
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();  // frame -> body frame
  Eigen::Vector3d p = Eigen::Vector3d::Zero();      // frame origin in body frame
  // For a merged link, the link it is welded to by its fixed joint (a frame on the same
  // body); empty for a body's own frame.
  std::string welded_to;
  // The directions a constraint holds at this frame (a weld or contact the caller declares:
  // soac --weld, --contact), with the world or with `held_to`; 0 when the frame is free.
  // load_urdf sets none.
  Directions held = 0;
  // The frame a weld joins this one to (an index into Robot::frames), -1 for the world. A
  // weld between two frames is a rigid join: their relative twist is held in the directions
  // `held` (this frame's axes), docs/mathematics.md section 6.
  int held_to = -1;
  // A compliant grasp of this frame (`grasp FRAME to OTHER`): a force law, not a constraint.
  Spring spring{};
};

// A movable URDF joint carrying <mimic joint="mimicked">, kept independent (see above).
struct MimicJoint {
  std::string joint;
  std::string mimicked;
};

// Bodies in a finger at most (default tips): enough for a gripper finger with a jointed,
// branching tip (talos_full's: 3 bodies), fewer than an arm. A quadruped's 3-body legs hang
// from its base, a root, so they stay tips; so do a dexterous hand's 4-joint fingers, whose
// tips are what a grasp uses.
inline constexpr int kMaxFingerBodies = 3;

struct Robot {
  std::string source;  // file path, or a description of how it was made
  std::string name;    // URDF robot name
  std::vector<Body> bodies;
  std::vector<Frame> frames;  // one per body (same name) plus every merged link
  int nq = 0;
  int nv = 0;
  Eigen::Vector3d gravity{0.0, 0.0, -9.81};
  // Fixed-base URDF links welded to the world (kept so that tips may name them).
  std::vector<std::string> world_links;
  // Movable joints with a <mimic> tag, in URDF file order (treated as independent).
  std::vector<MimicJoint> mimic_joints;

  int size() const { return static_cast<int>(bodies.size()); }
  // Index of a frame by name, or nullopt.
  std::optional<int> find_frame(const std::string& name) const;
  // Indices of bodies without children, in body order.
  std::vector<int> leaf_bodies() const;
  // The end-effector frames (see "Default tips" above): the tips (B, J, f0) when none are
  // named (README).
  std::vector<int> default_tips() const;
  // The frames of every leaf body, in body order: the most tips a tree has (random-tree
  // checks use them, the strongest test of B, J and f0).
  std::vector<int> leaf_tips() const;
  bool is_serial_chain() const;
  // Joint names in joint-space order, one entry per velocity coordinate block.
  std::vector<std::string> joint_order() const;
  // The root bodies (parent -1) in joint-space order. Arm i (1-based) of a robot is the
  // subtree of roots()[i - 1]: the arms of 003 Part II share nothing but the fixed base.
  std::vector<int> roots() const;
};

// The bodies of the subtree of body `root` (root included), in increasing index order.
std::vector<int> subtree_bodies(const Robot& robot, int root);

// The subtree of root body `root` (one that hangs from the world) as a robot of its own:
// its bodies in their order (renumbered 0..), the frames on them, gravity and the world
// links; finalize()d, so its joint space is the subtree's slice of the robot's (depth-first
// order is preserved). Its body j is robot.bodies[subtree_bodies(robot, root)[j]].
Robot subtree(const Robot& robot, int root);

// `robot` holding a free body: `object` (a URDF loaded with a free-flyer, e.g. a box with
// grasp frames) becomes one more root subtree, last in joint-space order, so q and qd end
// with its free-flyer's [x y z qx qy qz qw] and [omega; v] (and any joints it has). Its
// links and frames keep their names; a name the robot already uses is a UserError. It
// hangs from nothing: welds between its frames and the robot's (Frame::held_to) hold it
// (003 Part II's grasped object).
Robot with_object(const Robot& robot, const Robot& object);

struct LoadOptions {
  bool floating = false;  // add a free-flyer joint above the URDF root link
};

// Load a URDF. Throws UserError "FILE:LINE: link 'x': ..." for every bad input listed in
// the issue (unreadable file, XML error, unknown joint type, missing parent or child,
// cycles, several roots, negative mass, a non-PSD inertia, a singular movable subtree).
Robot load_urdf(const std::string& path, const LoadOptions& options = {});
Robot parse_urdf(const std::string& xml_text, const std::string& source_name, const LoadOptions& options = {});

struct RandomTreeOptions {
  int bodies = 8;
  bool floating = false;   // free-flyer root
  bool allow_ball = true;  // mix ball joints in
  bool allow_prismatic = true;
  double branching = 0.4;  // chance that a body hangs off a non-latest body
};

// A random tree with mixed joint types, arbitrary axes and random physically valid
// inertias (positive mass, principal moments satisfying the triangle inequality).
Robot random_tree(unsigned long long seed, const RandomTreeOptions& options = {});

// `arms` random trees side by side, each hanging from the world: a multi-arm robot (003
// Part II). Arm i (1-based, as in roots()) is random_tree(seed + i - 1, options) with its
// links renamed "a<i>_b<k>"; its body a<i>_b0 is a leaf.
Robot random_arms(unsigned long long seed, int arms, const RandomTreeOptions& options = {});

// Recompute children, offsets, nq/nv and per-body frames after bodies were edited; checks
// the numbering invariant (parent index > child index).
void finalize(Robot& robot);

}  // namespace soa
