// soac.compile: pipeline::Dynamics for one robot, one method per kernel on numpy arrays.
// A leading batch dimension runs many states in one call: the loop is here, in C++, with the
// GIL released and one Dynamics::Data for the whole batch.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <optional>

#include "algebra/shape.hpp"
#include "convert.hpp"
#include "pipeline/dynamics.hpp"
#include "pipeline/kernels.hpp"
#include "support/error.hpp"

namespace soa::python {
namespace {

using namespace pybind11::literals;
using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

struct KernelInfo {
  std::string name, expression, meaning, output;
  std::vector<std::string> inputs;  // in layout order
  exec::Layout layout;
  bool vector = false;  // the output is a vector: 1-D per state
};

struct PyDynamics {
  RobotPtr robot;
  pipeline::Dynamics dyn;
  std::vector<KernelInfo> kernels;

  const KernelInfo& kernel(const std::string& name) const {
    for (const KernelInfo& k : kernels)
      if (k.name == name) return k;
    std::string known;
    for (const KernelInfo& k : kernels) known += (known.empty() ? "" : ", ") + k.name;
    throw UserError(fmt::format("no kernel '{}' (kernels: {})", name, known));
  }
};
using DynamicsPtr = std::shared_ptr<PyDynamics>;  // never changed once made

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// `kernels` as a kernel file's path (a str or path-like naming a .soa or an existing file),
// or nothing when it names kernels instead (or is None).
std::optional<std::string> kernel_file(const py::object& kernels) {
  if (!py::isinstance<py::str>(kernels) && !py::hasattr(kernels, "__fspath__")) return std::nullopt;
  const std::string text = kernels.cast<std::filesystem::path>().string();
  std::error_code no_file;
  if (text.ends_with(".soa") || std::filesystem::is_regular_file(text, no_file)) return text;
  return std::nullopt;
}

// The kernels `compile` is asked for: the standard ones (and the derivatives), those a .soa
// file declares (the frames it holds are held by compile(): with_declared_holds), or some of
// the standard and derivative ones by name.
std::vector<pipeline::KernelSpec> kernel_specs(const py::object& kernels, bool welded, bool derivatives, bool grasped) {
  if (kernels.is_none()) return pipeline::kernel_set("", welded, derivatives, grasped);
  if (const auto file = kernel_file(kernels)) return pipeline::kernel_set(*file, false, derivatives);
  std::vector<std::string> names;
  if (py::isinstance<py::str>(kernels) || py::hasattr(kernels, "__fspath__")) {
    names.push_back(kernels.cast<std::filesystem::path>().string());
  } else {
    names = kernels.cast<std::vector<std::string>>();
  }
  const std::vector<pipeline::KernelSpec> known = pipeline::kernel_set("", welded, true, grasped);
  std::vector<pipeline::KernelSpec> specs;
  for (const std::string& name : names) {
    const auto it = std::find_if(known.begin(), known.end(), [&](const auto& k) { return k.name == name; });
    if (it == known.end()) {
      std::vector<std::string> all;
      for (const auto& k : known) all.push_back(k.name);
      throw UserError(fmt::format("no kernel '{}' (kernels: {})", name, join(all)));
    }
    if (std::any_of(specs.begin(), specs.end(), [&](const auto& k) { return k.name == name; }))
      throw UserError(fmt::format("kernel '{}' is named twice", name));
    specs.push_back(*it);
  }
  return specs;
}

bool vector_output(const pipeline::KernelSpec& spec, const exec::Layout& layout) {
  if (!spec.wrt.empty()) return false;  // one column per direction
  try {
    return ir::infer_shape(spec.expression).cols == ir::Dim::One;
  } catch (const ir::ShapeError&) {
    return layout.cols == 1;
  }
}

// An empty output: (rows,) or (rows, cols) per state, column-major within a state as the
// C++ API writes it; (batch, ...) in front when batched.
py::array_t<double> output_array(const KernelInfo& k, std::optional<py::ssize_t> batch) {
  constexpr auto d = static_cast<py::ssize_t>(sizeof(double));
  const py::ssize_t rows = k.layout.rows, cols = k.layout.cols, size = rows * cols;
  std::vector<py::ssize_t> shape, strides;
  if (batch) shape.push_back(*batch), strides.push_back(d * size);
  if (k.vector) {
    shape.push_back(size), strides.push_back(d);
  } else {
    shape.insert(shape.end(), {rows, cols});
    strides.insert(strides.end(), {d, d * rows});
  }
  return py::array_t<double>(shape, strides);
}

py::object call(const PyDynamics& self, const KernelInfo& k, const py::args& args, const py::kwargs& kwargs) {
  const std::size_t n = k.inputs.size();
  const std::string signature = fmt::format("{}({})", k.name, join(k.inputs));
  if (args.size() > n) throw py::type_error(fmt::format("{} takes {} inputs, {} given", signature, n, args.size()));
  std::vector<py::object> given(n);
  for (std::size_t i = 0; i < args.size(); ++i) given[i] = args[i];
  for (const auto& [key, value] : kwargs) {
    const std::string name = key.cast<std::string>();
    const auto at = std::find(k.inputs.begin(), k.inputs.end(), name);
    if (at == k.inputs.end()) throw py::type_error(fmt::format("{} has no input '{}'", signature, name));
    auto& slot = given[static_cast<std::size_t>(at - k.inputs.begin())];
    if (slot) throw py::type_error(fmt::format("{}: input '{}' given twice", signature, name));
    slot = py::reinterpret_borrow<py::object>(value);
  }
  // Each input (size,) for every state, or (batch, size) one row per state.
  std::vector<Array> arrays;
  std::optional<py::ssize_t> batch;
  for (std::size_t i = 0; i < n; ++i) {
    if (!given[i]) throw py::type_error(fmt::format("{}: missing input '{}'", signature, k.inputs[i]));
    Array a = Array::ensure(given[i]);
    if (!a) throw py::type_error(fmt::format("{}: input '{}' must be an array of numbers", k.name, k.inputs[i]));
    const py::ssize_t size = k.layout.inputs[i].size;
    if ((a.ndim() != 1 && a.ndim() != 2) || a.shape(a.ndim() - 1) != size) {
      std::string shape;
      for (py::ssize_t j = 0; j < a.ndim(); ++j) shape += fmt::format("{}{}", j ? ", " : "", a.shape(j));
      throw UserError(fmt::format("kernel '{}': input '{}' has shape ({}{}), the robot needs ({},) or (batch, {})",
                                  k.name, k.inputs[i], shape, a.ndim() == 1 ? "," : "", size, size));
    }
    if (a.ndim() == 2) {
      if (batch && *batch != a.shape(0))
        throw UserError(fmt::format("kernel '{}': input '{}' has {} states, an earlier input {}", k.name, k.inputs[i],
                                    a.shape(0), *batch));
      batch = a.shape(0);
    }
    arrays.push_back(std::move(a));
  }
  py::array_t<double> out = output_array(k, batch);
  double* o = out.mutable_data();
  std::vector<const double*> from;
  std::vector<py::ssize_t> step;  // per state: the input's row length, 0 for one shared by all
  for (const Array& a : arrays) from.push_back(a.data()), step.push_back(a.ndim() == 2 ? a.shape(1) : 0);
  {
    py::gil_scoped_release released;
    pipeline::Dynamics::Data data = self.dyn.data();
    std::vector<double> in(static_cast<std::size_t>(k.layout.input_size));
    const py::ssize_t states = batch.value_or(1), out_size = k.layout.output_size();
    for (py::ssize_t b = 0; b < states; ++b) {
      for (std::size_t i = 0; i < n; ++i) {
        const exec::Layout::Slot& slot = k.layout.inputs[i];
        std::copy_n(from[i] + b * step[i], slot.size, in.data() + slot.offset);
      }
      self.dyn.run(k.name, in.data(), o + b * out_size, data);
    }
  }
  return out;
}

std::string kernel_doc(const KernelInfo& k) {
  std::string inputs;
  for (std::size_t i = 0; i < k.inputs.size(); ++i)
    inputs += fmt::format("{}{} ({})", i ? ", " : "", k.inputs[i], k.layout.inputs[i].size);
  const std::string shape =
      k.vector ? fmt::format("({},)", k.layout.rows) : fmt::format("({}, {})", k.layout.rows, k.layout.cols);
  return fmt::format(
      "{}({}) -> {} {}\n\n{}{}\n\nInputs by position or name: {}; each a vector, or (B, size) for a batch of B\n"
      "states run in one call (inputs given as vectors are shared by the batch); the output is then\n"
      "(B,) + {}. Matrices are column-major, as the C++ API writes them (numpy Fortran order).",
      k.name, join(k.inputs), k.output, shape, k.expression, k.meaning.empty() ? "" : ": " + k.meaning, inputs, shape);
}

py::object compile(const py::object& robot_object, const py::object& kernels, const std::string& backend,
                   bool derivatives) {
  RobotPtr robot = robot_arg(robot_object);
  if (const auto file = kernel_file(kernels)) robot = with_declared_holds(robot, *file);
  pipeline::Backend b;
  if (backend == "jit")
    b = pipeline::Backend::Jit;
  else if (backend == "runtime")
    b = pipeline::Backend::Runtime;
  else
    throw UserError(
        fmt::format("backend '{}': expected 'jit' (LLVM machine code) or 'runtime' (the generic runtime)", backend));
  const std::vector<pipeline::KernelSpec> specs = kernel_specs(kernels, robot->held, derivatives, robot->grasped);
  std::shared_ptr<PyDynamics> made;
  {
    py::gil_scoped_release released;
    made = std::make_shared<PyDynamics>(
        PyDynamics{robot, pipeline::Dynamics::create(robot->robot, robot->tips, b, specs), {}});
  }
  for (const pipeline::KernelSpec& spec : specs) {
    const exec::Layout& layout = made->dyn.layout(spec.name);
    // The layout's inputs are the declared ones, in order, or their first ones: a quadratic
    // form of a derivative (exec::form_layout) leaves the last ones out.
    if (layout.inputs.size() > spec.inputs.size())
      throw InternalError(fmt::format("kernel '{}': {} inputs declared, {} in its layout", spec.name,
                                      spec.inputs.size(), layout.inputs.size()));
    const std::vector<std::string> inputs(spec.inputs.begin(),
                                          spec.inputs.begin() + static_cast<long>(layout.inputs.size()));
    made->kernels.push_back({spec.name, pipeline::kernel_expression(spec), spec.meaning, spec.output, inputs, layout,
                             vector_output(spec, layout)});
  }
  const DynamicsPtr shared = made;
  py::object object = py::cast(shared);
  const py::object is_keyword = py::module_::import("keyword").attr("iskeyword");
  for (const KernelInfo& k : shared->kernels) {
    const std::string name = k.name;
    const py::cpp_function method(
        [shared, name](const py::args& args, const py::kwargs& kwargs) {
          return call(*shared, shared->kernel(name), args, kwargs);
        },
        py::name(name.c_str()), py::doc(kernel_doc(k).c_str()));
    object.attr(name.c_str()) = method;
    // dyn.lambda(q) does not parse: a kernel named as a Python keyword is also NAME_.
    if (is_keyword(name).cast<bool>()) object.attr((name + "_").c_str()) = method;
  }
  return object;
}

// The C++ loop the batch call is measured against (benchmarks/python_batch.py): `inputs`
// (B, input_size) already concatenated in the kernel's layout, run state by state with one
// Data, `repeats` times; returns each repeat's seconds and the outputs (B, output size).
// For measurement only: no numpy conversion, no checks beyond the sizes.
py::tuple benchmark_loop(const PyDynamics& self, const std::string& kernel, const Array& inputs, int repeats) {
  const KernelInfo& k = self.kernel(kernel);
  if (inputs.ndim() != 2 || inputs.shape(1) != k.layout.input_size)
    throw UserError(fmt::format("_benchmark_loop: inputs must be (B, {})", k.layout.input_size));
  const py::ssize_t states = inputs.shape(0), in_size = k.layout.input_size, out_size = k.layout.output_size();
  py::array_t<double> out({states, out_size});
  std::vector<double> seconds;
  {
    py::gil_scoped_release released;
    pipeline::Dynamics::Data data = self.dyn.data();
    const double* in = inputs.data();
    double* o = out.mutable_data();
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      for (py::ssize_t b = 0; b < states; ++b) self.dyn.run(kernel, in + b * in_size, o + b * out_size, data);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  return py::make_tuple(seconds, out);
}

}  // namespace

void init_dynamics(py::module_& m) {
  py::class_<PyDynamics, DynamicsPtr>(
      m, "Dynamics", py::dynamic_attr(),
      "Kernels compiled for one robot (soac.compile): one method per kernel, e.g.\n"
      "dyn.forward_dynamics(q, qd, T) -> qdd, taking and returning numpy float64 arrays in the C++\n"
      "API's conventions (pipeline/dynamics.hpp): q, qd, qdd and T in joint-space order (Robot.joints),\n"
      "a free-flyer's q = [x y z qx qy qz qw] and qd = [omega; v] in its body frame, f0 6 per tip\n"
      "([torque; force] in the tip's frame), matrix outputs (rows, cols), column-major. A leading batch\n"
      "dimension runs many states in one call, in C++ without the GIL. Calls from several threads are\n"
      "safe: each call has its own scratch memory (pipeline::Dynamics::Data).")
      .def_property_readonly("kernels",
                             [](const PyDynamics& d) {
                               std::vector<std::string> names;
                               for (const auto& k : d.kernels) names.push_back(k.name);
                               return names;
                             })
      .def_property_readonly("robot", [](const PyDynamics& d) { return d.robot; })
      .def_property_readonly(
          "backend", [](const PyDynamics& d) { return d.dyn.backend() == pipeline::Backend::Jit ? "jit" : "runtime"; })
      .def_property_readonly(
          "compile_seconds", [](const PyDynamics& d) { return d.dyn.compile_seconds(); },
          "JIT: the wall clock of code generation")
      .def(
          "inputs",
          [](const PyDynamics& d, const std::string& kernel) {
            const KernelInfo& k = d.kernel(kernel);
            std::vector<std::pair<std::string, int>> out;
            for (std::size_t i = 0; i < k.inputs.size(); ++i) out.emplace_back(k.inputs[i], k.layout.inputs[i].size);
            return out;
          },
          "kernel"_a, "(name, size) of each input, in order")
      .def(
          "output_shape",
          [](const PyDynamics& d, const std::string& kernel) {
            const KernelInfo& k = d.kernel(kernel);
            return k.vector ? py::make_tuple(k.layout.rows * k.layout.cols)
                            : py::make_tuple(k.layout.rows, k.layout.cols);
          },
          "kernel"_a, "one state's output shape")
      .def(
          "expression", [](const PyDynamics& d, const std::string& kernel) { return d.kernel(kernel).expression; },
          "kernel"_a, "the kernel's expression, before rewriting")
      .def(
          "run",
          [](const PyDynamics& d, const std::string& kernel, const py::args& args, const py::kwargs& kwargs) {
            return call(d, d.kernel(kernel), args, kwargs);
          },
          "kernel"_a, "dyn.run('forward_dynamics', q, qd, T): the kernel by name")
      .def("_benchmark_loop", &benchmark_loop, "kernel"_a, "inputs"_a, "repeats"_a = 1,
           "For benchmarks/python_batch.py only: the batch loop in C++ on inputs already concatenated\n"
           "(B, input size), timed; returns (seconds per repeat, outputs).")
      .def("__repr__", [](const PyDynamics& d) {
        std::vector<std::string> names;
        for (const auto& k : d.kernels) names.push_back(k.name);
        return fmt::format("<soac.Dynamics {} on {}: {}>",
                           d.dyn.backend() == pipeline::Backend::Jit ? "jit" : "runtime", d.robot->describe(),
                           join(names));
      });

  m.def("compile", &compile, "robot"_a, "kernels"_a = py::none(), "backend"_a = "jit", "derivatives"_a = false,
        "The kernels for one robot (a soac.Robot or URDF path) as a soac.Dynamics, through the pipeline\n"
        "soac emit and soac jit use (pipeline::Dynamics::create).\n\n"
        "kernels: None (the standard kernels: inverse_dynamics, mass_matrix, forward_dynamics,\n"
        "  mass_matrix_inverse, jacobian, lambda, tip_force_correction), a list of their names (or of\n"
        "  the derivative kernels'), or a .soa file declaring kernels. derivatives: with kernels=None,\n"
        "  add inverse_dynamics_derivatives, forward_dynamics_derivatives, mass_matrix_derivative.\n"
        "backend: 'jit' (LLVM machine code in this process) or 'runtime' (the generic runtime).");
}

}  // namespace soa::python
