// Dynamics for a robot loaded at run time, in one call: the kernels through the pipeline,
// run either by the generic runtime (exec::execute) or as JIT-compiled machine code (LLVM
// ORC, when soac was built with SOA_WITH_LLVM). Both take the generated C++'s calling
// convention: in = the kernel's inputs concatenated in declared order, out = its output
// (matrices column-major), sizes from exec::Layout.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "exec/execute.hpp"
#include "pipeline/kernels.hpp"

namespace soa::pipeline {

enum class Backend {
  Runtime,  // interpret the sweep programs (no code generation at all)
  Jit,      // compile the robot-specialised programs with LLVM in this process
};

class Dynamics {
public:
  // Every kernel of `specs` (default: the standard kernels) for this robot and tips.
  static Dynamics create(const Robot& robot, const std::vector<int>& tips, Backend backend,
                         const std::vector<KernelSpec>& specs = standard_kernels());
  Dynamics(Dynamics&&) noexcept;
  Dynamics& operator=(Dynamics&&) noexcept;
  ~Dynamics();

  void run(std::string_view kernel, const double* in, double* out) const;
  const exec::Layout& layout(std::string_view kernel) const;
  std::vector<std::string> names() const;
  Backend backend() const;
  double compile_seconds() const;  // JIT only: the wall clock of code generation

private:
  struct Impl;
  explicit Dynamics(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace soa::pipeline
