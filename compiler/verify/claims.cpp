// What soac verify and the Python module's verify share: reading claims, the random trees
// they are checked on, and the report of a failure.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <system_error>

#include "algebra/arms.hpp"
#include "algebra/print.hpp"
#include "support/error.hpp"
#include "syntax/syntax.hpp"
#include "verify/verify.hpp"

namespace soa::verify {

Result check_all(const Claim& claim, const std::vector<Subject>& subjects, const ir::Definitions& definitions,
                 const Options& options, const std::function<void()>& progress) {
  std::optional<Result> merged;
  for (const Subject& subject : subjects) {
    const Result r = check(claim, subject, definitions, options, progress);
    merged = merged ? merge(*merged, r) : r;
  }
  SOA_ASSERT(merged.has_value(), "check_all: no subject");
  return *merged;
}

std::string statement(const Claim& claim) {
  std::string s;
  for (const auto& side : claim.sides) s += (s.empty() ? "" : " = ") + ir::print(side);
  return s;
}

std::vector<Claim> read_claims(const std::vector<std::string>& args, const std::string& source_name) {
  std::vector<Claim> claims;
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
    auto source = std::make_shared<syntax::Source>(syntax::Source{source_name, arg});
    Claim c{"", "command line", syntax::parse_equation(source), false, false};
    c.name = statement(c);
    claims.push_back(std::move(c));
  }
  return claims;
}

std::vector<LoadedRobot> random_trees(const std::vector<Claim>& claims, std::uint64_t seed, int count) {
  int arms = 0;  // the highest arm index any claim names
  for (const auto& c : claims)
    for (const auto& side : c.sides)
      for (int a : ir::arms_in(side)) arms = std::max(arms, a);
  std::vector<LoadedRobot> trees;
  for (int t = 0; t < count; ++t) {
    const std::uint64_t tree_seed = seed + static_cast<std::uint64_t>(t);
    std::mt19937_64 rng(tree_seed);
    RandomTreeOptions o;
    o.bodies = std::uniform_int_distribution<int>(2, 12)(rng);
    o.floating = rng() % 2 == 1;
    trees.push_back(random_robot(tree_seed, arms, o));
  }
  return trees;
}

std::string reproduce_command(const Result& r, const Options& options, const CommandRobot* robot,
                              const std::string& statement) {
  std::string hint =
      robot ? fmt::format("--robot {}{} --seed {} --samples 1", robot->path, robot->floating ? " --floating" : "",
                          r.worst.seed)
            : fmt::format("--random-trees 1 --seed {} --samples {}", options.seed + r.worst.tree, r.worst.sample + 1);
  if (robot)
    for (const auto& t : robot->tips) hint += " --tip " + t;
  if (options.tol != Options{}.tol) hint += fmt::format(" --tol {:g}", options.tol);
  return fmt::format("soac verify {} \"{}\"", hint, statement);
}

std::string failure_text(const Result& r, const std::string& reproduce) {
  if (is_success(r.verdict)) return "";
  if (r.verdict == Verdict::UnexpectedPass) return fmt::format("{}: marked [false] but holds on every sample", r.name);
  return fmt::format(
      "{}: FAIL on {}: side {} differs from side 1 by {:.3e} (relative {:.3e}) at entry ({}, {}): "
      "{:.17g} vs {:.17g}{}\n  reproduce: {}",
      r.name, r.robot, r.worst.side + 1, std::abs(r.worst.rhs - r.worst.lhs), r.max_rel, r.worst.row, r.worst.col,
      r.worst.lhs, r.worst.rhs, r.note.empty() ? "" : " (" + r.note + ")", reproduce);
}

}  // namespace soa::verify
