// libFuzzer target: the operator language and .soa files (compiler/syntax, compiler/algebra).
//
// Every input is read three ways -- as an expression, as an equation and as a whole .soa
// module -- and must either parse or fail with a soa::UserError whose message is one line
// starting "<fuzz>:LINE:COL: error: " (syntax/syntax.hpp). Anything else thrown, a crash or
// a sanitizer report is a finding. What parses is checked against the printer's contract
// (algebra/print.hpp): the ASCII print of every expression and equation re-parses to equal
// expressions that print the same again; the Unicode and LaTeX printers, the adjoint (its
// shape the transpose) and the arm renaming run on every expression too.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "algebra/arms.hpp"
#include "algebra/definitions.hpp"
#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "support/error.hpp"
#include "syntax/syntax.hpp"

namespace {

using namespace soa;

constexpr const char* kName = "<fuzz>";

[[noreturn]] void fail(const std::string& what, const std::string& text) {
  std::fprintf(stderr, "fuzz_syntax: %s\n  input: %s\n", what.c_str(), text.c_str());
  std::abort();
}

std::shared_ptr<const syntax::Source> source(std::string name, std::string text) {
  return std::make_shared<const syntax::Source>(syntax::Source{std::move(name), std::move(text)});
}

// A UserError from the parser names the place in the input, on one line.
void check_error(const UserError& e, const std::string& text) {
  const std::string_view m = e.what();
  const std::string prefix = std::string(kName) + ":";
  std::size_t at = prefix.size();
  auto number = [&] {
    const std::size_t start = at;
    while (at < m.size() && m[at] >= '0' && m[at] <= '9') ++at;
    return at > start;
  };
  const bool placed = m.substr(0, prefix.size()) == prefix && number() && at < m.size() && m[at++] == ':' && number() &&
                      m.substr(at, 9) == ": error: ";
  if (!placed) fail("error message without its place: " + std::string(m), text);
  if (m.find('\n') != std::string_view::npos) fail("error message of several lines: " + std::string(m), text);
}

// The other printers and the algebra's own rewrites of the tree must not fail on `e`; the
// adjoint has the transposed shape.
void check_algebra(const ir::Expr& e, const std::string& text) {
  (void)ir::print(e, ir::Syntax::Unicode);
  (void)ir::print(e, ir::Syntax::Latex);
  const ir::Shape shape = ir::infer_shape(e);
  const ir::Shape adjoint = ir::infer_shape(ir::adjoint_of(e));
  if (adjoint.rows != shape.cols || adjoint.cols != shape.rows || adjoint.row_arm != shape.col_arm ||
      adjoint.col_arm != shape.row_arm)
    fail("the adjoint of '" + ir::print(e) + "' (" + ir::to_string(shape) + ") is " + ir::to_string(adjoint), text);
  if (ir::arms_in(e).empty()) (void)ir::infer_shape(ir::on_arm(e, 2));
}

// The ASCII print of an expression (or of an equation's sides joined by " = ", since a
// side such as I has a shape only beside the others) re-parses to the same expressions,
// which print the same again.
void check_round_trip(const std::vector<ir::Expr>& sides, const std::string& text) {
  std::string printed;
  for (const ir::Expr& e : sides) printed += (printed.empty() ? "" : " = ") + ir::print(e);
  std::vector<ir::Expr> again;
  try {
    if (sides.size() == 1)
      again = {syntax::parse_expression(source("<printed>", printed))};
    else
      again = syntax::parse_equation(source("<printed>", printed));
  } catch (const UserError& err) {
    fail("the print of a parsed expression does not parse: '" + printed + "': " + err.what(), text);
  }
  std::string reprinted;
  for (const ir::Expr& e : again) reprinted += (reprinted.empty() ? "" : " = ") + ir::print(e);
  if (again != sides) fail("print/parse changed the expression: '" + printed + "' became '" + reprinted + "'", text);
  if (reprinted != printed) fail("print is not stable: '" + printed + "' vs '" + reprinted + "'", text);
  if (sides.size() == 1) check_algebra(sides[0], text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);

  try {
    check_round_trip({syntax::parse_expression(source(kName, text))}, text);
  } catch (const UserError& e) {
    check_error(e, text);
  }

  try {
    check_round_trip(syntax::parse_equation(source(kName, text)), text);
  } catch (const UserError& e) {
    check_error(e, text);
  }

  try {
    const syntax::Module m = syntax::parse_module(source(kName, text));
    // `let` names are inlined, so every printed body stands without the module as scope.
    for (const syntax::Definition& d : m.definitions) check_round_trip({d.body}, text);
    for (const syntax::Identity& id : m.identities) check_round_trip(id.sides, text);
    for (const syntax::Kernel& k : m.kernels) check_round_trip({k.body}, text);
  } catch (const UserError& e) {
    check_error(e, text);
  }
  return 0;
}
