// soac.emit: robot-specialised C++ written as soac emit writes it (all files or none).
#include <fmt/format.h>

#include <filesystem>

#include "convert.hpp"
#include "emit-cpp/emit_cpp.hpp"
#include "pipeline/kernels.hpp"
#include "specialise/kernel.hpp"
#include "specialise/share.hpp"
#include "support/error.hpp"

namespace soa::python {
namespace {

using namespace pybind11::literals;
namespace fs = std::filesystem;

std::vector<std::string> emit(const py::object& robot_object, const fs::path& out,
                              const std::optional<fs::path>& kernel_file, const std::string& name, int sources,
                              bool derivatives, const std::optional<fs::path>& library_path) {
  const std::string kernels = kernel_file ? kernel_file->string() : "";
  // The name first: a bad one costs nothing.
  if (!name.empty()) specialise::check_name(name, "name", true);
  if (sources < 1 || sources > emit::kMaxSources)
    throw UserError(fmt::format("sources: {} is not in 1 to {}", sources, emit::kMaxSources));
  const RobotPtr given = robot_arg(robot_object);
  std::vector<std::string> paths;
  long lines = 0;
  {
    py::gil_scoped_release released;
    const RobotPtr robot = with_declared_holds(given, kernels);
    const pipeline::Library lib = pipeline::load_library(library_path ? library_path->string() : "");
    const std::vector<pipeline::KernelSpec> specs =
        pipeline::kernel_set(kernels, robot->held, derivatives, robot->grasped);
    const std::vector<specialise::Kernel> code =
        pipeline::compile_for_robot(specs, lib, robot->robot, robot->tips).code;
    emit::Target target =
        emit::make_target(robot->robot, robot->tips, name.empty() ? specialise::identifier(robot->robot.name) : name);
    target.kernel_source = kernels;
    emit::CppOptions options{sources};
    const emit::Emitted files = emit::emit_cpp(code, target, options);
    paths = emit::write_files(files, out.string());  // all of them or none, as soac emit
    lines = emit::compiled_lines(files);
  }
  if (const std::string warning = emit::size_warning(lines, emit::kDefaultWarnLines); !warning.empty()) warn(warning);
  return paths;
}

}  // namespace

void init_emit(py::module_& m) {
  m.def("emit", &emit, "robot"_a, "out"_a, py::kw_only(), "kernels"_a = py::none(), "name"_a = "",
        "sources"_a = emit::kDefaultSources, "derivatives"_a = false, "library"_a = py::none(),
        "Robot-specialised C++ for a kernel set, as soac emit [KERNELS] --robot ... --out OUT writes it:\n"
        "the header and `sources` source files, all written or none. robot: a soac.Robot or URDF path;\n"
        "kernels: a .soa file (default: the standard kernels; derivatives=True adds the derivative\n"
        "kernels); name: the file stem, namespace soa_gen::NAME and extern \"C\" prefix (default: the URDF\n"
        "robot name as an identifier). Returns the paths written, the header first.");
}

}  // namespace soa::python
