// The generic runtime (runtime/exec/execute.hpp): a lowered sweep program executed for a
// robot loaded at run time agrees with the dense interpreter (the ground truth) to 1e-10,
// on every shared robot (fixed, and free-flying where the robots' README says so) and on
// random trees with ball, prismatic and free joints.
#include <catch2/catch.hpp>

#include <random>

#include "support/pipeline.hpp"

namespace {

using namespace soa;

// Vector- and operator-valued expressions covering every factor kind the lowering knows:
// every vocabulary operator, adjoints, inverses (memoryless, phi/psi, substitution loops),
// pick-offs, and the standard kernels in their rewritten forms.
const std::vector<std::string> kExpressions = {
    "calM qdd + C", "C + H phi M phi* H* qdd", "(I - H psi K)* D^-1 (I - H psi K) (T - C)",
    "(I - H psi K)* D^-1 H psi B f0", "calM", "(I - H psi K)* D^-1 (I - H psi K)", "J",
    "B* psi* H* D^-1 H psi B", "J qd", "phi* H* qd", "alpha", "V", "C", "H phi (M phi* a + b)",
    "E_phi", "phi", "phitilde", "H", "M", "B", "P", "D", "G", "K", "tau", "taubar", "E_psi", "psi",
    "psitilde", "R", "Upsilon", "Omega", "phi*", "psi*", "K*", "H*", "B*", "J*", "E_phi*", "E_psi*",
    "phitilde*", "psitilde*", "tau*", "taubar*", "phi^-1", "psi^-1", "phi*^-1", "psi*^-1", "D^-1",
    "M^-1", "(I - E_phi)^-1", "(I - E_psi)^-1", "(I + H phi K)^-1", "(I + H phi K)*^-1",
    "(2 I + H phitilde K)^-1", "(I - K H)^-1", "(I + phitilde* H* G*)^-1", "B* Omega B",
    "psitilde* Upsilon psitilde a", "K* (I - E_psi*)^-1 a", "2 T - 0.5 calM qdd", "qd - qd",
    "H psi M psi* H*", "phi* H* D^-1 H phi",  // Gram forms with an outward half, spatial columns
};

void check_robot(const Robot& robot, std::uint64_t seed) {
  const std::vector<int> tips = robot.default_tips();
  std::mt19937_64 rng(seed);
  const interp::Evaluation ev = interp::prepare(robot, random_state(robot, static_cast<int>(tips.size()), rng), tips);
  const exec::RobotConstants<double> constants = exec::make_constants(robot, tips);
  for (const std::string& text : kExpressions) {
    INFO(robot.source << ": " << text);
    const ir::Expr e = test::parse(text);
    const exec::SweepProgram p = lower::lower(e);
    const MatX got = exec::run(p, constants, test::program_inputs(p, ev));
    CHECK(test::relative_difference(got, interp::eval_dense(ev, e)) < 1e-10);
  }
}

}  // namespace

TEST_CASE("the generic runtime agrees with the dense interpreter on every shared robot", "[exec]") {
  for (const auto& r : test::shared_robots()) {
    for (bool floating : {false, true}) {
      if (floating && !r.free_flyer) continue;
      check_robot(load_urdf(test::shared_robot_path(r.file), LoadOptions{floating}), 11);
    }
  }
}

TEST_CASE("the generic runtime agrees with the dense interpreter on random trees", "[exec]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    RandomTreeOptions o;
    o.bodies = 2 + static_cast<int>(seed % 8);
    o.floating = seed % 3 == 0;
    o.allow_ball = true;
    o.branching = 0.5;
    check_robot(random_tree(seed, o), seed);
  }
}

TEST_CASE("forward dynamics inverts inverse dynamics through the generic runtime", "[exec]") {
  const Robot robot = random_tree(77, RandomTreeOptions{9, true, true, true, 0.5});
  const std::vector<int> tips = robot.default_tips();
  const auto constants = exec::make_constants(robot, tips);
  const exec::SweepProgram id = lower::lower(test::parse("calM qdd + C"));
  const exec::SweepProgram fd = lower::lower(test::parse("(I - H psi K)* D^-1 (I - H psi K) (T - C)"));
  std::mt19937_64 rng(1);
  const State s = random_state(robot, static_cast<int>(tips.size()), rng);
  std::vector<double> in(s.q.data(), s.q.data() + s.q.size());
  in.insert(in.end(), s.qd.data(), s.qd.data() + s.qd.size());
  std::vector<double> in_fd = in;
  in.insert(in.end(), s.qdd.data(), s.qdd.data() + s.qdd.size());
  const MatX tau = exec::run(id, constants, in);
  in_fd.insert(in_fd.end(), tau.data(), tau.data() + tau.size());
  CHECK(test::relative_difference(exec::run(fd, constants, in_fd), s.qdd) < 1e-10);
}

TEST_CASE("input and output layouts follow the declared order", "[exec]") {
  const Robot robot = random_tree(5, RandomTreeOptions{4, true, true, true, 0.5});
  const exec::SweepProgram p = lower::lower(test::parse("(I - H psi K)* D^-1 H psi B f0"), {"tipf", "dqdd", {"q", "f0"}});
  const exec::Layout l = exec::layout(p, exec::make_constants(robot, robot.leaf_tips()));
  REQUIRE(l.inputs.size() == 2);
  CHECK(l.inputs[0].offset == 0);
  CHECK(l.inputs[0].size == robot.nq);
  CHECK(l.inputs[1].offset == robot.nq);
  CHECK(l.inputs[1].size == 6 * static_cast<int>(robot.leaf_tips().size()));
  CHECK(l.rows == robot.nv);
  CHECK(l.cols == 1);
}
