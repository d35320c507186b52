// The specialise stage (compiler/specialise): the tracing scalar's rules, and the traced
// straight-line program of every standard kernel evaluated by the SSA interpreter equals
// the generic runtime to 1e-12, with folding removing most of the work; what several
// kernels compute alike is factored out (share.hpp) without changing a bit.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <map>
#include <random>

#include "specialise/chains.hpp"
#include "specialise/partition.hpp"
#include "specialise/print.hpp"
#include "specialise/share.hpp"
#include "specialise/specialise.hpp"
#include "support/error.hpp"
#include "support/pipeline.hpp"
#include "support/scalar_builder.hpp"

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

specialise::ScalarProgram kernel_code(const Robot& robot, const std::string& name,
                                      const specialise::TraceOptions& o = {}) {
  for (const auto& k : lower::standard_kernels())
    if (k.name == name)
      return specialise::specialise(test::kernel_program(k), exec::make_constants(robot, robot.default_tips()), o);
  FAIL("no kernel " << name);
  return {};
}

// Every node's uses (operands and outputs).
std::vector<int> uses_of(const specialise::ScalarProgram& p) {
  std::vector<int> uses(p.nodes.size(), 0);
  for (const auto& n : p.nodes) {
    if (specialise::arity(n.op) >= 1) ++uses[n.a];
    if (specialise::arity(n.op) == 2) ++uses[n.b];
  }
  for (int o : p.outputs) ++uses[o];
  return uses;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::signbit(a[i]) != std::signbit(b[i]) || !(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))))
      return false;
  return true;
}

// The standard kernels of a robot (at its default tips): sweeps and scalar programs.
struct StandardSet {
  std::vector<int> tips;
  std::vector<exec::SweepProgram> sweeps;
  std::vector<specialise::ScalarProgram> code;
  explicit StandardSet(const Robot& robot) : tips(robot.default_tips()) {
    const auto constants = exec::make_constants(robot, tips);
    for (const auto& k : lower::standard_kernels()) {
      sweeps.push_back(test::kernel_program(k));
      code.push_back(specialise::specialise(sweeps.back(), constants));
    }
  }
  specialise::Sharing share(int min_ops) const {
    std::vector<const specialise::ScalarProgram*> programs;
    for (const auto& p : code) programs.push_back(&p);
    return specialise::share(programs, min_ops);
  }
};

// The standard kernels of `robot` factored with share(min_ops): every kernel through its
// shared programs gives the original's bits; returns the sharing for further checks.
specialise::Sharing check_sharing(const Robot& robot, int min_ops) {
  const StandardSet set(robot);
  const std::vector<int>& tips = set.tips;
  const std::vector<specialise::ScalarProgram>& code = set.code;
  const std::vector<exec::SweepProgram>& sweeps = set.sweeps;
  const specialise::Sharing s = set.share(min_ops);
  REQUIRE(s.kernels.size() == code.size());
  std::mt19937_64 rng(5);
  int before = 0, after = 0;
  for (const auto& p : s.programs) {
    after += specialise::count_ops(p.code).total();
    CHECK(p.users.size() >= 2);
    const specialise::OpCounts ops = specialise::count_ops(p.code);
    CHECK(ops.total() + 79 * (ops.sin + ops.cos) >= min_ops);  // a Sin or a Cos weighs 80
    specialise::check(p.code);
  }
  for (std::size_t k = 0; k < code.size(); ++k) {
    INFO(robot.source << ": " << lower::standard_kernels()[k].name);
    const specialise::FactoredKernel& f = s.kernels[k];
    specialise::check(f.code);
    CHECK(f.own_inputs == code[k].input_count);
    before += specialise::count_ops(code[k]).total();
    after += specialise::count_ops(f.code).total();
    const std::vector<int> uses = uses_of(f.code);
    for (std::size_t i = 0; i < uses.size(); ++i) CHECK(uses[i] > 0);  // nothing left dead
    for (int sample = 0; sample < 3; ++sample) {
      const std::vector<double> in = test::random_input(sweeps[k], robot, static_cast<int>(tips.size()), rng);
      std::vector<double> original(code[k].outputs.size()), factored(original.size());
      specialise::evaluate(code[k], in.data(), original.data());
      specialise::evaluate(s, static_cast<int>(k), in.data(), factored.data());
      CHECK(same_bits(factored, original));
    }
  }
  if (!s.programs.empty()) CHECK(after < before);
  return s;
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
  CHECK((x * y).node() == (y * x).node());     // CSE with canonical operand order
  CHECK((x + (-y)).node() == (x - y).node());  // negations pushed into sub
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

TEST_CASE("a subtraction recorded both ways round is one node and its negation", "[specialise]") {
  // The constrained equations run one inward sweep on a residual y and again on -y (written
  // T - x in one factor, x - T in the other): the second sweep must be the first, negated.
  Tracer t({});
  const Traced x = t.input(0), T = t.input(1), g = t.input(2);
  const Traced y = T - x, minus_y = x - T;
  REQUIRE(t.negated(minus_y).has_value());
  CHECK(t.negated(minus_y)->node() == y.node());
  const Traced z = g * y + y, minus_z = g * minus_y + minus_y;  // a sweep step on each sign
  CHECK((z + minus_z).is_literal());                            // z + (-z) = z - z = 0
  const specialise::ScalarProgram p = t.finish({z, minus_z}, 3);
  CHECK(specialise::count_ops(p).total() == 4);  // T - x, g * y, + y, and one negation
  double out[2];
  const double in[3] = {0.5, 2.0, 3.0};
  specialise::evaluate(p, in, out);
  CHECK(out[0] == 6.0);
  CHECK(out[1] == -6.0);
}

TEST_CASE("a kernel set takes the reversed subtraction when it makes the set cheaper, and all its kernels do",
          "[specialise]") {
  // Welded soles: the constrained kernels share a sweep between two signs, the set is cheaper
  // with the rule. The standard set of the same robot only moves negations about with it: it
  // kept the plain form until the Gram way split D^-1 (lower.cpp), and is now 105 operations
  // cheaper with the rule too.
  const Robot talos = load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true});
  const auto total = [](const std::vector<specialise::Kernel>& code) {
    int ops = 0;
    for (const specialise::Kernel& k : code) ops += specialise::count_ops(k.code).total();
    return ops;
  };
  for (const bool welded : {true, false}) {
    const std::vector<int> tips =
        welded ? std::vector<int>{*talos.find_frame("left_sole_link"), *talos.find_frame("right_sole_link")}
               : talos.default_tips();
    const pipeline::RobotKernels set =
        pipeline::compile_for_robot(pipeline::kernel_set("", welded), pipeline::load_library(), talos, tips);
    std::vector<specialise::Kernel> with, without;
    for (const pipeline::LoweredKernel& k : set.lowered) {
      with.push_back(pipeline::specialise_kernel(k, set.constants, {.reversed_sub = true}));
      without.push_back(pipeline::specialise_kernel(k, set.constants, {.reversed_sub = false}));
    }
    INFO((welded ? "welded" : "standard")
         << " set: " << total(with) << " ops with the rule, " << total(without) << " without");
    CHECK(total(set.code) == std::min(total(with), total(without)));
    CHECK(total(with) < total(without));
    const std::vector<specialise::Kernel>& chosen = with;
    for (std::size_t i = 0; i < set.code.size(); ++i)
      CHECK(specialise::count_ops(set.code[i].code).total() == specialise::count_ops(chosen[i].code).total());
  }
}

TEST_CASE("a sum is recorded as written: a subtracted first term is a negation, the chain left-deep", "[specialise]") {
  // Folded, -(x y) + z - y z would become z - (x y + y z)... turned inside out; recorded as
  // written, the back-ends read its terms in order (chains.hpp), the negation a subtracted
  // first term.
  Tracer t({});
  const Traced x = t.input(0), y = t.input(1), z = t.input(2);
  const Traced s = t.sum({{x * y, true}, {0.0, false}, {z, false}, {y * z, true}});
  const specialise::ScalarProgram p = t.finish({s}, 3);
  std::vector<specialise::ChainTerm> terms;
  std::vector<int> links;
  bool pair = false;
  REQUIRE(specialise::linearise(specialise::ChainFacts(p), p.outputs[0], terms, links, pair));
  REQUIRE(terms.size() == 3);
  CHECK(p.nodes[terms[0].node].op == ScalarOp::Mul);
  CHECK(terms[0].sub);
  CHECK(p.nodes[terms[1].node].op == ScalarOp::Input);
  CHECK_FALSE(terms[1].sub);
  CHECK(terms[2].sub);
  CHECK(links.size() == 3);  // the sum, the subtraction and the negation
  double out;
  const double in[3] = {2.0, 3.0, 5.0};
  specialise::evaluate(p, in, &out);
  CHECK(out == -6.0 + 5.0 - 15.0);
  CHECK(t.sum({}).is_literal());
  CHECK(t.sum({{z, false}}).node() == z.node());
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

TEST_CASE("a Gram weight D^-1 is split by D's factors: a free-flyer's block costs a column 36 operations, not 66",
          "[specialise]") {
  // calM^-1 and Lambda weigh each column by D^-1. Split as L_D^-* Delta_D^-1 L_D^-1 (lower.cpp,
  // gram_columns), a column pays a forward substitution and six products at the free-flyer
  // (15 + 15 + 6), where D^-1's full 6 x 6 block is 36 products and 30 sums.
  const Robot talos = load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true});
  for (const char* name : {"mass_matrix_inverse", "lambda"}) {
    INFO(name);
    const specialise::ScalarProgram p = kernel_code(talos, name);
    std::map<std::string, int> per_column;  // "column j" -> operations of D's blocks at the base
    int whole_blocks = 0;
    for (const auto& node : p.nodes) {
      if (specialise::arity(node.op) == 0 || node.label < 0) continue;
      const std::string& label = p.labels[static_cast<std::size_t>(node.label)];
      const std::size_t at = label.find(", base_link: ");
      if (at == std::string::npos) continue;
      const std::string block = label.substr(at + 13);
      if (block.starts_with("L_D^-1") || block == "Delta_D^-1") ++per_column[label.substr(0, at)];
      whole_blocks += block == "D^-1";
    }
    CHECK(whole_blocks == 0);
    CHECK(per_column.size() >= 30);  // calM^-1's 38 columns, Lambda's 5 tips' 30
    for (const auto& [column, ops] : per_column) {
      INFO(column);
      CHECK(ops <= 36);
    }
  }
}

TEST_CASE("specialised programs have no dead code and label every operation", "[specialise]") {
  const specialise::ScalarProgram p = kernel_code(load_urdf(test::shared_robot_path("panda.urdf")), "forward_dynamics");
  const std::vector<int> uses = uses_of(p);
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

TEST_CASE("what several kernels compute alike is shared, and every kernel keeps its bits", "[specialise][share]") {
  // The joints' sines and cosines are what all seven kernels have in common (a Sin or a Cos
  // weighs what soa::sincos costs to compile); the articulated-body Riccati sweep (with the
  // transforms it needs) what forward dynamics, calM^-1, Lambda and the tip-force kernel
  // have in common -- a program reading the first one's outputs.
  const specialise::Sharing talos =
      check_sharing(load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true}), 4000);
  REQUIRE(talos.programs.size() == 2);
  CHECK(talos.programs[0].users == std::vector<int>{0, 1, 2, 3, 4, 5, 6});
  const specialise::OpCounts trig = specialise::count_ops(talos.programs[0].code);
  CHECK(trig.sin == 32);
  CHECK(trig.cos == 32);
  CHECK(talos.programs[1].users == std::vector<int>{2, 3, 5, 6});
  CHECK(specialise::count_ops(talos.programs[1].code).sin == 0);
  CHECK(talos.programs[1].code.input_count > talos.base);  // it reads program 0's outputs
  CHECK(talos.programs[1].offset == static_cast<int>(talos.programs[0].code.outputs.size()));
  const auto riccati = [](const specialise::ScalarProgram& p) {  // operations labelled so
    int n = 0;
    for (const auto& node : p.nodes)
      n += specialise::arity(node.op) > 0 && node.label >= 0 &&
           p.labels[node.label].find("Riccati") != std::string::npos;
    return n;
  };
  CHECK(riccati(talos.programs[1].code) > 1000);
  for (int k = 0; k < 7; ++k) CHECK(specialise::count_ops(talos.kernels[k].code).sin == 0);
  for (int k : {2, 3, 5, 6}) {
    // All of the sweep: forward dynamics, Lambda and the tip-force kernel compute none of it
    // themselves. calM^-1 alone keeps the free-flyer's L_D^-1 applied to its six unit columns
    // (58 operations, labelled Riccati because the sweep's inverse of D traced them first;
    // nothing else reads that inverse now that D^-1 is applied by a solve).
    if (k == 3)
      CHECK(riccati(talos.kernels[k].code) * 90 < riccati(talos.programs[1].code));
    else
      CHECK(riccati(talos.kernels[k].code) == 0);
    REQUIRE(talos.kernels[k].uses.size() == 2);
    CHECK(talos.kernels[k].code.input_count ==
          talos.base + talos.programs[1].offset + static_cast<int>(talos.programs[1].code.outputs.size()));
  }
  CHECK(talos.kernels[0].uses.size() == 1);  // inverse dynamics has no Riccati sweep
  // Smaller thresholds share more, on chains, trees and free-flyers alike.
  check_sharing(load_urdf(test::shared_robot_path("panda.urdf")), 50);
  check_sharing(load_urdf(test::shared_robot_path("anymal_b.urdf"), LoadOptions{true}), 200);
  check_sharing(random_tree(5, RandomTreeOptions{6, true, true, true, 0.5}), 20);
  // Nothing that large in common, or no sharing asked for: the kernels as they were.
  for (int min_ops : {0, 1000000}) {
    const specialise::Sharing none = check_sharing(load_urdf(test::shared_robot_path("panda.urdf")), min_ops);
    CHECK(none.programs.empty());
    for (const auto& k : none.kernels) CHECK(k.uses.empty());
  }
}

TEST_CASE("a shared program's outputs laid out in another order: its readers read them there, to the bit",
          "[specialise][share]") {
  const Robot robot = load_urdf(test::shared_robot_path("panda.urdf"));
  const StandardSet set(robot);
  const specialise::Sharing before = set.share(50);
  REQUIRE(before.programs.size() >= 2);  // a program reading another's outputs is renumbered too
  specialise::Sharing after = before;
  for (std::size_t j = 0; j < after.programs.size(); ++j) {
    std::vector<int> order(after.programs[j].code.outputs.size());
    for (std::size_t o = 0; o < order.size(); ++o) order[o] = static_cast<int>(order.size() - 1 - o);  // reversed
    after = specialise::reorder_outputs(std::move(after), static_cast<int>(j), order);
    CHECK(after.programs[j].code.outputs.front() == before.programs[j].code.outputs.back());
    specialise::check(after.programs[j].code);
  }
  std::mt19937_64 rng(11);
  for (std::size_t k = 0; k < set.code.size(); ++k) {
    INFO(lower::standard_kernels()[k].name);
    specialise::check(after.kernels[k].code);
    const std::vector<double> in = test::random_input(set.sweeps[k], robot, static_cast<int>(set.tips.size()), rng);
    std::vector<double> was(set.code[k].outputs.size()), now(was.size());
    specialise::evaluate(before, static_cast<int>(k), in.data(), was.data());
    specialise::evaluate(after, static_cast<int>(k), in.data(), now.data());
    CHECK(same_bits(now, was));
  }
  // An order that is not a permutation of the outputs is a bug of the caller.
  std::vector<int> twice(before.programs[0].code.outputs.size(), 0);
  CHECK_THROWS_AS(specialise::reorder_outputs(before, 0, twice), InternalError);
  CHECK_THROWS_AS(specialise::reorder_outputs(before, 0, {}), InternalError);
}

TEST_CASE(
    "values are the same when their operation and operands are: inputs by index, literals by bits, + and * commuted",
    "[specialise][share]") {
  using test::ScalarBuilder;
  // Kernel a: ((x0 * x1) + 2) * -0.0;  kernel b: (2 + (x1 * x0)) * +0.0 and (x0 * x1) - x2.
  ScalarBuilder a(2), b(3);
  const int a0 = a.in(0), a1 = a.in(1);
  const int a_sum = a.add(ScalarOp::Add, a.add(ScalarOp::Mul, a0, a1), a.lit(2.0));
  a.p.outputs = {a.add(ScalarOp::Mul, a_sum, a.lit(-0.0)), a_sum};
  const int b1 = b.in(1), b0 = b.in(0);
  const int b_product = b.add(ScalarOp::Mul, b1, b0);
  const int b_sum = b.add(ScalarOp::Add, b.lit(2.0), b_product);
  b.p.outputs = {b.add(ScalarOp::Mul, b_sum, b.lit(0.0)), b.add(ScalarOp::Sub, b_product, b.in(2))};
  const specialise::Sharing s = specialise::share({&a.p, &b.p}, 2);
  REQUIRE(s.programs.size() == 1);
  CHECK(specialise::count_ops(s.programs[0].code).total() ==
        2);  // x0 * x1 and its sum with 2, not the products by -0 and +0
  CHECK(s.programs[0].code.input_count == 2);
  CHECK(specialise::count_ops(s.kernels[0].code).total() == 1);
  CHECK(specialise::count_ops(s.kernels[1].code).total() == 2);
  for (const std::vector<double>& in : std::vector<std::vector<double>>{{1.5, -3.0, 0.25}, {-2.0, 1.0, 7.0}}) {
    for (int k = 0; k < 2; ++k) {
      const specialise::ScalarProgram& p = k == 0 ? a.p : b.p;
      std::vector<double> original(p.outputs.size()), factored(p.outputs.size());
      specialise::evaluate(p, in.data(), original.data());
      specialise::evaluate(s, k, in.data(), factored.data());
      CHECK(same_bits(factored, original));
    }
  }
  // A group below min_ops stays where it is.
  CHECK(specialise::share({&a.p, &b.p}, 3).programs.empty());
}

// u computed by kernels a, b and c; v (6 operations, from u) by a and b; w (4, from u) by b
// and c. u is 3 operations, one of them a Sin (weighing 80) when `trig`.
struct Overlap {
  test::ScalarBuilder a{1}, b{1}, c{1};
  explicit Overlap(bool trig) {
    const auto chain = [](test::ScalarBuilder& k, int from, int length, double step) {
      for (int i = 0; i < length; ++i) from = k.add(ScalarOp::Mul, k.add(ScalarOp::Add, from, k.lit(step + i)), from);
      return from;
    };
    int u[3];
    for (int k = 0; k < 3; ++k) {
      test::ScalarBuilder& p = k == 0 ? a : k == 1 ? b : c;
      const int x = p.in(0);
      const int t = trig ? p.add(ScalarOp::Sin, x) : p.add(ScalarOp::Add, x, p.lit(0.5));
      u[k] = p.add(ScalarOp::Sub, p.add(ScalarOp::Mul, x, p.lit(3.0)), t);
    }
    a.p.outputs = {chain(a, u[0], 3, 1.0)};
    b.p.outputs = {chain(b, u[1], 3, 1.0), chain(b, u[1], 2, 5.0)};
    c.p.outputs = {chain(c, u[2], 2, 5.0)};
  }
  specialise::Sharing share(int min_ops) const {
    const specialise::Sharing s = specialise::share({&a.p, &b.p, &c.p}, min_ops);
    for (double x : {0.5, -1.25, 3.0}) {
      for (int k = 0; k < 3; ++k) {
        const specialise::ScalarProgram& p = k == 0 ? a.p : k == 1 ? b.p : c.p;
        std::vector<double> original(p.outputs.size()), factored(p.outputs.size());
        specialise::evaluate(p, &x, original.data());
        specialise::evaluate(s, k, &x, factored.data());
        CHECK(same_bits(factored, original));
      }
    }
    return s;
  }
};

TEST_CASE("no kernel computes a value twice: of two overlapping groups with a user in common, the larger is shared",
          "[specialise][share]") {
  const specialise::Sharing s = Overlap(false).share(4);  // u alone is too light
  REQUIRE(s.programs.size() == 1);
  CHECK(s.programs[0].users == std::vector<int>{0, 1});
  CHECK(specialise::count_ops(s.programs[0].code).total() == 3 + 6);
  CHECK(s.kernels[2].uses.empty());
  CHECK(specialise::count_ops(s.kernels[2].code).total() == 3 + 4);  // c computes u and w itself
  CHECK(specialise::count_ops(s.kernels[1].code).total() == 4);      // b reads u from the program
}

TEST_CASE("a group shared by a superset of kernels is a program of its own, which the others read: a chain",
          "[specialise][share]") {
  const specialise::Sharing s = Overlap(true).share(4);  // u, with its Sin, is heavy enough
  REQUIRE(s.programs.size() == 3);
  CHECK(s.programs[0].users == std::vector<int>{0, 1, 2});  // u: more users first
  CHECK(specialise::count_ops(s.programs[0].code).total() == 3);
  CHECK(s.programs[0].code.outputs.size() == 1);
  CHECK(s.programs[1].users == std::vector<int>{0, 1});  // v, then w: heavier first
  CHECK(s.programs[2].users == std::vector<int>{1, 2});
  for (int j : {1, 2}) {
    // Each reads u where program 0 writes it, in every caller's array.
    CHECK(specialise::count_ops(s.programs[j].code).total() == (j == 1 ? 6 : 4));
    CHECK(s.programs[j].code.input_count == s.base + s.programs[0].offset + 1);
  }
  CHECK(s.programs[2].offset == s.programs[1].offset + static_cast<int>(s.programs[1].code.outputs.size()));
  CHECK(s.kernels[1].uses.size() == 3);
  CHECK(specialise::count_ops(s.kernels[1].code).total() == 0);  // b: all of it shared
  CHECK(s.kernels[0].uses.size() == 2);
  CHECK(s.kernels[2].uses.size() == 2);
  CHECK(s.kernels[2].uses[1] == 2);
}

TEST_CASE("sharing works for sets of any number of kernels (more than 64)", "[specialise][share]") {
  using test::ScalarBuilder;
  // 70 kernels computing (x0 + 1) * x0 alike, each then its own product with x1 + k.
  std::vector<ScalarBuilder> kernels(70, ScalarBuilder(2));
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    ScalarBuilder& b = kernels[k];
    const int x0 = b.in(0);
    const int common = b.add(ScalarOp::Mul, b.add(ScalarOp::Add, x0, b.lit(1.0)), x0);
    b.p.outputs = {b.add(ScalarOp::Mul, common, b.add(ScalarOp::Add, b.in(1), b.lit(static_cast<double>(k))))};
  }
  std::vector<const specialise::ScalarProgram*> programs;
  for (const ScalarBuilder& b : kernels) programs.push_back(&b.p);
  const specialise::Sharing s = specialise::share(programs, 2);
  REQUIRE(s.programs.size() == 1);
  CHECK(s.programs[0].users.size() == 70);
  CHECK(s.programs[0].users.back() == 69);
  const double in[2] = {0.75, -2.0};
  for (int k : {0, 63, 64, 69}) {
    double original = 0, factored = 0;
    specialise::evaluate(kernels[k].p, in, &original);
    specialise::evaluate(s, k, in, &factored);
    CHECK(factored == original);
    CHECK(specialise::count_ops(s.kernels[k].code).total() == 2);
  }
}

TEST_CASE("a scalar program prints as an SSA listing: names, exact literals, labels once per run",
          "[specialise][print]") {
  using specialise::ScalarOp;
  test::ScalarBuilder b(3);
  const int q = b.in(2);
  const int c = b.lit(0.1);
  const int s = b.add(ScalarOp::Sin, q);
  const int m = b.add(ScalarOp::Mul, s, c);
  const int n = b.add(ScalarOp::Neg, m);
  b.p.labels = {"link1: kinematics", "link1: phi"};
  b.p.nodes[s].label = 0;
  b.p.nodes[m].label = 0;
  b.p.nodes[n].label = 1;
  b.p.outputs = {n, m};
  CHECK(specialise::print(b.p, {{"q[0]", "q[1]", "qd[0]"}, {"tau[0]", "tau[1]"}}) ==
        "  %0 = in[2]  ; qd[0]\n"
        "  %1 = const 0.10000000000000001\n"
        "  ; link1: kinematics\n"
        "  %2 = sin %0\n"
        "  %3 = mul %2, %1\n"
        "  ; link1: phi\n"
        "  %4 = neg %3\n"
        "  out[0] = %4  ; tau[0]\n"
        "  out[1] = %3  ; tau[1]\n");
  // Without names or indent: the bare listing.
  CHECK(specialise::print(b.p, {{}, {}, ""}).starts_with("%0 = in[2]\n%1 = const 0.10000000000000001\n; link1"));
}

TEST_CASE("parts: ranges held together are not cut, and blocks of values take four slots side by side",
          "[specialise][partition]") {
  using test::ScalarBuilder;
  // A chain of 24 additions x_{k+1} = x_k + in_k, each x_k also read at the very end (so
  // every value crosses into the last part).
  ScalarBuilder b(24);
  std::vector<int> x{b.in(0)};
  for (int k = 1; k < 24; ++k) x.push_back(b.add(ScalarOp::Add, x.back(), b.in(k)));
  int sum = x[1];
  for (int k = 2; k < 24; ++k) sum = b.add(ScalarOp::Mul, sum, x[static_cast<std::size_t>(k)]);
  b.p.outputs = {sum};
  specialise::check(b.p);
  // Parts of 5 operations; nodes x[4]..x[9] held together; x[10], x[12], x[14] one block.
  const std::vector<std::pair<int, int>> together{{x[4], x[9] + 1}};
  const std::vector<std::array<int, 4>> blocks{{x[10], x[12], -1, x[14]}};
  const specialise::Partition plan = specialise::partition(b.p, 5, {}, 0, {}, {}, together, blocks);
  for (int k = 5; k <= 9; ++k) CHECK(plan.part[x[static_cast<std::size_t>(k)]] == plan.part[x[4]]);
  CHECK(plan.parts > 3);  // cut elsewhere as before
  const int s = plan.slot[x[10]];
  REQUIRE(s >= 0);
  CHECK(s % 4 == 0);
  CHECK(plan.slot[x[12]] == s + 1);
  CHECK(plan.slot[x[14]] == s + 3);
  // No other value in the block's slots while it is live; every slot within `slots`.
  for (int k = 1; k < 24; ++k) {
    const int slot = plan.slot[x[static_cast<std::size_t>(k)]];
    REQUIRE(slot >= 0);
    CHECK(slot < plan.slots);
    if (k != 10 && k != 12 && k != 14) CHECK((slot < s || slot >= s + 4));
  }
}
