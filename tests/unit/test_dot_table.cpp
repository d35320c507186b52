// Dot tables (specialise/dot_table.hpp): the Gram entries of calM^-1 and Lambda, computed
// by a loop over runs of a factor array, give the straight-line program's values to the
// bit, and the runs compress the products many times over.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "specialise/dot_table.hpp"
#include "specialise/specialise.hpp"
#include "support/pipeline.hpp"
#include "support/scalar_builder.hpp"

namespace {

using namespace soa;
using specialise::DotTable;
using specialise::ScalarOp;

// Every output the table computes equals evaluate()'s bit for bit, over random inputs.
void check_bits(const specialise::ScalarProgram& p, const DotTable& t, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int sample = 0; sample < 3; ++sample) {
    std::vector<double> in(static_cast<std::size_t>(p.input_count));
    for (double& x : in) x = u(rng);
    std::vector<double> reference(p.outputs.size()), table(p.outputs.size(), -12345.0);
    specialise::evaluate(p, in.data(), reference.data());
    specialise::evaluate(t, specialise::node_values(p, in.data()), table.data());
    for (const DotTable::Entry& e : t.entries)
      for (int k = 0; k < e.position_count; ++k) {
        const int o = t.positions[e.first_position + k];
        INFO("output " << o);
        REQUIRE(std::memcmp(&reference[o], &table[o], sizeof(double)) == 0);
      }
  }
}

}  // namespace

TEST_CASE("the Gram entries of calM^-1 and Lambda (and calM's sums) become a dot table that computes them to the bit",
          "[dot-table]") {
  std::mt19937_64 rng(5);
  RandomTreeOptions o;
  o.bodies = 14;
  o.floating = true;
  for (const Robot& robot :
       {load_urdf(test::shared_robot_path("talos_reduced.urdf"), LoadOptions{true}), random_tree(3, o)}) {
    const std::vector<int> tips = robot.default_tips();
    const auto constants = exec::make_constants(robot, tips);
    for (const auto& k : lower::standard_kernels()) {
      if (k.name != "mass_matrix_inverse" && k.name != "lambda" && k.name != "mass_matrix") continue;
      INFO(robot.source << ": " << k.name);
      const specialise::ScalarProgram p = specialise::specialise(test::kernel_program(k), constants);
      const DotTable t = specialise::dot_table(p, 1);
      // Most entries of the symmetric output (not: literal zeros of unrelated bodies, and the
      // single products of bodies with one common row).
      int computed = 0, positions = 0;
      for (std::size_t o = 0; o < p.outputs.size(); ++o) computed += specialise::arity(p.nodes[p.outputs[o]].op) > 0;
      for (const DotTable::Entry& e : t.entries) positions += e.position_count;
      // The mass matrix's entries (H phi R H*, column by column) are sums too, less regular.
      if (k.name != "mass_matrix") {
        CHECK(positions * 2 > computed);
        // The runs compress: a Gram entry's products run over common ancestors,
        // consecutive in both factors' columns.
        CHECK(t.runs.size() * 3 < static_cast<std::size_t>(t.terms));
      }
      // What the loop computes is not computed apart: the roots and their chains are removed.
      int removed = 0;
      for (char r : t.removed) removed += r;
      CHECK(removed >= t.terms);
      check_bits(p, t, rng);
    }
  }
}

TEST_CASE("dot tables: with too few terms there is none, and a product other nodes read stays a value", "[dot-table]") {
  // out0 = x0*x1 + x2*x3 - x4 ; out1 = x0*x1 (the first product is read elsewhere).
  test::ScalarBuilder b(5);
  const int x0 = b.in(0), x1 = b.in(1), x2 = b.in(2), x3 = b.in(3), x4 = b.in(4);
  const int p01 = b.add(ScalarOp::Mul, x0, x1);
  const int p23 = b.add(ScalarOp::Mul, x2, x3);
  const int sum = b.add(ScalarOp::Sub, b.add(ScalarOp::Add, p01, p23), x4);
  b.p.outputs = {sum, p01};
  const specialise::ScalarProgram& p = b.p;
  CHECK(specialise::dot_table(p, 4).empty());  // three terms
  CHECK(specialise::dot_table(p, 0).empty());
  const DotTable t = specialise::dot_table(p, 3);
  REQUIRE(t.entries.size() == 1);
  CHECK(t.terms == 3);
  CHECK(t.removed[static_cast<std::size_t>(p01)] == 0);  // out1 needs it: a value, times 1.0
  std::mt19937_64 rng(1);
  check_bits(p, t, rng);
}
