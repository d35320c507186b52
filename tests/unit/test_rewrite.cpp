// The rewrite stage (compiler/rewrite/rewrite.hpp): normalisation, matching, rules from the
// identity library, the cost model, the derivations the papers make by hand (found
// unaided), termination on random input, and -- the property that makes it safe --
// every rewritten form evaluates (dense) to the same matrix as its input on random trees.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <random>

#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "interp/interpreter.hpp"
#include "rewrite/rewrite.hpp"
#include "support/error.hpp"
#include "pipeline/pipeline.hpp"
#include "support/pipeline.hpp"
#include "support/test_support.hpp"
#include "syntax/syntax.hpp"
#include "verify/verify.hpp"

namespace {

using namespace soa;
using rewrite::Derivation;
using rewrite::Rule;

ir::Expr parse(const std::string& text) {
  return syntax::parse_expression(std::make_shared<syntax::Source>(syntax::Source{"<test>", text}));
}

std::vector<rewrite::IdentitySpec> library_identities() {
  const syntax::Module m = syntax::load_module(test::source_path("grammar/identities.soa"));
  std::vector<rewrite::IdentitySpec> out;
  for (const auto& id : m.identities) out.push_back(pipeline::identity_spec(id));
  return out;
}

const std::vector<Rule>& library() {
  static const std::vector<Rule> rules = rewrite::rules_from_identities(library_identities());
  return rules;
}

// The library without the identities that state a derivation's result outright, so that
// the engine has to find the derivation from the lemmas.
const std::vector<Rule>& lemmas_only() {
  static const std::vector<Rule> rules = [] {
    auto ids = library_identities();
    std::erase_if(ids, [](const auto& i) { return i.name == "LAMBDA" || i.name == "TIPF" || i.name == "ACC"; });
    return rewrite::rules_from_identities(ids);
  }();
  return rules;
}

bool uses(const Derivation& d, const std::string& prefix) {
  for (const auto& r : rewrite::rules_used(d))
    if (r.rfind(prefix, 0) == 0) return true;
  return false;
}

std::size_t count_uses(const Derivation& d, const std::string& prefix) {
  std::size_t n = 0;
  for (const auto& r : rewrite::rules_used(d)) n += r.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

// Same canonical form: equal up to term order and the other harmless differences that
// normalisation removes.
void check_final(const Derivation& d, const std::string& expected) {
  INFO(rewrite::explain(d));
  CHECK(ir::print(rewrite::normalize(d.final)) == ir::print(rewrite::normalize(parse(expected))));
  CHECK(rewrite::normalize(d.final) == rewrite::normalize(parse(expected)));
}

// Consecutive steps chain, and the recorded costs are those of the forms.
void check_chain(const Derivation& d) {
  ir::Expr at = d.input;
  for (const auto& s : d.steps) {
    CHECK(s.before == at);
    CHECK(s.site_in_before != nullptr);
    at = s.after;
  }
  CHECK(at == d.final);
  CHECK_FALSE(d.input_cost < d.cost);
}

}  // namespace

// ---- normalisation ----------------------------------------------------------------------------

TEST_CASE("normalisation: a table of inputs and their canonical forms", "[rewrite][normalize]") {
  // Expected forms are written in canonical structure and compared structurally (not as
  // printed text), so the table does not depend on the printer.
  const std::vector<std::pair<std::string, std::string>> table = {
      {"(H phi K)*", "K* phi* H*"},        // (AB)* = B* A*
      {"(phi + psi)*", "phi* + psi*"},     // (A + B)* = A* + B*
      {"(2 phi)*", "2 phi*"},              // (cA)* = c A*
      {"(I + phi)*", "I + phi*"},          // I* = I
      {"(H M H*)*", "H M H*"},             // M* = M
      {"(P phi)*", "phi* P"},              // P* = P
      {"(D + calM + D*)*", "2 D + calM"},  // symmetric symbols
      {"(phi^-1)*", "phi*^-1"},            // (A^-1)* = (A*)^-1
      {"((I + H phi K)^-1)*", "(I + K* phi* H*)^-1"},
      {"phi**", "phi"},
      {"H I phi", "H phi"},                // identity factors removed
      {"2 (3 phi)", "6 phi"},              // scales folded
      {"H (2 phi) (-1 K)", "-2 H phi K"},  // scales pulled out of products
      {"phi + phi", "2 phi"},              // like terms combined
      {"2 phi - 2 psi", "2 (phi - psi)"},  // common coefficient
      {"-phi - 2 psi", "-(phi + 2 psi)"},  // all-negative sum
      {"-C + T", "T - C"},                 // positive terms first
      {"phi + I", "I + phi"},
      {"(phi M)^-1", "M^-1 phi^-1"},  // square invertible factors
      {"(phi M phi*)^-1", "phi*^-1 M^-1 phi^-1"},
      {"(H phi H*)^-1", "(H phi H*)^-1"},  // H is not square: kept
      {"(phi K H)^-1", "(phi K H)^-1"},    // K H is singular: kept
      {"(-2 phi)^-1", "-0.5 phi^-1"},
      {"phi phi^-1 H*", "H*"},  // X X^-1 cancelled
      {"H* D^-1 D H", "H* H"},
      {"(I - H psi K)* D^-1", "(I - K* psi* H*) D^-1"},
      {"calM^-1 (T - H phi (M phi* a + b))", "calM^-1 (T - H phi (b + M phi* a))"},
  };
  for (const auto& [input, expected] : table) {
    INFO(input << "  ->  " << ir::print(rewrite::normalize(parse(input))) << ", expected " << expected);
    CHECK(rewrite::normalize(parse(input)) == parse(expected));
  }
}

TEST_CASE("normalisation absorbs zeros", "[rewrite][normalize]") {
  CHECK(rewrite::normalize(parse("phi - phi")) == ir::zero());
  CHECK(rewrite::normalize(parse("H 0 phi")) == ir::zero());
  CHECK(rewrite::normalize(parse("H (phi - phi) + H psi")) == parse("H psi"));
}

TEST_CASE("present() folds adjoints outward for people", "[rewrite][normalize]") {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"(I - H psi K)*", "(I - H psi K)*"},
      {"(I - H psi K)* D^-1 H psi B f0", "(I - H psi K)* D^-1 H psi B f0"},
      {"(H phi)*", "(H phi)*"},
      {"B* psi* H* D^-1 H psi B", "B* psi* H* D^-1 H psi B"},
      {"psi* H* D^-1 (I - H psi K) T", "psi* H* D^-1 (I - H psi K) T"},
  };
  for (const auto& [input, expected] : table) {
    const ir::Expr p = rewrite::present(parse(input));
    INFO(input << "  ->  " << ir::print(p));
    CHECK(p == parse(expected));
    CHECK(rewrite::normalize(p) == rewrite::normalize(parse(input)));
  }
}

// ---- matching ---------------------------------------------------------------------------------

TEST_CASE("matching: contiguous sub-products, inside sums, adjoints, inverses, scales", "[rewrite][match]") {
  using Kind = rewrite::Site::Kind;
  auto find = [](const std::string& target, const std::string& pattern) {
    return rewrite::find_matches(rewrite::normalize(parse(target)), rewrite::normalize(parse(pattern)));
  };
  {
    const auto m = find("H phi M phi* H* qdd", "phi M phi*");
    REQUIRE(m.size() == 1);
    CHECK(m[0].kind == Kind::Factors);
    CHECK(m[0].path.empty());
    CHECK(m[0].begin == 1);
    CHECK(m[0].end == 4);
  }
  CHECK(find("H phi M phi* H* qdd", "phi* H*").size() == 1);
  CHECK(find("H phi M phi* H* qdd", "phi H*").empty());  // not contiguous
  CHECK(find("H phi M phi* H* qdd", "M phi").empty());   // not commutative
  CHECK(find("H phi M phi* H* + H phi K D", "H phi").size() == 2);
  CHECK(find("(I + H phi K)^-1 T", "H phi").size() == 1);  // inside an inverse of a sum
  CHECK(find("3 (H phi K)* T", "phi* H*").size() == 1);    // inside a scaled adjoint
  {
    // A sum pattern matches a factor that is that sum, and a sum that contains its terms.
    const auto whole = find("D^-1 (I - H psi K) T", "I - H psi K");
    REQUIRE(whole.size() == 1);
    CHECK(whole[0].kind == Kind::Node);
    const auto part = find("(I - H psi K + D) T", "I - H psi K");
    REQUIRE(part.size() == 1);
    CHECK(part[0].kind == Kind::Terms);
    CHECK(part[0].terms.size() == 2);
    const auto negated = find("(H psi K - I) T", "I - H psi K");  // -1 x the pattern
    REQUIRE(negated.size() == 1);
    CHECK(negated[0].factor == -1.0);
  }
  {
    // Replacing keeps the rest: (I - H psi K) H phi M -> H psi M.
    const ir::Expr target = rewrite::normalize(parse("D^-1 (I - H psi K) H phi M phi* H*"));
    const auto m = rewrite::find_matches(target, rewrite::normalize(parse("(I - H psi K) H phi")));
    REQUIRE(m.size() == 1);
    CHECK(rewrite::normalize(rewrite::replace_at(target, m[0], parse("H psi"))) == parse("D^-1 H psi M phi* H*"));
    const ir::Expr t2 = rewrite::normalize(parse("(H psi K - I) T"));
    const auto m2 = rewrite::find_matches(t2, rewrite::normalize(parse("I - H psi K")));
    REQUIRE(m2.size() == 1);
    CHECK(rewrite::normalize(rewrite::replace_at(t2, m2[0], parse("(I + H phi K)^-1"))) ==
          rewrite::normalize(parse("-(I + H phi K)^-1 T")));
  }
}

// ---- rules ------------------------------------------------------------------------------------

TEST_CASE("rules from the identity library", "[rewrite][rules]") {
  const auto& rules = library();
  auto find = [&](const std::string& name) -> const Rule* {
    for (const auto& r : rules)
      if (r.name == name) return &r;
    return nullptr;
  };
  REQUIRE(find("L4"));
  CHECK(find("L4")->lhs == rewrite::normalize(parse("(I - H psi K) H phi")));
  CHECK(find("L4")->rhs == parse("H psi"));
  CHECK(find("L4")->citation == "000 Lemma 5.1, 002 Lemma 4");
  REQUIRE(find("L4 (reversed)"));
  CHECK(find("L4 (reversed)")->direction == rewrite::Direction::RightToLeft);
  REQUIRE(find("MINV"));
  CHECK(find("MINV")->lhs == parse("calM^-1"));
  REQUIRE(find("diff (1 -> 3)"));  // three sides: every pair
  CHECK(find("diff (1 -> 3)")->rhs == rewrite::normalize(parse("psi K H phi")));
  CHECK(find("LAMBDA") == nullptr);   // a derived result: rewrite=none, verified only
  CHECK(find("def-phi") == nullptr);  // rewrite=none
  CHECK(find("def-phi (reversed)") == nullptr);
  REQUIRE(find("OMEGA"));
  CHECK(find("OMEGA")->guards.serial_only);
  REQUIRE(find("EOM"));
  CHECK(find("EOM")->guards.introduces_vector);  // T -> calM qdd + C + J* f0
  CHECK(find("def-C (reversed)")->guards.introduces_vector);
  REQUIRE(find("MINV"));
  CHECK_FALSE(find("MINV")->guards.introduces_vector);
  // Adjoint forms: generated when new, named NAME*; L4's is stated as L4-adjoint already.
  REQUIRE(find("INV-L*"));
  CHECK(find("INV-L*")->lhs == rewrite::normalize(parse("(I + H phi K)*^-1")));
  CHECK(find("INV-L*")->adjoint);
  REQUIRE(find("def-J*"));
  CHECK(find("def-J*")->lhs == parse("J*"));
  CHECK(find("L4*") == nullptr);
  CHECK(find("L4-adjoint"));
  CHECK(find("NE*") == nullptr);  // calM is symmetric: NE is its own adjoint
}

TEST_CASE("rules from neutral identity specs: directions, names, false identities", "[rewrite][rules]") {
  std::vector<rewrite::IdentitySpec> ids = {
      {"X", "c1", {parse("phi"), parse("psi"), parse("E_phi")}, {}},
      {"Y", "c2", {parse("H phi"), parse("H psi")}, {"rewrite=ltr"}},
      {"Z", "c3", {parse("H phi"), parse("H")}, {"false"}},
      {"W", "c4", {parse("M"), parse("P")}, {"rewrite=rtl", "serial"}},
  };
  const auto rules = rewrite::rules_from_identities(ids);
  std::vector<std::string> names;
  for (const auto& r : rules) names.push_back(r.name);
  const std::vector<std::string> expected = {
      "X",  "X (reversed)",  "X (1 -> 3)",  "X (3 -> 1)",  "X (2 -> 3)",  "X (3 -> 2)",  "Y", "W (reversed)",
      "X*", "X* (reversed)", "X* (1 -> 3)", "X* (3 -> 1)", "X* (2 -> 3)", "X* (3 -> 2)", "Y*"};
  CHECK(names == expected);
  CHECK(rules.back().lhs == parse("phi* H*"));
  CHECK(rules[7].guards.serial_only);
  CHECK(rules[7].lhs == parse("P"));
}

// ---- cost model -------------------------------------------------------------------------------

TEST_CASE("cost model: order, sweeps, and the total order", "[rewrite][cost]") {
  auto c = [](const std::string& text) { return rewrite::cost(rewrite::normalize(parse(text)), test::definitions()); };
  CHECK(c("calM^-1 T").order == 3);  // dense solve
  CHECK(c("(I - H psi K)* D^-1 (I - H psi K) T").order == 1);
  CHECK(c("(I - H psi K)* D^-1 (I - H psi K) T").sweeps == 2);
  CHECK(c("H phi M phi* H* qdd").sweeps == 2);
  CHECK(c("calM qdd").sweeps == 2);  // by its definition ...
  CHECK(c("calM qdd").opaque == 1);  // ... left for the lowering
  CHECK(c("calM").order == 2);       // N columns of O(N)
  CHECK(c("calM^-1").order == 3);
  CHECK(c("(I - H psi K)* D^-1 (I - H psi K)").order == 2);
  CHECK(c("J calM^-1 J*").order == 3);
  CHECK(c("B* psi* H* D^-1 H psi B").order == 1);  // 6m columns: O(N)
  CHECK(c("(I + H phi K)^-1 T").sweeps == 1);      // substitution sweep
  CHECK(c("K T").sweeps == 0);                     // a one-level shift
  CHECK(c("D^-1 T").sweeps == 0);
  CHECK(c("T").order == 0);
  CHECK(c("I - H psi K") < c("(I + H phi K)^-1"));
  CHECK(c("H phi M phi* H*") < c("calM"));
  CHECK(c("T - H psi (K T + b)") < c("(I - H psi K) T - H psi b"));
  CHECK_FALSE(c("calM") < c("calM"));
  CHECK(rewrite::to_string(c("psi* H* D^-1 (I - H psi K) T")).rfind("O(N), 2 sweeps", 0) == 0);
  CHECK(rewrite::causality(parse("H phi K")) == rewrite::Causality::StrictlyCausal);
  CHECK(rewrite::causality(parse("I + H phi K")) == rewrite::Causality::Causal);
  CHECK(rewrite::causality(parse("K* phi*")) == rewrite::Causality::StrictlyAnticausal);
  CHECK(rewrite::causality(parse("phi M phi*")) == rewrite::Causality::Full);
  CHECK(rewrite::known_invertible(parse("I - H psi K")));
  CHECK_FALSE(rewrite::known_invertible(parse("K H")));
  CHECK_FALSE(rewrite::known_invertible(parse("taubar")));
}

TEST_CASE("cost model: a vector computed twice is priced once, a tip-space inverse by its columns", "[rewrite][cost]") {
  auto c = [](const std::string& text) { return rewrite::cost(rewrite::normalize(parse(text)), test::definitions()); };
  // H psi* H* D^-1 applied to the (I - H psi K) T already computed: one sweep more, not two.
  CHECK(c("(I - H psi K) T").sweeps == 1);
  CHECK(c("(I - H psi K) T + H psi* H* D^-1 (I - H psi K) T").sweeps == 2);
  CHECK(c("(I - H psi K) T + (I - H psi K) qd").sweeps == 2);  // another vector: no sharing
  CHECK(c("(B* psi* H* D^-1 H psi B)^-1 f0").order == 1);
  CHECK(c("(J calM^-1 J*)^-1 f0").order == 3);  // until the rewriter removes calM^-1
}

// ---- the derivations --------------------------------------------------------------------------

// 004's sensitivity from first principles: the library without SENS and SENS-CRB (which
// state the result), so the derivation has to go through NE, the product rule and the
// operators' own derivatives; its result equals d(calM)/dq_i and the composite-body form
// numerically, coordinate by coordinate, on a robot with ball and free joints and on the Panda.
TEST_CASE("derivation 8: d(calM)/dq_i by NE, the product rule and D-phi, D-H, D-M", "[rewrite][derive]") {
  static const std::vector<Rule> rules = [] {
    auto ids = library_identities();
    std::erase_if(ids, [](const auto& i) { return i.name == "SENS" || i.name == "SENS-CRB"; });
    return rewrite::rules_from_identities(ids);
  }();
  const Derivation d = rewrite::derive(parse("d(calM)/dq_i"), rules, test::rewrite_options());
  INFO(rewrite::explain(d));
  check_chain(d);
  for (const char* rule : {"NE", "product rule", "D-M", "D-H", "D-phi"}) CHECK(uses(d, rule));
  const auto derivative_left = [](const auto& self, const ir::Expr& e) -> bool {
    if (e.is(ir::Op::Derivative)) return true;
    return std::any_of(e.kids().begin(), e.kids().end(), [&](const ir::Expr& k) { return self(self, k); });
  };
  CHECK_FALSE(derivative_left(derivative_left, d.final));
  CHECK(d.cost.order == 2);
  const std::string found = ir::print(rewrite::present(d.final));
  RandomTreeOptions o;
  o.bodies = 6;
  o.floating = true;
  const Robot tree = random_tree(21, o);
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  for (const Robot* robot : {&tree, &panda}) {
    const verify::Subject subject{robot, robot->default_tips(), 0};
    for (const std::string& claim :
         {found + " = d(calM)/dq_i",
          found + " = H (phitilde (X_i R + R X_i*) phitilde* + phitilde X_i phi R + R phi* X_i* phitilde*) H*"}) {
      const auto src = std::make_shared<syntax::Source>(syntax::Source{"<test>", claim});
      const verify::Result r = verify::check({claim, "test", syntax::parse_equation(src)}, subject, test::definitions(),
                                             verify::Options{3, 5, 1e-9});
      INFO(robot->source << ": " << claim << ": max rel " << r.max_rel << " " << r.note);
      CHECK(r.verdict == verify::Verdict::Pass);
    }
  }
}

// A route the user chooses: --via SENS-CRB starts from 004's composite-body form (which
// the search, left alone, does not pick: it costs more than the product rule's form), the
// search goes on from there, and every form on the way equals d(calM)/dq_i.
TEST_CASE("derivation 8, by --via: d(calM)/dq_i in 004's composite-body form", "[rewrite][derive]") {
  rewrite::Options options = test::rewrite_options();
  options.via = {"SENS-CRB"};
  const Derivation d = rewrite::derive(parse("d(calM)/dq_i"), library(), options);
  INFO(rewrite::explain(d));
  check_chain(d);
  REQUIRE_FALSE(d.steps.empty());
  CHECK(d.steps.front().rule == "SENS-CRB");
  CHECK(d.steps.front().citation == "004 Lemma 5.2, generalised");
  const std::string found = ir::print(rewrite::present(d.final));
  // Composite-body form: the composite inertia R, no body inertia M left.
  CHECK_THAT(found, Catch::Contains("R") && !Catch::Contains("M"));
  const Derivation free = rewrite::derive(parse("d(calM)/dq_i"), library(), test::rewrite_options());
  CHECK(free.cost < d.cost);
  RandomTreeOptions o;
  o.bodies = 6;
  o.floating = true;
  const Robot tree = random_tree(22, o);
  for (const rewrite::Step* step : {&d.steps.front(), &d.steps.back()}) {
    const std::string claim = ir::print(step->after) + " = d(calM)/dq_i";
    const auto src = std::make_shared<syntax::Source>(syntax::Source{"<test>", claim});
    const verify::Result r =
        verify::check({claim, "test", syntax::parse_equation(src)}, {&tree, tree.default_tips(), 0},
                      test::definitions(), verify::Options{3, 5, 1e-9});
    INFO(claim << ": max rel " << r.max_rel << " " << r.note);
    CHECK(r.verdict == verify::Verdict::Pass);
  }
  // A name no rule has, or a rule that does not apply: one clear error naming it.
  options.via = {"NO-SUCH-RULE"};
  CHECK_THROWS_WITH(rewrite::derive(parse("d(calM)/dq_i"), library(), options),
                    Catch::Contains("--via NO-SUCH-RULE: no rule of the identity library has this name"));
  options.via = {"SENS-CRB"};
  CHECK_THROWS_WITH(rewrite::derive(parse("H phi M"), library(), options),
                    Catch::Contains("--via SENS-CRB: the rule") && Catch::Contains("does not apply to H phi M"));
}

// 004 prints its sensitivities for revolute joints, with phi where a ball joint or a
// free-flyer needs phitilde: the printed forms hold on the Panda and fail on such a tree.
TEST_CASE("004's printed sensitivity forms hold for 1-dof joints and fail for ball and free joints",
          "[rewrite][derive]") {
  RandomTreeOptions o;
  o.bodies = 6;
  o.floating = true;
  const Robot tree = random_tree(21, o);
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  for (const std::string claim :
       {"d(calM)/dq_i = H phi (X_i phi M + M phi* X_i*) phi* H*",
        "d(calM)/dq_i = H (phi (X_i R + R X_i*) phi* + phi X_i phitilde R + R phitilde* X_i* phi*) H*"}) {
    const auto src = std::make_shared<syntax::Source>(syntax::Source{"<test>", claim});
    const verify::Claim c{claim, "test", syntax::parse_equation(src)};
    INFO(claim);
    CHECK(
        verify::check(c, {&panda, panda.default_tips(), 0}, test::definitions(), verify::Options{3, 5, 1e-9}).verdict ==
        verify::Verdict::Pass);
    CHECK(verify::check(c, {&tree, tree.default_tips(), 0}, test::definitions(), verify::Options{3, 5, 1e-9}).verdict ==
          verify::Verdict::Fail);
  }
  // d(phi)/dq_i is phitilde X_i phi, not phi X_i phi (they differ by X_i phi).
  const auto src = std::make_shared<syntax::Source>(syntax::Source{"<test>", "d(phi)/dq_i = phi X_i phi"});
  CHECK(verify::check({"", "test", syntax::parse_equation(src)}, {&panda, panda.default_tips(), 0}, test::definitions(),
                      verify::Options{2, 5, 1e-9})
            .verdict == verify::Verdict::Fail);
}

TEST_CASE("derivation 1: J calM^-1 J* -> B* psi* H* D^-1 H psi B", "[rewrite][derive]") {
  const Derivation d = rewrite::derive(parse("J calM^-1 J*"), lemmas_only(), test::rewrite_options());
  check_final(d, "B* psi* H* D^-1 H psi B");
  check_chain(d);
  CHECK(uses(d, "def-J"));
  CHECK(uses(d, "MINV"));
  CHECK(count_uses(d, "L4") == 2);  // L4 and its adjoint
  CHECK(d.cost.order == 1);
  // The library states LAMBDA as a result (rewrite=none): the whole library derives it too.
  const Derivation e = rewrite::derive(parse("J calM^-1 J*"), library(), test::rewrite_options());
  check_final(e, "B* psi* H* D^-1 H psi B");
  CHECK(rewrite::rules_used(e) == std::vector<std::string>{"MINV", "def-J", "L4-adjoint", "def-J", "L4"});
}

TEST_CASE("derivation 2: calM^-1 J* f0 -> (I - H psi K)* D^-1 H psi B f0", "[rewrite][derive]") {
  const Derivation d = rewrite::derive(parse("calM^-1 J* f0"), lemmas_only(), test::rewrite_options());
  check_final(d, "(I - H psi K)* D^-1 H psi B f0");
  check_chain(d);
  CHECK(uses(d, "MINV"));
  CHECK(uses(d, "L4"));
  const Derivation e = rewrite::derive(parse("calM^-1 J* f0"), library(), test::rewrite_options());
  check_final(e, "(I - H psi K)* D^-1 H psi B f0");
}

TEST_CASE("derivation 3: phi* H* calM^-1 T -> psi* H* D^-1 (I - H psi K) T", "[rewrite][derive]") {
  for (const char* y : {"T", "qdd"}) {
    const std::string in = std::string("phi* H* calM^-1 (") + y + ")";
    const Derivation d = rewrite::derive(parse(in), lemmas_only(), test::rewrite_options());
    check_final(d, std::string("psi* H* D^-1 (I - H psi K) (") + y + ")");
    check_chain(d);
    CHECK(uses(d, "MINV"));
    CHECK(uses(d, "L4"));
  }
  const Derivation e = rewrite::derive(parse("phi* H* calM^-1 T"), library(), test::rewrite_options());
  check_final(e, "psi* H* D^-1 (I - H psi K) T");
  // C written out by its definition (def-C) meets the filter, and L4 removes its sweep.
  const Derivation c = rewrite::derive(parse("phi* H* calM^-1 (T - C)"), lemmas_only(), test::rewrite_options());
  check_final(c, "psi* H* D^-1 (T - H psi (b + K T + M phi* a))");
  check_chain(c);
  CHECK(uses(c, "def-C"));
  CHECK(c.cost.sweeps == 3);
}

TEST_CASE("derivation 4: calM^-1, (I + H phi K)^-1 and calM", "[rewrite][derive]") {
  const Derivation minv = rewrite::derive(parse("calM^-1"), library(), test::rewrite_options());
  check_final(minv, "(I - H psi K)* D^-1 (I - H psi K)");
  CHECK(rewrite::rules_used(minv) == std::vector<std::string>{"MINV"});
  CHECK(minv.cost.order == 2);

  const Derivation invl = rewrite::derive(parse("(I + H phi K)^-1"), library(), test::rewrite_options());
  check_final(invl, "I - H psi K");
  CHECK(rewrite::rules_used(invl) == std::vector<std::string>{"INV-L"});

  // calM applied by its Newton-Euler factorisation (2 sweeps per column). The composite-
  // body split CRB-H (H R H* + H phitilde R H* + H R phitilde* H*) costs as many sweeps
  // per column and more flops; it is what the lowering uses to *form* calM in O(N^2).
  const Derivation ne = rewrite::derive(parse("calM"), library(), test::rewrite_options());
  check_final(ne, "H phi M phi* H*");
  CHECK(rewrite::rules_used(ne) == std::vector<std::string>{"NE"});
  CHECK(rewrite::cost(parse("H phi M phi* H*"), test::definitions()) <
        rewrite::cost(rewrite::normalize(parse("H R H* + H phitilde R H* + H R phitilde* H*")), test::definitions()));
}

TEST_CASE("derivation 5: forward dynamics loses a sweep (001 Algorithm 3)", "[rewrite][derive]") {
  const ir::Expr in = parse("calM^-1 (T - H phi (M phi* a + b))");
  for (const auto* rules : {&lemmas_only(), &library()}) {
    const Derivation d = rewrite::derive(in, *rules, test::rewrite_options());
    check_final(d, "(I - H psi K)* D^-1 (T - H psi (K T + M phi* a + b))");
    check_chain(d);
    CHECK(uses(d, "MINV"));
    CHECK(uses(d, "distribute"));
    CHECK(uses(d, "L4"));
    CHECK(uses(d, "collect"));
    // One sweep fewer than the 4-sweep Algorithm 1 (MINV applied to the bias-free torque).
    const auto minv_form = rewrite::normalize(parse("(I - H psi K)* D^-1 (I - H psi K) (T - H phi (M phi* a + b))"));
    CHECK(rewrite::cost(minv_form, test::definitions()).sweeps == 4);
    CHECK(d.cost.sweeps == 3);
    CHECK(d.cost.order == 1);
  }
}

TEST_CASE(
    "forward dynamics with tip forces: MINV, def-J, def-C, L4 and collection give the 3 sweeps of the articulated-body "
    "algorithm",
    "[rewrite][derive]") {
  const Derivation d = rewrite::derive(parse("calM^-1 (T - C - J* f0)"), lemmas_only(), test::rewrite_options());
  // C is written out by def-C (a defined vector costs its definition), so that L4 removes
  // the sweep of H phi in C as in J* f0: the articulated-body algorithm's 3 sweeps.
  check_final(d, "(I - H psi K)* D^-1 (T - H psi (b + B f0 + K T + M phi* a))");
  check_chain(d);
  CHECK(uses(d, "MINV"));
  CHECK(uses(d, "def-J"));
  CHECK(uses(d, "def-C"));
  CHECK(uses(d, "L4"));
  CHECK(d.cost.sweeps == 3);
}

TEST_CASE("derivation 6: a sum of operational-space inverse inertias, each term O(N)", "[rewrite][derive]") {
  const Derivation d = rewrite::derive(parse("J calM^-1 J* + J calM^-1 J*"), lemmas_only(), test::rewrite_options());
  check_final(d, "2 B* psi* H* D^-1 H psi B");
  const Derivation s =
      rewrite::derive(parse("J calM^-1 J* - 0.5 J calM^-1 J* + 3 B* Omega B"), library(), test::rewrite_options());
  check_final(s, "3.5 B* psi* H* D^-1 H psi B");
  const Derivation t = rewrite::derive(parse("J calM^-1 J* + J J*"), library(), test::rewrite_options());
  CHECK(t.cost.order == 1);
  CHECK_FALSE(ir::mentions(t.final, "calM"));
  // Two different terms (until the vocabulary has J1, calM1, ...), each by the lemmas.
  const Derivation u =
      rewrite::derive(parse("J calM^-1 J* + B* B J calM^-1 J* B* B"), lemmas_only(), test::rewrite_options());
  INFO(rewrite::explain(u));
  CHECK(u.cost.order == 1);
  CHECK_FALSE(ir::mentions(u.final, "calM"));
  CHECK_FALSE(ir::mentions(u.final, "phi"));
  CHECK(count_uses(u, "MINV") == 2);
}

TEST_CASE("derivation 8: welded tips, free dynamics, one tip-space solve, TIPF's correction (000 eqs. 5.6-5.11)",
          "[rewrite][derive]") {
  const Derivation d =
      rewrite::derive(parse("calM^-1 (T - C - J* (J calM^-1 J*)^-1 (J calM^-1 (T - C) + B* phi* abar))"), library(),
                      test::rewrite_options());
  // Inside the inverse, LAMBDA's O(N) form; the correction reuses (I - H psi K) (T - C).
  const std::string y = "(I - H psi K) (T - H phi (b + M phi* a))";
  check_final(d, "(I - H psi K)* D^-1 (" + y + " - H psi B (B* psi* H* D^-1 H psi B)^-1 B* (phi* abar + psi* H* D^-1 " +
                     y + "))");
  CHECK(d.cost.order == 1);
  CHECK(uses(d, "MINV"));
  CHECK(uses(d, "L4"));
}

TEST_CASE("it leaves alone what it cannot improve", "[rewrite][derive]") {
  for (const char* text : {"H phi M phi* H* qdd", "psi* H* D^-1 (I - H psi K) T", "B* psi* H* D^-1 H psi B",
                           "T - H phi (b + M phi* a)", "phi* H* qd", "(H psi K - I) T"}) {
    const ir::Expr in = parse(text);
    const Derivation d = rewrite::derive(in, library(), test::rewrite_options());
    INFO(rewrite::explain(d));
    CHECK(d.steps.empty());
    CHECK(d.final == in);
  }
}

// ---- random input -----------------------------------------------------------------------------

namespace {

using ir::Dim;

// Random well-shaped expressions, built shape first.
class RandomExpr {
public:
  explicit RandomExpr(std::uint64_t seed) : rng_(seed) {}

  ir::Expr operator()(Dim rows, Dim cols, int depth) {
    if (cols == Dim::One) return vector_expr(rows, depth);
    if (depth <= 0 || pick(10) < 3) return leaf(rows, cols);
    switch (pick(6)) {
      case 0:
      case 1: {
        const Dim mid = middle();
        return ir::product({(*this)(rows, mid, depth - 1), (*this)(mid, cols, depth - 1)});
      }
      case 2: return ir::sum({(*this)(rows, cols, depth - 1), ir::scale(sign(), (*this)(rows, cols, depth - 1))});
      case 3: return ir::adjoint((*this)(cols, rows, depth - 1));
      case 4: return rows == cols ? invertible(rows) : leaf(rows, cols);
      default: return ir::scale(pick(2) ? 2.0 : -1.0, (*this)(rows, cols, depth - 1));
    }
  }

private:
  std::mt19937_64 rng_;

  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }
  double sign() { return pick(2) ? 1.0 : -1.0; }
  Dim middle() {
    static constexpr Dim kDims[] = {Dim::Joint, Dim::Spatial, Dim::Spatial, Dim::Tip};
    return kDims[pick(4)];
  }

  ir::Expr leaf(Dim rows, Dim cols) {
    std::vector<ir::Expr> options;
    for (const auto& s : ir::vocabulary()) {
      if (s.structure == ir::Structure::Vector) continue;
      if (s.rows == rows && s.cols == cols) options.push_back(ir::symbol(std::string(s.name)));
      if (s.rows == cols && s.cols == rows) options.push_back(ir::adjoint(ir::symbol(std::string(s.name))));
    }
    if (options.empty()) {  // e.g. tip x tip: go through the bodies
      return ir::product({leaf(rows, Dim::Spatial), leaf(Dim::Spatial, cols)});
    }
    return options[pick(options.size())];
  }

  // Square operators that are invertible on every robot (reference 3).
  ir::Expr invertible(Dim d) {
    using ir::symbol;
    if (d == Dim::Joint) {
      const ir::Expr opts[] = {symbol("calM"), symbol("D"),
                               ir::sum({ir::identity(), ir::product({symbol("H"), symbol("phi"), symbol("K")})}),
                               ir::sub(ir::identity(), ir::product({symbol("H"), symbol("psi"), symbol("K")}))};
      return ir::inverse(opts[pick(std::size(opts))]);
    }
    if (d == Dim::Spatial) {
      const ir::Expr opts[] = {symbol("phi"),
                               symbol("psi"),
                               symbol("M"),
                               symbol("P"),
                               ir::sum({ir::identity(), symbol("E_phi")}),
                               ir::sum({ir::identity(), ir::product({symbol("K"), symbol("H")})})};
      return ir::inverse(opts[pick(std::size(opts))]);
    }
    return ir::inverse(ir::sum({ir::identity(), ir::product({symbol("J"), ir::adjoint(symbol("J"))})}));
  }

  ir::Expr vector_expr(Dim rows, int depth) {
    static const std::map<Dim, std::vector<const char*>> kVectors = {
        {Dim::Joint, {"T", "qd", "qdd", "C"}}, {Dim::Spatial, {"a", "b", "V"}}, {Dim::Tip, {"f0"}}};
    const auto& v = kVectors.at(rows);
    const ir::Expr base = ir::symbol(v[pick(v.size())]);
    if (depth <= 0 || pick(10) < 2) return base;
    if (pick(4) == 0) return ir::sum({vector_expr(rows, depth - 1), ir::scale(sign(), vector_expr(rows, depth - 1))});
    const Dim mid = pick(3) == 0 ? Dim::Spatial : Dim::Joint;
    return ir::product({(*this)(rows, mid, depth - 1), vector_expr(mid, depth - 1)});
  }
};

double relative_difference(const MatX& a, const MatX& b) {
  const double scale = std::max({a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff(), 1.0});
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

std::vector<ir::Expr> random_expressions(std::uint64_t seed, std::size_t count) {
  RandomExpr gen(seed);
  std::vector<ir::Expr> out;
  const Dim shapes[][2] = {{Dim::Joint, Dim::One},   {Dim::Joint, Dim::One}, {Dim::Spatial, Dim::One},
                           {Dim::Joint, Dim::Joint}, {Dim::Tip, Dim::Tip},   {Dim::Spatial, Dim::Joint}};
  for (std::size_t i = 0; out.size() < count; ++i) {
    const auto& s = shapes[i % std::size(shapes)];
    ir::Expr e = gen(s[0], s[1], 3);
    try {
      ir::infer_shape(e);
    } catch (const ir::ShapeError&) {
      continue;
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

TEST_CASE("the search terminates quickly on random well-shaped expressions", "[rewrite][random]") {
  for (const auto& e : random_expressions(1234, 40)) {
    const auto t0 = std::chrono::steady_clock::now();
    const Derivation d = rewrite::derive(e, library(), test::rewrite_options());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(rewrite::explain(d) << "in " << seconds << " s");
    CHECK(seconds < 20.0);
    check_chain(d);
    CHECK(rewrite::normalize(d.final) == d.final);
    CHECK(rewrite::normalize(rewrite::normalize(e)) == rewrite::normalize(e));
    CHECK(rewrite::normalize(rewrite::present(e)) == rewrite::normalize(e));
  }
}

TEST_CASE("rewritten forms evaluate (dense) equal to their input on random trees", "[rewrite][random][interp]") {
  std::vector<ir::Expr> inputs = {parse("J calM^-1 J*"),
                                  parse("calM^-1 J* f0"),
                                  parse("phi* H* calM^-1 T"),
                                  parse("calM^-1"),
                                  parse("(I + H phi K)^-1"),
                                  parse("calM"),
                                  parse("calM^-1 (T - H phi (M phi* a + b))"),
                                  parse("J calM^-1 J* + 2 J calM^-1 J*")};
  for (auto& e : random_expressions(77, 24)) inputs.push_back(std::move(e));
  std::vector<Derivation> derivations;
  for (const auto& e : inputs) derivations.push_back(rewrite::derive(e, lemmas_only(), test::rewrite_options()));

  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    RandomTreeOptions o;
    o.bodies = 3 + static_cast<int>(seed * 2);
    o.floating = seed == 2;
    const Robot robot = random_tree(seed, o);
    std::vector<int> tips = robot.leaf_tips();
    std::mt19937_64 rng(seed);
    const interp::Evaluation ev =
        interp::prepare(robot, random_state(robot, static_cast<int>(tips.size()), rng), tips, test::definitions());
    for (const auto& d : derivations) {
      MatX want;
      try {
        want = interp::eval_dense(ev, d.input);
      } catch (const UserError&) {
        continue;  // a singular inverse in a random input: nothing to compare
      }
      // Every step, so that a wrong step is named. A form that lost its size (0, I) is
      // compared as what it stands for.
      for (const auto& s : d.steps) {
        INFO(rewrite::explain(d) << "step " << s.rule << ": " << ir::print(s.before) << "  ->  " << ir::print(s.after));
        MatX got;
        if (s.after.is(ir::Op::Zero))
          got = MatX::Zero(want.rows(), want.cols());
        else if (s.after.is(ir::Op::Identity))
          got = MatX::Identity(want.rows(), want.cols());
        else
          got = interp::eval_dense(ev, s.after);
        CHECK(relative_difference(want, got) < 1e-8);
      }
    }
  }
}

// The search renormalises each candidate form, its parent with one path rewritten, and
// normalize() returns the subtrees it marked canonical as they are: that must give what
// normalising the same form without marks gives.
TEST_CASE("normalising a form that shares canonical subtrees equals normalising a fresh copy",
          "[rewrite][normalize][random]") {
  for (const auto& e : random_expressions(77, 40)) {
    const ir::Expr n = rewrite::normalize(e);
    CHECK(rewrite::normalize(n).get() == n.get());
    CHECK(rewrite::normalize(ir::copy(e)) == n);
    for (const Rule& r : library()) {
      const std::vector<rewrite::Site> sites = rewrite::find_matches(n, r.lhs);
      if (sites.empty()) continue;
      const ir::Expr candidate = rewrite::replace_at(n, sites.front(), r.rhs);
      INFO(ir::print(n) << " by " << r.name);
      CHECK(rewrite::normalize(candidate) == rewrite::normalize(ir::copy(candidate)));
    }
  }
}

// Matching skips the subtrees whose set of symbols lacks one of the pattern's: every
// subtree must still be found where it is.
TEST_CASE("matching finds every subtree of a form at its place", "[rewrite][match][random]") {
  for (const auto& e : random_expressions(78, 40)) {
    const ir::Expr n = rewrite::normalize(e);
    std::vector<std::vector<std::size_t>> paths{{}};
    for (std::size_t i = 0; i < paths.size(); ++i) {
      const ir::Expr& node = rewrite::node_at(n, paths[i]);
      for (std::size_t k = 0; k < node.kids().size(); ++k) {
        paths.push_back(paths[i]);
        paths.back().push_back(k);
      }
      const std::vector<rewrite::Site> sites = rewrite::find_matches(n, node);
      INFO(ir::print(n) << " at the subtree " << ir::print(node));
      // A scaled subtree c X is found as an occurrence of X, at X's path.
      std::vector<std::size_t> at = paths[i];
      if (node.is(ir::Op::Scale)) at.push_back(0);
      CHECK(std::any_of(sites.begin(), sites.end(), [&](const rewrite::Site& s) { return s.path == at; }));
    }
  }
}
