// Step loops (specialise/step_loops.hpp): the steps the O(N^2) kernels repeat column after
// column are found, alike to the operation, and the program reordered so each set of them
// is one contiguous run computes the original's values to the bit; steps that read one
// another, or that would have to run both before and after other code, do not become loops.
#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <fmt/format.h>
#include <random>
#include <tuple>

#include "specialise/dot_table.hpp"
#include "specialise/specialise.hpp"
#include "specialise/step_loops.hpp"
#include "support/pipeline.hpp"
#include "support/scalar_builder.hpp"

namespace {

using namespace soa;
using specialise::ScalarNode;
using specialise::ScalarOp;
using specialise::ScalarProgram;
using specialise::StepLoops;

// The reordered program's outputs, and the dot table's, equal the original's to the bit.
void check_bits(const ScalarProgram& p, const specialise::DotTable& dots, const StepLoops& s, std::mt19937_64& rng) {
  specialise::check(s.program);
  const specialise::DotTable moved = specialise::renumbered(dots, s.new_of);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int sample = 0; sample < 3; ++sample) {
    std::vector<double> in(static_cast<std::size_t>(p.input_count));
    for (double& x : in) x = u(rng);
    std::vector<double> reference(p.outputs.size()), reordered(p.outputs.size());
    specialise::evaluate(p, in.data(), reference.data());
    specialise::evaluate(s.program, in.data(), reordered.data());
    REQUIRE(std::memcmp(reference.data(), reordered.data(), sizeof(double) * reference.size()) == 0);
    if (dots.empty()) continue;
    std::vector<double> a(p.outputs.size(), 0.0), b(p.outputs.size(), 0.0);
    specialise::evaluate(dots, specialise::node_values(p, in.data()), a.data());
    specialise::evaluate(moved, specialise::node_values(s.program, in.data()), b.data());
    REQUIRE(std::memcmp(a.data(), b.data(), sizeof(double) * a.size()) == 0);
  }
}

// Every instance of a loop is instance 0 again: the same operations on the same literals and
// inputs, its own values at the same positions, and no value of another instance (per-body
// loops, `vary`: literals and inputs may differ, and values of an earlier instance are read).
void check_alike(const StepLoops& s, bool vary = false) {
  const ScalarProgram& p = s.program;
  for (const StepLoops::Loop& l : s.loops) {
    REQUIRE(l.instances >= 2);
    const int end = l.first + l.size * l.instances;
    for (int k = 1; k < l.instances; ++k)
      for (int t = 0; t < l.size; ++t) {
        const ScalarNode& n0 = p.nodes[l.first + t];
        const ScalarNode& nk = p.nodes[l.first + k * l.size + t];
        REQUIRE(n0.op == nk.op);
        for (int which = 0; which < specialise::arity(n0.op); ++which) {
          // In the order steps are matched in (a sum's or product's literal last).
          const int x0 = specialise::step_operand(p, n0, which), xk = specialise::step_operand(p, nk, which);
          const int base = l.first + k * l.size;
          const bool inside0 = x0 >= l.first && x0 < l.first + l.size;
          REQUIRE(inside0 == (xk >= base && xk < base + l.size));
          if (inside0) REQUIRE(xk - base == x0 - l.first);
          if (!inside0 && !vary) REQUIRE(!(xk >= l.first && xk < end));           // nothing from another instance
          if (!inside0 && vary && xk >= l.first && xk < end) REQUIRE(xk < base);  // only from an earlier one
          const ScalarNode& c0 = p.nodes[x0];
          if (c0.op == ScalarOp::Const) REQUIRE(p.nodes[xk].op == ScalarOp::Const);
          if (c0.op == ScalarOp::Const && !vary)
            REQUIRE(std::memcmp(&c0.value, &p.nodes[xk].value, sizeof(double)) == 0);
          if (c0.op == ScalarOp::Input) REQUIRE(p.nodes[xk].op == ScalarOp::Input);
          if (c0.op == ScalarOp::Input && !vary) REQUIRE(p.nodes[xk].a == c0.a);
        }
      }
    for (int i = l.first; i < end; ++i) REQUIRE(s.loop_of[i] == &l - s.loops.data());
  }
}

// Loops of two steps or more, of two operations or more, and `loop_lines` lines of their own.
specialise::LoopOptions small(int loop_lines) {
  specialise::LoopOptions o;
  o.min_instances = o.min_size = o.min_ops = 2;
  o.loop_lines = loop_lines;
  return o;
}

}  // namespace

TEST_CASE("the columns' repeated steps of calM, calM^-1, Lambda and J become loops computing the same bits",
          "[step-loops]") {
  std::mt19937_64 rng(17);
  RandomTreeOptions o;
  o.bodies = 30;
  o.floating = true;
  for (const Robot& robot :
       {load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true}), random_tree(7, o)}) {
    const std::vector<int> tips = robot.default_tips();
    const auto constants = exec::make_constants(robot, tips);
    for (const auto& k : lower::standard_kernels()) {
      INFO(robot.source << ": " << k.name);
      const ScalarProgram p = specialise::specialise(test::kernel_program(k), constants);
      const specialise::DotTable dots = specialise::dot_table(p, 50);
      const StepLoops s = specialise::step_loops(p, dots);
      check_alike(s);
      check_bits(p, dots, s, rng);
      int looped = 0, ops = 0;
      for (const StepLoops::Loop& l : s.loops) looped += l.size * l.instances;
      for (std::size_t i = 0; i < p.nodes.size(); ++i)
        ops += specialise::arity(p.nodes[i].op) > 0 && (dots.removed.empty() || !dots.removed[i]);
      INFO(looped << " of " << ops << " operations (besides the dot table's) in loops");
      // Much of a tree's O(N^2) kernels is steps repeated column after column (of the
      // humanoid's shallow mass matrix, less: its limbs are 6 or 7 bodies long).
      if (k.name == "mass_matrix_inverse" || k.name == "lambda" || (k.name == "mass_matrix" && robot.nv > 40))
        CHECK(looped * 5 > ops * 2);
      if (k.name == "mass_matrix") CHECK(!s.loops.empty());
    }
  }
}

TEST_CASE("step loops: steps that read one another, or would close a cycle, stay straight-line", "[step-loops]") {
  using test::ScalarBuilder;
  // Four alike steps x_{k+1} = (x_k * c) + d, each reading the one before: a chain, no loop.
  {
    ScalarBuilder b(2);
    b.p.labels = {"s0", "s1", "s2", "s3"};
    int x = b.in(0);
    const int c = b.in(1);
    for (int k = 0; k < 4; ++k) {
      const int m = b.add(ScalarOp::Mul, x, c);
      x = b.add(ScalarOp::Add, m, b.lit(0.5));
      b.p.nodes[static_cast<std::size_t>(m)].label = k;
      b.p.nodes[static_cast<std::size_t>(x)].label = k;
    }
    b.p.outputs = {x};
    const StepLoops s = specialise::step_loops(b.p, {}, small(0));
    CHECK(s.empty());
  }
  // Independent alike steps y_k = (x_k * c) + 0.5, k = 0..3: one loop of four; the program
  // reordered, its values the same.
  {
    ScalarBuilder b(5);
    b.p.labels = {"s0", "s1", "s2", "s3"};
    const int c = b.in(4);
    const int half = b.lit(0.5);
    for (int k = 0; k < 4; ++k) {
      const int m = b.add(ScalarOp::Mul, b.in(k), c);
      const int y = b.add(ScalarOp::Add, m, half);
      b.p.nodes[static_cast<std::size_t>(m)].label = k;
      b.p.nodes[static_cast<std::size_t>(y)].label = k;
      b.p.outputs.push_back(y);
    }
    // The inputs differ per step: each is a literal part of its step, so no two are alike.
    CHECK(specialise::step_loops(b.p, {}, small(0)).empty());
  }
  {
    // Steps alike on computed values: z_k = in_k * 2 first (outside any step), then
    // y_k = (z_k * c) + 0.5 as step k, each y_k an output and read by e_k = y_k * 3 (outside).
    // One loop of four; the program reordered, its values the same.
    const auto build = [](bool cycle) {
      ScalarBuilder b(5);
      b.p.labels = {"s0", "s1", "s2", "s3"};
      const int c = b.in(4);
      const int half = b.lit(0.5);
      std::vector<int> z(4, -1), y(4, -1);
      const auto step = [&](int k) {
        const int m = b.add(ScalarOp::Mul, z[static_cast<std::size_t>(k)], c);
        y[static_cast<std::size_t>(k)] = b.add(ScalarOp::Add, m, half);
        b.p.nodes[static_cast<std::size_t>(m)].label = k;
        b.p.nodes[static_cast<std::size_t>(y[static_cast<std::size_t>(k)])].label = k;
        b.p.outputs.push_back(y[static_cast<std::size_t>(k)]);
        b.p.outputs.push_back(b.add(ScalarOp::Mul, y[static_cast<std::size_t>(k)], b.lit(3.0)));
      };
      for (int k : {0, 1}) z[static_cast<std::size_t>(k)] = b.add(ScalarOp::Mul, b.in(k), b.lit(2.0));
      step(0);
      step(1);
      // With `cycle`, step 2 starts from step 1's result through a value outside the steps:
      // the set would have to run both before and after that value.
      z[2] = cycle ? b.add(ScalarOp::Mul, y[1], b.lit(2.0)) : b.add(ScalarOp::Mul, b.in(2), b.lit(2.0));
      z[3] = b.add(ScalarOp::Mul, b.in(3), b.lit(2.0));
      step(2);
      step(3);
      return b.p;
    };
    std::mt19937_64 rng(3);
    const ScalarProgram p = build(false);
    const StepLoops s = specialise::step_loops(p, {}, small(0));
    REQUIRE(s.loops.size() == 1);
    CHECK(s.loops[0].instances == 4);
    CHECK(s.loops[0].size == 2);
    check_alike(s);
    check_bits(p, {}, s, rng);
    // Fewer operations than the loop's own lines: no loop.
    CHECK(specialise::step_loops(p, {}, small(12)).empty());

    const ScalarProgram q = build(true);
    const StepLoops cyclic = specialise::step_loops(q, {}, small(0));
    CHECK(cyclic.empty());
    check_bits(q, {}, cyclic, rng);
  }
}

TEST_CASE("per-body loops: steps alike up to their literals and inputs, each reading the one before, run in order",
          "[step-loops]") {
  using test::ScalarBuilder;
  // A sweep x_{k+1} = (x_k * c_k) + in_k, k = 0..5, c_k a literal of its own: exactly alike
  // they are not; as a per-body loop they are one loop of six, in order.
  const auto sweep = [](int group_of_last) {
    ScalarBuilder b(7);
    int x = b.add(ScalarOp::Mul, b.in(6), b.lit(1.5));  // outside any step, as the sweep's start
    for (int k = 0; k < 6; ++k) {
      b.p.labels.push_back(fmt::format("b{}", k));
      const int m = b.add(ScalarOp::Mul, x, b.lit(1.0 + 0.25 * k));
      x = b.add(ScalarOp::Add, m, b.in(k));
      b.p.nodes[static_cast<std::size_t>(m)].label = k;
      b.p.nodes[static_cast<std::size_t>(x)].label = k;
      b.p.outputs.push_back(x);
    }
    specialise::LoopOptions o = small(0);
    o.vary = true;
    o.input_group = {0, 0, 0, 0, 0, group_of_last, 0};
    return std::pair{b.p, o};
  };
  std::mt19937_64 rng(11);
  const auto [p, o] = sweep(0);
  CHECK(specialise::step_loops(p, {}, small(0)).empty());
  const StepLoops s = specialise::step_loops(p, {}, o);
  REQUIRE(s.loops.size() == 1);
  CHECK(s.loops[0].instances == 6);
  check_alike(s, true);
  check_bits(p, {}, s, rng);
  // The last step reads an input of another group (another port): five alike, not six.
  const auto [q, other] = sweep(1);
  const StepLoops t = specialise::step_loops(q, {}, other);
  REQUIRE(t.loops.size() == 1);
  CHECK(t.loops[0].instances == 5);
  check_alike(t, true);
  check_bits(q, {}, t, rng);
}

TEST_CASE("per-body loops of two kinds that need each other by turns are cut into runs", "[step-loops]") {
  using test::ScalarBuilder;
  // A chain whose steps alternate in threes between two kinds (a * in + lit, and a - in *
  // lit): the two sets read each other by turns, a cycle as whole sets; cut into runs of
  // three, each a loop, the program computes the same bits.
  ScalarBuilder b(13);
  int x = b.add(ScalarOp::Mul, b.in(12), b.lit(1.5));
  for (int k = 0; k < 12; ++k) {
    b.p.labels.push_back(fmt::format("b{}", k));
    const bool first_kind = (k / 3) % 2 == 0;
    const int m = first_kind ? b.add(ScalarOp::Mul, x, b.in(k)) : b.add(ScalarOp::Mul, b.in(k), b.lit(0.5 + k));
    x = first_kind ? b.add(ScalarOp::Add, m, b.lit(0.125 * k + 1.0)) : b.add(ScalarOp::Sub, x, m);
    b.p.nodes[static_cast<std::size_t>(m)].label = k;
    b.p.nodes[static_cast<std::size_t>(x)].label = k;
    b.p.outputs.push_back(x);
  }
  specialise::LoopOptions o = small(0);
  o.vary = true;
  const StepLoops s = specialise::step_loops(b.p, {}, o);
  CHECK(s.loops.size() == 4);
  for (const StepLoops::Loop& l : s.loops) CHECK(l.instances == 3);
  check_alike(s, true);
  std::mt19937_64 rng(12);
  check_bits(b.p, {}, s, rng);
}

TEST_CASE("per-body loops on real kernels compute the same bits", "[step-loops]") {
  std::mt19937_64 rng(23);
  RandomTreeOptions to;
  to.bodies = 25;
  to.floating = true;
  const Robot robot = random_tree(5, to);
  const auto constants = exec::make_constants(robot, robot.default_tips());
  specialise::LoopOptions o;
  o.vary = true;
  int looped = 0;
  for (const auto& k : lower::standard_kernels()) {
    INFO(k.name);
    const ScalarProgram p = specialise::specialise(test::kernel_program(k), constants);
    const StepLoops s = specialise::step_loops(p, {}, o);
    check_alike(s, true);
    check_bits(p, {}, s, rng);
    for (const StepLoops::Loop& l : s.loops) looped += l.size * l.instances;
  }
  CHECK(looped > 0);
}

namespace {

// Every pack is 2 to 4 steps alike operation for operation (the same literals and inputs, the
// step's own values at the same positions), none reading another's values, none taking a
// square root, sine or cosine; the values a lane reads from outside its step may differ.
// `vary`: packs of several bodies' steps, whose literals may differ and whose inputs may be
// other entries of one group.
void check_packed(const StepLoops& s, const std::vector<int>& input_group = {}, bool vary = false) {
  const ScalarProgram& p = s.program;
  for (const StepLoops::Loop& l : s.loops) {
    REQUIRE(l.instances >= 2);
    REQUIRE(l.instances <= 4);
    const int end = l.first + l.size * l.instances;
    for (int k = 0; k < l.instances; ++k)
      for (int t = 0; t < l.size; ++t) {
        const ScalarNode& n0 = p.nodes[l.first + t];
        const ScalarNode& nk = p.nodes[l.first + k * l.size + t];
        // Packs of bodies: a sum and a difference alike, as signed sums of the same operands.
        const bool signed_sum = vary && specialise::is_sum(n0);
        REQUIRE((n0.op == nk.op || (signed_sum && specialise::is_sum(nk))));
        REQUIRE(n0.op != ScalarOp::Sqrt);
        REQUIRE(n0.op != ScalarOp::Sin);
        REQUIRE(n0.op != ScalarOp::Cos);
        for (int which = 0; which < specialise::arity(n0.op); ++which) {
          // In the order steps are matched in (a sum's or product's literal last; a signed
          // sum's own values first).
          const auto operand = [&](const ScalarNode& n) {
            return signed_sum ? specialise::signed_sum(p, n).x[which] : specialise::step_operand(p, n, which);
          };
          const int x0 = operand(n0), xk = operand(nk);
          const int base = l.first + k * l.size;
          const bool inside0 = x0 >= l.first && x0 < l.first + l.size;
          REQUIRE(inside0 == (xk >= base && xk < base + l.size));
          if (inside0) REQUIRE(xk - base == x0 - l.first);
          if (!inside0) REQUIRE(!(xk >= l.first && xk < end));
          const ScalarNode& c0 = p.nodes[x0];
          if (c0.op == ScalarOp::Const && p.nodes[xk].op == ScalarOp::Const && !vary)
            REQUIRE(std::memcmp(&c0.value, &p.nodes[xk].value, sizeof(double)) == 0);
          if (c0.op == ScalarOp::Input) REQUIRE(p.nodes[xk].op == ScalarOp::Input);
          if (c0.op == ScalarOp::Input && !vary) REQUIRE(p.nodes[xk].a == c0.a);
          if (c0.op == ScalarOp::Input && vary)
            REQUIRE(input_group[static_cast<std::size_t>(p.nodes[xk].a)] ==
                    input_group[static_cast<std::size_t>(c0.a)]);
        }
      }
  }
}

}  // namespace

TEST_CASE("a literal read first at one body and last at another does not tell alike steps apart", "[step-loops]") {
  using test::ScalarBuilder;
  // Four limbs, a sweep each: x_{k+1} = (x_k * c_k) op_k in_k. The tracer orders a product's
  // operands by index, and a literal the limbs read has the index of the limb that read it
  // first: there it comes last, at the others first (a mirrored limb's step written `c * x`
  // where the first limb's is `x * c`). Side by side, limb to limb, they are packs.
  ScalarBuilder b(16);
  std::vector<int> lits;
  for (int k = 0; k < 3; ++k) lits.push_back(b.lit(1.0 + 0.25 * k));
  for (int limb = 0; limb < 4; ++limb) {
    int x = b.in(12 + limb);
    for (int k = 0; k < 3; ++k) {
      b.p.labels.push_back(fmt::format("limb {}, b{}", limb, k));
      const int label = static_cast<int>(b.p.labels.size()) - 1;
      const int m = limb == 0 ? b.add(ScalarOp::Mul, x, lits[k]) : b.add(ScalarOp::Mul, lits[k], x);
      // Each depth a step of its own kind (+, -, /), as a limb's joints differ.
      x = b.add(k == 0 ? ScalarOp::Add : k == 1 ? ScalarOp::Sub : ScalarOp::Div, m, b.in(4 * limb + k));
      b.p.nodes[static_cast<std::size_t>(m)].label = label;
      b.p.nodes[static_cast<std::size_t>(x)].label = label;
      b.p.outputs.push_back(x);
    }
  }
  specialise::LoopOptions o;
  o.pack = 4;
  o.min_size = 1;
  o.vary = true;  // packs of bodies: each limb reads its own inputs
  const StepLoops s = specialise::step_loops(b.p, {}, o);
  REQUIRE(s.loops.size() == 3);  // b0, b1, b2: the limbs' steps side by side
  for (const StepLoops::Loop& l : s.loops) CHECK(l.instances == 4);
  check_packed(s, std::vector<int>(16, 0), true);
  std::mt19937_64 rng(13);
  check_bits(b.p, {}, s, rng);
}

TEST_CASE("packs of bodies: a sum at one body and a difference at another go side by side as signed sums",
          "[step-loops]") {
  using test::ScalarBuilder;
  // Four limbs' steps m = in_k * c_k, then m + in, m - in, in - m and m + in again: the
  // same step at bodies whose constants' signs the tracer folded into the operation. As
  // packs of bodies they are one pack of four (signed_sum: the step's own value m first,
  // its sign and in's lane by lane); exactly alike they are not.
  ScalarBuilder b(8);
  const std::array<ScalarOp, 4> ops{ScalarOp::Add, ScalarOp::Sub, ScalarOp::Sub, ScalarOp::Add};
  for (int limb = 0; limb < 4; ++limb) {
    b.p.labels.push_back(fmt::format("limb {}", limb));
    const int m = b.add(ScalarOp::Mul, b.in(limb), b.lit(1.0 + 0.25 * limb));
    const int in = b.in(4 + limb);
    const int y = b.add(ops[static_cast<std::size_t>(limb)], limb == 2 ? in : m, limb == 2 ? m : in);
    b.p.nodes[static_cast<std::size_t>(m)].label = limb;
    b.p.nodes[static_cast<std::size_t>(y)].label = limb;
    b.p.outputs.push_back(y);
  }
  specialise::LoopOptions o;
  o.pack = 4;
  o.min_size = 1;
  CHECK(specialise::step_loops(b.p, {}, o).empty());
  o.vary = true;
  const StepLoops s = specialise::step_loops(b.p, {}, o);
  REQUIRE(s.loops.size() == 1);
  CHECK(s.loops[0].instances == 4);
  check_packed(s, std::vector<int>(8, 0), true);
  // Lane by lane: m first, then in, with the signs each limb's operation gives them.
  const std::array<std::array<bool, 2>, 4> minus{{{false, false}, {false, true}, {true, false}, {false, false}}};
  for (int k = 0; k < 4; ++k) {
    const ScalarNode& y = s.program.nodes[static_cast<std::size_t>(s.loops[0].first + k * s.loops[0].size + 1)];
    const specialise::SignedSum sum = specialise::signed_sum(s.program, y);
    CHECK(s.program.nodes[static_cast<std::size_t>(sum.x[0])].op == ScalarOp::Mul);
    CHECK(s.program.nodes[static_cast<std::size_t>(sum.x[1])].op == ScalarOp::Input);
    CHECK(sum.minus[0] == minus[static_cast<std::size_t>(k)][0]);
    CHECK(sum.minus[1] == minus[static_cast<std::size_t>(k)][1]);
  }
  std::mt19937_64 rng(17);
  check_bits(b.p, {}, s, rng);
}

TEST_CASE("a program with few of its operations in packs is written out without them", "[step-loops]") {
  using test::ScalarBuilder;
  // Four alike steps (8 operations) among a chain of 200 others: under 5% of the program,
  // so no pack; the same steps alone are one.
  const auto program = [](int others) {
    ScalarBuilder b(4);
    for (int limb = 0; limb < 4; ++limb) {
      b.p.labels.push_back(fmt::format("limb {}", limb));
      const int m = b.add(ScalarOp::Mul, b.in(limb), b.lit(1.5));
      const int x = b.add(ScalarOp::Add, m, b.lit(0.5));
      b.p.nodes[static_cast<std::size_t>(m)].label = limb;
      b.p.nodes[static_cast<std::size_t>(x)].label = limb;
      b.p.outputs.push_back(x);
    }
    int y = b.in(0);
    for (int k = 0; k < others; ++k) y = b.add(k % 2 ? ScalarOp::Add : ScalarOp::Mul, y, b.in(k % 4));
    b.p.outputs.push_back(y);
    return b.p;
  };
  specialise::LoopOptions o;
  o.pack = 4;
  o.min_size = 1;
  o.vary = true;  // packs of bodies: each limb reads its own inputs
  CHECK(specialise::step_loops(program(0), {}, o).loops.size() == 1);
  CHECK(specialise::step_loops(program(200), {}, o).empty());
}

TEST_CASE("packs: the columns' repeated steps four at a time, each lane reading the lane before, compute the same bits",
          "[step-loops]") {
  std::mt19937_64 rng(23);
  specialise::LoopOptions o;
  o.pack = 4;
  for (const Robot& robot : {load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true}),
                             random_tree(5, RandomTreeOptions{24, true, true, true, 0.4})}) {
    const std::vector<int> tips = robot.default_tips();
    const auto constants = exec::make_constants(robot, tips);
    for (const auto& k : lower::standard_kernels()) {
      INFO(robot.source << ": " << k.name);
      const ScalarProgram p = specialise::specialise(test::kernel_program(k), constants);
      const specialise::DotTable dots = specialise::dot_table(p, 50);
      const StepLoops s = specialise::step_loops(p, dots, o);
      check_packed(s);
      check_bits(p, dots, s, rng);
      // Where a lane reads a value an earlier pack computed, mostly its own lane of that
      // pack's same column: passed on in a register, not gathered.
      int packed = 0, ops = 0, read = 0, in_lane = 0;
      for (const StepLoops::Loop& l : s.loops) {
        packed += l.size * l.instances;
        for (int k = 0; k < l.instances; ++k)
          for (int t = 0; t < l.size; ++t) {
            const ScalarNode& n = s.program.nodes[l.first + k * l.size + t];
            for (int x : {n.a, specialise::arity(n.op) == 2 ? n.b : -1}) {
              const int from = x >= 0 ? s.loop_of[x] : -1;
              if (from < 0 || from == s.loop_of[l.first]) continue;
              const StepLoops::Loop& f = s.loops[from];
              ++read;
              in_lane += (x - f.first) / f.size == k;
            }
          }
      }
      for (std::size_t i = 0; i < p.nodes.size(); ++i)
        ops += specialise::arity(p.nodes[i].op) > 0 && (dots.removed.empty() || !dots.removed[i]);
      INFO(packed << " of " << ops << " operations in packs; " << in_lane << " of " << read
                  << " values from earlier packs in their lane");
      // (The rest: columns whose first steps, sparse, differ; the Gram entries' products.)
      if (k.name == "mass_matrix_inverse" || k.name == "lambda") {
        CHECK(packed * 5 > ops);
        CHECK(in_lane * 4 > read * 3);
      }
    }
  }
}

TEST_CASE("packs: two small steps reading no pack stay apart; packs of at most the width asked", "[step-loops]") {
  using test::ScalarBuilder;
  // Steps y_k = (z_k * c) + 0.5 on computed z_k, as in the loops above: k = 0..n-1.
  const auto build = [](int n) {
    ScalarBuilder b(n + 1);
    const int c = b.in(n);
    const int half = b.lit(0.5);
    for (int k = 0; k < n; ++k) {
      b.p.labels.push_back(fmt::format("s{}", k));
      const int z = b.add(ScalarOp::Mul, b.in(k), b.lit(2.0));
      const int m = b.add(ScalarOp::Mul, z, c);
      const int y = b.add(ScalarOp::Add, m, half);
      b.p.nodes[static_cast<std::size_t>(m)].label = k;
      b.p.nodes[static_cast<std::size_t>(y)].label = k;
      b.p.outputs.push_back(y);
    }
    return b.p;
  };
  std::mt19937_64 rng(29);
  specialise::LoopOptions o;
  o.pack = 4;
  CHECK(specialise::step_loops(build(2), {}, o).empty());
  // Steps of at least pair_min_size operations (these have two) are worth a pair.
  o.pair_min_size = 2;
  CHECK(specialise::step_loops(build(2), {}, o).loops.size() == 1);
  o.pair_min_size = specialise::LoopOptions{}.pair_min_size;
  // Unread steps in program order, four at a time; a pair of them left apart.
  for (const auto& [n, width, packs] :
       {std::tuple{3, 4, 1}, std::tuple{8, 4, 2}, std::tuple{9, 4, 2}, std::tuple{10, 4, 2}, std::tuple{6, 3, 2}}) {
    INFO(n << " steps, packs of " << width);
    const ScalarProgram p = build(n);
    o.pack = width;
    const StepLoops s = specialise::step_loops(p, {}, o);
    CHECK(static_cast<int>(s.loops.size()) == packs);
    for (const StepLoops::Loop& l : s.loops) CHECK(l.instances <= width);
    check_packed(s);
    check_bits(p, {}, s, rng);
  }
}

TEST_CASE("packs of several bodies: steps alike up to their literals and input entries go side by side, to the bit",
          "[step-loops]") {
  using test::ScalarBuilder;
  // Four limbs' steps y_k = (in_k * c_k) + 0.5, each limb its own literal c_k and input
  // entry (group 0), then z_k = y_k * y_k reading its own limb's y: exactly alike they are
  // not; as packs of bodies (`vary`) they are one pack of four, and then a second reading
  // the first lane by lane. A fifth step reads an input of another group: it stays apart.
  ScalarBuilder b(6);
  const int half = b.lit(0.5);
  const auto step = [&](int label, int input, double c) {
    b.p.labels.push_back(fmt::format("y{}", label));
    const int m = b.add(ScalarOp::Mul, b.in(input), b.lit(c));
    const int y = b.add(ScalarOp::Add, m, half);
    b.p.nodes[static_cast<std::size_t>(m)].label = label;
    b.p.nodes[static_cast<std::size_t>(y)].label = label;
    return y;
  };
  std::vector<int> ys;
  for (int k = 0; k < 5; ++k) ys.push_back(step(k, k, 1.0 + 0.25 * k));
  for (int k = 0; k < 4; ++k) {
    b.p.labels.push_back(fmt::format("z{}", k));
    const int z = b.add(ScalarOp::Mul, ys[static_cast<std::size_t>(k)], ys[static_cast<std::size_t>(k)]);
    b.p.nodes[static_cast<std::size_t>(z)].label = 5 + k;
    b.p.outputs.push_back(z);
  }
  b.p.outputs.push_back(ys[4]);
  const ScalarProgram p = b.p;
  specialise::LoopOptions o;
  o.pack = 4;
  o.min_size = 1;  // as emit-cpp asks of packs
  o.input_group = {0, 0, 0, 0, 1, 0};
  // Exactly alike: only the z steps (each reads its own y, a value outside its step), and
  // those four read no pack but are four: one pack.
  const StepLoops exact = specialise::step_loops(p, {}, o);
  CHECK(exact.loops.size() == 1);
  o.vary = true;
  const StepLoops s = specialise::step_loops(p, {}, o);
  REQUIRE(s.loops.size() == 2);
  for (const StepLoops::Loop& l : s.loops) CHECK(l.instances == 4);
  check_packed(s, o.input_group, true);
  std::mt19937_64 rng(31);
  check_bits(p, {}, s, rng);
  // Steps of one set that read one another (a chain) are no pack, of bodies or not.
  ScalarBuilder c(2);
  int x = c.in(0);
  for (int k = 0; k < 4; ++k) {
    c.p.labels.push_back(fmt::format("b{}", k));
    x = c.add(ScalarOp::Mul, x, c.lit(1.0 + 0.5 * k));
    c.p.nodes[static_cast<std::size_t>(x)].label = k;
    c.p.outputs.push_back(x);
  }
  o.input_group = {0, 0};
  CHECK(specialise::step_loops(c.p, {}, o).empty());
}

TEST_CASE("packs of bodies: steps that depend on one another through other code are cut by levels, limb beside limb",
          "[step-loops]") {
  using test::ScalarBuilder;
  // Two limbs of three bodies, a sweep through two kinds of step each: at body d,
  //   pose:  p = x * sin(angle) + c     (the sine outside the step: packs leave it out)
  //   cross: s = (p + p) * e
  // and the next body's x = 2 s, outside any step. A pose reads the pose before only through
  // the cross step and x, so cut by what each step reads directly, every pose is one set,
  // and so is every cross: packed that way the two would each have to run before the
  // other. Limb 1's first pose is unlike the others (a product for the difference), so each
  // set counted by itself has its levels off by one between the limbs; counted over every
  // step, the limbs line up: the poses of bodies 1 and 2 and the cross steps of bodies 0, 1
  // and 2 go side by side, limb beside limb.
  ScalarBuilder b(8);
  for (int limb = 0; limb < 2; ++limb) {
    int x = b.add(ScalarOp::Mul, b.in(limb), b.lit(1.5));  // the limb's base, outside any step
    for (int d = 0; d < 3; ++d) {
      b.p.labels.push_back(fmt::format("limb {}, body {}: pose", limb, d));
      const int pose = static_cast<int>(b.p.labels.size()) - 1;
      const int sine = b.add(ScalarOp::Sin, b.in(2 + 3 * limb + d));
      const int m = b.add(ScalarOp::Mul, x, sine);
      const int c = b.lit(0.25 + 0.125 * d + 0.0625 * limb);
      const int p = b.add(limb == 1 && d == 0 ? ScalarOp::Mul : ScalarOp::Sub, m, c);
      for (int n : {sine, m, p}) b.p.nodes[static_cast<std::size_t>(n)].label = pose;
      b.p.labels.push_back(fmt::format("limb {}, body {}: cross", limb, d));
      const int cross = pose + 1;
      const int sq = b.add(ScalarOp::Add, p, p);
      const int s = b.add(ScalarOp::Mul, sq, b.lit(0.5 + 0.125 * d));
      for (int n : {sq, s}) b.p.nodes[static_cast<std::size_t>(n)].label = cross;
      b.p.outputs.push_back(s);
      x = b.add(ScalarOp::Mul, s, b.lit(2.0));
    }
  }
  specialise::LoopOptions o;
  o.pack = 4;
  o.min_size = 1;
  o.pair_min_size = 1;  // pairs of these small steps too
  o.vary = true;
  const StepLoops s = specialise::step_loops(b.p, {}, o);
  REQUIRE(s.loops.size() == 5);
  int poses = 0;
  for (const StepLoops::Loop& l : s.loops) {
    CHECK(l.instances == 2);
    // Lane 0 limb 0, lane 1 limb 1, of one body.
    const std::string& lane0 = s.program.labels[static_cast<std::size_t>(s.program.nodes[l.first].label)];
    const std::string& lane1 = s.program.labels[static_cast<std::size_t>(s.program.nodes[l.first + l.size].label)];
    CHECK(lane0.substr(0, 7) == "limb 0,");
    CHECK(lane1.substr(0, 7) == "limb 1,");
    CHECK(lane0.substr(7) == lane1.substr(7));
    poses += lane0.find("pose") != std::string::npos;
  }
  CHECK(poses == 2);
  check_packed(s, std::vector<int>(8, 0), true);
  std::mt19937_64 rng(37);
  check_bits(b.p, {}, s, rng);
}
