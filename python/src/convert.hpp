// What the bindings share: the robot as Python holds it, arguments, numpy conversions.
//
// Conventions (docs/python.md): vectors are 1-D float64 arrays; a matrix the C++ API stores
// column-major is a 2-D array of shape (rows, cols) in Fortran order (the same numbers, no
// transposition); joint-space vectors in soac's joint-space order (Robot.joints).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/kinematics.hpp"
#include "model/robot.hpp"
#include "model/tips.hpp"

namespace soa::python {

namespace py = pybind11;

// The text an expression given as a Python string is parsed from: diagnostics name it
// ("<expression>:1:5: error: ..."), as the command line's name "<command line>".
inline constexpr const char* kExpressionSource = "<expression>";

// A robot as the command line loads it: the model and its tips (describe() as soac prints
// it). Immutable once made.
struct RobotHandle : LoadedRobot {
  std::string path;                    // the URDF as given; empty for a random tree
  bool floating = false;               // a free-flyer was added
  std::vector<std::string> tip_names;  // the tips named by the caller (empty: the default ones)
  bool held = false;                   // welds or contacts hold some frames: the constrained kernels apply
  bool grasped = false;                // compliant grasps join frames: grasp_forces, compliant_forward_dynamics
};
using RobotPtr = std::shared_ptr<RobotHandle>;  // never changed once made

// A robot argument: a soac.Robot, or a URDF path (str or os.PathLike) loaded as
// soac.Robot(path) loads it (fixed base, default tips).
RobotPtr robot_arg(const py::handle& robot);
// `robot` with the frames a kernel file holds (`weld FRAME;`, `contact FRAME;`) held, as
// soac's commands load it: they are its tips. `robot` itself when the file holds none (or
// there is no file); a UserError at the declaration when the robot holds frames already
// (welds=, contacts=) or names its tips (tips=).
RobotPtr with_declared_holds(const RobotPtr& robot, const std::string& kernel_file);
RobotPtr load_robot(const std::filesystem::path& path);  // robot.cpp

// numpy copies of Eigen values: a vector as 1-D, a matrix as (rows, cols) in Fortran order.
py::array_t<double> to_numpy(const VecX& v);
py::array_t<double> to_numpy(const MatX& m);
py::array_t<double> to_numpy(const Eigen::Vector3d& v);
py::array_t<double> to_numpy(const Eigen::Matrix3d& m);

// A 1-D array-like of `size` finite numbers; a UserError "WHAT: NAME has K values, the robot
// needs SIZE" (or names the first value that is not finite) otherwise.
VecX vector_arg(const py::handle& value, const std::string& what, const std::string& name, long size);

// Python warnings (UserWarning) with soac's warning text; an error when the filter says so.
void warn(const std::string& message);

// The state as a dict of arrays: q, qd, qdd, T, f0.
py::dict state_dict(const State& s, const VecX& T);

void init_robot(py::module_& m);
void init_derive(py::module_& m);
void init_verify(py::module_& m);
void init_evaluate(py::module_& m);
void init_dynamics(py::module_& m);
void init_emit(py::module_& m);

}  // namespace soa::python
