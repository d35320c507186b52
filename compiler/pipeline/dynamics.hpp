// Dynamics for a robot loaded at run time, in one call: the kernels through the pipeline,
// run either by the generic runtime (exec::execute) or as JIT-compiled machine code (LLVM
// ORC, when soac was built with SOA_WITH_LLVM). Both take the generated C++'s calling
// convention: in = the kernel's inputs concatenated in declared order, out = its output
// (matrices column-major), sizes from exec::Layout.
//
// Threads and memory, as pinocchio::Model and pinocchio::Data: a Dynamics is the model,
// read-only once made; a Data, from data(), is the scratch memory run() writes into. Each
// thread makes its own Data and runs with it: run(kernel, in, out, data) allocates nothing
// (Backend::Runtime: one exec::Workspace per kernel; Backend::Jit: the code keeps its
// temporaries on the stack and the Data is empty), except a derivative kernel (KernelSpec::wrt)
// on Backend::Runtime, whose dual numbers (exec::differentiate) are made per call. A Data belongs to the Dynamics that
// made it (moving the Dynamics keeps it valid); with another, run throws UserError. run(kernel, in, out) makes the
// workspace per call: no Data to manage, safe from any thread, but it allocates on every call.
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
  // Compile the robot-specialised programs with LLVM in this process. Compiles faster
  // after jit::tune_llvm_process_options() (emit-llvm/jit.hpp), which changes LLVM's
  // process-wide options and so is left to the program embedding soac to call.
  Jit,
};

class Dynamics {
public:
  // Every kernel of `specs` (default: the standard kernels) for this robot and tips.
  static Dynamics create(const Robot& robot, const std::vector<int>& tips, Backend backend,
                         const std::vector<KernelSpec>& specs = standard_kernels());
  Dynamics(Dynamics&&) noexcept;
  Dynamics& operator=(Dynamics&&) noexcept;
  ~Dynamics();

  class Data {
  public:
    Data(Data&&) noexcept = default;
    Data& operator=(Data&&) noexcept = default;

  private:
    friend class Dynamics;
    Data() = default;
    const void* owner_ = nullptr;                      // the Dynamics' Impl
    std::vector<exec::Workspace<double>> workspaces_;  // per kernel (Runtime)
  };
  Data data() const;

  void run(std::string_view kernel, const double* in, double* out, Data& data) const;
  void run(std::string_view kernel, const double* in, double* out) const;  // allocates per call
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
