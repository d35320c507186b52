// soac._soac: the module python/soac/__init__.py re-exports (docs/python.md).
#include <fmt/format.h>

#include "convert.hpp"
#include "emit-cpp/emit_cpp.hpp"
#include "support/error.hpp"
#ifdef SOA_HAVE_LLVM_JIT
#include "emit-llvm/jit.hpp"
#endif

namespace soa::python {
namespace {

// The exception types, alive as long as the process (the module keeps them too).
struct Errors {
  py::handle error, not_supported, internal;
};
Errors errors;

py::handle new_error(py::module_& m, const char* name, const char* doc, py::tuple bases) {
  const std::string qualified = std::string("soac.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (!type) throw py::error_already_set();
  m.add_object(name, py::handle(type));  // the module's reference; ours is the one made here
  return py::handle(type);
}

// Raises `type`(message) with the extra lines of a UserError (a source line and a caret) as
// its `detail` attribute.
void raise(py::handle type, const std::string& message, const std::string& detail) {
  py::object e = type(message);
  e.attr("detail") = detail;
  PyErr_SetObject(type.ptr(), e.ptr());
}

}  // namespace
}  // namespace soa::python

PYBIND11_MODULE(_soac, m) {
  using namespace soa::python;
  m.doc() =
      "soac, the Spatial Operator Algebra compiler, from Python: robots, derivations, verification, "
      "evaluation, and kernels compiled for one robot (docs/python.md). Import the package soac, "
      "which re-exports this module.";
  errors.error = new_error(m, "Error",
                           "Bad input: an expression, a URDF, a state, a kernel or an argument. The message is "
                           "soac's one line naming the place (file:line:col, link, joint, frame, kernel); "
                           "`detail` holds the source line and a caret when there is one.",
                           py::make_tuple(py::handle(PyExc_ValueError)));
  errors.not_supported = new_error(m, "NotSupported", "What soac does not do (yet): soac's 'not implemented' errors.",
                                   py::make_tuple(errors.error, py::handle(PyExc_NotImplementedError)));
  errors.internal = new_error(m, "InternalError", "A bug in soac (the command line's exit code 3): please report it.",
                              py::make_tuple(py::handle(PyExc_RuntimeError)));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const soa::UserError& e) {
      raise(errors.error, e.what(), e.detail());
    } catch (const soa::NotImplemented& e) {
      raise(errors.not_supported, std::string("not implemented: ") + e.what(), "");
    } catch (const soa::InternalError& e) {
      raise(errors.internal, std::string("internal error (a bug in soac, please report it): ") + e.what(), "");
    }
  });

  m.attr("__version__") = soa::emit::soac_version();
#ifdef SOA_HAVE_LLVM_JIT
  m.attr("has_jit") = true;
#else
  m.attr("has_jit") = false;
#endif
  m.def(
      "tune_llvm",
      [] {
#ifdef SOA_HAVE_LLVM_JIT
        soa::jit::tune_llvm_process_options();
#endif
      },
      "Sets three of LLVM's process-wide code generation options that make compile(..., backend='jit') "
      "compile faster (soa::jit::tune_llvm_process_options; docs/performance.md). They are the process's: "
      "another user of the same libLLVM in this process (a JIT, a shader compiler) gets them too, and they "
      "cannot be undone, so soac never sets them unless asked. Options already set are kept.");

  init_robot(m);
  init_derive(m);
  init_verify(m);
  init_evaluate(m);
  init_dynamics(m);
  init_emit(m);
}
