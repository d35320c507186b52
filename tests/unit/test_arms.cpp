// Several arms grasping one object (003 Part II): the operators of arm i (psi1, calM2, ...)
// through every stage -- names, shapes, printing, the robot's arms, the interpreter (dense
// and sweeps), the rewriter's per-arm rule instances -- and the derivation of
// J1 calM1^-1 J1* + J2 calM2^-1 J2* into its O(N) form, arm by arm (003 Part II eq. 6.8).
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "algebra/arms.hpp"
#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "algebra/vocabulary.hpp"
#include "interp/interpreter.hpp"
#include "pipeline/pipeline.hpp"
#include "rewrite/rewrite.hpp"
#include "support/error.hpp"
#include "support/pipeline.hpp"
#include "support/test_support.hpp"
#include "syntax/syntax.hpp"

namespace {

using namespace soa;
using Catch::Matchers::Contains;
using rewrite::Derivation;
using rewrite::Rule;

ir::Expr parse(const std::string& text) {
  return syntax::parse_expression(std::make_shared<syntax::Source>(syntax::Source{"<test>", text}));
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

// `text` with every '#' replaced by arm digit a and every '@' by b.
std::string on_arms(std::string text, int a, int b) {
  for (char& c : text) {
    if (c == '#') c = static_cast<char>('0' + a);
    if (c == '@') c = static_cast<char>('0' + b);
  }
  return text;
}

double relative_difference(const MatX& a, const MatX& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return 1e300;
  if (a.size() == 0) return 0.0;
  const double scale = std::max({a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff(), 1.0});
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

// The library without the identities that state results outright (as test_rewrite.cpp).
const std::vector<Rule>& lemmas_only() {
  static const std::vector<Rule> rules = [] {
    const pipeline::Library lib = pipeline::load_library(test::source_path("grammar/identities.soa"));
    std::vector<rewrite::IdentitySpec> ids;
    for (const auto& id : lib.module.identities)
      if (id.name != "LAMBDA" && id.name != "TIPF" && id.name != "ACC") ids.push_back(pipeline::identity_spec(id));
    return rewrite::rules_from_identities(ids);
  }();
  return rules;
}

const std::vector<Rule>& library() {
  static const pipeline::Library lib = pipeline::load_library(test::source_path("grammar/identities.soa"));
  return lib.rules;
}

int frame(const Robot& robot, const std::string& name) {
  const auto f = robot.find_frame(name);
  REQUIRE(f.has_value());
  return *f;
}

// A robot with its tips, one per arm in `arms` (the other arms may hold none), and the two
// arms the tests put side by side.
struct Subject {
  std::string what;
  Robot robot;
  std::vector<int> tips;
  int a = 1, b = 2;
};

Subject baxter() {
  Subject s{"baxter", load_urdf(test::shared_robot_path("baxter.urdf")), {}, 2, 3};
  // Arms in joint-space order: 1 head, 2 right arm, 3 left arm. Tip 0 is the left grasp.
  s.tips = {frame(s.robot, "left_gripper"), frame(s.robot, "right_gripper")};
  return s;
}

Subject two_random_arms(bool floating) {
  RandomTreeOptions o;
  o.bodies = 6;
  o.floating = floating;
  o.branching = 0.5;
  Subject s{floating ? "two free-flying random arms" : "two random arms", random_arms(11, 2, o), {}, 1, 2};
  // The grasp frames: each arm's body 0 (a leaf); arm 2's first, so tip order != arm order.
  s.tips = {frame(s.robot, "a2_b0"), frame(s.robot, "a1_b0")};
  return s;
}

interp::Evaluation evaluate(const Subject& s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  return interp::prepare(s.robot, random_state(s.robot, static_cast<int>(s.tips.size()), rng), s.tips,
                         test::definitions());
}

// The whole robot's joint indices of arm i, in the arm's own order.
std::vector<int> joints_of(const Robot& robot, int arm) {
  std::vector<int> v;
  for (int k : subtree_bodies(robot, robot.roots()[arm - 1]))
    for (int j = 0; j < robot.bodies[k].nv(); ++j) v.push_back(robot.bodies[k].v_offset + j);
  std::sort(v.begin(), v.end());
  return v;
}

MatX pick(const MatX& X, const std::vector<int>& rows, const std::vector<int>& cols) {
  MatX Y(rows.size(), cols.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < cols.size(); ++j) Y(i, j) = X(rows[i], cols[j]);
  return Y;
}

// The rows of the whole robot's tip space that belong to the tips in arm i.
std::vector<int> tip_rows_of(const Subject& s, int arm) {
  const std::vector<int> bodies = subtree_bodies(s.robot, s.robot.roots()[arm - 1]);
  std::vector<int> rows;
  for (std::size_t t = 0; t < s.tips.size(); ++t)
    if (std::binary_search(bodies.begin(), bodies.end(), s.robot.frames[s.tips[t]].body))
      for (int r = 0; r < 6; ++r) rows.push_back(static_cast<int>(6 * t) + r);
  return rows;
}

// `e` with arm 1's symbols moved to arm a and arm 2's to arm b.
ir::Expr remap(const ir::Expr& e, int a, int b) {
  using ir::Op;
  std::vector<ir::Expr> kids;
  for (const auto& k : e.kids()) kids.push_back(remap(k, a, b));
  switch (e.op()) {
    case Op::Symbol: {
      const int arm = ir::arm_of(e.name());
      return ir::symbol(ir::indexed_name(ir::base_name(e.name()), arm == 1 ? a : arm == 2 ? b : arm));
    }
    case Op::Identity:
    case Op::Zero: return e;
    case Op::Sum: return ir::sum(std::move(kids));
    case Op::Product: return ir::product(std::move(kids));
    case Op::Scale: return ir::scale(e.coef(), kids.front());
    case Op::Adjoint: return ir::adjoint(kids.front());
    case Op::Inverse: return ir::inverse(kids.front());
    case Op::Derivative: return ir::derivative(kids.front());
  }
  return e;
}

bool uses(const Derivation& d, const std::string& prefix) {
  for (const auto& r : rewrite::rules_used(d))
    if (r.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

// ---- names ------------------------------------------------------------------------------------

TEST_CASE("an arm digit after a vocabulary name names that arm's quantity", "[arms][vocabulary]") {
  const auto psi1 = ir::lookup_indexed("psi1");
  REQUIRE(psi1);
  CHECK(psi1->info->name == "psi");
  CHECK(psi1->arm == 1);
  CHECK(ir::lookup_indexed("ψ2")->arm == 2);  // an alias takes a digit too
  CHECK(ir::lookup_indexed("ψ2")->info->name == "psi");
  CHECK(ir::lookup_indexed("calM9")->arm == 9);
  // f0 is a name of its own; f01 is f0 of arm 1.
  CHECK(ir::lookup_indexed("f0")->arm == 0);
  CHECK(ir::lookup_indexed("f01")->info->name == "f0");
  CHECK(ir::lookup_indexed("f01")->arm == 1);
  for (const char* bad : {"psi0", "psi10", "I1", "x1", "1", "psi1a"}) CHECK_FALSE(ir::lookup_indexed(bad));
  // lookup() answers structure and symmetry questions for the base.
  CHECK(ir::lookup("calM2") == ir::lookup("calM"));
  CHECK(ir::lookup("calM2")->symmetric);
  CHECK(ir::indexed_name("calM", 2) == "calM2");
  CHECK(ir::indexed_name("calM", 0) == "calM");
  CHECK(ir::arm_of("K3") == 3);
  CHECK(ir::base_name("E_phi1") == "E_phi");
}

TEST_CASE("indexed names parse, split and print", "[arms][syntax]") {
  struct Row {
    const char* input;
    const char* ascii;
    const char* unicode;
    const char* latex;
  };
  const Row rows[] = {
      {"psi1", "psi1", "ψ₁", "\\psi_{1}"},
      {"ψ2", "psi2", "ψ₂", "\\psi_{2}"},
      {"J1calM1", "J1 calM1", "J₁ ℳ₁", "J_{1} \\, \\mathcal{M}_{1}"},
      {"J1 calM1^-1 J1*", "J1 calM1^-1 J1*", "J₁ ℳ₁⁻¹ J₁*", "J_{1} \\, {\\mathcal{M}_{1}}^{-1} \\, {J_{1}}^{*}"},
      {"H2psi2K2", "H2 psi2 K2", "H₂ ψ₂ K₂", "H_{2} \\, \\psi_{2} \\, K_{2}"},
      {"psi1phi1", "psi1 phi1", "ψ₁ φ₁", "\\psi_{1} \\, \\phi_{1}"},
      {"f01", "f01", "f₀₁", "{f_0}_{1}"},
      {"E_phi3", "E_phi3", "Eφ₃", "{\\mathcal{E}_{\\phi}}_{3}"},
      {"qd1* calM1 qd1", "qd1* calM1 qd1", "q̇₁* ℳ₁ q̇₁", "{\\dot{q}_{1}}^{*} \\, \\mathcal{M}_{1} \\, \\dot{q}_{1}"},
  };
  for (const Row& r : rows) {
    INFO(r.input);
    const ir::Expr e = parse(r.input);
    CHECK(ir::print(e) == r.ascii);
    CHECK(ir::print(e, ir::Syntax::Unicode) == r.unicode);
    CHECK(ir::print(e, ir::Syntax::Latex) == r.latex);
    CHECK(parse(ir::print(e)) == e);  // ASCII round-trips
  }
  // The canonical IR name keeps the digit.
  CHECK(parse("ψ1").name() == "psi1");
  CHECK(parse("J1calM1").kid(1).name() == "calM1");
  // Spans cover the digit.
  const ir::Expr split = parse("J1calM1");
  CHECK(split.kid(0).span().begin == 0);
  CHECK(split.kid(0).span().end == 2);
  CHECK(split.kid(1).span().end == 7);
  // 0 is no arm, and one digit only.
  CHECK_THAT(error_of("psi0"), Contains("unknown name 'psi0'"));
  CHECK_THAT(error_of("psi12"), Contains("unknown name 'psi12'"));
}

// ---- shapes -------------------------------------------------------------------------------------

TEST_CASE("each arm has its own joint and spatial spaces; the tips are shared", "[arms][shape]") {
  using ir::Dim;
  const ir::Shape lambda = ir::infer_shape(parse("J1 calM1^-1 J1* + J2 calM2^-1 J2*"));
  CHECK(lambda == ir::Shape{Dim::Tip, Dim::Tip, ir::kArmTips, ir::kArmTips});
  CHECK(ir::to_string(lambda) == "6m_i x 6m_i");
  CHECK(ir::to_string(ir::infer_shape(parse("J1* J2"))) == "N1 x N2");
  CHECK_FALSE(ir::infer_shape(parse("J1* J2")).square());
  CHECK(ir::to_string(ir::infer_shape(parse("psi2 B2"))) == "6n2 x 6m_i");
  CHECK(ir::to_string(ir::infer_shape(parse("calM1^-1 T1"))) == "N1 x 1");
  CHECK(ir::to_string(ir::infer_shape(parse("qd1* calM1 qd1 + qd2* calM2 qd2"))) == "1 x 1");
  CHECK(ir::to_string(ir::infer_shape(parse("H1 + 0"))) == "N1 x 6n1");
  CHECK(ir::to_string(ir::infer_shape(parse("calM1 + I"))) == "N1 x N1");

  CHECK_THAT(error_of("J1 calM2"),
             Contains("cannot multiply J1 (6m_i x N1) by calM2 (N2 x N2): N1 columns but N2 rows"));
  CHECK_THAT(error_of("J calM1"), Contains("N columns but N1 rows"));
  CHECK_THAT(error_of("calM1 J*"), Contains("N1 columns but N rows"));
  CHECK_THAT(error_of("phi1 + phi2"), Contains("cannot add phi1 (6n1 x 6n1) and phi2 (6n2 x 6n2)"));
  CHECK_THAT(error_of("H1 + H"), Contains("cannot add"));
  // The whole robot's tips are not an arm's.
  CHECK_THAT(error_of("J1* f0"), Contains("6m_i columns but 6m rows"));
  CHECK_THAT(error_of("(J1* J2)^-1"), Contains("not square"));
  auto sides = [](const std::string& text) {
    return syntax::parse_equation(std::make_shared<syntax::Source>(syntax::Source{"<test>", text}));
  };
  CHECK_NOTHROW(sides("J1 calM1^-1 J1* = B1* psi1* H1* D1^-1 H1 psi1 B1"));
  CHECK_THROWS_AS(sides("calM1 = calM2"), UserError);
}

// ---- the robot's arms ---------------------------------------------------------------------------

TEST_CASE("arm i is the i-th root subtree in joint-space order", "[arms][model]") {
  const Robot robot = load_urdf(test::shared_robot_path("baxter.urdf"));
  const std::vector<int> roots = robot.roots();
  REQUIRE(roots.size() == 3);
  CHECK(robot.bodies[roots[0]].name == "head");
  CHECK(robot.bodies[roots[1]].name == "right_upper_shoulder");
  CHECK(robot.bodies[roots[2]].name == "left_upper_shoulder");
  const Robot right = subtree(robot, roots[1]);
  CHECK(right.size() == 9);
  CHECK(right.nv == 9);
  CHECK(right.roots().size() == 1);
  CHECK(right.find_frame("right_gripper").has_value());
  CHECK_FALSE(right.find_frame("left_gripper").has_value());
  // The arm's joint space is the whole robot's slice, in the same order.
  const std::vector<int> bodies = subtree_bodies(robot, roots[1]);
  for (std::size_t j = 0; j < bodies.size(); ++j) {
    CHECK(right.bodies[j].name == robot.bodies[bodies[j]].name);
    CHECK(right.bodies[j].v_offset == robot.bodies[bodies[j]].v_offset - robot.bodies[roots[1]].v_offset);
  }

  const Robot arms = random_arms(5, 3, RandomTreeOptions{4, false, true, true, 0.5});
  REQUIRE(arms.roots().size() == 3);
  for (int i = 1; i <= 3; ++i) {
    INFO("arm " << i);
    CHECK(arms.bodies[arms.roots()[i - 1]].name.rfind(fmt::format("a{}_", i), 0) == 0);
    CHECK(subtree_bodies(arms, arms.roots()[i - 1]).size() == 4);
    CHECK(arms.bodies[*arms.find_frame(fmt::format("a{}_b0", i))].children.empty());
  }
}

TEST_CASE("an arm's operators are the whole robot's restricted to the arm", "[arms][interp]") {
  for (const Subject& s : {baxter(), two_random_arms(false), two_random_arms(true)}) {
    const interp::Evaluation ev = evaluate(s, 3);
    for (int arm : {s.a, s.b}) {
      INFO(s.what << ", arm " << arm);
      const std::vector<int> joints = joints_of(s.robot, arm);
      const std::vector<int> tips = tip_rows_of(s, arm);
      REQUIRE(tips.size() == 6);
      auto dense = [&](const std::string& text) { return interp::eval_dense(ev, parse(on_arms(text, arm, arm))); };
      const MatX whole_lambda = interp::eval_dense(ev, parse("J calM^-1 J*"));
      // Through a fixed base the arms do not couple: arm i's Lambda is a diagonal block of
      // the whole robot's (003 Part II eq. 6.8a: J M^-1 J* = diag[Lambda_i]).
      CHECK(relative_difference(dense("J# calM#^-1 J#*"), pick(whole_lambda, tips, tips)) < 1e-10);
      CHECK(relative_difference(dense("calM#"), pick(interp::eval_dense(ev, parse("calM")), joints, joints)) < 1e-10);
      CHECK(relative_difference(dense("J#"), pick(interp::eval_dense(ev, parse("J")), tips, joints)) < 1e-10);
      const std::vector<int> one = {0};
      CHECK(relative_difference(dense("qd#"), pick(ev.state.qd, joints, one)) == 0.0);
      CHECK(relative_difference(dense("f0#"), pick(ev.state.f0, tips, one)) == 0.0);
      CHECK(relative_difference(dense("T#"), pick(ev.kin.T, joints, one)) < 1e-10);
      CHECK(relative_difference(dense("C#"), pick(ev.kin.C, joints, one)) < 1e-10);
      const auto bodies = static_cast<long>(subtree_bodies(s.robot, s.robot.roots()[arm - 1]).size());
      CHECK(interp::dense_symbol(ev, ir::symbol(on_arms("psi#", arm, arm))).rows() == 6 * bodies);
    }
    // The two arms' tips do not see each other.
    const MatX whole_lambda = interp::eval_dense(ev, parse("J calM^-1 J*"));
    CHECK(pick(whole_lambda, tip_rows_of(s, s.a), tip_rows_of(s, s.b)).cwiseAbs().maxCoeff() < 1e-12);
  }
}

TEST_CASE("dense and sweep evaluation agree on the arms' expressions", "[arms][interp]") {
  const char* const expressions[] = {
      "J# calM#^-1 J#* + J@ calM@^-1 J@*",
      "B#* psi#* H#* D#^-1 H# psi# B# + B@* psi@* H@* D@^-1 H@ psi@ B@",
      "(J# calM#^-1 J#* + J@ calM@^-1 J@*)^-1",
      "J#* J@",
      "J# qd# - J@ qd@",
      "qd#* calM# qd# + qd@* calM@ qd@",
      "calM#^-1 (T# - C#)",
      "calM@^-1 J@* f0@",
      "(I - H# psi# K#)^-1",
      "(I - H# psi# K#)* D#^-1 (I - H# psi# K#)",
      "phi#* H#* calM#^-1 T#",
      "psi# phi#^-1 + E_phi#",
      "0 + H# - 2 G#*",
      "Omega@",
  };
  for (const Subject& s : {baxter(), two_random_arms(false), two_random_arms(true)}) {
    const interp::Evaluation ev = evaluate(s, 5);
    for (const char* text : expressions) {
      const std::string t = on_arms(text, s.a, s.b);
      INFO(s.what << ": " << t);
      const ir::Expr e = parse(t);
      CHECK(relative_difference(interp::eval_dense(ev, e), interp::eval_sweeps(ev, e)) < 1e-10);
    }
  }
}

TEST_CASE("an arm the robot does not have, and arms with different tips, are errors", "[arms][interp][errors]") {
  const Subject s = two_random_arms(false);
  const interp::Evaluation ev = evaluate(s, 1);
  CHECK_THROWS_WITH(interp::eval_dense(ev, parse("psi3")),
                    Contains("has 2 arms (root subtrees: a1_b5, a2_b5): psi3 names arm 3"));
  CHECK_THROWS_WITH(interp::eval_sweeps(ev, parse("qd1* (calM1^-1 T1 + 0 + J1* f01) - qd3* H3 psi3 phi3* H3* qd3")),
                    Contains("qd3 names arm 3"));
  CHECK_THROWS_WITH(interp::dense_symbol(ev, ir::symbol("J7")), Contains("J7 names arm 7"));

  // A single-root robot is one arm: arm 1 is the robot itself.
  const Robot tree = random_tree(3, RandomTreeOptions{5, false, true, true, 0.5});
  std::vector<int> leaves = tree.leaf_tips();
  std::mt19937_64 rng(1);
  const interp::Evaluation one =
      interp::prepare(tree, random_state(tree, static_cast<int>(leaves.size()), rng), leaves, test::definitions());
  CHECK(interp::eval_dense(one, parse("J1 calM1^-1 J1*")) == interp::eval_dense(one, parse("J calM^-1 J*")));
  CHECK_THROWS_WITH(interp::eval_dense(one, parse("psi2")),
                    Contains("has 1 arm (root subtrees: b4): psi2 names arm 2"));

  // Baxter with every leaf a tip: the head holds 1, the right arm 2 (its fingers).
  const Robot robot = load_urdf(test::shared_robot_path("baxter.urdf"));
  std::vector<int> tips = robot.leaf_tips();
  std::mt19937_64 rng2(1);
  const interp::Evaluation bx =
      interp::prepare(robot, random_state(robot, static_cast<int>(tips.size()), rng2), tips, test::definitions());
  CHECK_THROWS_WITH(interp::eval_dense(bx, parse("J1 calM1^-1 J1* + J2 calM2^-1 J2*")),
                    Contains("arms 1 and 2 of") && Contains("hold 1 and 2 tip frames"));
  // Arms that meet only in a scalar need no common tips.
  CHECK_NOTHROW(interp::eval_dense(bx, parse("qd1* calM1 qd1 + qd2* calM2 qd2")));
  CHECK(interp::eval_dense(bx, parse("J2 calM2^-1 J2*")).rows() == 12);
}

// ---- the rewriter -------------------------------------------------------------------------------

TEST_CASE("the cost model prices an arm's symbol as its base", "[arms][rewrite][cost]") {
  for (const char* text : {"psi", "calM^-1", "J calM^-1 J*", "B* psi* H* D^-1 H psi B", "(I - H psi K)^-1", "phi^-1"}) {
    INFO(text);
    const rewrite::Cost whole = rewrite::cost(parse(text), test::definitions());
    const rewrite::Cost arm = rewrite::cost(ir::on_arm(parse(text), 1), test::definitions());
    CHECK(rewrite::same_cost(whole, arm));
    CHECK(whole.order == arm.order);
  }
  CHECK(rewrite::known_invertible(parse("calM2")));
  CHECK(rewrite::known_invertible(parse("phi1 psi1")));
  CHECK_FALSE(rewrite::known_invertible(parse("J1* J2")));
  CHECK(rewrite::causality(parse("psi1")) == rewrite::Causality::Causal);
}

TEST_CASE("rules are instantiated per arm: J1 calM1^-1 J1* as J calM^-1 J*", "[arms][rewrite][derive]") {
  const Derivation d = rewrite::derive(parse("J1 calM1^-1 J1*"), library(), test::rewrite_options());
  CHECK(ir::print(rewrite::normalize(d.final)) ==
        ir::print(rewrite::normalize(parse("B1* psi1* H1* D1^-1 H1 psi1 B1"))));
  CHECK(rewrite::rules_used(d) ==
        std::vector<std::string>{"MINV[1]", "def-J[1]", "L4-adjoint[1]", "def-J[1]", "L4[1]"});
  CHECK(d.cost.order == 1);
  // The same derivation, arm for arm, as the whole robot's.
  const Derivation w = rewrite::derive(parse("J calM^-1 J*"), library(), test::rewrite_options());
  CHECK(rewrite::same_cost(d.cost, w.cost));
  CHECK(ir::on_arm(w.final, 1) == d.final);
  // No arm: no instances.
  for (const auto& r : rewrite::rules_used(w)) CHECK(r.find('[') == std::string::npos);
  // A whole-robot symbol next to an arm's: the whole robot's rules take part as well. (Both
  // terms must lose their dense inverse before the order drops: 4 sweeps more on the way.)
  rewrite::Options slack;
  slack.sweep_slack = 4;
  const Derivation m =
      rewrite::derive(parse("qd* calM^-1 qd + qd1* calM1^-1 qd1"), lemmas_only(), test::rewrite_options(slack));
  INFO(rewrite::explain(m));
  CHECK(m.cost.order == 1);
  CHECK(uses(m, "MINV[1]"));
  const std::vector<std::string> used = rewrite::rules_used(m);  // one copy: iterators of one range
  CHECK(std::find(used.begin(), used.end(), "MINV") != used.end());
}

TEST_CASE("two arms: J1 calM1^-1 J1* + J2 calM2^-1 J2* -> each term O(N)", "[arms][rewrite][derive]") {
  const ir::Expr input = parse("J1 calM1^-1 J1* + J2 calM2^-1 J2*");
  const Derivation d = rewrite::derive(input, lemmas_only(), test::rewrite_options());
  INFO(rewrite::explain(d));
  const ir::Expr expected = parse("B1* psi1* H1* D1^-1 H1 psi1 B1 + B2* psi2* H2* D2^-1 H2 psi2 B2");
  CHECK(ir::print(rewrite::normalize(d.final)) == ir::print(rewrite::normalize(expected)));
  CHECK(rewrite::normalize(d.final) == rewrite::normalize(expected));
  for (const char* rule : {"MINV[1]", "MINV[2]", "L4[1]", "L4[2]", "def-J[1]", "def-J[2]"}) {
    INFO(rule);
    CHECK(uses(d, rule));
  }
  for (const auto& r : rewrite::rules_used(d)) CHECK(r.find('[') != std::string::npos);  // arm rules only
  CHECK(d.cost.order == 1);
  CHECK(d.input_cost.order == 3);
  // Steps chain, and (the --check of soac derive) every form has the input's value, dense
  // and by sweeps, on baxter and on random two-arm robots.
  ir::Expr at = d.input;
  for (const auto& s : d.steps) {
    CHECK(s.before == at);
    at = s.after;
  }
  for (const Subject& s : {baxter(), two_random_arms(false), two_random_arms(true)}) {
    const interp::Evaluation ev = evaluate(s, 9);
    // Arms 1 and 2 of the derivation are the subject's arms a and b.
    const MatX want = interp::eval_dense(ev, remap(d.input, s.a, s.b));
    for (const auto& step : d.steps) {
      INFO(s.what << ": step " << step.rule);
      const ir::Expr after = remap(step.after, s.a, s.b);
      CHECK(relative_difference(want, interp::eval_dense(ev, after)) < 1e-9);
      CHECK(relative_difference(want, interp::eval_sweeps(ev, after)) < 1e-9);
    }
  }
}
