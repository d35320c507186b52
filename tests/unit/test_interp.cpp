// The reference interpreter's two evaluations agree: dense (every operator as a full block
// matrix) and sweeps (every factor as its O(n) recursion), on every shared robot, fixed
// and free-flying, and on random trees with mixed joints.
#include <catch2/catch.hpp>

#include <random>

#include "algebra/print.hpp"
#include "interp/interpreter.hpp"
#include "support/pipeline.hpp"
#include "support/test_support.hpp"
#include "syntax/syntax.hpp"

namespace {

using namespace soa;

ir::Expr parse(const std::string& text) {
  return syntax::parse_expression(std::make_shared<syntax::Source>(syntax::Source{"<test>", text}));
}

// Every vocabulary operator on its own, and the compound forms the papers sweep.
const std::vector<std::string> kExpressions = {
    "E_phi",
    "phi",
    "phitilde",
    "H",
    "M",
    "B",
    "P",
    "D",
    "G",
    "K",
    "tau",
    "taubar",
    "E_psi",
    "psi",
    "psitilde",
    "R",
    "Upsilon",
    "Omega",
    "J",
    "calM",
    "phi*",
    "psi*",
    "K*",
    "H*",
    "B*",
    "J*",
    "E_phi*",
    "phi^-1",
    "psi^-1",
    "phi*^-1",
    "D^-1",
    "M^-1",
    "calM^-1",
    "(I - E_phi)^-1",
    "(I - E_psi)^-1",
    "(I + H phi K)^-1",
    "(I + H phi K)*^-1",
    "(I - H psi K)* D^-1 (I - H psi K)",
    "(2 I + H phitilde K)^-1",
    "(I - K H)^-1",
    "(I + phitilde* H* G*)^-1",
    "calM qdd + C",
    "calM^-1 (T - C)",
    "phi* H* qd",
    "J qd",
    "H phi (M phi* a + b)",
    "J calM^-1 J*",
    "G* - H",
    "0 + H - 2 G*",
    "B* Omega B",
    "(J calM J* + I)^-1",
};

double relative_difference(const MatX& a, const MatX& b) {
  const double scale = std::max({a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff(), 1.0});
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

void check_agreement(const Robot& robot, std::uint64_t seed) {
  std::vector<int> tips = robot.default_tips();
  std::mt19937_64 rng(seed);
  const interp::Evaluation ev =
      interp::prepare(robot, random_state(robot, static_cast<int>(tips.size()), rng), tips, test::definitions());
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
  const interp::Evaluation ev = interp::prepare(robot, random_state(robot, 1, rng), tips, test::definitions());
  const MatX lhs = interp::eval_dense(ev, parse("T"));
  const MatX rhs = interp::eval_dense(ev, parse("calM qdd + C + J* f0"));
  CHECK(relative_difference(lhs, rhs) < 1e-12);
}

TEST_CASE("an inverse without a recursion is refused by the sweeps, not formed densely", "[interp]") {
  const Robot robot = random_tree(5);
  std::mt19937_64 rng(1);
  const interp::Evaluation ev = interp::prepare(robot, random_state(robot, 0, rng), {}, test::definitions());
  REQUIRE_THROWS_WITH(interp::eval_sweeps(ev, parse("(M + phi M phi*)^-1")),
                      Catch::Matchers::Contains("no sweep form for the inverse"));
}

TEST_CASE("a singular operator cannot be inverted", "[interp]") {
  const Robot robot = random_tree(5);
  std::mt19937_64 rng(1);
  const interp::Evaluation ev = interp::prepare(robot, random_state(robot, 0, rng), {}, test::definitions());
  REQUIRE_THROWS_WITH(interp::eval_dense(ev, parse("taubar^-1")), Catch::Matchers::Contains("singular"));
}

TEST_CASE("a 0 takes the shape its context gives it, square or not", "[interp]") {
  // Found under AddressSanitizer: sweeps sized a 0 by the vector it was applied to, so the
  // 0 of `0 + H` (N x 6n) was 6n long and the sum read past H's N entries.
  const Robot robot = load_urdf(test::shared_robot_path("panda.urdf"));
  const std::vector<int> tips = robot.default_tips();
  std::mt19937_64 rng(2);
  const interp::Evaluation ev =
      interp::prepare(robot, random_state(robot, static_cast<int>(tips.size()), rng), tips, test::definitions());
  const MatX H = interp::eval_dense(ev, parse("H"));
  const MatX calM = interp::eval_dense(ev, parse("calM"));
  const int N = robot.nv;
  const struct {
    const char* text;
    MatX value;
  } cases[] = {
      {"0 + H", H},
      {"H + 0 - 0*", H},
      {"H 0 T", MatX::Zero(N, 1)},        // 0: 6n x N
      {"H (0 + 0*) H* + calM", calM},     // 0 + 0*: 6n x 6n
      {"J* 0 J + 2 calM", 2 * calM},      // 0: 6m x 6m
      {"H phi 0* qd", MatX::Zero(N, 1)},  // 0*: 6n x N
      {"(0 + H) phi M phi* H*", calM},
      // Found by fuzz_eval: an I wrapped in postfix operators in front of a vector.
      {"I^-1* T", interp::eval_dense(ev, parse("T"))},
      {"2 I* H 0 T", MatX::Zero(N, 1)},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    const ir::Expr e = parse(c.text);
    CHECK(relative_difference(interp::eval_dense(ev, e), c.value) < 1e-12);
    CHECK(relative_difference(interp::eval_sweeps(ev, e), c.value) < 1e-12);
  }
  // Found by fuzz_eval: a 0 under ^-1 is a user's mistake, not a shape the evaluator lacks.
  for (const char* text : {"P H* 0^-1", "H (0 + 0* phi)^-1 H*"}) {
    INFO(text);
    CHECK_THROWS_WITH(interp::eval_sweeps(ev, parse(text)), Catch::Matchers::Contains("cannot invert"));
    CHECK_THROWS_WITH(interp::eval_dense(ev, parse(text)), Catch::Matchers::Contains("cannot invert"));
  }
  const int m6 = 6 * static_cast<int>(tips.size());
  const ir::Expr zero_N_by_6m = parse("H 0 J*");  // 0: 6n x N
  CHECK(interp::apply_sweeps(ev, zero_N_by_6m, VecX::Ones(m6)) == VecX::Zero(N));
  CHECK(interp::eval_sweeps(ev, zero_N_by_6m) == MatX::Zero(N, m6));
  CHECK(interp::eval_dense(ev, zero_N_by_6m) == MatX::Zero(N, m6));
}
