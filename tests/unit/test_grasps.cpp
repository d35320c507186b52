// Compliant grasps (003 Part II's non-rigid grasps, as a force law): a spring and damper
// between two frames, model/robot.hpp Spring. What the generated kernels compute (fg, and
// the dynamics under it) is checked against what does not share their code: fg from the
// frames' world poses in the dense interpreter, the potential the springs store
// (differentiated along q's tangent directions), the power the dampers absorb, and the
// saddle-point reference where welds hold other frames.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "support/error.hpp"
#include "support/pipeline.hpp"

namespace {

using namespace soa;

const lower::KernelDecl& grasped(const std::string& name, bool welded) {
  static const std::vector<lower::KernelDecl> with_welds = lower::grasped_kernels(true),
                                              alone = lower::grasped_kernels(false);
  for (const lower::KernelDecl& k : welded ? with_welds : alone)
    if (k.name == name) return k;
  throw InternalError("no grasped kernel " + name);
}

Robot baxter_with_bar() {
  return with_object(load_urdf(test::shared_robot_path("baxter.urdf")),
                     load_urdf(test::shared_robot_path("bar.urdf"), LoadOptions{true}));
}

// The tips soac makes of `--grasp A=B:...` (model/tips.hpp hold_frames).
std::vector<int> grasp(Robot& robot, const std::vector<std::string>& grasps,
                       const std::vector<std::string>& welds = {}) {
  HoldOptions o;
  o.welds = welds;
  o.grasps = grasps;
  return hold_frames(robot, o);
}

// A frame's world pose from the bodies' phi blocks composed from the root.
struct Pose {
  Eigen::Matrix3d R;
  Eigen::Vector3d o;
};
Pose world(const Robot& robot, const Kinematics& kin, std::size_t tip) {
  Mat6 Phi = kin.tips[tip].phi;
  for (int k = kin.tips[tip].body; k >= 0; k = robot.bodies[k].parent)
    Phi = kin.body[static_cast<std::size_t>(k)].phi * Phi;
  const Eigen::Matrix3d R = Phi.bottomRightCorner<3, 3>();
  const Eigen::Matrix3d ox = Phi.topRightCorner<3, 3>() * R.transpose();
  return {R, Eigen::Vector3d(ox(2, 1), ox(0, 2), ox(1, 0))};
}

// The springs' potential kt |o_a - o_b|^2 / 2 + kr (1 - cos angle(R_b* R_a)) over the grasps.
double potential(const Robot& robot, const VecX& q, const std::vector<int>& tips) {
  State s{q, VecX::Zero(robot.nv), VecX::Zero(robot.nv), VecX::Zero(6 * static_cast<int>(tips.size()))};
  const Kinematics kin = compute_kinematics(robot, s, tips);
  double U = 0;
  for (std::size_t t = 0; t < tips.size(); ++t) {
    const Spring& c = robot.frames[static_cast<std::size_t>(tips[t])].spring;
    if (c.to < 0) continue;
    const auto u = static_cast<std::size_t>(std::find(tips.begin(), tips.end(), c.to) - tips.begin());
    const Pose a = world(robot, kin, t), b = world(robot, kin, u);
    const double cos_angle = ((b.R.transpose() * a.R).trace() - 1) / 2;
    U += c.kt * (a.o - b.o).squaredNorm() / 2 + c.kr * (1 - cos_angle);
  }
  return U;
}

// Runs a kernel through the generic runtime on [q, qd, (T)].
VecX run(const lower::KernelDecl& k, const exec::RobotConstants<double>& constants, const State& s,
         const VecX* T = nullptr) {
  std::vector<double> in(s.q.data(), s.q.data() + s.q.size());
  in.insert(in.end(), s.qd.data(), s.qd.data() + s.qd.size());
  if (T) in.insert(in.end(), T->data(), T->data() + T->size());
  return exec::run(test::kernel_program(k), constants, in).col(0);
}

// fg and the forward dynamics under it: the runtime against the dense interpreter (fg from
// world poses, calM^-1 (T - C - J* fg) formed densely), the specialised code against the
// runtime.
void check_grasps(const Robot& robot, const std::vector<int>& tips, int states, std::uint64_t seed) {
  const exec::RobotConstants<double> constants = exec::make_constants(robot, tips);
  const lower::KernelDecl &forces = grasped("grasp_forces", false), &cfd = grasped("compliant_forward_dynamics", false);
  const specialise::Kernel forces_code = test::build_kernel(forces, constants),
                           cfd_code = test::build_kernel(cfd, constants);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < states; ++i) {
    const State s = random_state(robot, static_cast<int>(tips.size()), rng);
    const interp::Evaluation ev = interp::prepare(robot, s, tips, test::definitions());
    const VecX T = test::random_forces(robot.nv, rng);
    INFO(robot.name << ", state " << i);
    const VecX fg = run(forces, constants, s);
    const VecX fg_dense = interp::eval_dense(ev, test::parse("fg"));
    CHECK(fg.cwiseAbs().maxCoeff() > 1e-3);  // the springs are stretched and moving
    CHECK(test::relative_difference(fg, fg_dense) < 1e-11);
    const VecX qdd = run(cfd, constants, s, &T);
    interp::Evaluation applied = ev;
    applied.kin.T = T;
    const VecX want = interp::eval_dense(applied, test::parse("calM^-1 (T - C - J* fg)"));
    CHECK(test::relative_difference(qdd, want) < 1e-9);
    std::vector<double> in(s.q.data(), s.q.data() + s.q.size());
    in.insert(in.end(), s.qd.data(), s.qd.data() + s.qd.size());
    std::vector<double> got_fg(fg.size());
    specialise::evaluate(forces_code.code, in.data(), got_fg.data());
    CHECK(test::relative_difference(Eigen::Map<VecX>(got_fg.data(), fg.size()), fg) < 1e-12);
    in.insert(in.end(), T.data(), T.data() + T.size());
    std::vector<double> got(static_cast<std::size_t>(robot.nv));
    specialise::evaluate(cfd_code.code, in.data(), got.data());
    CHECK(test::relative_difference(Eigen::Map<VecX>(got.data(), robot.nv), qdd) < 1e-11);
  }
}

// Random compliant grasps between frames of a random tree (a frame grasps once, never a
// frame of its own body).
std::vector<std::string> random_grasps(const Robot& tree, int count, std::mt19937_64& rng) {
  std::vector<std::string> out, used;
  std::uniform_real_distribution<double> k(0.5, 50.0);
  for (int tries = 0; tries < 200 && static_cast<int>(out.size()) < count; ++tries) {
    const Frame& a = tree.frames[rng() % tree.frames.size()];
    const Frame& b = tree.frames[rng() % tree.frames.size()];
    if (a.body == b.body || std::find(used.begin(), used.end(), a.name) != used.end() ||
        std::find(used.begin(), used.end(), b.name) != used.end())
      continue;
    used.push_back(a.name);
    used.push_back(b.name);
    out.push_back(fmt::format("{}={}:{},{},{},{}", a.name, b.name, k(rng), k(rng), k(rng) / 10, k(rng) / 10));
  }
  return out;
}

}  // namespace

TEST_CASE("compliant grasps: fg and the dynamics under it equal the dense interpreter's", "[grasps]") {
  SECTION("baxter holding a bar by springs at both grippers (003 Part II, non-rigid grasps)") {
    Robot baxter = baxter_with_bar();
    const std::vector<int> tips =
        grasp(baxter, {"bar_left=left_gripper:2e4,50,200,1", "bar_right=right_gripper:2e4,50,200,1"});
    CHECK(tips.size() == 4);
    check_grasps(baxter, tips, 20, 1);
  }
  SECTION("random trees with one to three springs between random frames, mixed joints, free-flyers") {
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      RandomTreeOptions o;
      o.bodies = 10 + static_cast<int>(seed % 5);
      o.floating = seed % 2 == 0;
      o.branching = 0.35;
      Robot tree = random_tree(500 + seed, o);
      std::mt19937_64 rng(seed);
      const std::vector<std::string> grasps = random_grasps(tree, 1 + static_cast<int>(seed % 3), rng);
      REQUIRE(!grasps.empty());
      check_grasps(tree, grasp(tree, grasps), 5, seed);
    }
  }
}

TEST_CASE("a spring's force is the gradient of its potential, a damper's absorbs power", "[grasps]") {
  // T = calM qdd + C + J* f0 with f0 what the tips exert: J* fg at rest is dU/dq (the springs
  // pull the tips back), checked by central differences along q's tangent directions.
  Robot baxter = baxter_with_bar();
  const std::vector<int> tips =
      grasp(baxter, {"bar_left=left_gripper:2e4,50,0,0", "bar_right=right_gripper:3e3,20,0,0"});
  const exec::RobotConstants<double> constants = exec::make_constants(baxter, tips);
  const lower::KernelDecl& forces = grasped("grasp_forces", false);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 5; ++i) {
    State s = random_state(baxter, static_cast<int>(tips.size()), rng);
    s.qd.setZero();
    const interp::Evaluation ev = interp::prepare(baxter, s, tips, test::definitions());
    const VecX generalised = interp::eval_dense(ev, test::parse("J*")) * run(forces, constants, s);
    VecX gradient(baxter.nv);
    const double h = 1e-6;
    for (int d = 0; d < baxter.nv; ++d)
      gradient[d] = (potential(baxter, moved_configuration(baxter, s.q, d, h), tips) -
                     potential(baxter, moved_configuration(baxter, s.q, d, -h), tips)) /
                    (2 * h);
    INFO("state " << i);
    CHECK(gradient.norm() > 1.0);
    CHECK(test::relative_difference(generalised, gradient) < 1e-6);
  }
  // Dampers alone: the power the tips deliver to them, qd . J* fg, is dt |v|^2 + dr |w|^2 of
  // each grasp's relative twist, never negative.
  Robot damped = baxter_with_bar();
  const std::vector<int> damped_tips = grasp(damped, {"bar_left=left_gripper:0,0,200,1"});
  const exec::RobotConstants<double> damped_constants = exec::make_constants(damped, damped_tips);
  for (int i = 0; i < 5; ++i) {
    const State s = random_state(damped, static_cast<int>(damped_tips.size()), rng);
    const interp::Evaluation ev = interp::prepare(damped, s, damped_tips, test::definitions());
    const VecX twists = interp::eval_dense(ev, test::parse("J qd"));
    const VecX fg = run(forces, damped_constants, s);
    // The relative twist at bar_left, from fg itself: [dr w; dt v] = fg at tip 0.
    const Eigen::Vector3d w = fg.segment<3>(0) / 1.0, v = fg.segment<3>(3) / 200.0;
    const double power = s.qd.dot(interp::eval_dense(ev, test::parse("J*")) * fg);
    INFO("state " << i);
    CHECK(twists.norm() > 0.1);
    CHECK(power > 0);
    CHECK(std::abs(power - (200.0 * v.squaredNorm() + 1.0 * w.squaredNorm())) < 1e-9 * std::max(1.0, power));
  }
}

TEST_CASE("springs and welds together: constrained dynamics under fg equal the dense saddle point", "[grasps]") {
  // Baxter's left gripper welded to the world, the bar held by springs at both grippers.
  Robot baxter = baxter_with_bar();
  const std::vector<int> tips =
      grasp(baxter, {"bar_left=left_gripper:2e4,50,200,1", "bar_right=right_gripper:2e4,50,200,1"}, {"left_gripper"});
  const exec::RobotConstants<double> constants = exec::make_constants(baxter, tips);
  const lower::KernelDecl& cfd = grasped("constrained_forward_dynamics", true);
  REQUIRE(cfd.expression.find("J* fg") != std::string::npos);
  const specialise::Kernel code = test::build_kernel(cfd, constants);
  std::mt19937_64 rng(9);
  for (int i = 0; i < 10; ++i) {
    const State s = random_state(baxter, static_cast<int>(tips.size()), rng);
    const interp::Evaluation ev = interp::prepare(baxter, s, tips, test::definitions());
    VecX T = VecX::Random(baxter.nv) * 10.0;
    // The saddle point with the springs' forces among the applied ones: T - J* fg.
    const VecX applied = T - interp::eval_dense(ev, test::parse("J* fg"));
    const VecX Jdot_qd = interp::eval_dense(ev, test::parse("B* phi* abar"));
    const interp::SaddlePoint ref = interp::saddle_point(ev, applied, Jdot_qd);
    const VecX qdd = run(cfd, constants, s, &T);
    INFO("state " << i);
    CHECK(test::relative_difference(qdd, ref.qdd) < 1e-9);
    std::vector<double> in(s.q.data(), s.q.data() + s.q.size());
    in.insert(in.end(), s.qd.data(), s.qd.data() + s.qd.size());
    in.insert(in.end(), T.data(), T.data() + T.size());
    std::vector<double> got(static_cast<std::size_t>(baxter.nv));
    specialise::evaluate(code.code, in.data(), got.data());
    CHECK(test::relative_difference(Eigen::Map<VecX>(got.data(), baxter.nv), qdd) < 1e-11);
  }
}

TEST_CASE("bad grasps are user errors naming the grasp", "[grasps]") {
  const auto error = [](const std::vector<std::string>& grasps, const std::vector<std::string>& welds = {}) {
    Robot baxter = baxter_with_bar();
    try {
      grasp(baxter, grasps, welds);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error({"bar_left=bar_left:1,1,1,1"}),
             Catch::Contains("--grasp 'bar_left=bar_left:1,1,1,1'") && Catch::Contains("cannot grasp itself"));
  CHECK_THAT(error({"nowhere=left_gripper:1,1,1,1"}), Catch::Contains("'nowhere'"));
  CHECK_THAT(error({"bar_left=nowhere:1,1,1,1"}), Catch::Contains("no link or frame 'nowhere'"));
  CHECK_THAT(error({"bar_left=left_gripper:1,1,1"}), Catch::Contains("expected 4 numbers"));
  CHECK_THAT(error({"bar_left=left_gripper:1,-1,1,1"}), Catch::Contains("not negative"));
  CHECK_THAT(error({"bar_left=left_gripper:1,x,1,1"}), Catch::Contains("'x' is not a number"));
  CHECK_THAT(error({"bar_left=left_gripper:0,0,0,0"}), Catch::Contains("holds nothing"));
  CHECK_THAT(error({"bar_left:1,1,1,1"}), Catch::Contains("expected FRAME=OTHER:KT,KR,DT,DR"));
  CHECK_THAT(error({"bar_left=bar_right:1,1,1,1"}), Catch::Contains("on one body"));
  CHECK_THAT(error({"bar_left=left_gripper:1,1,1,1", "bar_left=right_gripper:1,1,1,1"}),
             Catch::Contains("grasped twice"));
  CHECK_THAT(error({"left_gripper=bar_left:1,1,1,1", "bar_left=left_gripper:1,1,1,1"}),
             Catch::Contains("grasps 'bar_left' already"));
  CHECK_THAT(error({"left_gripper=bar_left:1,1,1,1"}, {"left_gripper"}), Catch::Contains("held by a weld"));
}

TEST_CASE("a spring between Baxter's grippers conserves energy under RK4 (no gravity, no damping)", "[grasps]") {
  // A loop closed by a spring instead of a weld: kinetic energy plus the springs' potential
  // is constant along the motion; RK4's error in it falls as the fourth power of the step.
  Robot baxter = load_urdf(test::shared_robot_path("baxter.urdf"));
  baxter.gravity.setZero();
  const std::vector<int> tips = grasp(baxter, {"left_gripper=right_gripper:300,20,0,0"});
  const exec::RobotConstants<double> constants = exec::make_constants(baxter, tips);
  const lower::KernelDecl& cfd = grasped("compliant_forward_dynamics", false);
  const int nv = baxter.nv;
  const auto energy = [&](const VecX& q, const VecX& qd) {
    State s{q, qd, VecX::Zero(nv), VecX::Zero(6 * static_cast<int>(tips.size()))};
    const interp::Evaluation ev = interp::prepare(baxter, s, tips, test::definitions());
    return 0.5 * qd.dot(interp::eval_dense(ev, test::parse("calM")) * qd) + potential(baxter, q, tips);
  };
  const auto accel = [&](const VecX& q, const VecX& qd) {
    State s{q, qd, VecX::Zero(nv), VecX::Zero(6 * static_cast<int>(tips.size()))};
    const VecX T = VecX::Zero(nv);
    return run(cfd, constants, s, &T);
  };
  std::mt19937_64 rng(3);
  const State start = random_state(baxter, static_cast<int>(tips.size()), rng);
  const auto drift = [&](double dt) {
    VecX q = start.q, qd = start.qd;
    const double e0 = energy(q, qd);
    double worst = 0;
    for (int step = 0; step < static_cast<int>(std::lround(0.2 / dt)); ++step) {
      const VecX k1q = qd, k1v = accel(q, qd);
      const VecX k2q = qd + dt / 2 * k1v, k2v = accel(q + dt / 2 * k1q, k2q);
      const VecX k3q = qd + dt / 2 * k2v, k3v = accel(q + dt / 2 * k2q, k3q);
      const VecX k4q = qd + dt * k3v, k4v = accel(q + dt * k3q, k4q);
      q += dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q);
      qd += dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
      worst = std::max(worst, std::abs(energy(q, qd) - e0));
    }
    return std::pair{worst, e0};
  };
  const auto [coarse, e0] = drift(2e-3);
  const auto [fine, e1] = drift(1e-3);
  INFO("energy " << e0 << " J, drift " << coarse << " J at 2 ms, " << fine << " J at 1 ms");
  CHECK(potential(baxter, start.q, tips) > 1.0);  // the spring is stretched
  CHECK(fine < 1e-6 * e0);
  CHECK(coarse / fine > 8);  // fourth order (16), with margin
}
