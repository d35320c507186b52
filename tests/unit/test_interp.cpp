// The reference interpreter's two evaluations agree: dense (every operator as a full block
// matrix) and sweeps (every factor as its O(n) recursion), on every shared robot, fixed
// and free-flying, and on random trees with mixed joints.
#include <catch2/catch.hpp>

#include <random>

#include "algebra/print.hpp"
#include "interp/interpreter.hpp"
#include "support/test_support.hpp"
#include "syntax/syntax.hpp"

namespace {

using namespace soa;

ir::Expr parse(const std::string& text) {
  return syntax::parse_expression(std::make_shared<syntax::Source>(syntax::Source{"<test>", text}));
}

// Every vocabulary operator on its own, and the compound forms the papers sweep.
const std::vector<std::string> kExpressions = {
    "E_phi", "phi", "phitilde", "H", "M", "B", "P", "D", "G", "K", "tau", "taubar", "E_psi", "psi",
    "psitilde", "R", "Upsilon", "Omega", "J", "calM", "phi*", "psi*", "K*", "H*", "B*", "J*", "E_phi*",
    "phi^-1", "psi^-1", "phi*^-1", "D^-1", "M^-1", "calM^-1", "(I - E_phi)^-1", "(I - E_psi)^-1",
    "(I + H phi K)^-1", "(I + H phi K)*^-1", "(I - H psi K)* D^-1 (I - H psi K)", "(2 I + H phitilde K)^-1",
    "(I - K H)^-1", "(I + phitilde* H* G*)^-1", "calM qdd + C", "calM^-1 (T - C)", "phi* H* qd", "J qd",
    "H phi (M phi* a + b)", "J calM^-1 J*", "G* - H", "0 + H - 2 G*", "B* Omega B", "(J calM J* + I)^-1",
};

double relative_difference(const MatX& a, const MatX& b) {
  const double scale = std::max({a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff(), 1.0});
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

void check_agreement(const Robot& robot, std::uint64_t seed) {
  std::vector<int> tips = robot.default_tips();
  std::mt19937_64 rng(seed);
  const interp::Evaluation ev = interp::prepare(robot, random_state(robot, static_cast<int>(tips.size()), rng), tips);
  for (const auto& text : kExpressions) {
    const ir::Expr e = parse(text);
    INFO(robot.source << ": " << text);
    const double d = relative_difference(interp::eval_dense(ev, e), interp::eval_sweeps(ev, e));
    CHECK(d < 1e-10);
  }
}

}  // namespace

TEST_CASE("dense and sweep evaluation agree on every shared robot", "[interp]") {
  for (const auto& r : test::shared_robots()) {
    for (bool floating : {false, true}) {
      if (floating && !r.free_flyer) continue;
      const Robot robot = load_urdf(test::shared_robot_path(r.file), LoadOptions{floating});
      check_agreement(robot, 7);
    }
  }
}

TEST_CASE("dense and sweep evaluation agree on random trees", "[interp]") {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    RandomTreeOptions o;
    o.bodies = 2 + static_cast<int>(seed % 9);
    o.floating = seed % 3 == 0;
    check_agreement(random_tree(seed, o), seed);
  }
}

TEST_CASE("the RNEA torque T is the operator form calM qdd + C + J* f0", "[interp]") {
  const Robot robot = random_tree(42, RandomTreeOptions{7, true, true, true, 0.5});
  std::vector<int> tips = {*robot.find_frame(robot.bodies[0].name)};
  std::mt19937_64 rng(3);
  const interp::Evaluation ev = interp::prepare(robot, random_state(robot, 1, rng), tips);
  const MatX lhs = interp::eval_dense(ev, parse("T"));
  const MatX rhs = interp::eval_dense(ev, parse("calM qdd + C + J* f0"));
  CHECK(relative_difference(lhs, rhs) < 1e-12);
}

TEST_CASE("an inverse without a recursion is refused by the sweeps, not formed densely", "[interp]") {
  const Robot robot = random_tree(5);
  std::mt19937_64 rng(1);
  const interp::Evaluation ev = interp::prepare(robot, random_state(robot, 0, rng), {});
  REQUIRE_THROWS_WITH(interp::eval_sweeps(ev, parse("(M + phi M phi*)^-1")),
                      Catch::Matchers::Contains("no sweep form for the inverse"));
}

TEST_CASE("a singular operator cannot be inverted", "[interp]") {
  const Robot robot = random_tree(5);
  std::mt19937_64 rng(1);
  const interp::Evaluation ev = interp::prepare(robot, random_state(robot, 0, rng), {});
  REQUIRE_THROWS_WITH(interp::eval_dense(ev, parse("taubar^-1")), Catch::Matchers::Contains("singular"));
}
