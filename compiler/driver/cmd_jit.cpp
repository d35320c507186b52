// soac jit: compile a kernel set to machine code in process (LLVM ORC), report the compile
// time per kernel, and check the compiled kernels against the generic runtime.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <algorithm>
#include <random>

#include "driver/driver.hpp"
#include "exec/execute.hpp"
#include "model/kinematics.hpp"
#include "pipeline/kernels.hpp"
#include "support/error.hpp"
#ifdef SOA_HAVE_LLVM_JIT
#include "emit-llvm/jit.hpp"
#include "pipeline/jit.hpp"
#endif

namespace soa::driver {
namespace {

struct JitOptions {
  std::string kernels;
  RobotOptions robot;
  std::string ir_file;
  int samples = 20;
  std::uint64_t seed = 1;
  int level = 2;
  int lanes = 4;
  int fast_isel_min_ops = -1;  // -1: jit::Options' default
  std::string cpu;
  std::string passes;
  std::string library;
  std::string name;  // prefix of the functions' names (soac emit --name)
  bool derivatives = false;
};

#ifdef SOA_HAVE_LLVM_JIT
// The instruction selector that made a kernel's code (jit::Options::fast_isel_min_ops).
const char* isel(const jit::KernelTiming& t) { return t.fast_isel ? "FastISel" : "DAG"; }

// A kernel's inputs from a random state, in its layout (T random like the others).
int run_jit(const JitOptions& o) {
  if (!o.name.empty()) specialise::check_name(o.name, "--name", true);
  const pipeline::Library lib = pipeline::load_library(o.library);
  const std::vector<pipeline::KernelSpec> specs =
      pipeline::kernel_set(o.kernels, o.robot.constrained(), o.derivatives, o.robot.grasped());
  const LoadedRobot r = load_robot(o.robot, declared_holds(o.kernels));
  const pipeline::RobotKernels compiled = pipeline::compile_for_robot(specs, lib, r.robot, r.tips);
  const auto& [constants, lowered, code] = compiled;
  pipeline::JitOptions jopt;
  jopt.codegen_level = o.level;
  jopt.lanes = o.lanes;
  if (o.fast_isel_min_ops >= 0) jopt.fast_isel_min_ops = o.fast_isel_min_ops;
  jopt.cpu = o.cpu;
  jopt.passes = o.passes;
  jopt.ir_file = o.ir_file;
  // The functions are named as soac emit names its extern "C" symbols: <name>_<kernel>.
  jopt.prefix = code_name(r, o.name);
  // soac is its own process: LLVM's process-wide options may be set for compile time.
  jit::tune_llvm_process_options();
  const jit::Kernels kernels = pipeline::jit_compile(code, jopt);

  std::size_t width = 24;  // the kernel column: its longest name
  for (const auto& l : lowered) width = std::max(width, l.spec.name.size());
  fmt::print("soac jit: {} kernels for {} on {}\n\n{:<{}} {:>8} {:>10} {:<8}  {}\n", code.size(), r.describe(),
             kernels.cpu(), "kernel", width, "ops", "compile", "  isel", "max rel vs generic runtime");
  bool ok = true;
  for (std::size_t i = 0; i < lowered.size(); ++i) {
    const auto& t = kernels.timings()[i];
    const exec::Layout layout = pipeline::kernel_layout(lowered[i], constants);
    const jit::KernelFunction f = kernels.lookup(lowered[i].spec.name);
    std::mt19937_64 rng(o.seed);
    double worst = 0.0;
    for (int s = 0; s < o.samples; ++s) {
      const State state = random_state(r.robot, static_cast<int>(r.tips.size()), rng);
      const std::vector<double> in = pipeline::sample_inputs(lowered[i].program, layout, state, rng);
      std::vector<double> expected(layout.output_size()), got(layout.output_size());
      pipeline::run_generic(lowered[i], constants, in.data(), expected.data());
      f(in.data(), got.data());
      double scale = 1.0, diff = 0.0;
      for (int j = 0; j < layout.output_size(); ++j) {
        scale = std::max(scale, std::abs(expected[j]));
        diff = std::max(diff, std::abs(expected[j] - got[j]));
      }
      worst = std::max(worst, diff / scale);
    }
    const bool pass = worst <= 1e-12;
    ok &= pass;
    fmt::print("{:<{}} {:>8} {:>8.1f} ms  {:<8}  {:.2e} {}\n", lowered[i].spec.name, width, t.ops,
               1e3 * (t.emit_seconds + t.optimise_seconds + t.codegen_seconds), isel(t), worst, pass ? "PASS" : "FAIL");
  }
  // What several kernels compute alike is compiled once (pipeline::JitOptions::share_min_ops); the
  // kernels' rows above count only their own operations.
  for (const jit::KernelTiming& t : kernels.shared_timings())
    fmt::print("{:<{}} {:>8} {:>8.1f} ms  {:<8}  shared by {}\n", "(shared)", width, t.ops,
               1e3 * (t.emit_seconds + t.optimise_seconds + t.codegen_seconds), isel(t), fmt::join(t.users, ", "));
  fmt::print("\ntotal compile time {:.3f} s (wall, all kernels; {:.3f} s CPU){}\n", kernels.total_seconds(),
             kernels.cpu_seconds(), o.ir_file.empty() ? "" : "; IR written to " + o.ir_file);
  return ok ? kOk : kCheckFailed;
}
#else
int run_jit(const JitOptions&) {
  throw UserError("this soac was built without LLVM (SOA_WITH_LLVM=OFF): soac jit is not available");
}
#endif

}  // namespace

void add_jit(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<JitOptions>();
  CLI::App* cmd = app.add_subcommand("jit", "compile kernels to machine code in process (LLVM) and self-check them");
  cmd->add_option("kernels", opts->kernels, "FILE.soa with kernel declarations (default: the standard kernels)");
  opts->robot.add_to(*cmd, true, true);
  cmd->add_option("--library", opts->library,
                  "identity library (default: $SOAC_LIBRARY, else the built-in identities.soa)");
  cmd->add_flag("--derivatives", opts->derivatives,
                "also the derivative kernels: inverse_dynamics_derivatives, forward_dynamics_derivatives, "
                "mass_matrix_derivative (with respect to q in its tangent space, and qd), coriolis_matrix, "
                "christoffel (docs/mathematics.md, \"Derivatives\")");
  cmd->add_option("--emit-llvm", opts->ir_file, "also write the LLVM IR of every kernel to FILE.ll");
  cmd->add_option("--name", opts->name,
                  "prefix of the kernels' symbols NAME_<kernel>, as soac emit --name (default: the URDF robot name)");
  cmd->add_option("--samples", opts->samples, "random states for the self-check")->check(CLI::Range(1, 100000));
  cmd->add_option("--seed", opts->seed, "seed of the self-check's states");
  cmd->add_option("--level", opts->level, "code generator optimisation level")->check(CLI::Range(0, 3));
  cmd->add_option("--lanes", opts->lanes, "compute sums of products this many outputs at a time (1: one at a time)")
      ->check(CLI::Range(1, 4));
  cmd->add_option("--fast-isel-min-ops", opts->fast_isel_min_ops,
                  "select instructions with FastISel (quick to compile, slower code) only in programs of at least "
                  "this many operations with more outputs than inputs (calM, calM^-1, Lambda, J, derivatives), "
                  "with SelectionDAG in the rest (default 20000); 0: FastISel everywhere")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--cpu", opts->cpu, "LLVM CPU to generate for (default: this machine's), e.g. x86-64-v3");
  cmd->add_option("--passes", opts->passes,
                  "LLVM IR passes before code generation, as `opt -passes=`: e.g. \"default<O3>\" "
                  "(default: none; the scalar program is already folded and CSE'd)");
  cmd->callback([opts, &run] { run = [opts] { return run_jit(*opts); }; });
}

}  // namespace soa::driver
