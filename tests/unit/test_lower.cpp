// The lower stage (compiler/lower/lower.hpp): operator expressions become the papers' sweep
// algorithms -- the number and directions of the loops, the prologue quantities computed
// once and fused into the first loop of their direction, the printed form (golden), the
// passes before it, and the errors.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "support/error.hpp"
#include "support/pipeline.hpp"

namespace {

using namespace soa;
using exec::Quantity;
using test::parse;

std::string directions(const std::vector<exec::Loop>& loops) {
  std::string s;
  for (const auto& l : loops) {
    if (!s.empty()) s += ' ';
    s += l.direction == exec::Direction::Inward ? "in" : "out";
  }
  return s;
}

std::string column_directions(const exec::SweepProgram& p) { return p.columns ? directions(p.columns->loops) : "-"; }

int count_computes(const exec::SweepProgram& p, Quantity q) {
  int n = 0;
  auto count = [&](const std::vector<exec::Loop>& loops) {
    for (const auto& l : loops)
      for (const auto& s : l.body) n += s.kind == exec::Stmt::Kind::Compute && s.quantity == q;
  };
  count(p.loops);
  if (p.columns) count(p.columns->loops);
  return n;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("operator expressions lower to the papers' sweeps", "[lower]") {
  struct Row {
    const char* expression;
    const char* loops;    // run once
    const char* columns;  // per column of an operator-valued result
  };
  const Row rows[] = {
      // Recursive Newton-Euler: one outward pass (kinematics fused in), one inward pass.
      {"calM qdd + C", "out in", "-"},
      {"C + H phi M phi* H* qdd", "out in", "-"},
      // Forward dynamics via innovations (001 Algorithm 1): the bias sweeps and the
      // Riccati fuse with the filter, leaving outward, inward, outward.
      {"(I - H psi K)* D^-1 (I - H psi K) (T - C)", "out in out", "-"},
      // The innovations filter alone (001 eqs. 49-51) and the tip-force correction.
      {"(I + H phi K)^-1 T", "in", "-"},
      {"(I - H psi K)* D^-1 H psi B f0", "in out", "-"},
      {"phi* H* qd", "out", "-"},
      // Operator-valued: composite-body inertias once, then one sweep per column (CRBA).
      {"calM", "in", "in"},
      {"H phi M phi* H*", "in", "in"},
      // A* W A: only A's inward sweep per column, then the Gram matrix of the columns.
      {"(I - H psi K)* D^-1 (I - H psi K)", "in", "in"},
      {"J", "out", "out"},
      {"B* psi* H* D^-1 H psi B", "in", "in"},
      // Not of that form (the halves differ): the whole product per column.
      {"(I - H psi K)* D^-1 (I - H phi K)", "in", "in out"},
  };
  for (const Row& r : rows) {
    INFO(r.expression);
    const exec::SweepProgram p = lower::lower(parse(r.expression), test::algebra());
    CHECK(directions(p.loops) == r.loops);
    CHECK(column_directions(p) == r.columns);
  }
}

TEST_CASE("prologue quantities are computed once, only when needed", "[lower]") {
  const exec::SweepProgram fd = lower::lower(parse("(I - H psi K)* D^-1 (I - H psi K) (T - C)"), test::algebra());
  for (Quantity q : {Quantity::Transform, Quantity::Velocity, Quantity::BiasA, Quantity::BiasB, Quantity::Articulated})
    CHECK(count_computes(fd, q) == 1);
  CHECK(count_computes(fd, Quantity::Composite) == 0);
  // The kinematics share the first outward loop with phi* a; the Riccati the inward loop.
  REQUIRE(fd.loop_count() == 3);
  auto in_loop = [&](int l, Quantity q) {
    for (const auto& s : fd.loops[l].body)
      if (s.kind == exec::Stmt::Kind::Compute && s.quantity == q) return true;
    return false;
  };
  CHECK(in_loop(0, Quantity::Velocity));
  CHECK(in_loop(1, Quantity::Articulated));

  const exec::SweepProgram crba = lower::lower(parse("calM"), test::algebra());
  CHECK(crba.loop_count() == 2);  // composite bodies once, one inward sweep per column
  CHECK(count_computes(crba, Quantity::Composite) == 1);
  CHECK(count_computes(crba, Quantity::Velocity) == 0);  // no velocities in the mass matrix
  CHECK(crba.inputs.size() == 1);                        // q only
  REQUIRE(crba.columns);
  CHECK(crba.columns->fill == exec::Fill::SymmetricFromAncestors);
}

TEST_CASE("A* W A lowers to the Gram matrix of A's columns, W applied once per column", "[lower]") {
  for (const char* e :
       {"(I - H psi K)* D^-1 (I - H psi K)", "B* psi* H* D^-1 H psi B", "H psi M psi* H*", "phi* H* D^-1 H phi"}) {
    INFO(e);
    const exec::SweepProgram p = lower::lower(parse(e), test::algebra());
    REQUIRE(p.columns);
    CHECK(p.columns->fill == exec::Fill::Gram);
    REQUIRE(p.columns->weighted >= 0);
    CHECK(p.columns->weighted != p.columns->result);
    CHECK(p.output.rows == p.columns->space);
  }
  // The halves must be each other's adjoints, and W one symmetric block.
  for (const char* e : {"(I - H psi K)* D^-1 (I - H phi K)", "B* psi* H* H psi B", "B* psi* H* D^-1 H phi B"}) {
    INFO(e);
    const exec::SweepProgram p = lower::lower(parse(e), test::algebra());
    REQUIRE(p.columns);
    CHECK(p.columns->fill != exec::Fill::Gram);
  }
}

TEST_CASE("a scalar factor takes its operand's way, at its operand's cost", "[lower]") {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"calM", "2 calM"},
      {"calM", "-0.5 calM"},
      {"B* psi* H* D^-1 H psi B", "3 B* psi* H* D^-1 H psi B"},
      {"(I - H psi K)* D^-1 (I - H psi K)", "-2 (I - H psi K)* D^-1 (I - H psi K)"}};
  for (const auto& [plain, scaled] : pairs) {
    INFO(scaled);
    const exec::SweepProgram a = lower::lower(parse(plain), test::algebra());
    const exec::SweepProgram b = lower::lower(parse(scaled), test::algebra());
    REQUIRE(a.columns);
    REQUIRE(b.columns);
    CHECK(b.columns->fill == a.columns->fill);
    CHECK(b.loop_count() == a.loop_count());
    REQUIRE(b.lowering.size() == a.lowering.size());
    CHECK(b.lowering.front().way == a.lowering.front().way);
  }
  // The same through the rewriter: any multiple of Lambda is a Gram form, and three
  // inverses of calM are three applications of MINV.
  for (const char* text : {"3 J calM^-1 J*", "-J calM^-1 J*", "calM^-1 calM^-1 calM^-1 T"}) {
    INFO(text);
    const pipeline::KernelSpec spec{"k", {}, parse(text), "out", "", std::nullopt};
    const pipeline::LoweredKernel k = pipeline::lower_kernel(spec, test::library());
    CHECK(!ir::mentions(k.derivation.final, ir::Sym::calM));
    REQUIRE(!k.program.lowering.empty());
  }
  const pipeline::KernelSpec lambda{"k", {}, parse("3 J calM^-1 J*"), "out", "", std::nullopt};
  CHECK(pipeline::lower_kernel(lambda, test::library()).program.lowering.front().way == "gram");
}

TEST_CASE("the lowering takes a way only when the library allows it, and records it", "[lower]") {
  const exec::SweepProgram crb = lower::lower(parse("calM"), test::algebra());
  REQUIRE(crb.lowering.size() == 1);
  CHECK(crb.lowering[0].way == "composite-body");
  CHECK(crb.lowering[0].identity == "CRB-H");
  CHECK(crb.lowering[0].citation == "004 eq. 5.45");
  CHECK_THAT(exec::print(crb), Catch::Contains("lowered by composite-body (CRB-H [004 eq. 5.45])"));

  ir::Algebra without = test::algebra();
  without.lowerings.clear();
  const exec::SweepProgram plain = lower::lower(parse("calM"), without);
  REQUIRE(plain.columns);
  CHECK(plain.columns->fill == exec::Fill::Full);
  CHECK(plain.lowering.front().way == "columns");
  const exec::SweepProgram minv = lower::lower(parse("(I - H psi K)* D^-1 (I - H psi K)"), without);
  CHECK(minv.columns->fill == exec::Fill::Full);
  // Without newton-euler, calM qdd and C each get their own phi and phi* recursions.
  auto statements = [](const exec::SweepProgram& p) {
    std::size_t n = 0;
    for (const auto& l : p.loops) n += l.body.size();
    return n;
  };
  const exec::SweepProgram id = lower::lower(parse("calM qdd + C"), without);
  const exec::SweepProgram rnea = lower::lower(parse("calM qdd + C"), test::algebra());
  CHECK(rnea.lowering.front().way == "newton-euler");
  CHECK(rnea.lowering.front().identity == "RNEA");
  CHECK(statements(id) > statements(rnea));
}

TEST_CASE("every standard kernel states its algorithm: the ways taken, with their identities", "[lower]") {
  const std::map<std::string, std::string> expected = {
      {"inverse_dynamics", "algorithm: sweeps"},
      {"mass_matrix", "algorithm: composite-body (CRB-H [004 eq. 5.45])"},
      {"forward_dynamics", "algorithm: sweeps"},
      {"mass_matrix_inverse", "algorithm: gram (MINV [001 Identity 6, 002 Lemma 3])"},
      {"jacobian", "algorithm: columns"},
      {"lambda", "algorithm: gram (MINV"},
      {"tip_force_correction", "algorithm: sweeps"}};
  for (const auto& k : lower::standard_kernels()) {
    INFO(k.name);
    const std::string summary = pipeline::derivation_summary(test::lowered(k));
    CHECK_THAT(summary, Catch::Contains(expected.at(k.name)));
    CHECK_THAT(summary, Catch::Contains("loops: "));
  }
  // Forward dynamics writes C out (def-C) so that L4 leaves three sweeps: articulated body.
  const pipeline::LoweredKernel& fd = test::lowered(lower::standard_kernels()[2]);
  REQUIRE(fd.spec.name == "forward_dynamics");
  CHECK(test::uses_rule(fd.derivation, "def-C"));
  CHECK(fd.program.loop_count() == 3);
  CHECK(!ir::mentions(fd.derivation.final, ir::Sym::C));
}

TEST_CASE("the standard kernels, rewritten by the identity library, lower to their algorithms", "[lower]") {
  const std::map<std::string, std::pair<std::string, std::string>> expected = {
      {"inverse_dynamics", {"out in", "-"}},
      {"mass_matrix", {"in", "in"}},
      {"forward_dynamics", {"out in out", "-"}},
      {"mass_matrix_inverse", {"in", "in"}},
      {"jacobian", {"out", "out"}},
      {"lambda", {"in", "in"}},
      {"tip_force_correction", {"in out", "-"}},
  };
  for (const auto& k : lower::standard_kernels()) {
    INFO(k.name << ": " << k.expression);
    const exec::SweepProgram p = test::kernel_program(k);
    REQUIRE(expected.count(k.name));
    CHECK(directions(p.loops) == expected.at(k.name).first);
    CHECK(column_directions(p) == expected.at(k.name).second);
    // Inputs in the declared layout order.
    REQUIRE(p.inputs.size() == k.inputs.size());
    for (std::size_t i = 0; i < k.inputs.size(); ++i) CHECK(p.vars[p.inputs[i]].name == k.inputs[i]);
  }
}

TEST_CASE("lowered programs print in the papers' loop notation (golden)", "[lower]") {
  // Sweep programs are robot independent: the same text serves every robot. The
  // expressions are the rewritten kernels, stated here so that the goldens do not move
  // with the rewriter.
  struct Golden {
    const char* name;
    const char* expression;
    std::vector<std::string> inputs;
    const char* output;
  };
  const Golden goldens[] = {
      {"inverse_dynamics", "calM qdd + C", {"q", "qd", "qdd"}, "tau"},
      {"forward_dynamics", "(I - H psi K)* D^-1 (I - H psi K) (T - C)", {"q", "qd", "T"}, "qdd"},
      {"mass_matrix", "calM", {"q"}, "calM"},
      {"mass_matrix_inverse", "(I - H psi K)* D^-1 (I - H psi K)", {"q"}, "Minv"},
  };
  for (const Golden& g : goldens) {
    // tests/golden/goldens.sh runs this case on a copy of the goldens (SOA_GOLDEN_ROOT) and to
    // rewrite them (SOA_UPDATE_GOLDEN), for `cmake --build build --target goldens`.
    const std::string relative = std::string("tests/golden/lower_") + g.name + ".txt";
    const char* root = std::getenv("SOA_GOLDEN_ROOT");
    const std::string path = root ? std::string(root) + "/" + relative : test::source_path(relative);
    const std::string printed =
        exec::print(lower::lower(parse(g.expression), test::algebra(), {g.name, g.output, g.inputs}));
    if (std::getenv("SOA_UPDATE_GOLDEN")) std::ofstream(path) << printed;
    INFO("golden file " << path << " (regenerate every golden with: cmake --build build --target goldens); printed:\n"
                        << printed);
    CHECK(printed == read_file(path));
  }
}

TEST_CASE("expand and factor turn calM qdd + C into the Newton-Euler form", "[lower]") {
  CHECK(ir::print(lower::expand(parse("calM"), test::definitions())) == "H phi M phi* H*");
  CHECK(ir::print(lower::expand(parse("J*"), test::definitions())) == "H phi B");
  CHECK(ir::print(lower::factor(lower::expand(parse("calM qdd + C"), test::definitions()))) ==
        "H phi (M phi* (H* qdd + a) + b)");
  CHECK(ir::print(lower::factor(parse("H phi a - H phi b + qd - qd"))) == "H phi (a - b)");
}

TEST_CASE("expressions without a sweep form are refused with a reason", "[lower]") {
  auto refuse = [](const char* text, const char* reason) {
    INFO(text);
    CHECK_THROWS_WITH(lower::lower(parse(text), test::algebra()), Catch::Contains(reason));
  };
  refuse("calM^-1 (T - C)", "rewrite first");
  refuse("calM^-1", "rewrite first");
  refuse("(I + phi)^-1 a", "not strictly causal");
  refuse("(I + E_phi + E_phi*)^-1 a", "both inward and outward");
  refuse("(J calM J* + I)^-1 f0", "a tip-space matrix is solved in the Gram form");
  refuse("qd* qdd", "scalar");
  CHECK_THROWS_WITH(lower::lower(parse("calM qdd + C"), test::algebra(), {"id", "tau", {"q", "qdd"}}),
                    Catch::Contains("needs input 'qd'"));
}
