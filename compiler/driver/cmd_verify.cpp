// soac verify: check claimed identities numerically on a robot or on random trees.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>

#include "pipeline/pipeline.hpp"
#include "algebra/arms.hpp"
#include "algebra/print.hpp"
#include "driver/driver.hpp"
#include "driver/state_file.hpp"
#include "support/error.hpp"
#include "syntax/syntax.hpp"
#include "verify/verify.hpp"

namespace soa::driver {
namespace {

struct VerifyOptions {
  RobotOptions robot;
  std::vector<std::string> claims;  // .soa files or "LHS = RHS" statements
  int random_trees = 0;
  verify::Options check;
};

std::string statement(const verify::Claim& c) {
  std::string s;
  for (const auto& side : c.sides) s += (s.empty() ? "" : " = ") + ir::print(side);
  return s;
}

std::vector<verify::Claim> read_claims(const std::vector<std::string>& args) {
  std::vector<verify::Claim> claims;
  for (const auto& arg : args) {
    std::error_code no_file;  // a statement too long for a file name is no file either
    if (arg.ends_with(".soa") ||
        (std::filesystem::is_regular_file(arg, no_file) && arg.find('=') == std::string::npos)) {
      const syntax::Module module = syntax::load_module(arg);
      if (module.identities.empty())
        throw UserError(
            fmt::format("{}: no identities to verify ({} definitions, {} kernels; an "
                        "identity is declared 'identity NAME \"citation\": LHS = RHS;')",
                        arg, module.definitions.size(), module.kernels.size()));
      for (const auto& id : module.identities)
        claims.push_back({id.name, id.citation, id.sides, id.has("serial"), id.has("false")});
      continue;
    }
    auto source = std::make_shared<syntax::Source>(syntax::Source{"<command line>", arg});
    const std::vector<ir::Expr> sides = syntax::parse_equation(source);
    verify::Claim c{"", "command line", sides, false, false};
    c.name = statement(c);
    claims.push_back(std::move(c));
  }
  return claims;
}

// Random trees for --random-trees: sizes, joint mixes and bases vary with the seed. Claims
// about arms (psi2, ...) get as many random arms, each with one tip (driver.hpp).
LoadedRobot tree_for(std::uint64_t seed, int arms) {
  std::mt19937_64 rng(seed);
  RandomTreeOptions o;
  o.bodies = std::uniform_int_distribution<int>(2, 12)(rng);
  o.floating = rng() % 2 == 1;
  return random_robot(seed, arms, o);
}

// The highest arm index any claim names (0: none).
int arms_named(const std::vector<verify::Claim>& claims) {
  int arms = 0;
  for (const auto& c : claims)
    for (const auto& side : c.sides)
      for (int a : ir::arms_in(side)) arms = std::max(arms, a);
  return arms;
}

// A command that checks exactly the worst sample again: on random trees, the tree it came
// from (seed + t) and samples up to it (the last of them is the worst one).
std::string reproduce_hint(const VerifyOptions& o, const verify::Result& r, bool trees) {
  std::string robot =
      trees ? fmt::format("--random-trees 1 --seed {} --samples {}", o.check.seed + r.worst.tree, r.worst.sample + 1)
            : fmt::format("--robot {}{} --seed {} --samples 1", o.robot.path, o.robot.floating ? " --floating" : "",
                          r.worst.seed);
  for (const auto& t : o.robot.tips) robot += " --tip " + t;
  if (o.check.tol != verify::Options{}.tol) robot += fmt::format(" --tol {:g}", o.check.tol);
  return robot;
}

int run_verify(const VerifyOptions& o) {
  const std::vector<verify::Claim> claims = read_claims(o.claims);
  // The derived operators (calM, J, K, ...) mean what the library's definitions say.
  const pipeline::Library library = pipeline::load_library();
  const bool trees = o.robot.path.empty();
  const int tree_count = trees ? std::max(o.random_trees, 1) : 0;

  std::vector<LoadedRobot> robots;
  if (trees) {
    const int arms = arms_named(claims);
    for (int t = 0; t < tree_count; ++t) robots.push_back(tree_for(o.check.seed + static_cast<std::uint64_t>(t), arms));
  } else {
    robots.push_back(load_robot(o.robot));
  }

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
    std::optional<verify::Result> merged;
    for (std::size_t t = 0; t < robots.size(); ++t) {
      verify::Subject subject{&robots[t].robot, robots[t].tips, trees ? t : 0};
      auto tick = [&] {
        if (progress && (++done % 8 == 0 || done == total))
          std::cerr << fmt::format("\r[{}/{}] {}", done, total, claim.name) << std::flush;
      };
      verify::Result r = verify::check(claim, subject, library.algebra.definitions, o.check, tick);
      merged = merged ? verify::merge(*merged, r) : r;
    }
    results.push_back(*merged);
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
  for (std::size_t i = 0; i < results.size(); ++i) {
    const verify::Result& r = results[i];
    if (verify::is_success(r.verdict)) continue;
    if (r.verdict == verify::Verdict::UnexpectedPass) {
      fmt::print("{}: marked [false] but holds on every sample\n", r.name);
      continue;
    }
    fmt::print(
        "{}: FAIL on {}: side {} differs from side 1 by {:.3e} (relative {:.3e}) at entry ({}, {}): "
        "{:.17g} vs {:.17g}{}\n  reproduce: soac verify {} \"{}\"\n",
        r.name, r.robot, r.worst.side + 1, std::abs(r.worst.rhs - r.worst.lhs), r.max_rel, r.worst.row, r.worst.col,
        r.worst.lhs, r.worst.rhs, r.note.empty() ? "" : " (" + r.note + ")", reproduce_hint(o, r, trees),
        statement(claims[i]));
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
