// soac.verify: identities checked numerically, the table of `soac verify` as data.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "algebra/arms.hpp"
#include "algebra/print.hpp"
#include "convert.hpp"
#include "pipeline/pipeline.hpp"
#include "support/error.hpp"
#include "syntax/syntax.hpp"
#include "verify/verify.hpp"

namespace soa::python {
namespace {

using namespace pybind11::literals;

// One row of soac verify's table, with what its failure lines say.
struct VerifyRow {
  verify::Result result;
  std::string statement;  // the claim as soac prints it: SIDE = SIDE
  std::string reproduce;  // "soac verify ..." for a failure; empty otherwise or when no command can
  std::string message;    // soac verify's lines about a failure (FAIL, XPASS); empty otherwise
};

std::string statement(const verify::Claim& c) {
  std::string s;
  for (const auto& side : c.sides) s += (s.empty() ? "" : " = ") + ir::print(side);
  return s;
}

// Each argument a .soa file (every identity in it) or a statement "LHS = RHS", as soac verify
// reads its arguments (compiler/driver/cmd_verify.cpp, read_claims).
std::vector<verify::Claim> read_claims(const std::vector<std::string>& args) {
  std::vector<verify::Claim> claims;
  for (const auto& arg : args) {
    std::error_code no_file;
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
    auto source = std::make_shared<syntax::Source>(syntax::Source{kExpressionSource, arg});
    verify::Claim c{"", "command line", syntax::parse_equation(source), false, false};
    c.name = statement(c);
    claims.push_back(std::move(c));
  }
  return claims;
}

// soac verify's random trees (cmd_verify.cpp, tree_for, and driver::random_robot): size, joint
// mix and base from the seed; claims about arms get as many random arms, one tip each.
std::pair<Robot, std::vector<int>> tree_for(std::uint64_t seed, int arms) {
  std::mt19937_64 rng(seed);
  RandomTreeOptions o;
  o.bodies = std::uniform_int_distribution<int>(2, 12)(rng);
  o.floating = rng() % 2 == 1;
  if (arms <= 0) {
    Robot robot = random_tree(seed, o);
    std::vector<int> tips = robot.leaf_tips();
    return {std::move(robot), std::move(tips)};
  }
  Robot robot = random_arms(seed, arms, o);
  std::vector<int> tips;
  for (int root : robot.roots())
    tips.push_back(*robot.find_frame(robot.bodies[subtree_bodies(robot, root).front()].name));
  return {std::move(robot), std::move(tips)};
}

int arms_named(const std::vector<verify::Claim>& claims) {
  int arms = 0;
  for (const auto& c : claims)
    for (const auto& side : c.sides)
      for (int a : ir::arms_in(side)) arms = std::max(arms, a);
  return arms;
}

// The command soac verify prints to check the worst sample again (cmd_verify.cpp,
// reproduce_hint); none for a robot no command line can name (a random tree made in Python).
std::string reproduce(const RobotHandle* robot, const verify::Options& o, const verify::Result& r,
                      const std::string& claim) {
  std::string hint;
  if (!robot) {
    hint = fmt::format("--random-trees 1 --seed {} --samples {}", o.seed + r.worst.tree, r.worst.sample + 1);
  } else {
    if (robot->path.empty()) return "";
    hint = fmt::format("--robot {}{} --seed {} --samples 1", robot->path, robot->floating ? " --floating" : "",
                       r.worst.seed);
    for (const auto& t : robot->tip_names) hint += " --tip " + t;
  }
  if (o.tol != verify::Options{}.tol) hint += fmt::format(" --tol {:g}", o.tol);
  return fmt::format("soac verify {} \"{}\"", hint, claim);
}

std::vector<VerifyRow> run_verify(const py::object& claims_arg, const py::object& robot_arg_object, int samples,
                                  std::uint64_t seed, double tol, const std::optional<int>& random_trees) {
  std::vector<std::string> args;
  if (py::isinstance<py::str>(claims_arg) || py::hasattr(claims_arg, "__fspath__"))
    args.push_back(claims_arg.cast<std::filesystem::path>().string());
  else
    for (const py::handle& c : claims_arg) args.push_back(c.cast<std::filesystem::path>().string());
  if (args.empty()) throw UserError("verify: no identity or file given");
  if (samples < 1 || samples > 1000000) throw UserError(fmt::format("samples: {} is not in 1 to 1000000", samples));
  if (!(tol > 0.0) || !std::isfinite(tol))
    throw UserError(fmt::format("tol: the tolerance must be a finite number greater than 0, not {}", tol));
  if (random_trees && (*random_trees < 1 || *random_trees > 100000))
    throw UserError(fmt::format("random_trees: {} is not in 1 to 100000", *random_trees));
  if (!robot_arg_object.is_none() && random_trees)
    throw UserError("robot and random_trees: give one of them, not both");
  const RobotPtr robot = robot_arg_object.is_none() ? nullptr : robot_arg(robot_arg_object);
  const verify::Options options{samples, seed, tol};

  py::gil_scoped_release released;
  const std::vector<verify::Claim> claims = read_claims(args);
  const pipeline::Library library = pipeline::load_library();  // what calM, J, K, ... mean
  std::vector<std::pair<Robot, std::vector<int>>> trees;
  if (!robot) {
    const int arms = arms_named(claims);
    for (int t = 0; t < random_trees.value_or(5); ++t)
      trees.push_back(tree_for(seed + static_cast<std::uint64_t>(t), arms));
  }
  std::vector<VerifyRow> rows;
  for (const verify::Claim& claim : claims) {
    std::optional<verify::Result> merged;
    if (robot) {
      merged = verify::check(claim, {&robot->robot, robot->tips, 0}, library.algebra.definitions, options);
    } else {
      for (std::size_t t = 0; t < trees.size(); ++t) {
        const verify::Result r =
            verify::check(claim, {&trees[t].first, trees[t].second, t}, library.algebra.definitions, options);
        merged = merged ? verify::merge(*merged, r) : r;
      }
    }
    VerifyRow row{*merged, statement(claim), "", ""};
    const verify::Result& r = row.result;
    if (r.verdict == verify::Verdict::UnexpectedPass) {
      row.message = fmt::format("{}: marked [false] but holds on every sample", r.name);
    } else if (!verify::is_success(r.verdict)) {
      row.reproduce = reproduce(robot.get(), options, r, row.statement);
      // soac verify's two lines (cmd_verify.cpp).
      row.message = fmt::format(
          "{}: FAIL on {}: side {} differs from side 1 by {:.3e} (relative {:.3e}) at entry ({}, {}): "
          "{:.17g} vs {:.17g}{}\n  reproduce: {}",
          r.name, r.robot, r.worst.side + 1, std::abs(r.worst.rhs - r.worst.lhs), r.max_rel, r.worst.row, r.worst.col,
          r.worst.lhs, r.worst.rhs, r.note.empty() ? "" : " (" + r.note + ")",
          row.reproduce.empty() ? "(a robot made in Python: no command line names it)" : row.reproduce);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

void init_verify(py::module_& m) {
  py::class_<verify::Worst>(m, "Worst", "The worst entry of a claim: where its sides differ most.")
      .def_readonly("seed", &verify::Worst::seed, "the state's seed")
      .def_readonly("tree", &verify::Worst::tree, "on random trees, the tree (its seed is seed + tree)")
      .def_readonly("sample", &verify::Worst::sample, "the sample index")
      .def_readonly("side", &verify::Worst::side, "the side (0-based) that differs most from side 0")
      .def_readonly("row", &verify::Worst::row)
      .def_readonly("col", &verify::Worst::col)
      .def_readonly("lhs", &verify::Worst::lhs, "side 0's entry")
      .def_readonly("rhs", &verify::Worst::rhs, "that side's entry")
      .def("__repr__", [](const verify::Worst& w) {
        return fmt::format("<soac.Worst seed {} entry ({}, {}): {:.17g} vs {:.17g}>", w.seed, w.row, w.col, w.lhs,
                           w.rhs);
      });

  py::class_<VerifyRow>(m, "VerifyResult", "One identity checked: a row of soac verify's table.")
      .def_property_readonly("name", [](const VerifyRow& r) { return r.result.name; })
      .def_property_readonly("citation", [](const VerifyRow& r) { return r.result.citation; })
      .def_readonly("statement", &VerifyRow::statement, "the claim, SIDE = SIDE")
      .def_property_readonly(
          "robot", [](const VerifyRow& r) { return r.result.robot; }, "the robot the worst sample came from")
      .def_property_readonly(
          "verdict", [](const VerifyRow& r) { return verify::to_string(r.result.verdict); },
          "PASS, FAIL, XFAIL (a [false] claim fails, as expected), XPASS or SKIP")
      .def_property_readonly(
          "passed", [](const VerifyRow& r) { return verify::is_success(r.result.verdict); },
          "PASS, XFAIL or SKIP: what soac verify counts as success")
      .def_property_readonly("max_abs", [](const VerifyRow& r) { return r.result.max_abs; })
      .def_property_readonly(
          "max_rel", [](const VerifyRow& r) { return r.result.max_rel; },
          "the largest entry error relative to its row's and column's scale")
      .def_property_readonly(
          "note", [](const VerifyRow& r) { return r.result.note; }, "why skipped, or what stopped the evaluation")
      .def_property_readonly("worst", [](const VerifyRow& r) { return r.result.worst; })
      .def_property_readonly(
          "reproduce",
          [](const VerifyRow& r) { return r.reproduce.empty() ? py::object(py::none()) : py::str(r.reproduce); },
          "for a failure, the soac verify command that checks the worst sample again (None otherwise, and\n"
          "for a robot made in Python, which no command line names)")
      .def_readonly("message", &VerifyRow::message, "soac verify's lines about a failure ('' when it passed)")
      .def("__repr__", [](const VerifyRow& r) {
        return fmt::format("<soac.VerifyResult {} [{}] max abs {:.2e} max rel {:.2e} {}>", r.result.name,
                           r.result.citation, r.result.max_abs, r.result.max_rel, verify::to_string(r.result.verdict));
      });

  m.def("verify", &run_verify, "identities"_a, "robot"_a = py::none(), py::kw_only(), "samples"_a = 10, "seed"_a = 1,
        "tol"_a = 1e-9, "random_trees"_a = py::none(),
        "Checks identities numerically, as soac verify: `identities` is a .soa file (every identity in\n"
        "it), a statement \"LHS = RHS [= ...]\", or a list of them. On `robot` (a soac.Robot or URDF\n"
        "path), else on `random_trees` random trees (default 5). Returns one soac.VerifyResult per\n"
        "identity, in order: a false claim is a result with verdict 'FAIL' and the command that\n"
        "reproduces it, never an exception. Raises soac.Error for bad input (a bad file or statement).");
}

}  // namespace soa::python
