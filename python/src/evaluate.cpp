// soac.evaluate: an expression's value for one robot and state, dense and by sweeps (soac eval).
#include <fmt/format.h>

#include <random>

#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "convert.hpp"
#include "interp/interpreter.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/state.hpp"
#include "support/error.hpp"
#include "syntax/syntax.hpp"

namespace soa::python {
namespace {

using namespace pybind11::literals;

struct EvalResult {
  std::string expression, shape;
  MatX dense, sweeps;
  bool vector = false;  // one column: numpy gets 1-D arrays
  State state;
  VecX T;
};

py::object value(const EvalResult& r, const MatX& x) {
  return r.vector ? py::object(to_numpy(VecX(x.col(0)))) : py::object(to_numpy(x));
}

EvalResult evaluate(const std::string& expression, const py::object& robot_object, const py::object& state_arg,
                    std::uint64_t seed) {
  const RobotPtr robot = robot_arg(robot_object);
  const Robot& r = robot->robot;
  const int tips = static_cast<int>(robot->tips.size());
  const pipeline::Library library = pipeline::load_library();  // what calM, J, K, ... mean
  auto source = std::make_shared<syntax::Source>(syntax::Source{kExpressionSource, expression});
  const ir::Expr e = syntax::parse_expression(source);
  // A state dict as a state file (state_file.hpp): missing q neutral, qd and f0 zero; qdd and T
  // tied by the equations of motion (one given: the other follows; neither: qdd = 0).
  State state;
  std::optional<VecX> T;
  bool has_qdd = false;
  if (!state_arg.is_none()) {
    state = {neutral_configuration(r), VecX::Zero(r.nv), VecX::Zero(r.nv), VecX::Zero(6L * tips)};
    for (const auto& [key, item] : state_arg.cast<py::dict>()) {
      const std::string name = key.cast<std::string>();
      const long size = name == "q"                                    ? r.nq
                        : name == "qd" || name == "qdd" || name == "T" ? r.nv
                        : name == "f0"                                 ? 6L * tips
                                                                       : -1;
      if (size < 0) throw UserError(fmt::format("state: unknown vector '{}' (expected q, qd, qdd, T or f0)", name));
      const VecX v = vector_arg(item, "state", name, size);
      // Unit quaternions, as a state file's: the runtime would normalise them quietly.
      if (name == "q") check_unit_quaternions(r, v, "state"), state.q = v;
      if (name == "qd") state.qd = v;
      if (name == "qdd") state.qdd = v, has_qdd = true;
      if (name == "T") T = v;
      if (name == "f0") state.f0 = v;
    }
  } else {
    std::mt19937_64 rng(seed);
    state = random_state(r, tips, rng);
  }
  py::gil_scoped_release released;
  const interp::Evaluation ev = pipeline::prepare_state(r, state, robot->tips, library.algebra.definitions, T, has_qdd);
  const ir::Shape shape = ir::infer_shape(e);
  return {ir::print(e, ir::Syntax::Unicode),
          ir::to_string(shape),
          interp::eval_dense(ev, e),
          interp::eval_sweeps(ev, e),
          shape.cols == ir::Dim::One,
          ev.state,
          ev.kin.T};
}

}  // namespace

void init_evaluate(py::module_& m) {
  py::class_<EvalResult>(m, "Evaluation", "An expression's value for one robot and state, two independent ways.")
      .def_readonly("expression", &EvalResult::expression)
      .def_readonly("shape", &EvalResult::shape, "its shape, e.g. 'N x 1', '6m x N'")
      .def_property_readonly(
          "dense", [](const EvalResult& r) { return value(r, r.dense); },
          "every operator formed as its matrix (the ground truth): 1-D for a vector, else (rows, cols)")
      .def_property_readonly(
          "sweeps", [](const EvalResult& r) { return value(r, r.sweeps); }, "the O(N) recursions, column by column")
      .def_property_readonly("max_abs_diff",
                             [](const EvalResult& r) { return (r.dense - r.sweeps).cwiseAbs().maxCoeff(); })
      .def_property_readonly(
          "state", [](const EvalResult& r) { return state_dict(r.state, r.T); },
          "the state used: q, qd, qdd, T, f0 (T as given, else inverse dynamics of qdd)")
      .def("__repr__", [](const EvalResult& r) {
        return fmt::format("<soac.Evaluation {} ({}), max |dense - sweeps| = {:.3e}>", r.expression, r.shape,
                           (r.dense - r.sweeps).cwiseAbs().maxCoeff());
      });

  m.def("evaluate", &evaluate, "expression"_a, "robot"_a, "state"_a = py::none(), py::kw_only(), "seed"_a = 1,
        "The value of `expression` for `robot` (a soac.Robot or URDF path) in a state, as soac eval:\n"
        "dense and by sweeps. state: a dict of arrays q (nq), qd, qdd, T (nv each, joint-space order),\n"
        "f0 (6 per tip): missing q is the neutral configuration, missing qd and f0 zero; qdd and T are\n"
        "tied by T = calM qdd + C + J* f0 (given one, the other follows; given neither, qdd = 0).\n"
        "Quaternions ([x y z w]) must be of unit norm. Without a state, the random state of `seed`\n"
        "(soac eval --seed). Raises soac.Error for a bad expression or state.");
}

}  // namespace soa::python
