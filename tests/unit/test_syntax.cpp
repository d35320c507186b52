// The syntax stage, as a specification: text in, IR (printed as ASCII) or an error out.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "algebra/print.hpp"
#include "algebra/vocabulary.hpp"
#include "support/error.hpp"
#include "support/test_support.hpp"
#include "syntax/diagnostics.hpp"
#include "syntax/syntax.hpp"

using namespace soa;
using namespace soa::syntax;

namespace {

std::shared_ptr<const Source> text_source(std::string text, std::string name = "<command line>") {
  return std::make_shared<const Source>(Source{std::move(name), std::move(text)});
}

ir::Expr expr(const std::string& text) { return parse_expression(text_source(text)); }
std::string parsed(const std::string& text) { return ir::print(expr(text)); }

struct Failure {
  std::string message;  // what()
  std::string detail;   // the caret lines
};

template <typename F>
Failure failure_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return {e.what(), e.detail()};
  }
  FAIL("expected a UserError");
  return {};
}

}  // namespace

TEST_CASE("expressions print back in canonical ASCII", "[syntax]") {
  struct Row {
    const char* input;
    const char* printed;
  };
  const Row rows[] = {
      // names, canonical and aliased
      {"calM", "calM"},
      {"ℳ", "calM"},
      {"mathcalM", "calM"},
      {"φ", "phi"},
      {"Phi", "phi"},
      {"ψ", "psi"},
      {"Psi", "psi"},
      {"Ω", "Omega"},
      {"Υ", "Upsilon"},
      {"φ̃", "phitilde"},
      {"ψ̃", "psitilde"},
      {"Eφ", "E_phi"},
      {"E_ψ", "E_psi"},
      {"τ", "tau"},
      {"τ̄", "taubar"},
      {"α", "alpha"},
      {"q̇", "qd"},
      {"q̈", "qdd"},
      {"f₀", "f0"},
      {"H φ M φ* H*", "H phi M phi* H*"},
      {"ψ̃* Υ + Υ ψ̃", "psitilde* Upsilon + Upsilon psitilde"},
      // juxtaposed names split into the fewest known names
      {"HphiMphi*H*", "H phi M phi* H*"},
      {"(I-HpsiK)* D^-1 (I-HpsiK)", "(I - H psi K)* D^-1 (I - H psi K)"},
      {"(I-HpsiK)Hphi", "(I - H psi K) H phi"},
      {"phitildeR", "phitilde R"},
      {"psitilde*Upsilon", "psitilde* Upsilon"},
      {"H*Hphi*", "H* H phi*"},
      {"phiKHpsi", "phi K H psi"},
      {"taubar", "taubar"},
      {"tauH*", "tau H*"},
      {"qdd", "qdd"},
      {"calMqdd", "calM qdd"},
      {"E_phiphi", "E_phi phi"},
      {"φψ", "phi psi"},
      {"B*Ω B", "B* Omega B"},
      // precedence: postfix > juxtaposition > + and -
      {"phi + psi K G*", "phi + psi K G*"},
      {"(phi + psi) K", "(phi + psi) K"},
      {"(phi + psi)*", "(phi + psi)*"},
      {"phi + psi*", "phi + psi*"},
      {"phi - psi - phitilde", "phi - psi - phitilde"},
      {"phi - (psi - phitilde)", "phi - (psi - phitilde)"},
      {"phi + (psi + phitilde)", "phi + psi + phitilde"},
      {"((phi))", "phi"},
      {"(phi psi) M", "phi psi M"},
      {"phi (psi M)", "phi psi M"},
      // postfix order
      {"phi^-1*", "phi^-1*"},
      {"phi*^-1", "phi*^-1"},
      {"phi^*", "phi*"},
      {"phi⁻¹", "phi^-1"},
      {"phi**", "phi"},
      {"phi^-1^-1", "phi"},
      {"(I + H phi K)^-1", "(I + H phi K)^-1"},
      {"(H phi K)*", "(H phi K)*"},
      // scalars and unary minus
      {"2 phi", "2 phi"},
      {"2phi", "2 phi"},
      {"0.5 H K", "0.5 H K"},
      {"H 2 K", "2 H K"},
      {"2 H 3 K", "6 H K"},
      {"1 phi", "phi"},
      {"2 0.5 phi", "phi"},
      {"1e-3 phi", "0.001 phi"},
      {"2.5E2 phi", "250 phi"},
      {"-phi", "-phi"},
      {"-2 phi", "-2 phi"},
      {"-phi psi + M", "-phi psi + M"},
      {"phi - 2 psi", "phi - 2 psi"},
      {"phi - H* D H", "phi - H* D H"},
      {"-(phi + psi)", "-(phi + psi)"},
      {"2 (phi + psi)", "2 (phi + psi)"},
      {"phi (2 psi)", "phi (2 psi)"},
      {"phi (-psi)", "phi (-psi)"},
      {"-(-phi)", "phi"},
      // I and 0
      {"I - E_phi", "I - E_phi"},
      {"2 I + phi", "2 I + phi"},
      {"phi + 0", "phi + 0"},
      {"phi + 0 phi", "phi + 0 phi"},
      {"phi + 2 0", "phi + 2 0"},
      // whitespace and comments
      {"  phi\n  psi  # a comment\n", "phi psi"},
      {"phi\t+\tpsi", "phi + psi"},
  };
  for (const Row& row : rows) {
    INFO("input: " << row.input);
    CHECK(parsed(row.input) == row.printed);
  }
}

TEST_CASE("expressions build the expected IR", "[syntax]") {
  SECTION("scalars are one coefficient in front of the product") {
    const ir::Expr e = expr("H 2 K 3");
    REQUIRE(e.is(ir::Op::Scale));
    CHECK(e.coef() == 6.0);
    CHECK(e.kid(0) == ir::product({ir::symbol("H"), ir::symbol("K")}));
  }
  SECTION("unary minus is a scale by -1, binary minus adds a negated term") {
    CHECK(expr("-phi") == ir::neg(ir::symbol("phi")));
    CHECK(expr("phi - psi") == ir::sub(ir::symbol("phi"), ir::symbol("psi")));
    CHECK(expr("-2 phi") == ir::scale(-2.0, ir::symbol("phi")));
  }
  SECTION("postfix operators bind to the last name of a split word") {
    CHECK(expr("H*Hphi*") ==
          ir::product({ir::adjoint(ir::symbol("H")), ir::symbol("H"), ir::adjoint(ir::symbol("phi"))}));
  }
  SECTION("I and 0 are the identity and zero operators") {
    CHECK(expr("I - E_phi") == ir::sub(ir::identity(), ir::symbol("E_phi")));
    CHECK(expr("phi + 0") == ir::sum({ir::symbol("phi"), ir::zero()}));
  }
  SECTION("aliases become canonical symbols") {
    CHECK(expr("Ω").name() == "Omega");
    CHECK(expr("ℳ").name() == "calM");
  }
}

TEST_CASE("every node carries the span of its text", "[syntax]") {
  auto span_of = [](const ir::Expr& e) { return std::pair{e.span().begin, e.span().end}; };
  using P = std::pair<std::uint32_t, std::uint32_t>;

  const ir::Expr adj = expr("(phi + psi)*");
  CHECK(span_of(adj) == P{0, 12});
  CHECK(span_of(adj.kid(0)) == P{0, 11});  // the parentheses are part of the sum
  CHECK(span_of(adj.kid(0).kid(1)) == P{7, 10});

  const ir::Expr split = expr("HpsiK");
  CHECK(span_of(split) == P{0, 5});
  CHECK(span_of(split.kid(0)) == P{0, 1});
  CHECK(span_of(split.kid(1)) == P{1, 4});
  CHECK(span_of(split.kid(2)) == P{4, 5});

  const ir::Expr greek = expr("φ M");  // φ is two bytes
  CHECK(span_of(greek.kid(0)) == P{0, 2});
  CHECK(span_of(greek.kid(1)) == P{3, 4});

  const ir::Expr scaled = expr("2 H K");
  CHECK(span_of(scaled) == P{0, 5});
  CHECK(span_of(scaled.kid(0)) == P{2, 5});

  const ir::Expr diff = expr("phi - psi");
  CHECK(span_of(diff) == P{0, 9});
  CHECK(span_of(diff.kid(1)) == P{4, 9});  // the negated term includes its '-'

  const ir::Expr inv = expr("H* D^-1 H");
  CHECK(span_of(inv.kid(0)) == P{0, 2});
  CHECK(span_of(inv.kid(1)) == P{3, 7});
  CHECK(span_of(inv.kid(2)) == P{8, 9});
}

TEST_CASE("equations have two or more shape-checked sides", "[syntax]") {
  const auto sides = parse_equation(text_source("phi - psi = phi K H psi = psi K H phi"));
  REQUIRE(sides.size() == 3);
  CHECK(ir::print(sides[0]) == "phi - psi");
  CHECK(ir::print(sides[1]) == "phi K H psi");
  CHECK(ir::print(sides[2]) == "psi K H phi");

  // An I takes its size from the other side.
  CHECK(parse_equation(text_source("(I-HpsiK)Hphi = Hpsi")).size() == 2);
  CHECK(parse_equation(text_source("taubar = I - tau")).size() == 2);
}

TEST_CASE("errors name the mistake and its place", "[syntax][errors]") {
  enum Kind { Expression, Equation, File };
  struct Row {
    Kind kind;
    const char* text;
    const char* where;    // the exact "file:line:col"
    const char* message;  // a substring of the message
  };
  const Row rows[] = {
      // names
      {Expression, "Hx", "<command line>:1:1", "unknown name 'Hx' (did you mean 'H'? known names: E_phi, phi,"},
      {Expression, "omega", "<command line>:1:1", "unknown name 'omega' (did you mean 'Omega'?"},
      {Expression, "A", "<command line>:1:1", "unknown name 'A' (known names: E_phi, phi,"},
      {Expression, "phi + Omaga", "<command line>:1:7", "unknown name 'Omaga' (did you mean 'Omega'?"},
      {Expression, "HpsiKxyz", "<command line>:1:1", "unknown name 'HpsiKxyz' (no known name starts at 'xyz'"},
      {Expression, "phi ψ̃ Hx", "<command line>:1:8", "unknown name 'Hx'"},  // columns count code points
      {Expression, "phi let", "<command line>:1:5", "expected an operator or the end of the expression, found 'let'"},
      // tokens
      {Expression, "phi $ psi", "<command line>:1:5", "unexpected character '$'"},
      {Expression, "φ $", "<command line>:1:3", "unexpected character '$'"},
      {Expression, "phi \x01", "<command line>:1:5", "unexpected character U+0001"},
      {Expression, "phi \xff", "<command line>:1:5", "invalid UTF-8 byte 0xFF"},
      {Expression, "phi * psi", "<command line>:1:5", "'*' must follow its operand with no space"},
      {Expression, "phi ^-1", "<command line>:1:5", "'^-1' must follow its operand with no space"},
      {Expression, "phi^2", "<command line>:1:5", "'^' must be followed by '-1' (inverse) or '*' (adjoint), found '2'"},
      // the exponent is the mistake, sign and all
      {Expression, "calM^-2 T", "<command line>:1:6",
       "'^' must be followed by '-1' (inverse) or '*' (adjoint), found '-2'"},
      {Expression, "calM^T", "<command line>:1:6", "found 'T'"},
      // structure
      {Expression, "", "<command line>:1:1", "expected an expression, found the end of the input"},
      {Expression, "(phi + psi", "<command line>:1:11", "expected ')', found the end of the input"},
      {Expression, "(phi + psi ;", "<command line>:1:12", "expected ')', found ';'"},
      {Expression, "phi )", "<command line>:1:5", "unmatched ')'"},
      {Expression, "phi + ", "<command line>:1:7", "expected an expression after '+', found the end of the input"},
      {Expression, "phi + -psi", "<command line>:1:7", "expected an expression after '+', found '-'"},
      {Expression, "phi -", "<command line>:1:6", "expected an expression after '-'"},
      {Expression, "( )", "<command line>:1:3", "expected an expression after '(', found ')'"},
      {Expression, "phi = psi", "<command line>:1:5", "expected an operator or the end of the expression, found '='"},
      // numbers
      {Expression, "2", "<command line>:1:1", "a number must scale an operator, as in '2 phi'"},
      {Expression, "2* phi", "<command line>:1:2", "a number has no adjoint"},
      {Expression, "2^-1 phi", "<command line>:1:2", "a number has no inverse"},
      {Expression, "0.0 phi", "<command line>:1:1", "a zero coefficient"},
      {Expression, "1e999 phi", "<command line>:1:1", "the number 1e999 is out of range"},
      {Expression, "1e300 phi 1e300", "<command line>:1:1", "the numbers in this product multiply to infinity"},
      // a fuzzer's finding: nonzero numbers whose product underflows
      {Expression, "H 31e-300 phi 31e-300 phi", "<command line>:1:1",
       "the numbers in this product multiply to zero: write 0, the zero operator, instead"},
      // shapes
      {Expression, "M H", "<command line>:1:1", "cannot multiply M (6n x 6n) by H (N x 6n): 6n columns but N rows"},
      {Expression, "H* D H phi H", "<command line>:1:8", "cannot multiply H* D H phi (6n x 6n) by H (N x 6n)"},
      {Expression, "T + V", "<command line>:1:1", "cannot add T (N x 1) and V (6n x 1)"},
      {Expression, "H^-1", "<command line>:1:1", "H is N x 6n, not square, so it has no inverse"},
      {Expression, "phi (H + T)", "<command line>:1:6", "cannot add H (N x 6n) and T (N x 1)"},
      {Expression, "I", "<command line>:1:1", "cannot tell the size of I"},
      // equations
      {Equation, "calM", "<command line>:1:5",
       "expected '=' (an equation has at least two sides), found the end of the input"},
      {Equation, "calM = ", "<command line>:1:8", "expected an expression after '=', found the end of the input"},
      {Equation, "calM = H", "<command line>:1:8", "the two sides differ in shape: calM is N x N but H is N x 6n"},
      {Equation, "phi = psi = T", "<command line>:1:13", "the two sides differ in shape"},
      {Equation, "phi = psi;", "<command line>:1:10", "expected '=' or the end of the equation, found ';'"},
      // declarations
      {File, "foo", "t.soa:1:1",
       "expected a declaration ('let', 'identity', 'kernel', 'weld', 'contact' or 'grasp'), found 'foo'"},
      {File, "grasp ;", "t.soa:1:7", "expected a frame (link) name after 'grasp'"},
      {File, "grasp a: stiffness 1 1, damping 1 1;", "t.soa:1:8", "expected 'to' and the frame grasped"},
      {File, "grasp a to ;", "t.soa:1:12", "expected the frame (link) name to grasp after 'to'"},
      {File, "grasp a to b;", "t.soa:1:13", "expected ':' and the grasp's stiffness and damping"},
      {File, "grasp a to b: damping 1 1;", "t.soa:1:15", "expected 'stiffness KT KR' (N/m, N m/rad)"},
      {File, "grasp a to b: stiffness 1, damping 1 1;", "t.soa:1:26", "expected a number (not negative"},
      {File, "grasp a to b: stiffness 1 -1, damping 1 1;", "t.soa:1:27", "expected a number (not negative"},
      {File, "grasp a to b: stiffness 1 1 damping 1 1;", "t.soa:1:29", "expected ',' and 'damping DT DR'"},
      {File, "grasp a to b: stiffness 1 1, 1 1;", "t.soa:1:30", "expected 'damping DT DR' (N s/m, N m s/rad)"},
      {File, "grasp a to b: stiffness 1 1, damping 1 1", "t.soa:1:41", "expected ';' to end the grasp declaration"},
      {File, "grasp a to a: stiffness 1 1, damping 1 1;", "t.soa:1:12", "frame 'a' cannot grasp itself"},
      {File, "grasp a to b: stiffness 0 0, damping 0.0 0e3;", "t.soa:1:7", "a grasp with no stiffness and no damping"},
      {File, "grasp a to b: stiffness 1e999 1, damping 1 1;", "t.soa:1:25", "'1e999' is not a finite number"},
      {File, "weld a;\ngrasp a to b: stiffness 1 1, damping 1 1;", "t.soa:2:7",
       "frame 'a' is held or grasped twice (first at t.soa:1:6)"},
      {File, "weld ;", "t.soa:1:6", "expected a frame (link) name after 'weld' or 'contact'"},
      {File, "weld foot: ;", "t.soa:1:12", "expected a direction (rx, ry, rz, x, y or z) after ':'"},
      {File, "weld foot: x, ;", "t.soa:1:15", "expected a direction (rx, ry, rz, x, y or z) after ','"},
      {File, "weld foot: x, q;", "t.soa:1:15", "'q' is not a direction (rx, ry, rz, x, y or z)"},
      {File, "weld foot: x, x;", "t.soa:1:15", "direction 'x' is listed twice"},
      {File, "contact foot: z;", "t.soa:1:15", "a contact holds its frame's translations x, y, z"},
      {File, "weld foot;\ncontact foot;", "t.soa:2:9", "frame 'foot' is held twice (first at t.soa:1:6)"},
      {File, "weld foot\nkernel k(q) = J;", "t.soa:1:10", "expected ';' to end the declaration"},
      {File, "identity X \"c\": phi = phi;\nidentity X \"d\": psi = psi;\n", "t.soa:2:10",
       "duplicate identity 'X' (first declared at t.soa:1:10)"},
      {File, "kernel k() = calM;\nkernel k() = D;", "t.soa:2:8", "duplicate kernel 'k' (first declared at t.soa:1:8)"},
      {File, "let X = phi;\nlet X = psi;", "t.soa:2:5", "duplicate definition 'X'"},
      {File, "let phi = psi;", "t.soa:1:5", "'phi' is already a name of the operator language"},
      {File, "let Φ2 = H^-1;", "t.soa:1:10", "not square"},
      {File, "identity X \"c\" [serial, fast]: phi = phi;", "t.soa:1:25",
       "unknown attribute 'fast' (known: serial, false, definition, rewrite=ltr|rtl|both|none, "
       "lowering=newton-euler|composite-body|gram)"},
      {File, "identity X \"c\" [definition]: H = H;", "t.soa:1:10",
       "its first side must be a derived symbol of the vocabulary (role Defined or Compound)"},
      {File, "identity X \"c\" [definition]: calM1 = H1 phi1 M1 phi1* H1*;", "t.soa:1:10",
       "its first side must be a derived symbol"},
      {File, "identity X \"c\" [definition]: K = E_phi G;\nidentity Y \"c\" [definition]: K = phi K;", "t.soa:2:10",
       "K is defined twice: by 'Y' and by 'X' (at t.soa:1:10)"},
      {File, "identity X \"c\" [lowering=fast]: phi = phi;", "t.soa:1:17",
       "lowering=newton-euler, composite-body or gram (not 'fast')"},
      {File, "identity X \"c\" [lowering=gram]: phi = phi;\nidentity Y \"c\" [lowering=gram]: psi = psi;", "t.soa:2:10",
       "lowering=gram is given twice (first by 'X' at t.soa:1:10)"},
      {File, "identity X \"c\" [rewrite=sideways]: phi = phi;", "t.soa:1:17",
       "rewrite=ltr, rtl, both or none (not 'sideways')"},
      {File, "identity X \"c\" [serial=yes]: phi = phi;", "t.soa:1:17", "attribute 'serial' takes no value"},
      {File, "identity X \"c\" [serial, serial]: phi = phi;", "t.soa:1:25", "attribute 'serial' is given twice"},
      {File, "identity X \"c\" [serial: phi = phi;", "t.soa:1:23",
       "expected ',' or ']' in the attribute list, found ':'"},
      {File, "identity X \"c\" []: phi = phi;", "t.soa:1:17", "expected an attribute name after '['"},
      {File, "identity X \"c\" phi = phi;", "t.soa:1:16", "expected ':' before the identity's equation, found 'phi'"},
      {File, "identity X: phi = phi;", "t.soa:1:11", "expected the identity's citation"},
      {File, "identity \"c\": phi = phi;", "t.soa:1:10", "expected the identity's name after 'identity'"},
      {File, "identity X \"c: phi = phi;\n", "t.soa:1:26",
       "unterminated citation: expected '\"' before the end of the line"},
      {File, "identity X \"c\": ;", "t.soa:1:17", "expected the identity's equation after ':', found ';'"},
      {File, "identity X \"c\": phi;", "t.soa:1:20", "expected '=' (an equation has at least two sides), found ';'"},
      {File, "identity X \"c\":\n  phi = phi", "t.soa:2:12",
       "expected ';' to end the identity declaration before the end of the input"},
      {File, "identity X \"c\": phi = phi   # no semicolon\n\nidentity Y \"d\": psi = psi;\n", "t.soa:1:26",
       "expected ';' to end the identity declaration before 'identity'"},
      {File, "let X = phi\nkernel k() = X;", "t.soa:1:12", "expected ';' to end the let declaration before 'kernel'"},
      {File, "kernel k = calM;", "t.soa:1:10", "expected '(' and the kernel's inputs after its name"},
      {File, "kernel k(q, ) = calM;", "t.soa:1:13", "expected an input name after ','"},
      {File, "kernel k(q qd) = calM;", "t.soa:1:12", "expected ',' or ')' in the kernel's inputs, found 'qd'"},
      {File, "kernel k(q, q) = calM;", "t.soa:1:13", "input 'q' is listed twice"},
      {File, "kernel k(q) calM;", "t.soa:1:13", "expected '=' after the kernel's inputs"},
      {File, "kernel k(q) = Hx;", "t.soa:1:15", "unknown name 'Hx'"},
      {File, "kernel k(q) = T + V;", "t.soa:1:15", "cannot add T (N x 1) and V (6n x 1)"},
      {File, "let = phi;", "t.soa:1:5", "expected a name after 'let'"},
      // locations several lines in
      {File,
       "# a comment\nlet Minv = (I - H psi K)* D^-1 (I - H psi K);\n\nidentity BAD \"x\":\n    "
       "calM = M H;\n",
       "t.soa:5:12", "cannot multiply M (6n x 6n) by H (N x 6n)"},
      {File, "identity A \"x\": phi = phi;\n# φψΩ\nidentity B \"y\" [serial]:\n  Ω ψ = ψ Hx;\n", "t.soa:4:11",
       "unknown name 'Hx'"},
      {File, "identity A \"# not a comment\": phi = phi\n", "t.soa:1:40",
       "expected ';' to end the identity declaration before the end of the input"},
  };
  for (const Row& row : rows) {
    INFO("input: " << row.text);
    const Failure f = failure_of([&] {
      switch (row.kind) {
        case Expression: parse_expression(text_source(row.text)); break;
        case Equation: parse_equation(text_source(row.text)); break;
        case File: parse_module(text_source(row.text, "t.soa")); break;
      }
    });
    CHECK_THAT(f.message, Catch::StartsWith(std::string(row.where) + ": error: "));
    CHECK_THAT(f.message, Catch::Contains(row.message));
    CHECK(f.message.find('\n') == std::string::npos);  // one line; the caret is in detail()
  }
}

TEST_CASE("the documented example errors, in full", "[syntax][errors]") {
  const Failure mh = failure_of([] { parse_expression(text_source("M H")); });
  CHECK(mh.message ==
        "<command line>:1:1: error: cannot multiply M (6n x 6n) by H (N x 6n): 6n columns but N "
        "rows");
  CHECK(mh.detail == "M H\n^~~");

  const Failure tv = failure_of([] { parse_expression(text_source("T + V")); });
  CHECK(tv.message == "<command line>:1:1: error: cannot add T (N x 1) and V (6n x 1)");
  CHECK(tv.detail == "T + V\n^~~~~");

  const Failure paren = failure_of([] { parse_expression(text_source("H (phi + psi")); });
  CHECK(paren.message == "<command line>:1:13: error: expected ')', found the end of the input");
  CHECK(paren.detail == "H (phi + psi\n            ^");

  const Failure semi = failure_of([] { parse_module(text_source("let A = phi\n\nlet B = psi;", "f.soa")); });
  CHECK(semi.message == "f.soa:1:12: error: expected ';' to end the let declaration before 'let'");
  CHECK(semi.detail == "let A = phi\n           ^");
}

TEST_CASE("diagnostics locate spans by line and code point", "[syntax][diagnostics]") {
  const Source src{"f.soa", "ab\n\tφ̃ Hx\r\nlast"};
  // "\tφ̃ Hx": tab, φ (2 bytes), U+0303 (2 bytes), space, H at byte 3 + 6 = 9.
  CHECK(location(src, {0, 1}) == "f.soa:1:1");
  CHECK(location(src, {2, 3}) == "f.soa:1:3");
  CHECK(location(src, {3, 4}) == "f.soa:2:1");
  CHECK(location(src, {9, 11}) == "f.soa:2:5");
  CHECK(location(src, {13, 17}) == "f.soa:3:1");
  CHECK(location(src, {17, 17}) == "f.soa:3:5");
  CHECK(location(src, {99, 99}) == "f.soa:3:5");  // clamped to the end

  // The tab is copied and the combining tilde takes no room, so '^' sits under H; the
  // '\r' of a CRLF line is not shown.
  CHECK(caret(src, {9, 11}) == "\tφ̃ Hx\n\t  ^~");
  CHECK(caret(src, {0, 2}) == "ab\n^~");
  CHECK(caret(src, {1, 10}) == "ab\n ^");  // cut at the end of the line
  CHECK(caret(src, {17, 17}) == "last\n    ^");

  const Failure f = failure_of([&] { fail(src, {13, 17}, "something"); });
  CHECK(f.message == "f.soa:3:1: error: something");
  CHECK(f.detail == "last\n^~~~");
}

TEST_CASE("a module holds definitions, identities and kernels", "[syntax][module]") {
  const Module m = parse_module(text_source(R"(# comment to end of line
let Minv = (I - H psi K)* D^-1 (I - H psi K);          # named definition
identity MINV "001 Identity 6, 002 Lemma 3": calM^-1 = Minv;
identity OMEGA "002 Lemma 5" [serial, rewrite=ltr]: Omega = Upsilon + psitilde* Upsilon + Upsilon psitilde;
kernel forward_dynamics(q, qd, T) = calM^-1 (T - C);   # named kernel: inputs, expression
identity A.1 "000 # Lemma A.1"
  [ rewrite = none ]
  :
  psi^-1
    = phi^-1 + K H
  ;
kernel mass() = calM;
kernel uses_minv(T) = MinvT;
)",
                                            "example.soa"));
  REQUIRE(m.definitions.size() == 1);
  CHECK(m.definitions[0].name == "Minv");
  CHECK(ir::print(m.definitions[0].body) == "(I - H psi K)* D^-1 (I - H psi K)");
  CHECK(location(m.definitions[0].where) == "example.soa:2:5");

  REQUIRE(m.identities.size() == 3);
  const Identity* minv = m.find_identity("MINV");
  REQUIRE(minv != nullptr);
  CHECK(minv->citation == "001 Identity 6, 002 Lemma 3");
  REQUIRE(minv->sides.size() == 2);
  CHECK(ir::print(minv->sides[1]) == "(I - H psi K)* D^-1 (I - H psi K)");
  CHECK(minv->sides[1] == m.definitions[0].body);  // inlined
  // The inlined nodes point at the use, not at the definition.
  const auto use = m.source->text.find("= Minv;") + 2;
  CHECK(minv->sides[1].span().begin == use);
  CHECK(minv->sides[1].kid(0).span().begin == use);
  CHECK(location(minv->where) == "example.soa:3:10");
  CHECK(minv->attributes.empty());
  CHECK(minv->attribute("rewrite", "both") == "both");

  const Identity* omega = m.find_identity("OMEGA");
  REQUIRE(omega != nullptr);
  CHECK(omega->has("serial"));
  CHECK_FALSE(omega->has("false"));
  CHECK(omega->attribute("rewrite", "both") == "ltr");
  CHECK(omega->attributes == std::vector<std::pair<std::string, std::string>>{{"serial", ""}, {"rewrite", "ltr"}});

  const Identity* a1 = m.find_identity("A.1");
  REQUIRE(a1 != nullptr);
  CHECK(a1->citation == "000 # Lemma A.1");
  CHECK(a1->attribute("rewrite", "both") == "none");
  CHECK(ir::print(a1->sides[1]) == "phi^-1 + K H");
  CHECK(location(a1->where) == "example.soa:6:10");
  CHECK(m.find_identity("missing") == nullptr);

  REQUIRE(m.kernels.size() == 3);
  const Kernel* fd = m.find_kernel("forward_dynamics");
  REQUIRE(fd != nullptr);
  CHECK(fd->inputs == std::vector<std::string>{"q", "qd", "T"});
  CHECK(ir::print(fd->body) == "calM^-1 (T - C)");
  CHECK(m.find_kernel("mass")->inputs.empty());
  CHECK(ir::print(m.find_kernel("uses_minv")->body) == "(I - H psi K)* D^-1 (I - H psi K) T");
  CHECK(m.find_kernel("MINV") == nullptr);

  // A module is a scope for later expressions.
  CHECK(ir::print(parse_expression(text_source("Minv T"), &m)) == "(I - H psi K)* D^-1 (I - H psi K) T");
  CHECK(parse_equation(text_source("calM^-1 = Minv"), &m).size() == 2);
  const Failure f = failure_of([&] { parse_expression(text_source("Minv"), nullptr); });
  CHECK_THAT(f.message, Catch::Contains("unknown name 'Minv'"));
}

TEST_CASE("a module declares welds and contacts with the world", "[syntax][module]") {
  const syntax::Module m = syntax::parse_module(std::make_shared<syntax::Source>(syntax::Source{
      "t.soa",
      "# standing\nweld left_sole_link;\nweld gripper-1.tcp: rz, x,y;\ncontact FL_FOOT;\nkernel k(q) = J;\n"}));
  REQUIRE(m.holds.size() == 3);
  CHECK(m.holds[0].kind == "weld");
  CHECK(m.holds[0].frame == "left_sole_link");
  CHECK(m.holds[0].directions.empty());
  CHECK(m.holds[1].frame == "gripper-1.tcp");
  CHECK(m.holds[1].directions == std::vector<std::string>{"rz", "x", "y"});
  CHECK(m.holds[2].kind == "contact");
  CHECK(syntax::location(m.holds[2].where) == "t.soa:4:9");
  CHECK(m.kernels.size() == 1);
}

TEST_CASE("definitions take part in name splitting", "[syntax][module]") {
  const Module m = parse_module(text_source("let L = I - H psi K;\nlet Lstar = L*;\nkernel k() = LstarDL;"));
  CHECK(ir::print(m.kernels.at(0).body) == "(I - H psi K)* D (I - H psi K)");
  const Module empty = parse_module(text_source("  # nothing but a comment\n"));
  CHECK(empty.identities.empty());
  CHECK(empty.kernels.empty());
}

TEST_CASE("grammar/identities.soa loads and every side round-trips", "[syntax][identities]") {
  const std::string path = soa::test::source_path("grammar/identities.soa");
  const Module m = load_module(path);

  const std::vector<std::string> names = {
      "NE",           "EOM",       "CRB",       "CRB-H",        "P-split", "A.1",     "diff",      "INNOV",
      "INV-L",        "MINV",      "RNEA",      "L4",           "LAMBDA",  "OMEGA",   "TIPF",      "ACC",
      "def-phitilde", "def-phi",   "def-psi",   "def-psitilde", "def-D",   "def-G",   "def-tau",   "def-taubar",
      "def-K",        "def-E_psi", "def-Omega", "def-J",        "def-C",   "def-V",   "def-alpha", "L4-adjoint",
      "D-E_phi",      "D-phi",     "D-H",       "D-M",          "D-P",     "D-D",     "D-G",       "D-taubar",
      "D-K",          "D-E_psi",   "D-psi",     "D-R",          "SENS",    "SENS-CRB"};
  REQUIRE(m.identities.size() == names.size());
  for (std::size_t i = 0; i < names.size(); ++i) CHECK(m.identities[i].name == names[i]);

  CHECK(m.find_identity("MINV")->citation == "001 Identity 6, 002 Lemma 3");
  CHECK(m.find_identity("A.1")->citation == "000 Lemma A.1");
  CHECK(m.find_identity("OMEGA")->has("serial"));
  CHECK(m.find_identity("def-phi")->attribute("rewrite", "both") == "none");
  CHECK(m.find_identity("NE")->attribute("rewrite", "both") == "both");
  CHECK(m.find_identity("diff")->sides.size() == 3);
  CHECK(m.find_identity("LAMBDA")->sides.size() == 3);
  CHECK(m.find_identity("def-phitilde")->sides.size() == 4);
  CHECK(ir::print(m.find_identity("MINV")->sides[1]) == "(I - H psi K)* D^-1 (I - H psi K)");
  CHECK(ir::print(m.find_identity("P-split")->sides[1]) ==
        "P + phitilde P + P phitilde* + phitilde P H* D^-1 H P phitilde*");

  // where: the identity's name, on the line that declares it.
  const std::string& text = m.source->text;
  const std::size_t decl = text.find("identity MINV");
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(decl), '\n');
  CHECK(location(m.find_identity("MINV")->where) == fmt::format("{}:{}:10", path, line));

  for (const Identity& id : m.identities) {
    for (const ir::Expr& side : id.sides) {
      if (side.is(ir::Op::Zero)) continue;  // a lone 0 has no size of its own to parse with (D-H)
      const std::string printed = ir::print(side);
      INFO(id.name << ": " << printed);
      const ir::Expr again = parse_expression(text_source(printed));
      CHECK(again == side);
      CHECK(ir::print(again) == printed);
    }
  }
}

TEST_CASE("nesting is limited with an error at its place, flat length is not", "[syntax][errors]") {
  auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  // 200 parentheses parse; the 201st is the error, however deep the text goes on.
  CHECK(parsed(repeat("(", 200) + "H" + repeat(")", 200)) == "H");
  Failure f = failure_of([&] { expr(repeat("(", 20000) + "H" + repeat(")", 20000)); });
  CHECK(f.message == "<command line>:1:201: error: parentheses nested more than 200 deep");
  // Parentheses in comments and citations do not count.
  CHECK(parse_module(
            text_source("# " + repeat("(", 300) + "\nidentity X \"" + repeat("(", 300) + "\": phi = phi;", "t.soa"))
            .identities.size() == 1);
  std::string starred = "H";  // appended, not "H" + ...: g++ 12 warns (-Wrestrict) on that
  starred += repeat("*", 20000);
  f = failure_of([&] { expr(starred); });
  CHECK(f.message == "<command line>:1:202: error: more than 200 postfix operators in a row");
  // 'let's inlined into each other nest without any parentheses in sight.
  std::string lets = "let X0 = phi;\n";
  for (int i = 1; i < 600; ++i) lets += fmt::format("let X{} = phi (X{} + psi);\n", i, i - 1);
  f = failure_of([&] { parse_module(text_source(lets, "t.soa")); });
  CHECK(f.message == "t.soa:501:17: error: expression nested more than 1000 operators deep");
  // 20,000 factors or terms in a row are no nesting at all.
  CHECK(expr(repeat("phi ", 19999) + "phi").kids().size() == 20000);
  CHECK(expr(repeat("H + ", 19999) + "H").kids().size() == 20000);
}

TEST_CASE("load_module reports a file it cannot read", "[syntax][module]") {
  const Failure f = failure_of([] { load_module("/nonexistent/soac/x.soa"); });
  CHECK(f.message == "/nonexistent/soac/x.soa: cannot read: No such file or directory");
}

namespace {

// Random well-shaped expressions: a property test that print and parse are inverse on
// every construct the printer can produce (not just the ones in the identity library).
class RandomExpr {
public:
  explicit RandomExpr(unsigned seed) : rng_(seed) {}

  ir::Expr make(ir::Dim rows, ir::Dim cols, int depth) {
    const int pick = depth <= 0 ? 0 : pick_int(0, 7);
    switch (pick) {
      case 1:
      case 2: {  // product through a middle dimension
        const ir::Dim mid = middle_[pick_int(0, 2)];
        return ir::product({make(rows, mid, depth - 1), make(mid, cols, depth - 1)});
      }
      case 3: {  // sum, sometimes with I or 0 (sized by the other term)
        std::vector<ir::Expr> terms{make(rows, cols, depth - 1)};
        const int extra = pick_int(0, 3);
        if (extra == 0 && rows == cols)
          terms.push_back(ir::identity());
        else if (extra == 1)
          terms.push_back(ir::neg(ir::zero()));
        else
          terms.push_back(make(rows, cols, depth - 1));
        if (pick_int(0, 1)) std::swap(terms[0], terms[1]);
        return ir::sum(std::move(terms));
      }
      case 4: {
        constexpr double coefs[] = {-1.0, 2.0, 0.5, -3.0, 1e-5, 2.5e20};
        return ir::scale(coefs[pick_int(0, 5)], make(rows, cols, depth - 1));
      }
      case 5: return ir::adjoint(make(cols, rows, depth - 1));
      case 6:
        if (rows == cols) return ir::inverse(make(rows, cols, depth - 1));
        return make(rows, cols, depth - 1);
      case 7:
        return ir::sub(make(rows, cols, depth - 1),
                       ir::product({make(rows, rows, depth - 1), make(rows, cols, depth - 1)}));
      default: return leaf(rows, cols, depth);
    }
  }

  ir::Dim middle(int i) const { return middle_[i]; }
  int pick_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

private:
  std::mt19937 rng_;
  const ir::Dim middle_[3] = {ir::Dim::Joint, ir::Dim::Spatial, ir::Dim::Tip};

  ir::Expr leaf(ir::Dim rows, ir::Dim cols, int depth) {
    std::vector<ir::Expr> options;
    for (const ir::SymbolInfo& s : ir::vocabulary()) {
      if (s.rows == rows && s.cols == cols) options.push_back(ir::symbol(std::string(s.name)));
      if (s.rows == cols && s.cols == rows) options.push_back(ir::adjoint(ir::symbol(std::string(s.name))));
    }
    if (options.empty()) {  // e.g. 6m x 6m: go through the bodies
      SOA_ASSERT(depth > -3, "no leaf of this shape");
      return ir::product({leaf(rows, ir::Dim::Spatial, depth - 1), leaf(ir::Dim::Spatial, cols, depth - 1)});
    }
    return options[static_cast<std::size_t>(pick_int(0, static_cast<int>(options.size()) - 1))];
  }
};

}  // namespace

TEST_CASE("print then parse gives back the same expression", "[syntax][property]") {
  RandomExpr gen(20240611);
  const ir::Dim outer[] = {ir::Dim::Joint, ir::Dim::Spatial, ir::Dim::Tip, ir::Dim::One};
  for (int i = 0; i < 500; ++i) {
    const ir::Dim rows = gen.middle(gen.pick_int(0, 2));
    const ir::Dim cols = outer[gen.pick_int(0, 3)];
    const ir::Expr e = gen.make(rows, cols, gen.pick_int(1, 5));
    const std::string printed = ir::print(e);
    INFO(printed);
    const ir::Expr back = parse_expression(text_source(printed));
    CHECK(back == e);
    CHECK(ir::print(back) == printed);
  }
}
