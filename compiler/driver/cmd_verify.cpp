// soac verify: check claimed identities numerically on a robot or on random trees.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "pipeline/pipeline.hpp"
#include "driver/driver.hpp"
#include "driver/state_file.hpp"
#include "support/error.hpp"
#include "verify/verify.hpp"

namespace soa::driver {
namespace {

struct VerifyOptions {
  RobotOptions robot;
  std::vector<std::string> claims;  // .soa files or "LHS = RHS" statements
  int random_trees = 0;
  verify::Options check;
};

int run_verify(const VerifyOptions& o) {
  const std::vector<verify::Claim> claims = verify::read_claims(o.claims, "<command line>");
  // The derived operators (calM, J, K, ...) mean what the library's definitions say.
  const pipeline::Library library = pipeline::load_library();
  const bool trees = o.robot.path.empty();
  const int tree_count = trees ? std::max(o.random_trees, 1) : 0;

  const std::vector<LoadedRobot> robots =
      trees ? verify::random_trees(claims, o.check.seed, tree_count) : std::vector<LoadedRobot>{load_robot(o.robot)};
  std::vector<verify::Subject> subjects;
  for (std::size_t t = 0; t < robots.size(); ++t) subjects.push_back({&robots[t].robot, robots[t].tips, trees ? t : 0});

  if (trees)
    fmt::print("soac verify: {} random trees (seeds {}..{}), {} samples each, tol {:g}\n", tree_count, o.check.seed,
               o.check.seed + tree_count - 1, o.check.samples, o.check.tol);
  else
    fmt::print("soac verify: {}\n  {} samples from seed {}, tol {:g}\n", robots.front().describe(), o.check.samples,
               o.check.seed, o.check.tol);

  const bool progress = stderr_is_terminal();
  const long total = static_cast<long>(claims.size()) * static_cast<long>(robots.size()) * o.check.samples;
  long done = 0;
  std::vector<verify::Result> results;
  for (const auto& claim : claims) {
    auto tick = [&] {
      if (progress && (++done % 8 == 0 || done == total))
        std::cerr << fmt::format("\r[{}/{}] {}", done, total, claim.name) << std::flush;
    };
    results.push_back(verify::check_all(claim, subjects, library.algebra.definitions, o.check, tick));
  }
  if (progress) std::cerr << "\r\033[K" << std::flush;

  std::size_t width = 8;
  for (const auto& r : results) width = std::max(width, std::min<std::size_t>(r.name.size(), 60));
  fmt::print("\n{:<{}}  {:<30}  {:>9}  {:>9}  {}\n", "identity", width, "citation", "max abs", "max rel", "result");
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& r : results) {
    fmt::print("{:<{}}  {:<30}  {:>9.2e}  {:>9.2e}  {}{}\n", r.name, width, r.citation, r.max_abs, r.max_rel,
               verify::to_string(r.verdict), r.verdict == verify::Verdict::Skipped ? " (" + r.note + ")" : "");
    if (r.verdict == verify::Verdict::Skipped)
      ++skipped;
    else if (verify::is_success(r.verdict))
      ++passed;
    else
      ++failed;
  }
  fmt::print("\n{} {}: {} passed, {} failed, {} skipped\n", results.size(),
             results.size() == 1 ? "identity" : "identities", passed, failed, skipped);
  const verify::CommandRobot named{o.robot.path, o.robot.floating, o.robot.tips};
  for (std::size_t i = 0; i < results.size(); ++i) {
    const verify::Result& r = results[i];
    if (verify::is_success(r.verdict)) continue;
    fmt::print("{}\n", verify::failure_text(r, verify::reproduce_command(r, o.check, trees ? nullptr : &named,
                                                                         verify::statement(claims[i]))));
  }
  return failed == 0 ? kOk : kCheckFailed;
}

}  // namespace

void add_verify(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<VerifyOptions>();
  CLI::App* cmd = app.add_subcommand("verify", "check identities numerically (dense evaluation)");
  cmd->add_option("claims", opts->claims, "FILE.soa (every identity in it) or \"LHS = RHS\"")->required();
  opts->robot.add_to(*cmd, false);
  cmd->add_option("--random-trees", opts->random_trees,
                  "check on N random trees (mixed joints, arbitrary axes) instead of a robot file")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--samples", opts->check.samples, "random states per robot")->check(CLI::Range(1, 1000000));
  cmd->add_option("--seed", opts->check.seed, "seed of the first sample")->check(seed_validator());
  cmd->add_option("--tol", opts->check.tol, "relative tolerance, per entry against its row's and column's scale")
      ->check(tolerance_validator());
  cmd->callback([cmd, opts, &run] {
    if (!opts->robot.path.empty() && opts->random_trees > 0)
      throw CLI::ValidationError("--robot and --random-trees", "give one of them, not both");
    if (opts->robot.path.empty() && opts->random_trees == 0) opts->random_trees = 5;
    if (opts->robot.path.empty() && (opts->robot.floating || !opts->robot.tips.empty()))
      throw CLI::ValidationError("--floating/--tip", "need --robot");
    (void)cmd;
    run = [opts] { return run_verify(*opts); };
  });
}

}  // namespace soa::driver
