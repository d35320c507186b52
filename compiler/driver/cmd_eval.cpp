// soac eval: the value of one expression for one robot and state, dense and by sweeps.
#include <fmt/format.h>

#include <memory>
#include <random>

#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "driver/driver.hpp"
#include "driver/state_file.hpp"
#include "interp/interpreter.hpp"
#include "syntax/syntax.hpp"

namespace soa::driver {
namespace {

struct EvalOptions {
  RobotOptions robot;
  std::string expression;
  std::string state_file;
  std::uint64_t seed = 1;
  int precision = 6;
};

void print_matrix(const char* title, const MatX& X, int precision) {
  fmt::print("{} ({} x {}):\n", title, X.rows(), X.cols());
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    std::string line = " ";
    for (Eigen::Index j = 0; j < X.cols(); ++j) line += fmt::format(" {:>{}.{}g}", X(i, j), precision + 7, precision);
    fmt::print("{}\n", line);
  }
}

int run_eval(const EvalOptions& o) {
  const LoadedRobot r = load_robot(o.robot);
  auto source = std::make_shared<syntax::Source>(syntax::Source{"<command line>", o.expression});
  const ir::Expr e = syntax::parse_expression(source);
  State state;
  if (!o.state_file.empty()) {
    state = read_state_file(o.state_file, r.robot, static_cast<int>(r.tips.size()));
  } else {
    std::mt19937_64 rng(o.seed);
    state = random_state(r.robot, static_cast<int>(r.tips.size()), rng);
  }
  const interp::Evaluation ev = interp::prepare(r.robot, state, r.tips);
  const MatX dense = interp::eval_dense(ev, e);
  const MatX sweeps = interp::eval_sweeps(ev, e);
  fmt::print("robot: {}\nstate: {}\nexpression: {}  ({})\n\n", r.describe(),
             o.state_file.empty() ? fmt::format("random, seed {}", o.seed) : o.state_file,
             ir::print(e, ir::Syntax::Unicode), ir::to_string(ir::infer_shape(e)));
  print_matrix("dense", dense, o.precision);
  print_matrix("sweeps", sweeps, o.precision);
  const double diff = (dense - sweeps).cwiseAbs().maxCoeff();
  const double scale = std::max(dense.cwiseAbs().maxCoeff(), 1.0);
  fmt::print("\nmax |dense - sweeps| = {:.3e} (relative {:.3e})\n", diff, diff / scale);
  return kOk;
}

}  // namespace

void add_eval(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<EvalOptions>();
  CLI::App* cmd = app.add_subcommand("eval", "evaluate an expression for a robot and state, dense and by sweeps");
  cmd->add_option("expression", opts->expression, "operator expression, e.g. \"calM^-1 (T - C)\"")->required();
  opts->robot.add_to(*cmd, true);
  auto* state = cmd->add_option("--state", opts->state_file, "state file (q:, qd:, qdd:, f0: lines)");
  cmd->add_option("--seed", opts->seed, "seed of a random state")->excludes(state);
  cmd->add_option("--precision", opts->precision, "significant digits printed")->check(CLI::Range(1, 17));
  cmd->callback([opts, &run] { run = [opts] { return run_eval(*opts); }; });
}

}  // namespace soa::driver
