// soac eval: the value of one expression for one robot and state, dense and by sweeps.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <random>

#include "pipeline/pipeline.hpp"
#include "pipeline/state.hpp"
#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "driver/driver.hpp"
#include "driver/state_file.hpp"
#include "support/error.hpp"
#include "interp/interpreter.hpp"
#include "syntax/syntax.hpp"

namespace soa::driver {
namespace {

struct EvalOptions {
  RobotOptions robot;
  std::string expression;
  std::string state_file;
  std::string write_state;
  std::uint64_t seed = 1;
  int precision = 6;
  int coordinate = -1;  // i of d(...)/dq_i and X_i
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
  const pipeline::Library library = pipeline::load_library();  // what calM, J, K, ... mean
  auto source = std::make_shared<syntax::Source>(syntax::Source{"<command line>", o.expression});
  const ir::Expr e = syntax::parse_expression(source);
  const int tips = static_cast<int>(r.tips.size());
  StateFile file;
  if (!o.state_file.empty()) {
    file = read_state_file(o.state_file, r.robot, tips);
  } else {
    std::mt19937_64 rng(o.seed);
    file.state = random_state(r.robot, tips, rng);
  }
  interp::Evaluation ev =
      pipeline::prepare_state(r.robot, file.state, r.tips, library.algebra.definitions, file.T, file.qdd.has_value());
  if (o.coordinate >= ev.N)
    throw UserError(fmt::format("--coordinate {}: the robot has coordinates 0 to {}", o.coordinate, ev.N - 1));
  ev.coordinate = o.coordinate;
  const MatX dense = interp::eval_dense(ev, e);
  // Derivatives with respect to q_i have no sweeps (interpreter.hpp): dense alone.
  const bool by_coordinate = ir::needs_coordinate(e);
  const MatX sweeps = by_coordinate ? dense : interp::eval_sweeps(ev, e);
  const std::string origin = o.state_file.empty() ? fmt::format("random, seed {}", o.seed) : o.state_file;
  if (!o.write_state.empty())
    write_state_file(o.write_state, ev.state, ev.kin.T,
                     fmt::format("soac eval state: {}\nrobot: {}", origin, r.describe()));
  fmt::print("robot: {}\nstate: {}\n", r.describe(), origin);
  // The state in full, as a state file gives it (--write-state writes the same lines).
  fmt::print("{}", state_lines(ev.state, ev.kin.T, "  "));
  fmt::print("expression: {}  ({})\n\n", ir::print(e, ir::Syntax::Unicode), ir::to_string(ir::infer_shape(e)));
  print_matrix(by_coordinate ? "dense, by differences in q_i" : "dense", dense, o.precision);
  if (by_coordinate) return kOk;
  print_matrix("sweeps", sweeps, o.precision);
  // (Eigen's maxCoeff has no value for an empty matrix: a robot without joints gives one.)
  const double diff = dense.size() ? (dense - sweeps).cwiseAbs().maxCoeff() : 0.0;
  const double scale = std::max(dense.size() ? dense.cwiseAbs().maxCoeff() : 0.0, 1.0);
  fmt::print("\nmax |dense - sweeps| = {:.3e} (relative {:.3e})\n", diff, diff / scale);
  return kOk;
}

}  // namespace

void add_eval(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<EvalOptions>();
  CLI::App* cmd = app.add_subcommand("eval", "evaluate an expression for a robot and state, dense and by sweeps");
  cmd->add_option("expression", opts->expression, "operator expression, e.g. \"calM^-1 (T - C)\"")->required();
  opts->robot.add_to(*cmd, true);
  // The format is in the option's own help: the command's footer is the shared one.
  auto* state =
      cmd->add_option("--state", opts->state_file,
                      "state file, one vector per line, 'name: v1 v2 ...' ('#' starts a comment): q (nq values,\n"
                      "quaternions [x y z w] of unit norm), qd, qdd, T (nv each, in joint-space order as 'soac\n"
                      "model' prints it), f0 (6 per tip). Missing q is the neutral configuration, missing qd\n"
                      "and f0 zero; qdd and T are tied by T = calM qdd + C + J* f0: given one, the other\n"
                      "follows, given neither qdd = 0, given both both are used as written");
  cmd->add_option("--seed", opts->seed, "seed of a random state")->check(seed_validator())->excludes(state);
  cmd->add_option("--write-state", opts->write_state,
                  "write the state used (q, qd, qdd, T, f0, every digit) to FILE, readable by --state");
  cmd->add_option("--precision", opts->precision, "significant digits printed")->check(CLI::Range(1, 17));
  cmd->add_option("--coordinate", opts->coordinate,
                  "the coordinate i of d(...)/dq_i and X_i (an index into qd, from 0)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([opts, &run] { run = [opts] { return run_eval(*opts); }; });
}

}  // namespace soa::driver
