// soac.verify: identities checked numerically, the table of `soac verify` as data.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "convert.hpp"
#include "pipeline/pipeline.hpp"
#include "support/error.hpp"
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
  const std::vector<verify::Claim> claims = verify::read_claims(args, kExpressionSource);
  const pipeline::Library library = pipeline::load_library();  // what calM, J, K, ... mean
  const std::vector<LoadedRobot> trees =
      robot ? std::vector<LoadedRobot>{} : verify::random_trees(claims, seed, random_trees.value_or(5));
  std::vector<verify::Subject> subjects;
  if (robot) subjects.push_back({&robot->robot, robot->tips, 0});
  for (std::size_t t = 0; t < trees.size(); ++t) subjects.push_back({&trees[t].robot, trees[t].tips, t});
  // The command that reproduces a failure names the robot as soac verify's options would; a
  // random tree made in Python has none.
  const verify::CommandRobot named{robot ? robot->path : "", robot && robot->floating,
                                   robot ? robot->tip_names : std::vector<std::string>{}};
  std::vector<VerifyRow> rows;
  for (const verify::Claim& claim : claims) {
    VerifyRow row{verify::check_all(claim, subjects, library.algebra.definitions, options), verify::statement(claim),
                  "", ""};
    const verify::Result& r = row.result;
    if (r.verdict == verify::Verdict::Fail && !(robot && robot->path.empty()))
      row.reproduce = verify::reproduce_command(r, options, robot ? &named : nullptr, row.statement);
    row.message = verify::failure_text(
        r, row.reproduce.empty() ? "(a robot made in Python: no command line names it)" : row.reproduce);
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
