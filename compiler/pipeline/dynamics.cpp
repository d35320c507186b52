#include "pipeline/dynamics.hpp"

#include <fmt/format.h>

#include <optional>

#include "support/error.hpp"
#ifdef SOA_HAVE_LLVM_JIT
#include "pipeline/jit.hpp"
#endif

namespace soa::pipeline {

struct Dynamics::Impl {
  Backend backend;
  exec::RobotConstants<double> robot;
  std::vector<LoweredKernel> kernels;
  std::vector<exec::Layout> layouts;
#ifdef SOA_HAVE_LLVM_JIT
  std::optional<jit::Kernels> compiled;
#endif

  std::size_t index(std::string_view name) const {
    for (std::size_t i = 0; i < kernels.size(); ++i)
      if (kernels[i].spec.name == name) return i;
    std::string known;
    for (const auto& k : kernels) known += (known.empty() ? "" : ", ") + k.spec.name;
    throw UserError(fmt::format("no kernel '{}' (kernels: {})", name, known));
  }
};

Dynamics Dynamics::create(const Robot& robot, const std::vector<int>& tips, Backend backend,
                          const std::vector<KernelSpec>& specs) {
  auto impl = std::make_unique<Impl>();
  impl->backend = backend;
  impl->robot = exec::make_constants(robot, tips);
  const Library library = load_library();
  rewrite::Options options;
  options.serial_chain = robot.is_serial_chain();
  for (const KernelSpec& spec : specs) {
    impl->kernels.push_back(lower_kernel(spec, library, options));
    impl->layouts.push_back(kernel_layout(impl->kernels.back(), impl->robot));
  }
  if (backend == Backend::Jit) {
#ifdef SOA_HAVE_LLVM_JIT
    impl->compiled.emplace(jit_compile(specialise_kernels(impl->kernels, impl->robot)));
#else
    throw UserError("this soac was built without LLVM (SOA_WITH_LLVM=OFF): no JIT backend");
#endif
  }
  return Dynamics(std::move(impl));
}

Dynamics::Dynamics(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Dynamics::Dynamics(Dynamics&&) noexcept = default;
Dynamics& Dynamics::operator=(Dynamics&&) noexcept = default;
Dynamics::~Dynamics() = default;

Dynamics::Data Dynamics::data() const {
  Data d;
  d.owner_ = impl_.get();
  if (impl_->backend == Backend::Runtime)
    for (const LoweredKernel& k : impl_->kernels) d.workspaces_.emplace_back(k.program, impl_->robot);
  return d;
}

void Dynamics::run(std::string_view kernel, const double* in, double* out, Data& data) const {
  if (data.owner_ != impl_.get())
    throw UserError(
        fmt::format("Dynamics::run '{}': the Data was made by another Dynamics (use this one's data())", kernel));
  const std::size_t i = impl_->index(kernel);
#ifdef SOA_HAVE_LLVM_JIT
  if (impl_->compiled) {
    impl_->compiled->lookup(kernel)(in, out);
    return;
  }
#endif
  const LoweredKernel& k = impl_->kernels[i];
  if (!k.spec.wrt.empty())  // the dual-number route allocates its own (exec/derivative.hpp)
    run_generic(k, impl_->robot, in, out);
  else
    exec::execute(k.program, impl_->robot, in, out, data.workspaces_[i]);
}

void Dynamics::run(std::string_view kernel, const double* in, double* out) const {
  if (impl_->backend == Backend::Runtime) {  // a workspace for this call only
    run_generic(impl_->kernels[impl_->index(kernel)], impl_->robot, in, out);
    return;
  }
  Data none = data();  // compiled code keeps its temporaries on the stack
  run(kernel, in, out, none);
}

const exec::Layout& Dynamics::layout(std::string_view kernel) const { return impl_->layouts[impl_->index(kernel)]; }

std::vector<std::string> Dynamics::names() const {
  std::vector<std::string> out;
  for (const auto& k : impl_->kernels) out.push_back(k.spec.name);
  return out;
}

Backend Dynamics::backend() const { return impl_->backend; }

double Dynamics::compile_seconds() const {
#ifdef SOA_HAVE_LLVM_JIT
  if (impl_->compiled) return impl_->compiled->total_seconds();
#endif
  return 0.0;
}

}  // namespace soa::pipeline
