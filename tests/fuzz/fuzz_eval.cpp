// libFuzzer target: the reference interpreter (compiler/interp) on whatever parses.
//
// An input that parses as an expression (compiler/syntax) is evaluated on a small robot of
// two arms (so that indexed names such as J1 and calM2 mean something), densely and by
// sweeps. Either may refuse with a soa::UserError (a singular inverse, an inverse with no
// sweep form); anything else thrown, a crash or a sanitizer report is a finding, and when
// both give a value the two must have the expression's shape and agree
// (interp/interpreter.hpp), unless the value is so large or ill-conditioned that rounding
// explains the difference.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "interp/interpreter.hpp"
#include "model/robot.hpp"
#include "support/error.hpp"
#include "syntax/syntax.hpp"

namespace {

using namespace soa;

[[noreturn]] void fail(const std::string& what, const std::string& text) {
  std::fprintf(stderr, "fuzz_eval: %s\n  input: %s\n", what.c_str(), text.c_str());
  std::abort();
}

// The identity library's definitions (what calM, J, K, ... mean), read from the source tree.
const ir::Definitions& definitions() {
  static const ir::Algebra algebra = syntax::algebra_of(syntax::load_module(SOA_IDENTITIES_PATH));
  return algebra.definitions;
}

const interp::Evaluation& evaluation() {
  static const Robot robot = random_arms(3, 2, RandomTreeOptions{3, false, true, true, 0.5});
  static const interp::Evaluation ev = [] {
    const std::vector<int> tips = robot.default_tips();
    std::mt19937_64 rng(1);
    return interp::prepare(robot, random_state(robot, static_cast<int>(tips.size()), rng), tips, definitions());
  }();
  return ev;
}

std::optional<MatX> value(MatX (*eval)(const interp::Evaluation&, const ir::Expr&), const ir::Expr& e) {
  try {
    return eval(evaluation(), e);
  } catch (const UserError&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ir::Expr e;
  try {
    e = syntax::parse_expression(std::make_shared<const syntax::Source>(syntax::Source{"<fuzz>", text}));
  } catch (const UserError&) {
    return 0;  // fuzz_syntax checks the parser's errors
  }
  // Products of many inverses are slow to evaluate densely and say nothing new.
  if (ir::node_count(e) > 64) return 0;
  const interp::Evaluation& ev = evaluation();
  const ir::Shape shape = ir::infer_shape(e);
  const std::optional<MatX> dense = value(&interp::eval_dense, e);
  const std::optional<MatX> sweeps = value(&interp::eval_sweeps, e);
  for (const auto* v : {&dense, &sweeps}) {
    if (!*v) continue;
    const long rows = interp::rows(ev, shape.rows, shape.row_arm, e);
    const long cols = interp::rows(ev, shape.cols, shape.col_arm, e);
    if ((*v)->rows() != rows || (*v)->cols() != cols)
      fail("a " + ir::to_string(shape) + " value of " + std::to_string((*v)->rows()) + " x " +
               std::to_string((*v)->cols()) + (v == &dense ? " densely" : " by sweeps"),
           text);
  }
  if (dense && sweeps && dense->allFinite() && sweeps->allFinite()) {
    const double scale = std::max({dense->cwiseAbs().maxCoeff(), sweeps->cwiseAbs().maxCoeff(), 1.0});
    const double d = (*dense - *sweeps).cwiseAbs().maxCoeff() / scale;
    // The condition of what was inverted bounds the agreement; keep to values that are
    // plainly of sane size, where a difference means a wrong recursion.
    if (scale < 1e4 && d > 1e-6) fail("dense and sweeps differ by " + std::to_string(d) + " relative", text);
  }
  return 0;
}
