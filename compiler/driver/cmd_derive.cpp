// soac derive: the cheapest equivalent form of an expression that the identity library
// reaches, with every step (rule, citation, the rewritten part marked, cost after it).
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "algebra/print.hpp"
#include "driver/driver.hpp"
#include "pipeline/derivation.hpp"
#include "pipeline/pipeline.hpp"

namespace soa::driver {
namespace {

struct DeriveOptions {
  std::string expression;
  std::string format = "text";
  std::string library;
  RobotOptions robot;
  bool check = false;
  int samples = 3;
  std::uint64_t seed = 1;
  std::vector<std::string> via;
};

int run_derive(const DeriveOptions& o) {
  const pipeline::Library lib = pipeline::load_library(o.library);
  auto source = std::make_shared<syntax::Source>(syntax::Source{"<command line>", o.expression});
  const ir::Expr input = syntax::parse_expression(source, &lib.module);
  rewrite::Options options;
  std::optional<LoadedRobot> robot;
  if (!o.robot.path.empty()) robot = load_robot(o.robot);
  if (robot) options.serial_chain = robot->robot.is_serial_chain();
  options.definitions = &lib.algebra.definitions;
  options.via = o.via;
  const rewrite::Derivation d = rewrite::derive(input, lib.rules, options);

  std::optional<pipeline::DerivationCheck> check;
  if (o.check) {
    const LoadedRobot r = robot ? *robot : pipeline::check_robot(d.input, o.seed);
    check = pipeline::check_derivation(d, lib.algebra.definitions, r.robot, r.tips, o.samples, o.seed);
  }
  const pipeline::DerivationCheck* c = check ? &*check : nullptr;
  if (o.format == "latex")
    std::cout << pipeline::derivation_latex(d, c);
  else if (o.format == "json")
    std::cout << pipeline::derivation_json(d, c);
  else if (o.format == "html")
    std::cout << pipeline::derivation_html(d, c, lib.rules);
  else
    std::cout << pipeline::derivation_text(d, c);
  if (!o.via.empty() && o.format == "text") {
    // What the route costs against the search's own choice.
    rewrite::Options free = options;
    free.via.clear();
    const rewrite::Derivation cheapest = rewrite::derive(input, lib.rules, free);
    std::cout << fmt::format("without --via: {}\ncost:  {}\n",
                             ir::print(rewrite::present(cheapest.final), ir::Syntax::Unicode),
                             rewrite::to_string(cheapest.cost));
  }

  if (check && check->failed_step > 0) {
    const rewrite::Step& s = d.steps[check->failed_step - 1];
    std::cerr << fmt::format("soac: error: --check: step {} ({}) changed the value on {} (max rel {:.3e}): {} -> {}\n",
                             check->failed_step, s.rule, check->robot, check->max_rel, ir::print(s.before),
                             ir::print(s.after));
    return kCheckFailed;
  }
  return kOk;
}

}  // namespace

void add_derive(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<DeriveOptions>();
  CLI::App* cmd = app.add_subcommand("derive", "rewrite an expression into its cheapest known form, step by step");
  cmd->add_option("expression", opts->expression, "operator expression, e.g. \"J calM^-1 J*\"")->required();
  cmd->add_option("--format", opts->format, "text, latex, json, or html (one self-contained page, typeset with KaTeX)")
      ->check(CLI::IsMember({"text", "latex", "json", "html"}));
  cmd->add_option("--library", opts->library,
                  "identity library (default: $SOAC_LIBRARY, else the built-in identities.soa)");
  opts->robot.add_to(*cmd, false);
  cmd->add_flag("--check", opts->check,
                "evaluate every intermediate form on the robot (or a random tree) and fail if one changes the value");
  cmd->add_option("--samples", opts->samples, "states for --check")->check(CLI::Range(1, 10000));
  cmd->add_option("--seed", opts->seed, "seed of the states (and of the random tree) for --check");
  cmd->add_option("--via", opts->via,
                  "apply this rule first, at its first match, whatever it costs (a rule name as the steps print it, "
                  "e.g. SENS-CRB for 004's composite-body form of d(calM)/dq_i); repeat for several, in order");
  cmd->callback([opts, &run] { run = [opts] { return run_derive(*opts); }; });
}

}  // namespace soa::driver
