// Closed chains (000 eqs. 5.6-5.11, 003 Part II): tip frames held by the world -- welded
// (all six directions), in point contact (the three translations) or in any declared
// subset of directions.
//
// The kernels (lower::welded_kernels) are checked against what does not share their
// derivation: the saddle-point system of Lagrange multipliers solved densely, with the
// constraint bias from the model's own Newton-Euler recursion run without gravity, and
// the physics itself (the welded frames' velocities, differentiated along the motion).
#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <random>

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

// `robot` with the named frames held in `held` directions (as soac's --weld, --contact):
// the frames are the tips.
std::vector<int> hold(Robot& robot, const std::vector<std::pair<std::string, Directions>>& frames_held) {
  std::vector<int> tips;
  for (const auto& [name, held] : frames_held) {
    tips.push_back(robot.find_frame(name).value());
    robot.frames[static_cast<std::size_t>(tips.back())].held = held;
  }
  return tips;
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
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < states; ++i) {
    const State s = random_state(robot, static_cast<int>(tips.size()), rng);
    const interp::Evaluation ev = interp::prepare(robot, s, tips, test::definitions());
    VecX T(robot.nv);
    for (int j = 0; j < robot.nv; ++j) T[j] = 10.0 * u(rng);
    const interp::SaddlePoint ref = interp::saddle_point(ev, T, tip_bias(robot, s, tips));
    const VecX qdd = run("constrained_forward_dynamics", constants, s, T);
    const VecX f = run("constraint_forces", constants, s, T);
    INFO(robot.name << ", state " << i);
    CHECK(test::relative_difference(qdd, ref.qdd) < 1e-9);
    CHECK(test::relative_difference(f, ref.f) < 1e-9);
    // The specialised programs compute what the runtime does.
    const std::vector<double> in = inputs(s, T);
    std::vector<double> got(static_cast<std::size_t>(robot.nv)), got_f(6 * tips.size());
    specialise::evaluate(cfd.code, in.data(), got.data());
    specialise::evaluate(forces.code, in.data(), got_f.data());
    CHECK(test::relative_difference(Eigen::Map<VecX>(got.data(), robot.nv), qdd) < 1e-12);
    CHECK(test::relative_difference(Eigen::Map<VecX>(got_f.data(), static_cast<int>(got_f.size())), f) < 1e-12);
  }
}

}  // namespace

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
      if (tips.empty()) continue;
      const State s = random_state(tree, static_cast<int>(tips.size()), rng);
      const interp::Evaluation ev = interp::prepare(tree, s, tips, test::definitions());
      const MatX J = interp::eval_dense(ev, test::parse("J"))(interp::held_rows(ev), Eigen::all);
      Eigen::JacobiSVD<MatX> svd(J);
      if (svd.singularValues().minCoeff() < 1e-3 * svd.singularValues().maxCoeff()) continue;  // redundant welds
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
    const interp::Evaluation ev = interp::prepare(baxter, s, tips, test::definitions());
    const MatX J = interp::eval_dense(ev, test::parse("J"))(interp::held_rows(ev), Eigen::all);
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
