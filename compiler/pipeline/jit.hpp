// Kernels to machine code in this process: the pipeline's side of the LLVM back-end.
// Which programs the JIT compiles and under which names is decided here; the back-end
// (emit-llvm/jit.hpp) only turns the programs it is given into functions. Built only with
// SOA_WITH_LLVM.
//
// Contract
// - jit_compile(kernels, options) checks every name and program first (the prefix and the
//   kernel names as soac emit checks them, specialise::check_name; the programs as the
//   back-end does, emit::check_llvm_kernel; no two kernels of one name), then factors what
//   several kernels compute alike out of them (specialise::share, options.share_min_ops),
//   names the functions and has the back-end compile them all.
// - Names: a kernel's function is PREFIX_NAME with options.prefix (the generated C++'s
//   extern "C" symbol, emit_cpp.hpp: the IR's and the C++'s kernels are interchangeable by
//   name), else NAME; Kernels::lookup() takes NAME either way. The functions no caller
//   sees -- shared program j, PREFIX_soa_sharedJ, and the body of a kernel calling shared
//   programs, SYMBOL_own -- take an 'x' for every clash with a kernel's symbol.
// - Same values: every kernel computes what specialise::evaluate computes on its
//   unfactored program, bit for bit (share.hpp, jit.hpp).
// - Kernels::total_seconds() and cpu_seconds() include the sharing.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "emit-llvm/jit.hpp"
#include "specialise/share.hpp"
#include "exec/constants.hpp"
#include "exec/sweep_ir.hpp"
#include "specialise/kernel.hpp"
#include "specialise/scalar_program.hpp"

namespace soa::pipeline {

struct JitOptions : jit::Options {
  // Compile what several kernels compute alike -- the joints' sines and cosines, the
  // transforms and the articulated-body Riccati sweep that forward dynamics, calM^-1,
  // Lambda and the tip-force kernel share -- once, as a function each of them calls
  // (specialise/share.hpp), when it weighs at least this many operations (a Sin or a Cos
  // 80); 0: never. Why: a large robot's kernels then give the code generator markedly less
  // to compile (docs/performance.md); a kernel pays a call and a copy of its inputs, which
  // small robots' kernels, quick to compile anyway, need not pay.
  int share_min_ops = specialise::kDefaultShareMinOps;
  // Non-empty: each kernel's function is PREFIX_NAME (see Contract); checked like
  // soac emit --name.
  std::string prefix;
};

// Every kernel, JIT-compiled (see Contract).
jit::Kernels jit_compile(const std::vector<std::pair<std::string, specialise::ScalarProgram>>& kernels,
                         const JitOptions& options = {});

// Kernels as the pipeline specialises them (specialise_kernel, compile_for_robot): name and code.
jit::Kernels jit_compile(const std::vector<specialise::Kernel>& kernels, const JitOptions& options = {});

// Sweep programs specialised for one robot (specialise::specialise), then compiled.
jit::Kernels jit_compile(const std::vector<std::pair<std::string, exec::SweepProgram>>& programs,
                         const exec::RobotConstants<double>& robot, const JitOptions& options = {});

}  // namespace soa::pipeline
