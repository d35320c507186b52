#include "convert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "pipeline/kernels.hpp"
#include "support/error.hpp"
#include "syntax/diagnostics.hpp"
#include "syntax/syntax.hpp"

namespace soa::python {

RobotPtr robot_arg(const py::handle& robot) {
  if (py::isinstance<RobotHandle>(robot)) return robot.cast<RobotPtr>();
  if (py::isinstance<py::str>(robot) || py::hasattr(robot, "__fspath__"))
    return load_robot(robot.cast<std::filesystem::path>());
  throw py::type_error(fmt::format("robot: expected a soac.Robot or a URDF path, not {}",
                                   py::str(py::type::of(robot)).cast<std::string>()));
}

RobotPtr with_declared_holds(const RobotPtr& robot, const std::string& kernel_file) {
  if (kernel_file.empty()) return robot;
  const std::vector<syntax::Hold> declared = syntax::load_module(kernel_file).holds;
  if (declared.empty()) return robot;
  if (robot->held || robot->grasped)
    syntax::fail(declared.front().where,
                 "the robot holds frames already (welds=, contacts=, grasps=): declare the holds in one place");
  if (!robot->tip_names.empty())
    syntax::fail(declared.front().where, "tips names the tips, but this file holds frames, which are the tips");
  auto held = std::make_shared<RobotHandle>(*robot);
  held->tips = hold_frames(held->robot, HoldOptions{{}, {}, pipeline::holds_of(declared), {}});
  held->held = true;
  return held;
}

py::array_t<double> to_numpy(const VecX& v) {
  py::array_t<double> a(static_cast<py::ssize_t>(v.size()));
  std::copy(v.data(), v.data() + v.size(), a.mutable_data());
  return a;
}

py::array_t<double> to_numpy(const MatX& m) {
  const auto rows = static_cast<py::ssize_t>(m.rows()), cols = static_cast<py::ssize_t>(m.cols());
  constexpr auto d = static_cast<py::ssize_t>(sizeof(double));
  py::array_t<double> a({rows, cols}, {d, d * rows});  // column-major, as Eigen's
  std::copy(m.data(), m.data() + m.size(), a.mutable_data());
  return a;
}

py::array_t<double> to_numpy(const Eigen::Vector3d& v) { return to_numpy(VecX(v)); }
py::array_t<double> to_numpy(const Eigen::Matrix3d& m) { return to_numpy(MatX(m)); }

VecX vector_arg(const py::handle& value, const std::string& what, const std::string& name, long size) {
  const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(value);
  if (!a) throw py::type_error(fmt::format("{}: {} must be an array of numbers", what, name));
  if (a.ndim() != 1)
    throw UserError(
        fmt::format("{}: {} has {} dimensions, expected a vector of {} values", what, name, a.ndim(), size));
  if (a.shape(0) != size)
    throw UserError(fmt::format("{}: {} has {} values, the robot needs {}", what, name, a.shape(0), size));
  VecX v(size);
  for (long i = 0; i < size; ++i) {
    v[i] = a.at(i);
    if (!std::isfinite(v[i]))
      throw UserError(fmt::format("{}: {}[{}] = {} is not a finite number", what, name, i, v[i]));
  }
  return v;
}

void warn(const std::string& message) {
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw py::error_already_set();
}

py::dict state_dict(const State& s, const VecX& T) {
  py::dict d;
  d["q"] = to_numpy(s.q);
  d["qd"] = to_numpy(s.qd);
  d["qdd"] = to_numpy(s.qdd);
  d["T"] = to_numpy(T);
  d["f0"] = to_numpy(s.f0);
  return d;
}

}  // namespace soa::python
