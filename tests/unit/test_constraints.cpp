// Closed chains (000 eqs. 5.6-5.11, 003 Part II): tip frames held by the world -- welded
// (all six directions), in point contact (the three translations) or in any declared
// subset of directions -- or welded to another frame of the robot (a loop).
//
// The kernels (lower::welded_kernels) are checked against what does not share their
// derivation: the saddle-point system of Lagrange multipliers solved densely, with the
// constraint bias from the model's own Newton-Euler recursion run without gravity, and
// the physics itself (the welded frames' velocities, differentiated along the motion).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <random>
#include <tuple>

#include "specialise/specialise.hpp"
#include "support/error.hpp"
#include "support/pipeline.hpp"

namespace {

using namespace soa;

const lower::KernelDecl& welded(const std::string& name) {
  for (const lower::KernelDecl& k : lower::welded_kernels())
    if (k.name == name) return k;
  throw InternalError("no welded kernel " + name);
}

std::vector<int> frames(const Robot& robot, const std::vector<std::string>& names) {
  std::vector<int> out;
  for (const std::string& n : names) out.push_back(robot.find_frame(n).value());
  return out;
}

// Frames welded to frames: each (frame, partner, directions) held, the frames then the
// partners not already among them as tips (as soac's --weld FRAME=OTHER).
using Weld = std::tuple<std::string, std::string, Directions>;
std::vector<int> join(Robot& robot, const std::vector<Weld>& welds) {
  std::vector<int> tips;
  for (const auto& [name, to, held] : welds) {
    tips.push_back(robot.find_frame(name).value());
    Frame& f = robot.frames[static_cast<std::size_t>(tips.back())];
    f.held = held;
    f.held_to = to.empty() ? -1 : robot.find_frame(to).value();
  }
  for (const auto& [name, to, held] : welds) {
    if (to.empty()) continue;
    const int g = robot.find_frame(to).value();
    if (std::find(tips.begin(), tips.end(), g) == tips.end()) tips.push_back(g);
  }
  return tips;
}

// `robot` with the named frames held in `held` directions with the world (as soac's
// --weld, --contact): the frames are the tips.
std::vector<int> hold(Robot& robot, const std::vector<std::pair<std::string, Directions>>& frames_held) {
  std::vector<Weld> welds;
  for (const auto& [name, held] : frames_held) welds.emplace_back(name, "", held);
  return join(robot, welds);
}

// Q J, the constraints' rows of the Jacobian, at state s.
MatX constraint_jacobian(const Robot& robot, const State& s, const std::vector<int>& tips) {
  const interp::Evaluation ev = interp::prepare(robot, s, tips, test::definitions());
  return interp::constraint_rows(ev) * interp::eval_dense(ev, test::parse("J"));
}

// Whether the welds are independent: Q J of full row rank at a random state.
bool independent(const Robot& robot, const std::vector<int>& tips, std::mt19937_64& rng) {
  const MatX J = constraint_jacobian(robot, random_state(robot, static_cast<int>(tips.size()), rng), tips);
  if (J.rows() > J.cols()) return false;
  Eigen::JacobiSVD<MatX> svd(J);
  return svd.singularValues().minCoeff() > 1e-3 * svd.singularValues().maxCoeff();
}

// The tips' twists B* V: angular velocity and origin velocity, in each tip's frame.
VecX tip_twists(const Robot& robot, const VecX& q, const VecX& qd, const std::vector<int>& tips) {
  State s{q, qd, VecX::Zero(robot.nv), VecX::Zero(6 * static_cast<int>(tips.size()))};
  const Kinematics kin = compute_kinematics(robot, s, tips);
  VecX v(6 * static_cast<int>(tips.size()));
  for (std::size_t t = 0; t < tips.size(); ++t)
    v.segment<6>(6 * static_cast<int>(t)) = kin.tips[t].phi.transpose() * kin.body[kin.tips[t].body].V;
  return v;
}

// The relative twist of frame a with respect to frame b, in a's coordinates: V_a - X(a,b) V_b,
// X(a,b) from the frames' world transforms (products of the bodies' phi).
VecX relative_twist(const Robot& robot, const VecX& q, const VecX& qd, int a, int b) {
  State s{q, qd, VecX::Zero(robot.nv), VecX::Zero(12)};
  const Kinematics kin = compute_kinematics(robot, s, {a, b});
  const auto world = [&](std::size_t t) {
    MatX Phi = kin.tips[t].phi;
    for (int k = kin.tips[t].body; k >= 0; k = robot.bodies[k].parent)
      Phi = kin.body[static_cast<std::size_t>(k)].phi * Phi;
    return Phi;
  };
  const auto twist = [&](std::size_t t) -> VecX { return kin.tips[t].phi.transpose() * kin.body[kin.tips[t].body].V; };
  const MatX Pb = world(1).transpose();
  return twist(0) - world(0).transpose() * Pb.partialPivLu().solve(twist(1));
}

// Jdot qd = d/dt (B* V) at qdd = 0 without gravity, from the classical accelerations of
// kinematics.cpp's Newton-Euler recursion: for a tip at offset l in body k (phi(O_k, t) =
// [[R, l~ R], [0, R]]), its origin's acceleration a + w' x l + w x (w x l), and the
// derivative of frame components, R* (a_t - w x v_t).
VecX tip_bias(const Robot& robot, const State& state, const std::vector<int>& tips) {
  Robot still = robot;
  still.gravity.setZero();
  State s = state;
  s.qdd.setZero();
  const Kinematics kin = compute_kinematics(still, s, tips);
  VecX c(6 * static_cast<int>(tips.size()));
  for (std::size_t t = 0; t < tips.size(); ++t) {
    const Mat6& phi = kin.tips[t].phi;
    const Eigen::Matrix3d R = phi.bottomRightCorner<3, 3>();
    const Eigen::Matrix3d lx = phi.topRightCorner<3, 3>() * R.transpose();
    const Eigen::Vector3d l(lx(2, 1), lx(0, 2), lx(1, 0));
    const BodyBlocks& b = kin.body[static_cast<std::size_t>(kin.tips[t].body)];
    const Eigen::Vector3d w = b.V.head<3>(), v = b.V.tail<3>(), wd = b.alpha.head<3>();
    const Eigen::Vector3d at = b.alpha.tail<3>() + wd.cross(l) + w.cross(w.cross(l));
    const Eigen::Vector3d vt = v + w.cross(l);
    c.segment<3>(6 * static_cast<int>(t)) = R.transpose() * wd;
    c.segment<3>(6 * static_cast<int>(t) + 3) = R.transpose() * (at - w.cross(vt));
  }
  return c;
}

// The welded kernels' inputs: [q, qd, T].
std::vector<double> inputs(const State& s, const VecX& T) {
  std::vector<double> in(s.q.data(), s.q.data() + s.q.size());
  in.insert(in.end(), s.qd.data(), s.qd.data() + s.qd.size());
  in.insert(in.end(), T.data(), T.data() + T.size());
  return in;
}

// Runs a welded kernel through the generic runtime.
VecX run(const std::string& kernel, const exec::RobotConstants<double>& constants, const State& s, const VecX& T) {
  return exec::run(test::kernel_program(welded(kernel)), constants, inputs(s, T)).col(0);
}

// qdd and f of both kernels against the saddle point, and the specialised (straight-line)
// programs against the runtime, on `states` random states.
void check_welds(const Robot& robot, const std::vector<int>& tips, int states, std::uint64_t seed) {
  const exec::RobotConstants<double> constants = exec::make_constants(robot, tips);
  const specialise::Kernel cfd = test::build_kernel(welded("constrained_forward_dynamics"), constants);
  const specialise::Kernel forces = test::build_kernel(welded("constraint_forces"), constants);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < states; ++i) {
    const State s = random_state(robot, static_cast<int>(tips.size()), rng);
    const interp::Evaluation ev = interp::prepare(robot, s, tips, test::definitions());
    const VecX T = test::random_forces(robot.nv, rng);
    const interp::SaddlePoint ref = interp::saddle_point(ev, T, tip_bias(robot, s, tips));
    const VecX qdd = run("constrained_forward_dynamics", constants, s, T);
    const VecX f = run("constraint_forces", constants, s, T);
    INFO(robot.name << ", state " << i);
    CHECK(test::relative_difference(qdd, ref.qdd) < 1e-9);
    CHECK(test::relative_difference(f, ref.f) < 1e-9);
    // The specialised programs compute what the runtime does, up to the rounding of a
    // reordered computation (amplified by the tip-space matrix's condition).
    const std::vector<double> in = inputs(s, T);
    std::vector<double> got(static_cast<std::size_t>(robot.nv)), got_f(6 * tips.size());
    specialise::evaluate(cfd.code, in.data(), got.data());
    specialise::evaluate(forces.code, in.data(), got_f.data());
    const double d_qdd = test::relative_difference(Eigen::Map<VecX>(got.data(), robot.nv), qdd);
    const double d_f = test::relative_difference(Eigen::Map<VecX>(got_f.data(), static_cast<int>(got_f.size())), f);
    INFO("specialised against runtime: qdd " << d_qdd << ", f " << d_f);
    CHECK(d_qdd < 1e-11);
    CHECK(d_f < 1e-11);
  }
}

// Lambda_c = (J calM^-1 J*)^-1 on the held rows, Q* (Q X Q*)^-1 Q, against X formed densely
// (J and calM from the dense interpreter) and inverted by Eigen; the specialised program
// against the runtime.
void check_inertia(const Robot& robot, const std::vector<int>& tips, int states, std::uint64_t seed) {
  const exec::RobotConstants<double> constants = exec::make_constants(robot, tips);
  const lower::KernelDecl& k = welded("operational_space_inertia");
  const specialise::Kernel code = test::build_kernel(k, constants);
  const int m6 = 6 * static_cast<int>(tips.size());
  std::mt19937_64 rng(seed);
  for (int i = 0; i < states; ++i) {
    const State s = random_state(robot, static_cast<int>(tips.size()), rng);
    const interp::Evaluation ev = interp::prepare(robot, s, tips, test::definitions());
    const MatX X = interp::eval_dense(ev, test::parse("J calM^-1 J*"));
    const MatX Q = interp::constraint_rows(ev);
    const MatX want = Q.transpose() * (Q * X * Q.transpose()).inverse() * Q;
    const std::vector<double> in(s.q.data(), s.q.data() + s.q.size());
    const MatX got = exec::run(test::kernel_program(k), constants, in);
    INFO(robot.name << ", state " << i);
    REQUIRE(got.rows() == m6);
    REQUIRE(got.cols() == m6);
    CHECK(test::relative_difference(got, want) < 1e-9);
    MatX specialised(m6, m6);
    specialise::evaluate(code.code, in.data(), specialised.data());
    CHECK(test::relative_difference(specialised, got) < 1e-11);
  }
}

}  // namespace

TEST_CASE("the operational-space inertia (J calM^-1 J*)^-1 on the held rows equals the dense inverse",
          "[constraints]") {
  SECTION("talos_reduced on both soles") {
    Robot talos = load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true});
    check_inertia(talos, hold(talos, {{"left_sole_link", kAllDirections}, {"right_sole_link", kAllDirections}}), 10,
                  21);
  }
  SECTION("solo12 on four point contacts (three rows each)") {
    Robot solo = load_urdf(test::shared_robot_path("solo12.urdf"), LoadOptions{true});
    check_inertia(solo,
                  hold(solo, {{"FL_FOOT", kTranslations},
                              {"FR_FOOT", kTranslations},
                              {"HL_FOOT", kTranslations},
                              {"HR_FOOT", kTranslations}}),
                  10, 22);
  }
  SECTION("baxter's grippers welded to each other") {
    Robot baxter = load_urdf(test::shared_robot_path("baxter.urdf"));
    check_inertia(baxter, join(baxter, {{"left_gripper", "right_gripper", kAllDirections}}), 10, 23);
  }
  SECTION("the Panda's hand, not held: all six rows, the plain inverse") {
    const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
    check_inertia(panda, panda.default_tips(), 10, 24);
  }
}

TEST_CASE("directions are named rx, ry, rz, x, y, z and parsed back", "[constraints]") {
  CHECK(directions_to_string(kAllDirections) == "rx,ry,rz,x,y,z");
  CHECK(directions_to_string(kTranslations) == "x,y,z");
  CHECK(directions_to_string(0) == "none");
  CHECK(parse_directions("z,rx") == Directions{0x21});
  CHECK(parse_directions("rx,ry,rz,x,y,z") == kAllDirections);
  CHECK_FALSE(parse_directions("").has_value());
  CHECK_FALSE(parse_directions("x,x").has_value());
  CHECK_FALSE(parse_directions("x,,y").has_value());
  CHECK_FALSE(parse_directions("X").has_value());
}

TEST_CASE("welded tips: constrained forward dynamics and forces equal the dense saddle-point solution",
          "[constraints]") {
  SECTION("talos_reduced with a free-flyer standing on both soles") {
    const Robot talos = load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true});
    check_welds(talos, frames(talos, {"left_sole_link", "right_sole_link"}), 20, 1);
  }
  SECTION("baxter holding the world with both grippers") {
    const Robot baxter = load_urdf(test::shared_robot_path("baxter.urdf"));
    check_welds(baxter, frames(baxter, {"left_gripper", "right_gripper"}), 20, 2);
  }
  SECTION("solo12 standing on four point contacts") {
    Robot solo = load_urdf(test::shared_robot_path("solo12.urdf"), LoadOptions{true});
    const std::vector<int> tips = hold(solo, {{"FL_FOOT", kTranslations},
                                              {"FR_FOOT", kTranslations},
                                              {"HL_FOOT", kTranslations},
                                              {"HR_FOOT", kTranslations}});
    check_welds(solo, tips, 20, 4);
  }
  SECTION("talos_reduced: one sole welded, the other in point contact, a gripper held in z and rz") {
    Robot talos = load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true});
    const std::vector<int> tips = hold(talos, {{"left_sole_link", kAllDirections},
                                               {"right_sole_link", kTranslations},
                                               {"gripper_left_base_link", *parse_directions("rz,z")}});
    check_welds(talos, tips, 20, 5);
  }
  SECTION("random trees with one to three held leaves (welds, contacts, random directions), mixed joints") {
    int checked = 0;
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      RandomTreeOptions o;
      o.bodies = 14 + static_cast<int>(seed % 5);
      o.floating = seed % 2 == 0;
      o.branching = 0.3;
      Robot tree = random_tree(seed, o);
      std::mt19937_64 rng(seed);
      // Leaves at least six joints deep, so that each weld has dofs of its own; held in all
      // six directions (seeds 1-4), in three translations, or a random non-empty subset.
      std::vector<int> tips;
      for (int leaf : tree.leaf_bodies()) {
        int depth = 0;
        for (int b = leaf; b >= 0; b = tree.bodies[b].parent) depth += tree.bodies[b].joint == JointKind::Free ? 0 : 1;
        if (depth < 7 || tips.size() >= 1 + seed % 3) continue;
        tips.push_back(tree.find_frame(tree.bodies[leaf].name).value());
        const auto random_subset = static_cast<Directions>(1 + rng() % kAllDirections);
        tree.frames[static_cast<std::size_t>(tips.back())].held = seed <= 4   ? kAllDirections
                                                                  : seed <= 8 ? kTranslations
                                                                              : random_subset;
      }
      if (tips.empty() || !independent(tree, tips, rng)) continue;  // redundant welds
      check_welds(tree, tips, 5, seed);
      ++checked;
    }
    CHECK(checked >= 8);
  }
}

TEST_CASE("held tips do not accelerate in their held directions: twists, differentiated along the motion",
          "[constraints]") {
  // Fixed-base robots with revolute and prismatic joints, so that q + h qd is a motion.
  Robot baxter = load_urdf(test::shared_robot_path("baxter.urdf"));
  const bool contacts = GENERATE(false, true);
  const Directions held = contacts ? kTranslations : kAllDirections;
  const std::vector<int> tips = hold(baxter, {{"left_gripper", held}, {"right_gripper", held}});
  const exec::RobotConstants<double> constants = exec::make_constants(baxter, tips);
  std::mt19937_64 rng(7);
  double free_rotation = 0.0;  // the largest angular acceleration of a point contact
  for (int i = 0; i < 10; ++i) {
    State s = random_state(baxter, static_cast<int>(tips.size()), rng);
    // Start on the constraint manifold: the held rows of the tips' twists zero (qd projected
    // onto the null space of those rows of J).
    const MatX J = constraint_jacobian(baxter, s, tips);
    s.qd -= J.transpose() * (J * J.transpose()).ldlt().solve(J * s.qd);
    const VecX T = VecX::Constant(baxter.nv, 3.0);
    const VecX qdd = run("constrained_forward_dynamics", constants, s, T);
    const double h = 1e-5;
    const auto at = [&](double t) {
      return tip_twists(baxter, s.q + t * s.qd + 0.5 * t * t * qdd, s.qd + t * qdd, tips);
    };
    const VecX acceleration = (at(h) - at(-h)) / (2 * h);
    INFO((contacts ? "point contacts" : "welds")
         << ", state " << i << ": tip accelerations " << acceleration.transpose());
    for (int t = 0; t < 2; ++t) {
      const double scale = 1e-6 * std::max(1.0, qdd.cwiseAbs().maxCoeff());
      CHECK(acceleration.segment<3>(6 * t + 3).cwiseAbs().maxCoeff() < scale);
      if (!contacts) CHECK(acceleration.segment<3>(6 * t).cwiseAbs().maxCoeff() < scale);
      free_rotation = std::max(free_rotation, acceleration.segment<3>(6 * t).cwiseAbs().maxCoeff());
    }
  }
  if (contacts) CHECK(free_rotation > 1e-2);  // a point contact leaves the rotations free
}

TEST_CASE("frames welded to frames: constrained dynamics and forces equal the dense saddle-point solution",
          "[constraints]") {
  SECTION("baxter's grippers welded to each other (a loop through both arms)") {
    Robot baxter = load_urdf(test::shared_robot_path("baxter.urdf"));
    check_welds(baxter, join(baxter, {{"left_gripper", "right_gripper", kAllDirections}}), 20, 11);
  }
  SECTION("talos_reduced on both soles, its grippers welded together in x, y, z") {
    Robot talos = load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true});
    const std::vector<int> tips = join(talos, {{"left_sole_link", "", kAllDirections},
                                               {"right_sole_link", "", kAllDirections},
                                               {"gripper_left_base_link", "gripper_right_base_link", kTranslations}});
    CHECK(tips.size() == 4);  // the partner is a tip with no rows of its own
    check_welds(talos, tips, 20, 12);
  }
  SECTION("a four-bar linkage closed by welding its coupler's halves in the plane (x, z, ry)") {
    Robot fourbar = load_urdf(test::shared_robot_path("fourbar.urdf"));
    check_welds(fourbar, join(fourbar, {{"coupler_a_mid", "coupler_b_mid", *parse_directions("x,z,ry")}}), 20, 13);
  }
  SECTION("baxter carrying a bar (a held object, 003 Part II) welded to both grippers") {
    Robot baxter = with_object(load_urdf(test::shared_robot_path("baxter.urdf")),
                               load_urdf(test::shared_robot_path("bar.urdf"), LoadOptions{true}));
    check_welds(
        baxter,
        join(baxter, {{"bar_left", "left_gripper", kAllDirections}, {"bar_right", "right_gripper", kAllDirections}}),
        20, 14);
  }
  SECTION("random arms holding a random free object, each arm's leaf welded to one of its frames") {
    int checked = 0;
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      RandomTreeOptions o;
      o.bodies = 7 + static_cast<int>(seed % 3);
      o.branching = 0.0;  // chains: each arm ends in its leaf, six or more joints deep
      RandomTreeOptions object;
      object.bodies = 1 + static_cast<int>(seed % 2);
      object.floating = true;
      Robot object_tree = random_tree(200 + seed, object);
      for (Body& b : object_tree.bodies) b.name = "object_" + b.name;
      for (Frame& f : object_tree.frames) f.name = "object_" + f.name;
      const int arms = 2 + static_cast<int>(seed % 2);
      Robot robot = with_object(random_arms(300 + seed, arms, o), object_tree);
      std::vector<Weld> welds;  // arm i's leaf to one of the object's frames (a frame may take several)
      for (int i = 1; i <= arms; ++i)
        welds.emplace_back(fmt::format("a{}_b0", i),
                           object_tree.frames[static_cast<std::size_t>(i - 1) % object_tree.frames.size()].name,
                           seed % 2 ? kAllDirections : kTranslations);
      const std::vector<int> tips = join(robot, welds);
      std::mt19937_64 rng(seed);
      if (!independent(robot, tips, rng)) continue;
      check_welds(robot, tips, 5, seed);
      ++checked;
    }
    CHECK(checked >= 4);
  }
  SECTION("random trees with one to four welds between random frames, random directions") {
    int checked = 0;
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
      RandomTreeOptions o;
      o.bodies = 16 + static_cast<int>(seed % 7);
      o.floating = seed % 2 == 0;
      o.branching = 0.35;
      const Robot tree = random_tree(100 + seed, o);
      std::mt19937_64 rng(seed);
      // Pairs of frames on different bodies, a frame held once; a partner may be held
      // itself (chains of welds), one weld in five is with the world. A candidate is kept
      // when the welds stay independent.
      const int count = 1 + static_cast<int>(seed % 4);
      std::vector<Weld> welds;
      for (int tries = 0; tries < 200 && static_cast<int>(welds.size()) < count; ++tries) {
        const Frame& a = tree.frames[rng() % tree.frames.size()];
        const Frame& b = tree.frames[rng() % tree.frames.size()];
        bool taken = a.body == b.body;
        for (const Weld& w : welds) taken = taken || std::get<0>(w) == a.name;
        if (taken) continue;
        const bool to_world = rng() % 5 == 0;
        const Directions dirs = seed % 3 == 0 ? static_cast<Directions>(1 + rng() % kAllDirections) : kAllDirections;
        welds.emplace_back(a.name, to_world ? "" : b.name, dirs);
        Robot trial = tree;
        if (!independent(trial, join(trial, welds), rng)) welds.pop_back();
      }
      int relative = 0;
      for (const Weld& w : welds) relative += std::get<1>(w).empty() ? 0 : 1;
      if (relative == 0) continue;
      Robot held = tree;
      check_welds(held, join(held, welds), 5, seed);
      ++checked;
    }
    CHECK(checked >= 12);
  }
}

TEST_CASE("frames welded to each other do not accelerate relative to each other", "[constraints]") {
  // Baxter's grippers joined: from a state where their relative twist is zero, it stays zero
  // (its derivative along the motion vanishes) while each gripper accelerates.
  Robot baxter = load_urdf(test::shared_robot_path("baxter.urdf"));
  const std::vector<int> tips = join(baxter, {{"left_gripper", "right_gripper", kAllDirections}});
  const exec::RobotConstants<double> constants = exec::make_constants(baxter, tips);
  std::mt19937_64 rng(17);
  for (int i = 0; i < 10; ++i) {
    State s = random_state(baxter, static_cast<int>(tips.size()), rng);
    const MatX J = constraint_jacobian(baxter, s, tips);
    s.qd -= J.transpose() * (J * J.transpose()).ldlt().solve(J * s.qd);
    REQUIRE(relative_twist(baxter, s.q, s.qd, tips[0], tips[1]).norm() < 1e-12);
    const VecX T = VecX::Constant(baxter.nv, 3.0);
    const VecX qdd = run("constrained_forward_dynamics", constants, s, T);
    const double h = 1e-5;
    const auto relative = [&](double t) {
      return relative_twist(baxter, s.q + t * s.qd + 0.5 * t * t * qdd, s.qd + t * qdd, tips[0], tips[1]);
    };
    const auto own = [&](double t) {
      return tip_twists(baxter, s.q + t * s.qd + 0.5 * t * t * qdd, s.qd + t * qdd, tips);
    };
    const VecX acceleration = (relative(h) - relative(-h)) / (2 * h);
    const VecX each = (own(h) - own(-h)) / (2 * h);
    INFO("state " << i << ": relative acceleration " << acceleration.transpose());
    CHECK(acceleration.cwiseAbs().maxCoeff() < 1e-6 * std::max(1.0, qdd.cwiseAbs().maxCoeff()));
    CHECK(each.cwiseAbs().maxCoeff() > 1e-2);  // while the grippers themselves move
  }
}

TEST_CASE("redundant welds are a user error naming the tip frame", "[constraints]") {
  // Both soles and the base link welded: the base's weld repeats what the feet fix.
  const Robot talos = load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true});
  const std::vector<int> tips = frames(talos, {"left_sole_link", "right_sole_link", "base_link", "torso_1_link"});
  const exec::RobotConstants<double> constants = exec::make_constants(talos, tips);
  std::mt19937_64 rng(3);
  const State s = random_state(talos, static_cast<int>(tips.size()), rng);
  CHECK_THROWS_WITH(run("constraint_forces", constants, s, VecX::Zero(talos.nv)),
                    Catch::Contains("singular at tip frame") && Catch::Contains("redundant"));
}

TEST_CASE("a held direction that repeats others is named in the error", "[constraints]") {
  // The left sole's weld fixes its body, leg_left_6_link: holding that body's frame in z as
  // well repeats it.
  Robot talos = load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true});
  const std::vector<int> tips = hold(talos, {{"left_sole_link", kAllDirections},
                                             {"right_sole_link", kTranslations},
                                             {"leg_left_6_link", *parse_directions("z")}});
  const exec::RobotConstants<double> constants = exec::make_constants(talos, tips);
  std::mt19937_64 rng(3);
  const State s = random_state(talos, static_cast<int>(tips.size()), rng);
  CHECK_THROWS_WITH(
      run("constrained_forward_dynamics", constants, s, VecX::Zero(talos.nv)),
      Catch::Contains("singular at tip frame 'leg_left_6_link' (its direction z depends on the ones before)"));
}

TEST_CASE("the tip-space L D L* divides once per held row", "[constraints]") {
  // Each pivot's reciprocal is taken once and multiplies its column and its substitution:
  // the specialised constrained kernel has 12 divisions more than forward dynamics for two
  // soles welded (12 held rows), not one per entry of L (66 more) -- and the same answers
  // (the saddle-point tests above).
  Robot talos = load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true});
  const std::vector<int> tips = hold(talos, {{"left_sole_link", kAllDirections}, {"right_sole_link", kAllDirections}});
  const exec::RobotConstants<double> constants = exec::make_constants(talos, tips);
  const auto divisions = [&](const exec::SweepProgram& p) {
    return specialise::count_ops(specialise::specialise(p, constants)).div;
  };
  const lower::KernelDecl* fd = nullptr;
  for (const lower::KernelDecl& k : lower::standard_kernels())
    if (k.name == "forward_dynamics") fd = &k;
  REQUIRE(fd != nullptr);
  CHECK(divisions(test::kernel_program(welded("constrained_forward_dynamics"))) ==
        divisions(test::kernel_program(*fd)) + 12);
}

TEST_CASE("the constrained kernel runs the psi K sweep once, for both signs of its residual", "[constraints]") {
  // Its derivation applies (I - H psi K) to T - H phi (...) and, inside the tip solve's
  // right-hand side, to its negation: the specialised code computes the sweep once (the
  // tracer's a - b = -(b - a)), as many operations as one sweep on a plain vector.
  Robot talos = load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true});
  const std::vector<int> tips = hold(talos, {{"left_sole_link", kAllDirections}, {"right_sole_link", kAllDirections}});
  const exec::RobotConstants<double> constants = exec::make_constants(talos, tips);
  const auto sweep_ops = [&](const exec::SweepProgram& p) {
    const specialise::ScalarProgram code = specialise::specialise(p, constants);
    int n = 0;
    for (const specialise::ScalarNode& node : code.nodes)
      if (node.label >= 0 && code.labels[static_cast<std::size_t>(node.label)].ends_with(": psi K")) ++n;
    return n;
  };
  const lower::KernelDecl once{"residual", {"q", "T"}, "(I - H psi K) T", "y", "one psi K sweep"};
  const int one_sweep = sweep_ops(test::kernel_program(once));
  CHECK(one_sweep > 0);
  CHECK(sweep_ops(test::kernel_program(welded("constrained_forward_dynamics"))) == one_sweep);
}

TEST_CASE("ex, the welds' pose errors: the runtime equals world poses, and its rate is the relative twist",
          "[constraints]") {
  const lower::KernelDecl errors{"weld_errors", {"q"}, "ex", "ex", "the welds' pose errors"};
  // Against the dense interpreter (world poses), and the specialised code against the runtime,
  // on random trees with welds between random frames (one in five with the world: 0 there).
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    RandomTreeOptions o;
    o.bodies = 12 + static_cast<int>(seed % 5);
    o.floating = seed % 2 == 0;
    o.branching = 0.35;
    Robot tree = random_tree(700 + seed, o);
    std::mt19937_64 rng(seed);
    std::vector<Weld> welds;
    for (int tries = 0; tries < 100 && welds.size() < 3; ++tries) {
      const Frame& a = tree.frames[rng() % tree.frames.size()];
      const Frame& b = tree.frames[rng() % tree.frames.size()];
      bool taken = a.body == b.body;
      for (const Weld& w : welds) taken = taken || std::get<0>(w) == a.name || std::get<1>(w) == a.name;
      if (!taken) welds.emplace_back(a.name, rng() % 5 == 0 ? "" : b.name, kAllDirections);
    }
    const std::vector<int> tips = join(tree, welds);
    const exec::RobotConstants<double> constants = exec::make_constants(tree, tips);
    const specialise::Kernel code = test::build_kernel(errors, constants);
    for (int i = 0; i < 5; ++i) {
      const State s = random_state(tree, static_cast<int>(tips.size()), rng);
      const interp::Evaluation ev = interp::prepare(tree, s, tips, test::definitions());
      const std::vector<double> in(s.q.data(), s.q.data() + s.q.size());
      const VecX got = exec::run(test::kernel_program(errors), constants, in).col(0);
      const VecX want = interp::eval_dense(ev, test::parse("ex"));
      INFO("seed " << seed << ", state " << i);
      CHECK(want.norm() > 1e-3);
      CHECK(test::relative_difference(got, want) < 1e-12);
      VecX specialised(got.size());
      specialise::evaluate(code.code, in.data(), specialised.data());
      CHECK(test::relative_difference(specialised, got) < 1e-12);
    }
  }
  // The four-bar at q = 0, its coupler's halves coinciding: ex is 0, and along any motion its
  // rate is the halves' relative twist, J_a qd - J_b qd (their frames coincide), all six rows.
  Robot fourbar = load_urdf(test::shared_robot_path("fourbar.urdf"));
  const std::vector<int> tips = join(fourbar, {{"coupler_a_mid", "coupler_b_mid", *parse_directions("x,z,ry")}});
  const exec::RobotConstants<double> constants = exec::make_constants(fourbar, tips);
  const auto ex = [&](const VecX& q) {
    const std::vector<double> in(q.data(), q.data() + q.size());
    return VecX(exec::run(test::kernel_program(errors), constants, in).col(0));
  };
  const VecX q0 = neutral_configuration(fourbar);
  CHECK(ex(q0).norm() < 1e-12);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 5; ++i) {
    const VecX qd = random_state(fourbar, 2, rng).qd;
    const double h = 1e-5;
    const VecX rate = (ex(q0 + h * qd) - ex(q0 - h * qd)) / (2 * h);
    const VecX twists = tip_twists(fourbar, q0, qd, tips);
    INFO("motion " << i);
    CHECK((rate.head<6>() - (twists.head<6>() - twists.tail<6>())).norm() < 1e-8 * std::max(1.0, qd.norm()));
    CHECK(rate.tail<6>().norm() == 0.0);  // the partner's rows
  }
}
