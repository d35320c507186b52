// The specialise stage (compiler/specialise): the tracing scalar's rules, and the traced
// straight-line program of every standard kernel evaluated by the SSA interpreter equals
// the generic runtime to 1e-12, with folding removing most of the work.
#include <catch2/catch.hpp>

#include <random>

#include "specialise/specialise.hpp"
#include "support/pipeline.hpp"

namespace {

using namespace soa;
using specialise::ScalarOp;
using specialise::Traced;
using specialise::Tracer;


void check_kernels(const Robot& robot) {
  const std::vector<int> tips = robot.default_tips();
  const auto constants = exec::make_constants(robot, tips);
  std::mt19937_64 rng(21);
  for (const auto& k : lower::standard_kernels()) {
    INFO(robot.source << ": " << k.name);
    const exec::SweepProgram p = test::kernel_program(k);
    const specialise::ScalarProgram sp = specialise::specialise(p, constants);
    const exec::Layout l = exec::layout(p, constants);
    CHECK(sp.input_count == l.input_size);
    CHECK(static_cast<int>(sp.outputs.size()) == l.output_size());
    for (int sample = 0; sample < 4; ++sample) {
      const std::vector<double> in = test::random_input(p, robot, static_cast<int>(tips.size()), rng);
      MatX generic(l.rows, l.cols), traced(l.rows, l.cols);
      exec::execute(p, constants, in.data(), generic.data());
      specialise::evaluate(sp, in.data(), traced.data());
      CHECK(test::relative_difference(traced, generic) < 1e-12);
    }
  }
}

specialise::ScalarProgram kernel_code(const Robot& robot, const std::string& name, const specialise::TraceOptions& o = {}) {
  for (const auto& k : lower::standard_kernels())
    if (k.name == name) return specialise::specialise(test::kernel_program(k), exec::make_constants(robot, robot.default_tips()), o);
  FAIL("no kernel " << name);
  return {};
}

}  // namespace

TEST_CASE("the tracer folds constants and applies the algebraic rules", "[specialise]") {
  Tracer t({});
  const Traced x = t.input(0), y = t.input(1);
  CHECK((x * 0.0).is_literal());
  CHECK((x * 0.0).literal() == 0.0);
  CHECK((x * 1.0).node() == x.node());
  CHECK((x + 0.0).node() == x.node());
  CHECK((0.0 - x).node() == (-x).node());
  CHECK((x - x).is_literal());
  CHECK((-(-x)).node() == x.node());
  CHECK((x * y).node() == (y * x).node());          // CSE with canonical operand order
  CHECK((x + (-y)).node() == (x - y).node());       // negations pushed into sub
  CHECK(((-x) * y).node() == (-(x * y)).node());
  CHECK(((2.0 * (3.0 * x)).node()) == (6.0 * x).node());
  CHECK((Traced(2.0) * Traced(3.0)).literal() == 6.0);
  CHECK(cos(Traced(0.0)).literal() == 1.0);
  const specialise::ScalarProgram p = t.finish({x * y + x, x - x}, 2);
  CHECK(specialise::count_ops(p).total() == 2);  // the dead nodes made above are gone
  double out[2];
  const double in[2] = {3.0, 4.0};
  specialise::evaluate(p, in, out);
  CHECK(out[0] == 15.0);
  CHECK(out[1] == 0.0);
}

TEST_CASE("without folding every operation is recorded", "[specialise]") {
  Tracer t({false, true});
  const Traced x = t.input(0);
  const specialise::ScalarProgram p = t.finish({x * 0.0 + x * 1.0}, 1);
  CHECK(specialise::count_ops(p).total() == 3);
}

TEST_CASE("specialised kernels equal the generic runtime (shared robots)", "[specialise]") {
  for (const char* file : {"double_pendulum.urdf", "panda.urdf", "ur5.urdf", "baxter.urdf"})
    check_kernels(load_urdf(test::shared_robot_path(file)));
  check_kernels(load_urdf(test::shared_robot_path("solo12.urdf"), LoadOptions{true}));
}

TEST_CASE("specialised kernels equal the generic runtime (random trees, ball and free joints)", "[specialise]") {
  for (std::uint64_t seed = 1; seed <= 6; ++seed)
    check_kernels(random_tree(seed, RandomTreeOptions{3 + static_cast<int>(seed), seed % 2 == 0, true, true, 0.5}));
}

TEST_CASE("folding removes the robot's zeros and ones", "[specialise]") {
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  for (const char* name : {"inverse_dynamics", "forward_dynamics", "mass_matrix"}) {
    INFO(name);
    const int folded = specialise::count_ops(kernel_code(panda, name)).total();
    const int plain = specialise::count_ops(kernel_code(panda, name, {false, true})).total();
    CHECK(folded * 2 < plain);
  }
  // One sin and one cos per revolute joint at most (7 on the Panda; joint 1 turns about
  // gravity and drops out of the dynamics entirely).
  const specialise::OpCounts id = specialise::count_ops(kernel_code(panda, "inverse_dynamics"));
  CHECK(id.sin <= 7);
  CHECK(id.cos <= 7);
}

TEST_CASE("specialised programs have no dead code and label every operation", "[specialise]") {
  const specialise::ScalarProgram p = kernel_code(load_urdf(test::shared_robot_path("panda.urdf")), "forward_dynamics");
  std::vector<int> uses(p.nodes.size(), 0);
  for (const auto& n : p.nodes) {
    if (specialise::arity(n.op) >= 1) ++uses[n.a];
    if (specialise::arity(n.op) == 2) ++uses[n.b];
  }
  for (int o : p.outputs) ++uses[o];
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    if (p.nodes[i].op == ScalarOp::Input) continue;
    INFO("node " << i);
    CHECK(uses[i] > 0);
    if (p.nodes[i].op != ScalarOp::Const) {
      REQUIRE(p.nodes[i].label >= 0);
      CHECK(p.labels[p.nodes[i].label].find("panda_") == 0);
    }
  }
}
