// soac lower: the sweep program an expression becomes, in the papers' loop notation.
#include <fmt/format.h>

#include <memory>

#include "driver/driver.hpp"
#include "exec/execute.hpp"
#include "pipeline/kernels.hpp"
#include "specialise/share.hpp"
#include "specialise/specialise.hpp"

namespace soa::driver {
namespace {

struct LowerOptions {
  std::string expression;
  std::vector<std::string> inputs;
  std::string library;
  RobotOptions robot;
  std::string emit;  // --emit=STAGE
  int share_min_ops = specialise::kDefaultShareMinOps;
};

int run_lower(const LowerOptions& o) {
  const pipeline::Library lib = pipeline::load_library(o.library);
  auto source = std::make_shared<syntax::Source>(syntax::Source{"<command line>", o.expression});
  const pipeline::KernelSpec spec{"kernel", o.inputs, syntax::parse_expression(source, &lib.module), "out", ""};
  if (!o.emit.empty())
    return print_stage({o.emit, {spec}, source, o.library, o.robot, "", "", o.share_min_ops, &lib, {}});
  rewrite::Options options;
  std::optional<LoadedRobot> robot;
  if (!o.robot.path.empty()) {
    robot = load_robot(o.robot);
    options.serial_chain = robot->robot.is_serial_chain();
  }
  const pipeline::LoweredKernel k = pipeline::lower_kernel(spec, lib, options);
  fmt::print("{}\n\n{}", pipeline::derivation_summary(k.derivation), exec::print(k.program));
  if (robot) {
    const auto constants = exec::make_constants(robot->robot, robot->tips);
    const specialise::ScalarProgram code = specialise::cheaper_form(
        [&](const specialise::TraceOptions& trace) {
          return std::vector{specialise::specialise(k.program, constants, trace)};
        },
        [](const specialise::ScalarProgram& p) -> const specialise::ScalarProgram& { return p; })[0];
    fmt::print("\nspecialised for {}: {}\n", robot->describe(), specialise::to_string(specialise::count_ops(code)));
  }
  return kOk;
}

}  // namespace

void add_lower(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<LowerOptions>();
  CLI::App* cmd = app.add_subcommand("lower", "print the sweep program an expression becomes (after rewriting)");
  cmd->add_option("expression", opts->expression, "operator expression, e.g. \"calM^-1 (T - C)\"")->required();
  cmd->add_option("--inputs", opts->inputs, "input vectors in layout order (default: q, qd, qdd, T, f0 as used)")
      ->delimiter(',');
  cmd->add_option("--library", opts->library,
                  "identity library (default: $SOAC_LIBRARY, else the built-in identities.soa)");
  opts->robot.add_to(*cmd, false);
  add_emit_stage_option(*cmd, opts->emit);
  cmd->add_option("--share-min-ops", opts->share_min_ops,
                  "--emit=shared: share what at least this many operations of a set of kernels compute alike")
      ->check(CLI::Range(1, 1 << 30));
  cmd->callback([opts, &run] { run = [opts] { return run_lower(*opts); }; });
}

}  // namespace soa::driver
