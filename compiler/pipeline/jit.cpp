#include "pipeline/jit.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <set>

#include "emit-llvm/emit_llvm.hpp"
#include "specialise/share.hpp"
#include "specialise/specialise.hpp"
#include "support/error.hpp"

namespace soa::pipeline {

namespace {

// A kernel as jit_compile() sees it, whichever form the caller holds it in.
struct KernelRef {
  const std::string& name;
  const specialise::ScalarProgram& program;
};

// Each kernel's function name, NAME or PREFIX_NAME, once every name and program is checked:
// sharing reads the programs, so they must keep the ScalarProgram contract.
std::vector<std::string> checked_symbols(const std::vector<KernelRef>& kernels, const std::string& prefix) {
  if (!prefix.empty()) specialise::check_name(prefix, "jit: prefix", true);
  std::vector<std::string> symbols;
  std::set<std::string> seen;
  for (const KernelRef& k : kernels) {
    symbols.push_back(prefix.empty() ? k.name : prefix + "_" + k.name);
    specialise::check_name(k.name, "jit: kernel name");
    emit::check_llvm_kernel(symbols.back(), k.program);
    if (!seen.insert(k.name).second) throw UserError(fmt::format("jit: two kernels are called '{}'", k.name));
  }
  return symbols;
}

// The back-end's input: the shared programs, then every kernel -- its own program under its
// symbol, or, when it uses shared programs, its factored program as a body under another
// name, which the entry SYMBOL calls after them. `sharing` must outlive the result.
jit::Code name_functions(const std::vector<KernelRef>& kernels, const std::vector<std::string>& symbols,
                         const specialise::Sharing& sharing, const std::string& prefix) {
  // Names for the functions no caller sees: C identifiers no kernel has.
  std::set<std::string> used(symbols.begin(), symbols.end());
  const auto fresh = [&](std::string name) {
    while (!used.insert(name).second) name += "x";  // not '_': no "__" (specialise::check_name)
    return name;
  };
  jit::Code code;
  for (std::size_t j = 0; j < sharing.programs.size(); ++j) {
    jit::SharedFunction& f = code.shared.emplace_back();
    f.symbol = fresh(fmt::format("{}soa_shared{}", prefix.empty() ? "" : prefix + "_", j));
    f.program = &sharing.programs[j].code;
    for (int user : sharing.programs[j].users) f.users.push_back(kernels[user].name);
  }
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    const specialise::FactoredKernel& factored = sharing.kernels[k];
    jit::KernelCode& c = code.kernels.emplace_back();
    c.name = kernels[k].name;
    c.symbol = symbols[k];
    if (factored.uses.empty()) {
      c.program = &kernels[k].program;
      continue;
    }
    c.program = &factored.code;
    c.body = fresh(symbols[k] + "_own");
    c.own_inputs = factored.own_inputs;
    for (int j : factored.uses) c.calls.emplace_back(code.shared[j].symbol, sharing.base + sharing.programs[j].offset);
  }
  return code;
}

jit::Kernels compile(const std::vector<KernelRef>& kernels, const JitOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  const std::vector<std::string> symbols = checked_symbols(kernels, options.prefix);
  std::vector<const specialise::ScalarProgram*> programs;
  for (const KernelRef& k : kernels) programs.push_back(&k.program);
  const specialise::Sharing sharing = specialise::share(programs, options.share_min_ops);
  jit::Code code = name_functions(kernels, symbols, sharing, options.prefix);
  code.prepare_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  code.prepare_cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  return jit::compile(code, options);
}

}  // namespace

jit::Kernels jit_compile(const std::vector<std::pair<std::string, specialise::ScalarProgram>>& kernels,
                         const JitOptions& options) {
  std::vector<KernelRef> refs;
  for (const auto& [name, program] : kernels) refs.push_back({name, program});
  return compile(refs, options);
}

jit::Kernels jit_compile(const std::vector<specialise::Kernel>& kernels, const JitOptions& options) {
  std::vector<KernelRef> refs;
  for (const specialise::Kernel& k : kernels) refs.push_back({k.name, k.code});
  return compile(refs, options);
}

jit::Kernels jit_compile(const std::vector<std::pair<std::string, exec::SweepProgram>>& programs,
                         const exec::RobotConstants<double>& robot, const JitOptions& options) {
  using Named = std::pair<std::string, specialise::ScalarProgram>;
  const std::vector<Named> kernels = specialise::cheaper_form(
      [&](const specialise::TraceOptions& trace) {
        std::vector<Named> code;
        for (const auto& [name, program] : programs)
          code.emplace_back(name, specialise::specialise(program, robot, trace));
        return code;
      },
      [](const Named& k) -> const specialise::ScalarProgram& { return k.second; });
  return jit_compile(kernels, options);
}

}  // namespace soa::pipeline
