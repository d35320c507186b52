// The robot model as a specification: the URDF loader against examples/robots/README.md and hand
// computations, every input error with its message, and the random trees used by the
// property tests.
#include <catch2/catch.hpp>

#include <Eigen/Eigenvalues>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <numbers>
#include <sstream>

#include "model/robot.hpp"
#include "support/error.hpp"
#include "support/test_support.hpp"

using Catch::Matchers::Contains;
using soa::JointKind;
using soa::Robot;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct UrdfLink {
  std::string name;
  double mass = 0.0;
};

// Links and their masses read straight from the text, independently of the loader: every
// shared URDF writes `<link name="..."` and `<mass value="..."/>` (examples/robots/README.md).
std::vector<UrdfLink> scan_links(const std::string& path) {
  std::string text = read_text(path);
  for (std::size_t open; (open = text.find("<!--")) != std::string::npos;)
    text.erase(open, text.find("-->", open) + 3 - open);
  std::vector<UrdfLink> links;
  for (std::size_t at = 0; (at = text.find("<link", at)) != std::string::npos; ++at) {
    if (!std::isspace(static_cast<unsigned char>(text[at + 5]))) continue;
    const std::size_t name = text.find("name=\"", at) + 6;
    UrdfLink link{text.substr(name, text.find('"', name) - name)};
    const std::size_t tag_end = text.find('>', at);
    if (text[tag_end - 1] != '/') {
      const std::string body = text.substr(tag_end, text.find("</link>", tag_end) - tag_end);
      const std::size_t mass = body.find("<mass");
      if (mass != std::string::npos) {
        const std::size_t value = body.find("value=\"", mass) + 7;
        link.mass = std::stod(body.substr(value, body.find('"', value) - value));
      }
    }
    links.push_back(link);
  }
  return links;
}

double total_mass(const Robot& r) {
  double m = 0.0;
  for (const soa::Body& b : r.bodies) m += b.mass;
  return m;
}

// robot.hpp's invariants, for any robot.
void require_numbering(const Robot& r) {
  const int n = r.size();
  int nq = 0, nv = 0;
  for (int k = 0; k < n; ++k) {
    const soa::Body& b = r.bodies[k];
    INFO("body " << k << " '" << b.name << "'");
    REQUIRE((b.parent == -1 || (b.parent > k && b.parent < n)));
    for (int c : b.children) REQUIRE(r.bodies[c].parent == k);
    if (b.joint == JointKind::Revolute || b.joint == JointKind::Prismatic)
      REQUIRE(b.axis.norm() == Approx(1.0).epsilon(1e-12));
    REQUIRE((b.origin_R.transpose() * b.origin_R - Eigen::Matrix3d::Identity()).norm() < 1e-12);
    REQUIRE(b.origin_R.determinant() == Approx(1.0));
    REQUIRE(b.mass >= 0.0);
    nq += b.nq();
    nv += b.nv();
    const auto f = r.find_frame(b.name);
    REQUIRE(f);
    REQUIRE(r.frames[*f].body == k);
    REQUIRE(r.frames[*f].R.isIdentity(0.0));
    REQUIRE(r.frames[*f].p.isZero(0.0));
  }
  REQUIRE(r.nq == nq);
  REQUIRE(r.nv == nv);
  int children = 0;
  for (const soa::Body& b : r.bodies) children += static_cast<int>(b.children.size());
  int roots = 0;
  for (const soa::Body& b : r.bodies) roots += b.parent < 0 ? 1 : 0;
  REQUIRE(children + roots == n);

  // Joint space is depth-first: the coordinates of a subtree form one contiguous block that
  // starts with the subtree's root.
  std::vector<int> subtree_nv(n, 0), subtree_nq(n, 0);
  for (int k = 0; k < n; ++k) {
    subtree_nv[k] += r.bodies[k].nv();
    subtree_nq[k] += r.bodies[k].nq();
    if (r.bodies[k].parent >= 0) {
      subtree_nv[r.bodies[k].parent] += subtree_nv[k];
      subtree_nq[r.bodies[k].parent] += subtree_nq[k];
    }
  }
  for (int k = 0; k < n; ++k) {
    for (int a = r.bodies[k].parent; a >= 0; a = r.bodies[a].parent) {
      REQUIRE(r.bodies[k].v_offset > r.bodies[a].v_offset);
      REQUIRE(r.bodies[k].v_offset + subtree_nv[k] <= r.bodies[a].v_offset + subtree_nv[a]);
      REQUIRE(r.bodies[k].q_offset + subtree_nq[k] <= r.bodies[a].q_offset + subtree_nq[a]);
    }
  }
  std::vector<int> by_v(n);
  for (int k = 0; k < n; ++k) by_v[k] = k;
  std::sort(by_v.begin(), by_v.end(), [&](int a, int b) { return r.bodies[a].v_offset < r.bodies[b].v_offset; });
  int v = 0, q = 0;
  for (int k : by_v) {
    REQUIRE(r.bodies[k].v_offset == v);
    REQUIRE(r.bodies[k].q_offset == q);
    v += r.bodies[k].nv();
    q += r.bodies[k].nq();
  }
}

// The loaders number k = n-1-preorder, so joint space runs from body n-1 down to body 0.
void require_preorder_numbering(const Robot& r) {
  require_numbering(r);
  for (int k = r.size() - 2; k >= 0; --k) {
    REQUIRE(r.bodies[k].v_offset == r.bodies[k + 1].v_offset + r.bodies[k + 1].nv());
    REQUIRE(r.bodies[k].q_offset == r.bodies[k + 1].q_offset + r.bodies[k + 1].nq());
  }
}

std::string fixture(const std::string& name) { return soa::test::source_path("tests/data/urdf/" + name); }

}  // namespace

TEST_CASE("joint kinds have their coordinate counts", "[model]") {
  CHECK(soa::nq_of(JointKind::Revolute) == 1);
  CHECK(soa::nv_of(JointKind::Revolute) == 1);
  CHECK(soa::nq_of(JointKind::Prismatic) == 1);
  CHECK(soa::nv_of(JointKind::Prismatic) == 1);
  CHECK(soa::nq_of(JointKind::Ball) == 4);
  CHECK(soa::nv_of(JointKind::Ball) == 3);
  CHECK(soa::nq_of(JointKind::Free) == 7);
  CHECK(soa::nv_of(JointKind::Free) == 6);
  CHECK(std::string(soa::to_string(JointKind::Revolute)) == "revolute");
  CHECK(std::string(soa::to_string(JointKind::Prismatic)) == "prismatic");
  CHECK(std::string(soa::to_string(JointKind::Ball)) == "ball");
  CHECK(std::string(soa::to_string(JointKind::Free)) == "free");
}

TEST_CASE("every shipped robot loads as examples/robots/README.md describes it", "[model][urdf]") {
  for (const auto& shared : soa::test::shared_robots()) {
    for (const bool floating : {false, true}) {
      const std::string path = soa::test::shared_robot_path(shared.file);
      INFO(shared.file << (floating ? " floating" : " fixed"));
      const Robot r = soa::load_urdf(path, soa::LoadOptions{floating});
      CHECK(r.source == path);
      if (shared.dof >= 0) {
        CHECK(r.size() == shared.dof + (floating ? 1 : 0));
        CHECK(r.nv == shared.dof + (floating ? 6 : 0));
        CHECK(r.nq == shared.dof + (floating ? 7 : 0));
      }
      require_preorder_numbering(r);

      const std::vector<UrdfLink> links = scan_links(path);
      double urdf_mass = 0.0;
      for (const UrdfLink& link : links) {
        const bool in_world = std::count(r.world_links.begin(), r.world_links.end(), link.name) > 0;
        INFO("link " << link.name);
        CHECK((r.find_frame(link.name).has_value() != in_world));
        if (!in_world) urdf_mass += link.mass;
      }
      CHECK(r.frames.size() + r.world_links.size() == links.size());
      CHECK(total_mass(r) == Approx(urdf_mass).epsilon(1e-12));
      if (floating) {
        CHECK(r.world_links.empty());
        CHECK(r.bodies.back().joint == JointKind::Free);
        CHECK(r.bodies.back().joint_name == "root_joint");
        CHECK(r.bodies.back().origin_R.isIdentity(0.0));
        CHECK(r.bodies.back().origin_p.isZero(0.0));
      } else {
        CHECK(!r.world_links.empty());
      }
      for (const soa::Body& b : r.bodies) {
        INFO("body " << b.name);
        const Eigen::Vector3d eig = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(b.inertia).eigenvalues();
        CHECK(eig.minCoeff() >= -1e-12 * std::max(1.0, eig.maxCoeff()));
        CHECK(b.inertia.isApprox(b.inertia.transpose(), 1e-14));
      }
    }
  }
}

TEST_CASE("panda: joint space in URDF order, mimic joints stay independent", "[model][urdf]") {
  const Robot r = soa::load_urdf(soa::test::shared_robot_path("panda.urdf"));
  const std::vector<std::string> expected = {"panda_joint1", "panda_joint2",        "panda_joint3",
                                             "panda_joint4", "panda_joint5",        "panda_joint6",
                                             "panda_joint7", "panda_finger_joint1", "panda_finger_joint2"};
  CHECK(r.joint_order() == expected);
  CHECK(r.name == "panda");
  CHECK(r.world_links == std::vector<std::string>{"panda_link0"});
  // The hand is welded to link 7, and the two fingers branch off it.
  CHECK(!r.is_serial_chain());
  CHECK(r.leaf_bodies() == std::vector<int>{0, 1});
  CHECK(r.bodies[0].joint == JointKind::Prismatic);
  CHECK(r.bodies[0].name == "panda_rightfinger");
  CHECK(r.bodies[2].name == "panda_link7");
  CHECK(r.bodies[2].children == std::vector<int>{1, 0});  // URDF order: finger 1 first
  const auto hand = r.find_frame("panda_hand");
  REQUIRE(hand);
  CHECK(r.frames[*hand].body == 2);
  CHECK(r.frames[*hand].welded_to == "panda_link8");
  CHECK(r.bodies[0].parent_link == "panda_hand");
  // The loader names the mimic joint (the commands warn); it stays a joint of its own.
  REQUIRE(r.mimic_joints.size() == 1);
  CHECK(r.mimic_joints[0].joint == "panda_finger_joint2");
  CHECK(r.mimic_joints[0].mimicked == "panda_finger_joint1");
}

TEST_CASE("mimic joints are listed only where they move", "[model][urdf]") {
  auto mimics = [](const Robot& r) {
    std::vector<std::string> names;
    for (const soa::MimicJoint& m : r.mimic_joints) names.push_back(m.joint + " <- " + m.mimicked);
    return names;
  };
  const Robot full = soa::load_urdf(soa::test::shared_robot_path("talos_full.urdf"));
  CHECK(full.mimic_joints.size() == 12);
  CHECK(mimics(full).front() == "gripper_left_inner_double_joint <- gripper_left_joint");
  // talos_reduced keeps the <mimic> tags on the gripper joints it made fixed.
  CHECK(soa::load_urdf(soa::test::shared_robot_path("talos_reduced.urdf")).mimic_joints.empty());
  CHECK(mimics(soa::load_urdf(soa::test::shared_robot_path("baxter.urdf"))) ==
        std::vector<std::string>{"l_gripper_r_finger_joint <- l_gripper_l_finger_joint",
                                 "r_gripper_r_finger_joint <- r_gripper_l_finger_joint"});
  CHECK(soa::load_urdf(soa::test::shared_robot_path("ur5.urdf")).mimic_joints.empty());
  CHECK_THROWS_WITH(soa::parse_urdf(R"(<robot name="t"><link name="base"/>
<link name="arm"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
<joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
<mimic multiplier="2"/></joint></robot>)",
                                    "m.urdf"),
                    Contains("m.urdf:4: joint 'j': <mimic> without a joint"));
}

namespace {

std::vector<std::string> frame_names(const Robot& r, const std::vector<int>& frames) {
  std::vector<std::string> names;
  for (int f : frames) names.push_back(r.frames[f].name);
  return names;
}

// A URDF from "parent child type" triples, every link a unit mass with a unit inertia.
std::string tree_urdf(const std::vector<std::string>& joints) {
  std::vector<std::string> links;
  std::string body;
  for (const std::string& j : joints) {
    std::istringstream in(j);
    std::string parent, child, type;
    in >> parent >> child >> type;
    for (const std::string& l : {parent, child})
      if (std::find(links.begin(), links.end(), l) == links.end()) links.push_back(l);
    body += fmt::format(R"(<joint name="{1}_joint" type="{2}"><origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>
<parent link="{0}"/><child link="{1}"/></joint>
)",
                        parent, child, type);
  }
  std::string text = "<robot name=\"tree\">\n";
  for (const std::string& l : links)
    text += fmt::format(R"(<link name="{}"><inertial><mass value="1"/>
<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
)",
                        l);
  return text + body + "</robot>";
}

std::vector<std::string> default_tip_names(const std::vector<std::string>& joints, bool floating = false) {
  const Robot r = soa::parse_urdf(tree_urdf(joints), "tree.urdf", soa::LoadOptions{floating});
  return frame_names(r, r.default_tips());
}

using Names = std::vector<std::string>;

}  // namespace

TEST_CASE("the default tips of each shipped robot are its end-effectors", "[model][tips]") {
  // Body order (tip-to-base), as B's columns; the same with a free-flyer.
  const std::map<std::string, Names> expected = {
      {"panda.urdf", {"panda_hand_tcp"}},
      {"ur5.urdf", {"wrist_3_link"}},                 // ee_link and tool0 both hang from the flange
      {"kinova_j2s6s200.urdf", {"j2s6s200_link_6"}},  // welded fingers and end effector
      {"baxter.urdf", {"left_gripper", "right_gripper", "head"}},
      {"talos_full.urdf",
       {"right_sole_link", "left_sole_link", "gripper_right_base_link", "gripper_left_base_link", "rgbd_link"}},
      // Its grippers keep one movable finger each: a lone finger stays a tip.
      {"talos_reduced.urdf",
       {"right_sole_link", "left_sole_link", "gripper_right_motor_double_link", "gripper_left_motor_double_link",
        "rgbd_link"}},
      {"solo12.urdf", {"HR_FOOT", "HL_FOOT", "FR_FOOT", "FL_FOOT"}},
      {"hyq.urdf", {"rh_foot", "lh_foot", "rf_foot", "lf_foot"}},
      {"anymal_b.urdf", {"RH_FOOT", "LH_FOOT", "RF_FOOT", "LF_FOOT"}},
      {"double_pendulum.urdf", {"link2"}},
      {"double_pendulum_simple.urdf", {"link3"}},
  };
  std::size_t seen = 0;
  for (const auto& shared : soa::test::shared_robots()) {
    const auto it = expected.find(shared.file);
    if (it == expected.end()) continue;  // an extra robot (SOA_EXTRA_ROBOT_DIRS)
    ++seen;
    for (const bool floating : {false, true}) {
      INFO(shared.file << (floating ? " floating" : " fixed"));
      const Robot r = soa::load_urdf(soa::test::shared_robot_path(shared.file), {floating});
      CHECK(frame_names(r, r.default_tips()) == it->second);
    }
  }
  CHECK(seen == expected.size());
  // The old default, every leaf body, is still there for checks that want the most tips.
  const Robot talos = soa::load_urdf(soa::test::shared_robot_path("talos_full.urdf"));
  CHECK(talos.leaf_tips().size() == 13);
  CHECK(frame_names(talos, talos.leaf_tips()).front() == "leg_right_6_link");
}

TEST_CASE("two fingers collapse into their hand, at the link they hang from", "[model][tips]") {
  // arm -> wrist =weld=> palm =weld=> tcp; the fingers hang from palm.
  const Names arm = {"base a1 revolute", "a1 wrist revolute",   "wrist palm fixed",
                     "palm tcp fixed",   "palm left prismatic", "palm right prismatic"};
  CHECK(default_tip_names(arm) == Names{"tcp"});
  // Two welded links below the palm: no single one to follow, the palm it is.
  Names two_frames = arm;
  two_frames.push_back("palm camera fixed");
  CHECK(default_tip_names(two_frames) == Names{"palm"});
  // Fingers hanging from different links of the hand: from its body frame, then down the
  // fixed joints as for a leaf (here the one welded link, palm; with two, the body frame).
  CHECK(default_tip_names({"base a1 revolute", "a1 wrist revolute", "wrist palm fixed", "wrist left revolute",
                           "palm right revolute"}) == Names{"palm"});
  CHECK(default_tip_names({"base a1 revolute", "a1 wrist revolute", "wrist palm fixed", "wrist flange fixed",
                           "wrist left revolute", "palm right revolute"}) == Names{"wrist"});
  // Jointed fingers, one of them branching at its second link (talos_full's gripper): the
  // highest hand stands for them all.
  CHECK(default_tip_names({"base a1 revolute", "a1 wrist revolute", "wrist motor revolute", "wrist inner revolute",
                           "inner tip1 revolute", "inner tip2 revolute", "wrist single revolute",
                           "single tip3 revolute"}) == Names{"wrist"});
  // Other leaves stay beside a hand: a head on the torso.
  CHECK(default_tip_names({"base torso revolute", "torso head revolute", "torso a1 revolute", "a1 a2 revolute",
                           "a2 a3 revolute", "a3 a4 revolute", "a4 left revolute", "a4 right revolute"}) ==
        Names{"a4", "head"});
}

TEST_CASE("feet, lone fingers and long branches stay tips of their own", "[model][tips]") {
  // A leg ending in a foot: the sole below it, followed down the fixed joints.
  CHECK(default_tip_names({"base hip revolute", "hip thigh revolute", "thigh shank revolute", "shank adapter fixed",
                           "adapter foot fixed"}) == Names{"foot"});
  // A lone leaf chain stays, however short.
  CHECK(default_tip_names({"base a1 revolute", "a1 a2 revolute", "a2 finger prismatic"}) == Names{"finger"});
  // Legs on a base are no fingers even when short: a root body is never a hand.
  const Names legs = {"base l1 revolute", "l1 lfoot revolute", "base r1 revolute", "r1 rfoot revolute"};
  CHECK(default_tip_names(legs, true) == Names{"rfoot", "lfoot"});
  // A branch longer than kMaxFingerBodies is a limb, not a finger.
  CHECK(default_tip_names({"base a1 revolute", "a1 x1 revolute", "x1 x2 revolute", "x2 x3 revolute", "x3 x4 revolute",
                           "a1 y1 revolute", "y1 y2 revolute"}) == Names{"y2", "x4"});
  CHECK(soa::kMaxFingerBodies == 3);
}

TEST_CASE("on random trees every leaf is covered by exactly one default tip", "[model][tips][random]") {
  int collapsed = 0;
  for (unsigned long long seed = 1; seed <= 60; ++seed) {
    const Robot r = soa::random_tree(seed, {12, seed % 2 == 0, true, true, 0.6});
    INFO("seed " << seed);
    std::vector<int> count(r.size(), 1);
    for (int k = 0; k < r.size(); ++k)
      if (r.bodies[k].parent >= 0) count[r.bodies[k].parent] += count[k];
    std::vector<int> tip_bodies;
    for (int t : r.default_tips()) tip_bodies.push_back(r.frames[t].body);
    CHECK(std::is_sorted(tip_bodies.begin(), tip_bodies.end()));
    for (int t : tip_bodies) {
      const soa::Body& b = r.bodies[t];
      if (b.children.empty()) continue;
      ++collapsed;  // a hand: not a root, two or more children, all of them fingers
      CHECK(b.parent >= 0);
      CHECK(b.children.size() >= 2);
      for (int c : b.children) CHECK(count[c] <= soa::kMaxFingerBodies);
    }
    for (int leaf : r.leaf_bodies()) {
      int covering = 0;
      for (int a = leaf; a >= 0; a = r.bodies[a].parent)
        covering += static_cast<int>(std::count(tip_bodies.begin(), tip_bodies.end(), a));
      CHECK(covering == 1);
    }
    CHECK(r.leaf_tips().size() == r.leaf_bodies().size());
  }
  CHECK(collapsed > 0);
}

TEST_CASE("ur5 is a serial chain; baxter has three roots", "[model][urdf]") {
  const Robot ur5 = soa::load_urdf(soa::test::shared_robot_path("ur5.urdf"));
  CHECK(ur5.is_serial_chain());
  CHECK(ur5.leaf_bodies() == std::vector<int>{0});

  const Robot baxter = soa::load_urdf(soa::test::shared_robot_path("baxter.urdf"));
  std::vector<std::string> roots;
  for (auto it = baxter.bodies.rbegin(); it != baxter.bodies.rend(); ++it)
    if (it->parent < 0) roots.push_back(it->joint_name);
  CHECK(roots == std::vector<std::string>{"head_pan", "right_s0", "left_s0"});
  CHECK(!baxter.is_serial_chain());
}

// base =weld=> mount -j1-> a =f=> b -j2-> c, with hand-computed results below.
constexpr const char* kMergeUrdf = R"(<robot name="merge">
  <link name="base"><inertial><mass value="5"/>
    <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <link name="mount"><inertial><mass value="0.5"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="a"><inertial><origin xyz="0 0 0.1"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.003"/></inertial></link>
  <link name="c"><inertial><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="weld" type="fixed"><origin xyz="0 0 1"/>
    <parent link="base"/><child link="mount"/></joint>
  <joint name="j1" type="revolute"><origin xyz="0 0 0.2"/><axis xyz="0 0 2"/>
    <parent link="mount"/><child link="a"/></joint>
  <joint name="f" type="fixed"><origin xyz="0.3 0 0" rpy="0 0 1.5707963267948966"/>
    <parent link="a"/><child link="b"/></joint>
  <joint name="j2" type="continuous"><origin xyz="0 0 0.5"/>
    <parent link="b"/><child link="c"/></joint>
</robot>)";

TEST_CASE("fixed joints merge with the parallel-axis theorem", "[model][urdf]") {
  const Robot r = soa::parse_urdf(kMergeUrdf, "merge.urdf");
  REQUIRE(r.size() == 2);
  require_preorder_numbering(r);
  CHECK(r.world_links == std::vector<std::string>{"base", "mount"});

  const soa::Body& a = r.bodies[1];
  CHECK(a.name == "a");
  CHECK(a.joint_name == "j1");
  CHECK(a.parent == -1);
  CHECK(a.joint == JointKind::Revolute);
  CHECK(a.axis.isApprox(Eigen::Vector3d::UnitZ()));  // normalised
  // The root's X_tree is the weld (0,0,1) composed with j1's origin (0,0,0.2).
  CHECK(a.origin_R.isIdentity(1e-15));
  CHECK((a.origin_p - Eigen::Vector3d(0, 0, 1.2)).norm() < 1e-15);

  // Link b sits at p = (0.3,0,0), R = Rz(90deg) in a's frame, so its com is
  // Rz(90)(0.1,0,0) + (0.3,0,0) = (0.3,0.1,0) and its inertia is diag(0.002,0.001,0.003).
  // Mass 3, com (2 (0,0,0.1) + 1 (0.3,0.1,0)) / 3 = (1/10, 1/30, 1/15); offsets from it:
  // d_a = (-1/10, -1/30, 1/30), d_b = (1/5, 1/15, -1/15). Parallel axis,
  // I = I_a + I_b + sum m (|d|^2 1 - d d^T):
  //   Ixx = 0.012 + 2 (2/900) + (2/225) = 19/750,   Ixy = -(2 (1/300) + 1/75) = -1/50,
  //   Ixz = -(2 (-1/300) - 1/75) = 1/50,            Iyy = 0.021 + 2 (1/90) + 1 (2/45) = 263/3000,
  //   Iyz = -(2 (-1/900) - 1/225) = 1/150,          Izz = 0.033 + 2 (1/90) + 1 (2/45) = 299/3000.
  CHECK(a.mass == Approx(3.0).epsilon(1e-15));
  CHECK((a.com - Eigen::Vector3d(1.0 / 10, 1.0 / 30, 1.0 / 15)).norm() < 1e-15);
  Eigen::Matrix3d expected;
  expected << 19.0 / 750, -1.0 / 50, 1.0 / 50,  //
      -1.0 / 50, 263.0 / 3000, 1.0 / 150,       //
      1.0 / 50, 1.0 / 150, 299.0 / 3000;
  CHECK((a.inertia - expected).norm() < 1e-15);

  // b is kept as a frame on a; c's X_tree goes through it.
  const auto b = r.find_frame("b");
  REQUIRE(b);
  CHECK(r.frames[*b].body == 1);
  const Eigen::Matrix3d Rz90 = Eigen::AngleAxisd(std::numbers::pi / 2, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  CHECK((r.frames[*b].R - Rz90).norm() < 1e-15);
  CHECK((r.frames[*b].p - Eigen::Vector3d(0.3, 0, 0)).norm() < 1e-15);
  const soa::Body& c = r.bodies[0];
  CHECK(c.parent == 1);
  CHECK(c.joint_name == "j2");
  CHECK(c.axis == Eigen::Vector3d::UnitX());  // the URDF default axis
  CHECK((c.origin_R - Rz90).norm() < 1e-15);
  CHECK((c.origin_p - Eigen::Vector3d(0.3, 0, 0.5)).norm() < 1e-15);
  CHECK(c.mass == 1.0);
  CHECK(c.com.isZero(0.0));
}

TEST_CASE("a floating base merges the world-welded links into the free-flyer", "[model][urdf]") {
  const Robot r = soa::parse_urdf(kMergeUrdf, "merge.urdf", soa::LoadOptions{true});
  REQUIRE(r.size() == 3);
  require_preorder_numbering(r);
  CHECK(r.nq == 9);
  CHECK(r.nv == 8);
  CHECK(r.world_links.empty());
  const soa::Body& base = r.bodies[2];
  CHECK(base.name == "base");
  CHECK(base.joint == JointKind::Free);
  CHECK(base.joint_name == "root_joint");
  CHECK(base.mass == Approx(5.5));
  // com (0.5 (0,0,1)) / 5.5; about it: diag(1 + 5 z^2 + 0.01 + 0.5 (1 - z)^2, same, 1.01).
  const double z = 1.0 / 11;
  CHECK((base.com - Eigen::Vector3d(0, 0, z)).norm() < 1e-15);
  const double ixx = 1.01 + 5 * z * z + 0.5 * (1 - z) * (1 - z);
  CHECK((base.inertia - Eigen::Vector3d(ixx, ixx, 1.01).asDiagonal().toDenseMatrix()).norm() < 1e-14);
  CHECK(r.bodies[1].parent == 2);
  CHECK((r.bodies[1].origin_p - Eigen::Vector3d(0, 0, 1.2)).norm() < 1e-15);
  const auto mount = r.find_frame("mount");
  REQUIRE(mount);
  CHECK(r.frames[*mount].body == 2);
  CHECK((r.frames[*mount].p - Eigen::Vector3d(0, 0, 1)).norm() < 1e-15);
  CHECK(r.joint_order() == std::vector<std::string>{"root_joint", "j1", "j2"});
}

TEST_CASE("origin rpy is fixed-axis roll-pitch-yaw", "[model][urdf]") {
  const Robot r = soa::parse_urdf(R"(<robot name="rpy">
    <link name="base"/>
    <link name="arm"><inertial><mass value="1"/>
      <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
    <joint name="j" type="prismatic"><origin xyz="1 2 3" rpy="0.1 0.2 0.3"/>
      <parent link="base"/><child link="arm"/><axis xyz="0 3 4"/></joint>
  </robot>)",
                                  "rpy.urdf");
  REQUIRE(r.size() == 1);
  const Eigen::Matrix3d expected =
      (Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitZ()) * Eigen::AngleAxisd(0.2, Eigen::Vector3d::UnitY()) *
       Eigen::AngleAxisd(0.1, Eigen::Vector3d::UnitX()))
          .toRotationMatrix();
  CHECK((r.bodies[0].origin_R - expected).norm() < 1e-15);
  CHECK(r.bodies[0].origin_p == Eigen::Vector3d(1, 2, 3));
  CHECK(r.bodies[0].joint == JointKind::Prismatic);
  CHECK((r.bodies[0].axis - Eigen::Vector3d(0, 0.6, 0.8)).norm() < 1e-15);
  CHECK(r.world_links == std::vector<std::string>{"base"});
}

TEST_CASE("bad URDFs fail with one line naming the place", "[model][urdf][errors]") {
  using soa::load_urdf;
  CHECK_THROWS_WITH(load_urdf(fixture("does_not_exist.urdf")), Contains("does_not_exist.urdf: cannot read file"));
  CHECK_THROWS_WITH(load_urdf(fixture("xml_syntax.urdf")),
                    Contains("xml_syntax.urdf:4: XML syntax error: mismatched element"));
  CHECK_THROWS_WITH(load_urdf(fixture("no_robot.urdf")), Contains("no_robot.urdf:3: no <robot> element"));
  CHECK_THROWS_WITH(load_urdf(fixture("unknown_joint_type.urdf")),
                    Contains("unknown_joint_type.urdf:7: joint 'elbow': unknown joint type "
                             "'planar'"));
  CHECK_THROWS_WITH(load_urdf(fixture("floating_joint.urdf")),
                    Contains("floating_joint.urdf:6: joint 'world_to_base': unknown joint type "
                             "'floating'"));
  CHECK_THROWS_WITH(load_urdf(fixture("missing_parent_link.urdf")),
                    Contains("missing_parent_link.urdf:7: joint 'shoulder': parent link 'torso' "
                             "does not exist"));
  CHECK_THROWS_WITH(load_urdf(fixture("missing_child_link.urdf")),
                    Contains("missing_child_link.urdf:8: joint 'shoulder': child link 'arm' "
                             "does not exist"));
  CHECK_THROWS_WITH(load_urdf(fixture("two_parents.urdf")),
                    Contains("two_parents.urdf:8: link 'upper' is the child of two joints, 'a' "
                             "(line 7) and 'b'"));
  CHECK_THROWS_WITH(load_urdf(fixture("cycle.urdf")),
                    Contains("cycle.urdf:") && Contains("the joints form a cycle through link"));
  CHECK_THROWS_WITH(load_urdf(fixture("cycle_detached.urdf")),
                    Contains("cycle_detached.urdf:") && Contains("the joints form a cycle through link"));
  CHECK_THROWS_WITH(load_urdf(fixture("several_roots.urdf")),
                    Contains("several_roots.urdf:6: several root links") && Contains("'base', 'pedestal'"));
  CHECK_THROWS_WITH(load_urdf(fixture("negative_mass.urdf")),
                    Contains("negative_mass.urdf:7: link 'arm': negative mass -2"));
  CHECK_THROWS_WITH(load_urdf(fixture("non_psd_inertia.urdf")),
                    Contains("non_psd_inertia.urdf:8: link 'arm': inertia is not positive "
                             "semi-definite (eigenvalues -0.1, 0.1, 0.3)"));
  CHECK_THROWS_WITH(load_urdf(fixture("non_finite.urdf")),
                    Contains("non_finite.urdf:7: joint 'shoulder': non-finite number 'nan'"));
  CHECK_THROWS_WITH(load_urdf(fixture("zero_axis.urdf")), Contains("zero_axis.urdf:9: joint 'shoulder': zero axis"));
  // Caught after loading, by the articulated-inertia check (kinematics.hpp).
  CHECK_THROWS_WITH(load_urdf(fixture("massless_leaf.urdf")), Contains("'finger'"));
  // Only user errors, and each a single line.
  for (const char* name : {"xml_syntax.urdf", "non_psd_inertia.urdf", "several_roots.urdf"}) {
    try {
      load_urdf(fixture(name));
      FAIL("no error for " << name);
    } catch (const soa::UserError& e) {
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("malformed numbers and elements inside a URDF string", "[model][urdf][errors]") {
  auto with_joint = [](const std::string& joint) {
    return R"(<robot name="t"><link name="base"/>
<link name="arm"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
)" + joint +
           "\n</robot>";
  };
  CHECK_THROWS_WITH(soa::parse_urdf(with_joint(R"(<joint name="j" type="revolute"><origin xyz="0 x 0"/>
<parent link="base"/><child link="arm"/></joint>)"),
                                    "s.urdf"),
                    Contains("s.urdf:3: joint 'j': 'x' is not a number in xyz=\"0 x 0\""));
  CHECK_THROWS_WITH(soa::parse_urdf(with_joint(R"(<joint name="j" type="revolute"><origin rpy="0 0"/>
<parent link="base"/><child link="arm"/></joint>)"),
                                    "s.urdf"),
                    Contains("s.urdf:3: joint 'j': rpy=\"0 0\" needs 3 numbers"));
  CHECK_THROWS_WITH(soa::parse_urdf(with_joint(R"(<joint name="j" type="revolute"><axis xyz="inf 0 0"/>
<parent link="base"/><child link="arm"/></joint>)"),
                                    "s.urdf"),
                    Contains("s.urdf:3: joint 'j': non-finite number 'inf'"));
  CHECK_THROWS_WITH(soa::parse_urdf(with_joint(R"(<joint name="j"><parent link="base"/>
<child link="arm"/></joint>)"),
                                    "s.urdf"),
                    Contains("s.urdf:3: joint 'j': missing attribute 'type'"));
  CHECK_THROWS_WITH(soa::parse_urdf(with_joint(R"(<joint name="j" type="fixed">
<parent link="base"/></joint>)"),
                                    "s.urdf"),
                    Contains("s.urdf:3: joint 'j': missing <child>"));
  CHECK_THROWS_WITH(soa::parse_urdf(with_joint(R"(<link name="arm"/>)"), "s.urdf"),
                    Contains("s.urdf:3: link 'arm' is defined twice (first on line 2)"));
  CHECK_THROWS_WITH(soa::parse_urdf(with_joint(R"(<joint name="j" type="fixed">
<parent link="base"/><child link="arm"/></joint>
<joint name="j" type="fixed"><parent link="arm"/><child link="base"/></joint>)"),
                                    "s.urdf"),
                    Contains("s.urdf:5: joint 'j' is defined twice (first on line 3)"));
  CHECK_THROWS_WITH(soa::parse_urdf("", "empty.urdf"), Contains("empty.urdf: XML syntax error"));
  CHECK_THROWS_WITH(soa::parse_urdf("<robot name=\"r\"/>", "r.urdf"), Contains("r.urdf:1: <robot> has no <link>"));
}

TEST_CASE("singular-but-PSD and triangle-violating inertias load", "[model][urdf]") {
  // hyq and anymal_b: all six entries 1e-6 (eigenvalues 3e-6, 0, 0).
  CHECK_NOTHROW(soa::parse_urdf(R"(<robot name="t"><link name="base"/>
    <link name="arm"><inertial><mass value="1"/>
      <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
    <link name="dummy"><inertial><mass value="1e-6"/>
      <inertia ixx="1e-6" ixy="1e-6" ixz="1e-6" iyy="1e-6" iyz="1e-6" izz="1e-6"/></inertial></link>
    <joint name="j" type="revolute"><parent link="base"/><child link="arm"/></joint>
    <joint name="f" type="fixed"><parent link="arm"/><child link="dummy"/></joint>
  </robot>)",
                                "t.urdf"));
  for (const char* file : {"hyq.urdf", "anymal_b.urdf", "talos_reduced.urdf"})
    CHECK_NOTHROW(soa::load_urdf(soa::test::shared_robot_path(file), soa::LoadOptions{true}));
}

TEST_CASE("random trees are reproducible from the seed", "[model][random]") {
  const soa::RandomTreeOptions options{12, true, true, true, 0.5};
  const Robot a = soa::random_tree(42, options);
  const Robot b = soa::random_tree(42, options);
  const Robot c = soa::random_tree(43, options);
  REQUIRE(a.size() == 12);
  CHECK(a.source == "random tree (seed 42, 12 bodies)");
  bool differs = false;
  for (int k = 0; k < a.size(); ++k) {
    CHECK(a.bodies[k].name == fmt::format("b{}", k));
    CHECK(a.bodies[k].joint_name == fmt::format("j{}", k));
    CHECK(a.bodies[k].parent == b.bodies[k].parent);
    CHECK(a.bodies[k].joint == b.bodies[k].joint);
    CHECK(a.bodies[k].axis == b.bodies[k].axis);
    CHECK(a.bodies[k].origin_R == b.bodies[k].origin_R);
    CHECK(a.bodies[k].origin_p == b.bodies[k].origin_p);
    CHECK(a.bodies[k].mass == b.bodies[k].mass);
    CHECK(a.bodies[k].com == b.bodies[k].com);
    CHECK(a.bodies[k].inertia == b.bodies[k].inertia);
    differs = differs || a.bodies[k].mass != c.bodies[k].mass;
  }
  CHECK(differs);
}

TEST_CASE("random trees are valid robots with a mix of joints", "[model][random]") {
  std::map<JointKind, int> kinds;
  bool branched = false;
  for (unsigned long long seed = 1; seed <= 30; ++seed) {
    for (const bool floating : {false, true}) {
      INFO("seed " << seed << (floating ? " floating" : ""));
      const Robot r = soa::random_tree(seed, {10, floating, true, true, 0.4});
      require_numbering(r);
      CHECK(r.frames.size() == 10);
      branched = branched || !r.is_serial_chain();
      for (int k = 0; k < r.size(); ++k) {
        const soa::Body& b = r.bodies[k];
        INFO("body " << k);
        ++kinds[b.joint];
        CHECK((b.joint == JointKind::Free) == (floating && k == r.size() - 1));
        CHECK(b.mass >= 0.5);
        CHECK(b.mass <= 3.0);
        CHECK(b.com.cwiseAbs().maxCoeff() <= 0.2);
        CHECK(b.origin_p.cwiseAbs().maxCoeff() <= 0.5);
        CHECK(b.inertia.isApprox(b.inertia.transpose(), 1e-14));
        const Eigen::Vector3d l = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(b.inertia).eigenvalues();
        CHECK(l.minCoeff() > 0.0);
        CHECK(l[0] + l[1] >= l[2]);  // ascending, so this is the binding triangle inequality
      }
    }
  }
  CHECK(branched);
  CHECK(kinds[JointKind::Revolute] > 0);
  CHECK(kinds[JointKind::Prismatic] > 0);
  CHECK(kinds[JointKind::Ball] > 0);
  CHECK(kinds[JointKind::Free] == 30);
}

TEST_CASE("random tree options restrict the shape and the joints", "[model][random]") {
  for (unsigned long long seed = 1; seed <= 10; ++seed) {
    const Robot chain = soa::random_tree(seed, {7, false, false, false, 0.0});
    CHECK(chain.is_serial_chain());
    CHECK(chain.nv == 7);
    for (const soa::Body& b : chain.bodies) CHECK(b.joint == JointKind::Revolute);
    const Robot one = soa::random_tree(seed, {1, true, true, true, 0.4});
    CHECK(one.nq == 7);
    CHECK(one.nv == 6);
  }
  CHECK_THROWS_AS(soa::random_tree(1, {0, false, true, true, 0.4}), soa::UserError);
}

TEST_CASE("a held object is one more free root, last in joint-space order", "[model]") {
  const Robot baxter = soa::load_urdf(soa::test::shared_robot_path("baxter.urdf"));
  const Robot bar = soa::load_urdf(soa::test::shared_robot_path("bar.urdf"), soa::LoadOptions{true});
  const Robot held = soa::with_object(baxter, bar);
  CHECK(held.nq == baxter.nq + 7);
  CHECK(held.nv == baxter.nv + 6);
  const soa::Body& root = held.bodies[static_cast<std::size_t>(held.find_frame("bar").value())];
  CHECK(root.joint == JointKind::Free);
  CHECK(root.parent == -1);
  CHECK(root.q_offset == baxter.nq);  // the robot's coordinates first, unchanged
  CHECK(root.v_offset == baxter.nv);
  CHECK(held.joint_order().front() == baxter.joint_order().front());
  // The robot's frames keep their bodies (renumbered), the bar's grasp frames are on the bar.
  const soa::Frame& left = held.frames[static_cast<std::size_t>(held.find_frame("left_gripper").value())];
  CHECK(held.bodies[static_cast<std::size_t>(left.body)].name ==
        baxter.bodies[static_cast<std::size_t>(baxter.frames[*baxter.find_frame("left_gripper")].body)].name);
  CHECK(held.frames[static_cast<std::size_t>(held.find_frame("bar_left").value())].body ==
        held.find_frame("bar").value());
  CHECK_THROWS_WITH(
      soa::with_object(baxter, soa::load_urdf(soa::test::shared_robot_path("baxter.urdf"), soa::LoadOptions{true})),
      Catch::Contains("object link 'base' has the name of a link of"));
  CHECK_THROWS_WITH(soa::with_object(baxter, soa::load_urdf(soa::test::shared_robot_path("bar.urdf"))),
                    Catch::Contains("a held object needs a free-flyer"));
}
