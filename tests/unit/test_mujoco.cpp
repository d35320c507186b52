// MuJoCo as an independent oracle for the interpreter (support/mujoco_oracle.hpp): on every
// shared robot, fixed base and (where the README says so) free-flying, inverse dynamics,
// bias, mass matrix and forward dynamics agree with MuJoCo's.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

#include "interp/interpreter.hpp"
#include "support/mujoco_oracle.hpp"
#include "support/pipeline.hpp"
#include "support/test_support.hpp"
#include "syntax/syntax.hpp"

namespace {

using namespace soa;

// The two computations are independent (MuJoCo reads the URDF kinematics itself and works
// in com-based world coordinates; we merge fixed links and work in body frames), so only
// round-off separates them once MuJoCo's inertias are exact (support/mujoco_oracle.hpp):
// T, C and calM agree to about 2e-15 relative on every robot, forward dynamics to 2e-15 as
// a force. 1e-12 leaves room for other compilers and flags and still separates round-off
// from modelling: with MuJoCo's own compiled inertias, every robot with a non-diagonal or
// balanced tensor differs by 3e-14 (double_pendulum) up to 4e-5 (talos_reduced).
constexpr double kTolerance = 1e-12;
constexpr int kStates = 20;

ir::Expr parse(const std::string& text) {
  return syntax::parse_expression(std::make_shared<syntax::Source>(syntax::Source{"<test>", text}));
}

// max |a - b| / max(1, max |a|, max |b|)
double relative_difference(const MatX& a, const MatX& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  if (a.size() == 0) return 0.0;
  const double scale = std::max({a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff(), 1.0});
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

struct Worst {
  double T = 0, T_operator = 0, C = 0, calM = 0;
  double fd_force = 0, fd = 0, fd_raw = 0, fd_gain = 0;  // see forward_dynamics_difference
  double oracle_roundtrip = 0;
};

// The scale of the forces in calM qdd = tau - C, as in the normwise backward error of a
// linear solve: max(1, |tau|, |C|, ||calM|| |qdd|) (infinity norms).
double force_scale(const MatX& calM, const VecX& tau, const VecX& C, const VecX& qdd) {
  const double M_norm = calM.cwiseAbs().rowwise().sum().maxCoeff();
  return std::max({1.0, tau.cwiseAbs().maxCoeff(), C.cwiseAbs().maxCoeff(), M_norm * qdd.cwiseAbs().maxCoeff()});
}

// Two forward-dynamics results qdd = calM^-1 (tau - C). Both are backward stable but
// computed differently (our sweeps vs MuJoCo's sparse LDL^T), so they agree to round-off as
// FORCES: |calM (qdd_a - qdd_b)| / force_scale < 1e-12. The accelerations themselves differ
// by up to that times the gain force_scale / (lambda_min(calM) max(1, |qdd|)): the
// double pendulum (T - C cancels 50-fold at some states) reaches 2e-13 in qdd, talos_full
// (light gripper links, condition number ~1e7) 6e-12, while their forces agree to 1e-14.
// So the qdd check divides by the gain when it exceeds 1; a gain <= 1 keeps the plain 1e-12.
void forward_dynamics_difference(const MatX& calM, const VecX& tau, const VecX& C, const VecX& qdd_a, const VecX& qdd_b,
                                 Worst& w) {
  const double force = force_scale(calM, tau, C, qdd_b);
  w.fd_force = std::max(w.fd_force, (calM * (qdd_a - qdd_b)).cwiseAbs().maxCoeff() / force);
  const double lambda_min = Eigen::SelfAdjointEigenSolver<MatX>(calM, Eigen::EigenvaluesOnly).eigenvalues()[0];
  const double gain = std::max(1.0, force / (lambda_min * std::max(1.0, qdd_b.cwiseAbs().maxCoeff())));
  const double raw = relative_difference(qdd_a, qdd_b);
  w.fd_raw = std::max(w.fd_raw, raw);
  w.fd_gain = std::max(w.fd_gain, gain);
  w.fd = std::max(w.fd, raw / gain);
}

Worst compare_with_mujoco(const test::SharedRobot& r, bool floating) {
  const std::string path = test::shared_robot_path(r.file);
  const Robot robot = load_urdf(path, LoadOptions{floating});
  test::MujocoOracle mujoco(robot, path);
  const ir::Expr T_operator = parse("calM qdd + C");
  const ir::Expr forward = parse("calM^-1 (T - C)");
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  Worst w;
  for (int s = 0; s < kStates; ++s) {
    const State state = random_state(robot, 0, rng);  // no tips: f0 = 0
    interp::Evaluation ev = interp::prepare(robot, state, {}, test::definitions());
    const VecX T = mujoco.inverse_dynamics(state.q, state.qd, state.qdd);
    w.T = std::max(w.T, relative_difference(ev.kin.T, T));
    w.T_operator = std::max(w.T_operator, relative_difference(interp::eval_dense(ev, T_operator), T));
    w.C = std::max(w.C, relative_difference(interp::dense_symbol(ev, ir::symbol("C")), mujoco.bias(state.q, state.qd)));
    const MatX calM = interp::dense_symbol(ev, ir::symbol("calM"));
    w.calM = std::max(w.calM, relative_difference(calM, mujoco.mass_matrix(state.q)));
    // Forward dynamics of our own T (both sides should give back qdd)...
    forward_dynamics_difference(calM, ev.kin.T, ev.kin.C, interp::eval_sweeps(ev, forward),
                                mujoco.forward_dynamics(state.q, state.qd, ev.kin.T), w);
    // ...and of an arbitrary force that no inverse dynamics produced: T is replaced in the
    // evaluation (the symbol T reads Evaluation::kin.T).
    VecX tau(robot.nv);
    for (int i = 0; i < robot.nv; ++i) tau[i] = 10.0 * unit(rng);
    ev.kin.T = tau;
    forward_dynamics_difference(calM, tau, ev.kin.C, interp::eval_sweeps(ev, forward),
                                mujoco.forward_dynamics(state.q, state.qd, tau), w);
    // The oracle's own coordinate changes are consistent: its FD inverts its ID (measured
    // as a force, as above).
    const VecX back = mujoco.forward_dynamics(state.q, state.qd, T);
    w.oracle_roundtrip = std::max(w.oracle_roundtrip, (calM * (back - state.qdd)).cwiseAbs().maxCoeff() /
                                                          force_scale(calM, T, ev.kin.C, state.qdd));
  }
  return w;
}

}  // namespace

TEST_CASE("the interpreter agrees with MuJoCo on every shared robot", "[mujoco]") {
  for (const auto& r : test::shared_robots()) {
    for (bool floating : {false, true}) {
      if (floating && !r.free_flyer) continue;
      const Worst w = compare_with_mujoco(r, floating);
      INFO(r.file << (floating ? " (free-flyer)" : " (fixed base)") << ": T " << w.T << ", calM qdd + C "
                  << w.T_operator << ", C " << w.C << ", calM " << w.calM << ", FD as a force " << w.fd_force
                  << ", FD in qdd " << w.fd_raw << " (gain up to " << w.fd_gain << "; divided by the gain " << w.fd
                  << "), MuJoCo FD(ID) " << w.oracle_roundtrip);
      CHECK(w.T < kTolerance);
      CHECK(w.T_operator < kTolerance);
      CHECK(w.C < kTolerance);
      CHECK(w.calM < kTolerance);
      CHECK(w.fd_force < kTolerance);
      CHECK(w.fd < kTolerance);
      CHECK(w.oracle_roundtrip < kTolerance);
    }
  }
}

TEST_CASE("the MuJoCo oracle refuses a robot that was not loaded from its URDF", "[mujoco]") {
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  REQUIRE_THROWS_WITH(test::MujocoOracle(panda, test::shared_robot_path("ur5.urdf")),
                      Catch::Matchers::Contains("MujocoOracle"));
  // A floating robot gets MuJoCo's free joint too: 6 + 12 velocity coordinates.
  const Robot floating = load_urdf(test::shared_robot_path("solo12.urdf"), LoadOptions{true});
  test::MujocoOracle solo(floating, test::shared_robot_path("solo12.urdf"));
  CHECK(solo.nv() == 18);
}

TEST_CASE("MuJoCo's soft welds and point constraints approach ours as they stiffen", "[mujoco][constraints]") {
  // MuJoCo's equality constraints are soft: solimp's impedance d sets how much of the
  // constraint's force is applied, so the accelerations differ from ideal ones by about
  // 1 - d. Where MuJoCo's constraints hold (its reference pose is qpos0, our neutral
  // configuration; at rest), ours must be the limit: the difference shrinks with 1 - d.
  // A weld "a=b" joins two links (MuJoCo holds their relative pose at qpos0, we their
  // relative twist). A held object (003 Part II) is one more free body in both models, at
  // the world origin at qpos0, welded to both grippers there (a rigid join at a distance).
  struct Scenario {
    std::string file;
    bool floating;
    std::vector<std::string> welds, points;
    std::string object = {};  // tests/data/urdf/
    // The difference's bound in units of 1 - d. A held object's own inertia enters MuJoCo's
    // regularisation of the welds' rows (its diagonal of J M^-1 J*), which at d = 0.99 keeps
    // them looser than the feet's: the box's differences go 0.12, 0.028, 0.0032 (thin bar.urdf,
    // 1000 times lighter about its axis, keeps 11% at MuJoCo's stiffest d = 0.9999).
    double factor = 4.0;
  };
  const Scenario scenario = GENERATE(
      Scenario{"talos_reduced.urdf", true, {"left_sole_link", "right_sole_link"}, {}},
      Scenario{"solo12.urdf", true, {}, {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"}},
      Scenario{"baxter.urdf", false, {"left_gripper=right_gripper"}, {}},
      Scenario{"baxter.urdf", false, {"bar_left=left_gripper", "bar_right=right_gripper"}, {}, "box.urdf", 40.0});
  const std::string path = test::shared_robot_path(scenario.file);
  const std::string object_path =
      scenario.object.empty() ? "" : test::source_path("tests/data/urdf/" + scenario.object);
  Robot robot = load_urdf(path, LoadOptions{scenario.floating});
  if (!object_path.empty()) robot = with_object(robot, load_urdf(object_path, LoadOptions{true}));
  std::vector<int> tips, partners;
  for (const auto& [names, held] :
       {std::pair{scenario.welds, kAllDirections}, std::pair{scenario.points, kTranslations}})
    for (const std::string& name : names) {
      const std::size_t equals = name.find('=');
      tips.push_back(robot.find_frame(name.substr(0, equals)).value());
      Frame& frame = robot.frames[static_cast<std::size_t>(tips.back())];
      frame.held = held;
      if (equals != std::string::npos) {
        frame.held_to = robot.find_frame(name.substr(equals + 1)).value();
        partners.push_back(frame.held_to);
      }
    }
  tips.insert(tips.end(), partners.begin(), partners.end());
  const exec::RobotConstants<double> constants = exec::make_constants(robot, tips);
  const lower::KernelDecl& cfd = lower::welded_kernels().front();
  REQUIRE(cfd.name == "constrained_forward_dynamics");
  const VecX q = neutral_configuration(robot), qd = VecX::Zero(robot.nv);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-5.0, 5.0);
  VecX T(robot.nv);
  for (int j = 0; j < robot.nv; ++j) T[j] = u(rng);
  std::vector<double> in(q.data(), q.data() + q.size());
  in.insert(in.end(), qd.data(), qd.data() + qd.size());
  in.insert(in.end(), T.data(), T.data() + T.size());
  const VecX ours = exec::run(test::kernel_program(cfd), constants, in).col(0);
  double previous = 1e300;
  for (const double impedance : {0.99, 0.999, 0.9999}) {
    test::MujocoOracle mujoco(robot, path, scenario.welds, scenario.points, impedance, object_path);
    const double difference = (mujoco.constrained_forward_dynamics(q, qd, T) - ours).norm() / ours.norm();
    INFO(scenario.file << " " << scenario.object << ", impedance " << impedance << ": relative difference "
                       << difference);
    CHECK(difference < scenario.factor * (1.0 - impedance));
    CHECK(difference < previous);
    previous = difference;
  }
}
TEST_CASE("MuJoCo's model of a robot holding an object has our mass matrix and bias", "[mujoco]") {
  // The object (a free body from its own URDF, model/robot.hpp with_object) is added to
  // MuJoCo's model as a second body tree with a free joint: both models agree before any
  // weld joins them.
  const std::string path = test::shared_robot_path("baxter.urdf"),
                    object = test::source_path("tests/data/urdf/box.urdf");
  const Robot robot = with_object(load_urdf(path), load_urdf(object, LoadOptions{true}));
  test::MujocoOracle mujoco(robot, path, {}, {}, 0.9999, object);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 5; ++i) {
    const State s = random_state(robot, 0, rng);
    const interp::Evaluation ev = interp::prepare(robot, s, {}, test::definitions());
    CHECK(test::relative_difference(mujoco.mass_matrix(s.q), interp::eval_dense(ev, test::parse("calM"))) < 1e-12);
    CHECK(test::relative_difference(mujoco.bias(s.q, s.qd), interp::eval_dense(ev, test::parse("C"))) < 1e-12);
  }
}
