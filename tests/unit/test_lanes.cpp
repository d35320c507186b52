// Lane groups (compiler/specialise/lanes.hpp): sums of products sharing a factor per term
// are found W at a time, every lane computes exactly its own output's operations in its
// own order (the same bits as the SSA interpreter, in the plan's own evaluation and in
// JIT-compiled code), and what is not such a sum is left alone.
#include <catch2/catch.hpp>

// Built only with the LLVM back-end; without it tests/CMakeLists.txt registers one skipped test.
// The lane statistics of talos_full's kernels are a benchmark: benchmarks/lanes_main.cpp.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>

#include "emit-llvm/emit_llvm.hpp"
#include "emit-llvm/jit.hpp"
#include "specialise/lanes.hpp"
#include "exec/constants.hpp"
#include "pipeline/kernels.hpp"
#include "specialise/specialise.hpp"
#include "support/pipeline.hpp"
#include "support/lane_programs.hpp"
#include "support/scalar_builder.hpp"

namespace {

using namespace soa;
using specialise::ScalarNode;
using specialise::ScalarOp;
using specialise::ScalarProgram;

using Builder = test::ScalarBuilder;
using test::gram_like;
using test::negated_product;
using test::swapped_pairs;

std::vector<double> random_vector(std::mt19937_64& rng, int n) {
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

// Every node's value, as the interpreter has it.
std::vector<double> node_values(const ScalarProgram& p, const std::vector<double>& in) {
  ScalarProgram all = p;
  all.outputs.clear();
  for (std::size_t i = 0; i < p.nodes.size(); ++i) all.outputs.push_back(static_cast<int>(i));
  std::vector<double> v(all.outputs.size());
  specialise::evaluate(all, in.data(), v.data());
  return v;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The plan's invariants, and its lanes evaluated one by one against the interpreter.
void check_plan(const ScalarProgram& p, const specialise::LanePlan& plan, const std::vector<double>& in) {
  const std::vector<double> v = node_values(p, in);
  for (const specialise::LaneGroup& g : plan.groups) {
    const std::array<double, specialise::kMaxLanes> lanes = specialise::evaluate_group(g, v);
    for (int l = 0; l < g.width; ++l) {
      INFO("group at out[" << g.first_output << "], lane " << l);
      CHECK(p.outputs[g.first_output + l] == g.root[l]);
      CHECK(same_bits(lanes[l], v[g.root[l]]));
      CHECK(plan.removed[g.root[l]]);
    }
    for (const specialise::LaneStep& s : g.steps) {  // what the groups read is still computed
      if (s.shared >= 0) CHECK_FALSE(plan.removed[s.shared]);
      for (int l = 0; l < g.width; ++l)
        if (s.lane[l].x >= 0) CHECK_FALSE(plan.removed[s.lane[l].x]);
    }
  }
  // A removed node is used by removed nodes only and is no output but a group's root.
  std::vector<char> root(p.nodes.size(), 0);
  for (const specialise::LaneGroup& g : plan.groups)
    for (int l = 0; l < g.width; ++l) root[g.root[l]] = 1;
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const ScalarNode& n = p.nodes[i];
    if (plan.removed[i]) continue;
    if (specialise::arity(n.op) >= 1) CHECK_FALSE(plan.removed[n.a]);
    if (specialise::arity(n.op) == 2) CHECK_FALSE(plan.removed[n.b]);
  }
  for (int o : p.outputs)
    if (plan.removed[o]) CHECK(root[o]);
}

// JIT-compiled with lane groups, split so that they are used: the interpreter's bits.
void check_jit(const ScalarProgram& p, const std::vector<double>& in, int lanes, int part_ops) {
  jit::Options o;
  o.lanes = lanes;
  o.lane_min_ops = 0;
  o.part_ops = part_ops;
  o.threads = 1;
  const jit::Kernels k = jit::compile({{"gram", p}}, o);
  std::vector<double> got(p.outputs.size(), -1.0), expected(p.outputs.size());
  k.lookup("gram")(in.data(), got.data());
  specialise::evaluate(p, in.data(), expected.data());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("out[" << i << "] = " << got[i] << ", interpreter " << expected[i]);
    CHECK(same_bits(got[i], expected[i]));
  }
}

// The columns' invariants, and each column evaluated against the interpreter.
void check_columns(const ScalarProgram& p, const specialise::LanePlan& plan, const specialise::LaneColumns& cols,
                   const std::vector<double>& in) {
  const std::vector<double> v = node_values(p, in);
  std::set<int> outputs;
  for (std::size_t c = 0; c < cols.columns.size(); ++c) {
    const specialise::LaneColumn& col = cols.columns[c];
    const std::vector<double> rows = specialise::evaluate_column(cols, static_cast<int>(c), v);
    for (int r = 0; r < cols.rows; ++r) {
      INFO("column at out[" << col.first_output << "], row " << r);
      CHECK(outputs.insert(col.first_output + r).second);
      CHECK(same_bits(rows[r], v[p.outputs[col.first_output + r]]));
    }
    for (int k : col.vector) CHECK_FALSE(cols.vectors[k].at(0).negated);  // row 0 carries the step's sign
  }
  // The columns take whole groups of the plan; `rest` holds the others.
  int all = 0, rest = 0;
  for (const specialise::LaneGroup& g : plan.groups) all += g.width;
  for (int g : cols.rest) rest += plan.groups.at(g).width;
  CHECK(rest + static_cast<int>(outputs.size()) == all);
}

}  // namespace

TEST_CASE("a Gram matrix's entries are computed W at a time, each lane as its own output", "[lanes]") {
  std::mt19937_64 rng(11);
  int groups = 0, four = 0, masked = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const ScalarProgram p = gram_like(rng, 9, 7);
    const std::vector<double> in = random_vector(rng, p.input_count);
    const specialise::LanePlan plan = specialise::plan_lanes(p, 4);
    check_plan(p, plan, in);
    groups += static_cast<int>(plan.groups.size());
    for (const specialise::LaneGroup& g : plan.groups) {
      four += g.width == 4;
      for (const specialise::LaneStep& s : g.steps)
        for (int l = 0; l < g.width; ++l) masked += s.lane[l].x == specialise::kAbsent;
    }
    if (trial < 6) check_jit(p, in, trial % 2 ? 4 : 2, 1 + 37 * trial);
  }
  // The property above would hold of an empty plan: the groups are there, wide ones
  // among them, and lanes without a term at some steps (blended).
  // ...and the LLVM back-end computes them as vectors, in lane parts after the scalar ones.
  std::mt19937_64 again(11);
  llvm::LLVMContext context;
  emit::LlvmOptions split;
  split.part_ops = 50;
  split.lanes = 4;
  const std::string ir =
      emit::to_text(*emit::emit_llvm_module(context, "m", {{"gram", gram_like(again, 9, 7)}}, split));
  CHECK(ir.find("fmul <4 x double>") != std::string::npos);
  split.lanes = 0;
  const std::string scalar =
      emit::to_text(*emit::emit_llvm_module(context, "m", {{"gram", gram_like(again, 9, 7)}}, split));
  CHECK(scalar.find("<4 x double>") == std::string::npos);
  INFO(groups << " groups, " << four << " of them 4 wide, " << masked << " absent lane terms");
  CHECK(groups > 40);
  CHECK(four > 20);
  CHECK(masked > 50);
}

TEST_CASE("negated sums of products, -(X S), are computed W at a time and negated at the end", "[lanes]") {
  std::mt19937_64 rng(7);
  int negated = 0;
  for (int trial = 0; trial < 6; ++trial) {
    const ScalarProgram p = negated_product(rng, 9, 6, 5);
    const std::vector<double> in = random_vector(rng, p.input_count);
    const specialise::LanePlan plan = specialise::plan_lanes(p, 4);
    check_plan(p, plan, in);
    for (const specialise::LaneGroup& g : plan.groups) negated += g.negate;
    check_jit(p, in, 4, 1 + 13 * trial);
  }
  CHECK(negated > 20);
  SECTION("a negation of a chain something else reads, or a group of negated and plain roots, is not a group") {
    Builder b(8);
    std::vector<int> in, chains, roots;
    for (int i = 0; i < 8; ++i) in.push_back(b.in(i));
    for (int l = 0; l < 4; ++l) {
      const int t1 = b.add(ScalarOp::Mul, in[l], in[4]), t2 = b.add(ScalarOp::Mul, in[l + 1], in[5]);
      const int t3 = b.add(ScalarOp::Mul, in[l + 2], in[6]);
      chains.push_back(b.add(ScalarOp::Sub, b.add(ScalarOp::Add, t1, t2), t3));
      roots.push_back(l == 2 ? chains.back() : b.add(ScalarOp::Neg, chains.back()));
    }
    const int user = b.add(ScalarOp::Mul, chains[1], in[7]);
    b.p.outputs = {roots[0], roots[1], roots[2], roots[3], user};
    const specialise::LanePlan plan = specialise::plan_lanes(b.p, 4);
    for (const specialise::LaneGroup& g : plan.groups)
      for (int l = 0; l < g.width; ++l) {
        CHECK(g.root[l] != roots[1]);  // its chain is read by `user`
        CHECK(g.negate == (b.p.nodes[g.root[l]].op == ScalarOp::Neg));
      }
  }
}

TEST_CASE("a chain starting a - b may take -b first, as the other lanes take b", "[lanes]") {
  // x_a s_a - x_b s_b is -x_b s_b + x_a s_a to the bit: beside lanes x_b s_b + x_a s_a it
  // starts at -x_b s_b (forward dynamics' derivatives: the tracer's reversed subtraction
  // turns some entries of -calM^-1 d tau round).
  std::mt19937_64 rng(13);
  int negated_first = 0;
  for (int trial = 0; trial < 4; ++trial) {
    const ScalarProgram p = swapped_pairs(rng, 8, 5, 3);
    const std::vector<double> in = random_vector(rng, p.input_count);
    const specialise::LanePlan plan = specialise::plan_lanes(p, 4);
    check_plan(p, plan, in);
    int grouped = 0;
    for (const specialise::LaneGroup& g : plan.groups) {
      grouped += g.width;
      for (const specialise::LaneStep& st : g.steps)
        for (int l = 0; l < g.width; ++l) negated_first += st.lane[l].first && st.lane[l].sub;
    }
    CHECK(grouped == static_cast<int>(p.outputs.size()));  // every entry, in groups of 4
    check_jit(p, in, 4, 1 + 11 * trial);
  }
  CHECK(negated_first > 20);
}

TEST_CASE("lanes that share little are no group: groups stay on their columns' rows", "[lanes]") {
  // Column A's five rows share A's factors, column B's four rows B's. Greedy groups of
  // four take A's rows 0-3; A's row 4 beside B's rows 0-2 would pass the count of terms a
  // step on B's sharing alone and push B's groups off its rows.
  Builder b(9 * 6 + 12);
  std::vector<int> factor;  // A's six, then B's
  for (int k = 0; k < 12; ++k) factor.push_back(b.in(54 + k));
  const auto entry = [&](int row_base, int factor_base) {
    int acc = -1;
    for (int k = 0; k < 6; ++k) {
      const int term = b.add(ScalarOp::Mul, b.in(row_base + k), factor[factor_base + k]);
      acc = acc < 0 ? term : b.add(ScalarOp::Add, acc, term);
    }
    return acc;
  };
  for (int r = 0; r < 5; ++r) b.p.outputs.push_back(entry(6 * r, 0));
  for (int r = 0; r < 4; ++r) b.p.outputs.push_back(entry(6 * (5 + r), 6));
  const specialise::LanePlan plan = specialise::plan_lanes(b.p, 4);
  REQUIRE(plan.groups.size() == 2);
  CHECK(plan.groups[0].first_output == 0);
  CHECK(plan.groups[1].first_output == 5);  // B's rows 0-3
  CHECK(plan.groups[1].width == 4);
  std::mt19937_64 rng(2);
  check_plan(b.p, plan, random_vector(rng, b.p.input_count));
}

TEST_CASE("what is not a sum of shared-factor products stays scalar", "[lanes]") {
  SECTION("a root another node uses") {
    Builder b(8);
    std::vector<int> roots;
    for (int l = 0; l < 4; ++l) {
      const int s = b.in(4);
      roots.push_back(
          b.add(ScalarOp::Add, b.add(ScalarOp::Mul, b.in(l), s), b.add(ScalarOp::Mul, b.in(l + 1), b.in(5))));
    }
    const int user = b.add(ScalarOp::Mul, roots[1], roots[2]);
    b.p.outputs = {roots[0], roots[1], roots[2], roots[3], user};
    const specialise::LanePlan plan = specialise::plan_lanes(b.p, 4);
    for (const specialise::LaneGroup& g : plan.groups)
      for (int l = 0; l < g.width; ++l) CHECK(g.root[l] != roots[1]);
  }
  SECTION("lanes whose terms come in conflicting orders") {
    // (x0 s + x1 t) + x2 u and (y0 u + y1 s) + y2 t: t before u in one, after it in the other
    Builder b(9);
    const int s = b.in(6), t = b.in(7), u = b.in(8);
    const auto product = [&](int x, int f) { return b.add(ScalarOp::Mul, b.in(x), f); };
    const int first = b.add(ScalarOp::Add, b.add(ScalarOp::Add, product(0, s), product(1, t)), product(2, u));
    const int second = b.add(ScalarOp::Add, b.add(ScalarOp::Add, product(3, u), product(4, s)), product(5, t));
    b.p.outputs = {first, second};
    CHECK(specialise::plan_lanes(b.p, 2).groups.empty());
    // ...while x0 s + x1 t and y0 t + y1 s are one group: a + b is b + a
    Builder c(6);
    const int s2 = c.in(4), t2 = c.in(5);
    const auto product2 = [&](int x, int f) { return c.add(ScalarOp::Mul, c.in(x), f); };
    c.p.outputs = {c.add(ScalarOp::Add, c.add(ScalarOp::Add, product2(0, s2), product2(1, t2)), c.lit(1.0)),
                   c.add(ScalarOp::Add, c.add(ScalarOp::Add, product2(2, t2), product2(3, s2)), c.lit(2.0))};
    const specialise::LanePlan plan = specialise::plan_lanes(c.p, 2);
    REQUIRE(plan.groups.size() == 1);
    std::mt19937_64 rng(1);
    check_plan(c.p, plan, random_vector(rng, c.p.input_count));
  }
  SECTION("no lanes asked for") {
    std::mt19937_64 rng(3);
    const ScalarProgram p = gram_like(rng, 6, 5);
    const specialise::LanePlan plan = specialise::plan_lanes(p, 1);
    CHECK(plan.groups.empty());
    for (char r : plan.removed) CHECK_FALSE(r);
  }
}

TEST_CASE("a Gram-form kernel's products are mostly lane work", "[lanes]") {
  // talos_reduced with a free flyer: calM^-1 and Lambda end in their Gram form (lower.hpp).
  const Robot robot = load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true});
  const auto constants = exec::make_constants(robot, robot.default_tips());
  for (const auto& k : lower::standard_kernels()) {
    if (k.name != "mass_matrix_inverse" && k.name != "lambda") continue;
    const ScalarProgram p = specialise::specialise(test::kernel_program(k), constants);
    const specialise::LanePlan plan = specialise::plan_lanes(p, 4);
    int muls = 0, removed_muls = 0;
    for (std::size_t i = 0; i < p.nodes.size(); ++i)
      if (p.nodes[i].op == ScalarOp::Mul) {
        ++muls;
        removed_muls += plan.removed[i];
      }
    INFO(k.name << ": " << removed_muls << " of " << muls << " products in " << plan.groups.size() << " groups, "
                << plan.terms << " terms in " << plan.steps << " steps");
    CHECK(removed_muls > muls / 4);
    CHECK(plan.terms > 3 * plan.steps);
    std::mt19937_64 rng(5);
    check_plan(p, plan, random_vector(rng, p.input_count));
  }
}

TEST_CASE("a product's columns, each row sharing every term's factor, are one product each, to the bit", "[lanes]") {
  // -calM^-1 d tau's shape with rows of their own signs: each column of 12 rows is one
  // column (lanes.hpp), its rows' factors vectors that recur from column to column.
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 4; ++trial) {
    const ScalarProgram p = test::signed_product(rng, 12, 7, 6);
    const specialise::LanePlan plan = specialise::plan_lanes(p, 4);
    const specialise::LaneColumns cols = specialise::lane_columns(plan, p, 8);
    CHECK(cols.rows == 12);
    CHECK(cols.columns.size() == 6);
    CHECK(cols.rest.empty());
    CHECK(cols.vectors.size() <= 7);  // a column of X with its rows' signs, once
    int negated = 0;
    for (const auto& vector : cols.vectors)
      for (const specialise::ColumnFactor& f : vector) negated += f.negated;
    CHECK(negated > 0);
    for (int sample = 0; sample < 3; ++sample) check_columns(p, plan, cols, random_vector(rng, p.input_count));
    CHECK(specialise::lane_columns(plan, p, 13).columns.empty());  // shorter than asked
    CHECK(specialise::lane_columns(plan, p, 0).columns.empty());   // never
  }
  // Columns of 14 rows: groups of four leave two rows, which a plan told the column height
  // takes as a group of their own, so the columns are whole (written out otherwise).
  {
    const ScalarProgram p = test::signed_product(rng, 14, 7, 6);
    const specialise::LanePlan whole = specialise::plan_lanes(p, 4, false, 14);
    const specialise::LaneColumns cols = specialise::lane_columns(whole, p, 8);
    CHECK(cols.rows == 14);
    CHECK(cols.columns.size() == 6);
    check_columns(p, whole, cols, random_vector(rng, p.input_count));
    CHECK(specialise::lane_columns(specialise::plan_lanes(p, 4, false), p, 8).rows == 12);
  }
  // A factor twice in each row's chain (two of d tau's entries one value): its first and
  // its second use are two steps, and the columns stay whole.
  for (int trial = 0; trial < 4; ++trial) {
    const ScalarProgram p = test::signed_product(rng, 12, 7, 6, true);
    const specialise::LanePlan plan = specialise::plan_lanes(p, 4);
    const auto products = std::count_if(p.nodes.begin(), p.nodes.end(), [](const specialise::ScalarNode& n) {
      return n.op == specialise::ScalarOp::Mul;
    });
    CHECK(plan.terms == products);  // every term in a group
    const specialise::LaneColumns cols = specialise::lane_columns(plan, p, 8);
    CHECK(cols.rows == 12);
    CHECK(cols.columns.size() == 6);
    check_plan(p, plan, random_vector(rng, p.input_count));
    check_columns(p, plan, cols, random_vector(rng, p.input_count));
  }
  // A Gram matrix's entries are stored twice (both triangles): no column.
  const ScalarProgram gram = test::gram_like(rng, 12, 7);
  CHECK(specialise::lane_columns(specialise::plan_lanes(gram, 4), gram, 2).columns.empty());
}

TEST_CASE("forward dynamics' derivatives end in -calM^-1 d tau, whose entries are lane work", "[lanes]") {
  // The pipeline writes each entry of the product as a chain the planner takes (with the
  // signs of d tau's negated entries inside it): folding must not turn them inside out.
  const Robot robot = load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true});
  std::vector<pipeline::KernelSpec> specs;
  for (const pipeline::KernelSpec& k : pipeline::kernel_set("", false, true))
    if (k.name == "forward_dynamics_derivatives") specs.push_back(k);
  REQUIRE(specs.size() == 1);
  const pipeline::RobotKernels kernels =
      pipeline::compile_for_robot(specs, pipeline::load_library(), robot, robot.default_tips());
  const ScalarProgram& p = kernels.code.at(0).code;
  const specialise::LanePlan plan = specialise::plan_lanes(p, 4);
  int computed = 0, grouped = 0;
  for (int o : p.outputs) computed += specialise::arity(p.nodes[o].op) > 0;
  for (const specialise::LaneGroup& g : plan.groups) grouped += g.width;
  INFO(grouped << " of " << computed << " computed entries in " << plan.groups.size() << " groups");
  CHECK(grouped > 95 * computed / 100);
  std::mt19937_64 rng(3);
  const std::vector<double> in = random_vector(rng, p.input_count);
  check_plan(p, plan, in);
  // Each column's 36 rows in groups of four are one product, with calM^-1's columns (and
  // their rows' signs) as its vectors: every computed column's (of 76, the free-flyer's
  // translations give zeros).
  const specialise::LaneColumns cols = specialise::lane_columns(plan, p, 8);
  INFO(cols.columns.size() << " columns of " << cols.rows << " rows, " << cols.vectors.size() << " vectors");
  CHECK(cols.rows >= 36);
  CHECK(cols.columns.size() >= 70);
  CHECK(cols.vectors.size() <= 2 * 38);
  check_columns(p, plan, cols, in);
}
