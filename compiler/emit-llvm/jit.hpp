// The LLVM back-end, part 2: ScalarPrograms -> machine code in this process (ORC LLJIT).
//
// Contract
// - compile(kernels, options) emits each kernel (emit_llvm.hpp) into its own module, runs
//   options.passes on it (a new-pass-manager pipeline, installed as LLJIT's IR transform
//   layer) and generates code for options.cpu at options.codegen_level. Every kernel is
//   materialised before compile() returns (LLJIT is lazy: all symbols are looked up inside
//   the timed region), so the Kernels hold ready function pointers and timings() is the
//   real cost of compilation.
// - What several kernels compute alike (specialise/share.hpp; Options::share_min_ops) is
//   compiled once, as a function of its own that those kernels call first: each kernel's
//   entry copies its inputs into an array, has the shared functions (which may read each
//   other's outputs: a chain) write their outputs beside them, and runs its own code on it
//   all (emit_llvm_shared_entry). Same operations, same bits; shared_timings() counts it.
// - The functions have the generated C++'s `extern "C"` signature:
//   void (const double* in, double* out), same layout (exec::Layout), same IEEE semantics
//   (emit_llvm.hpp: no fast-math; FMA contraction only with allow_contraction; sin and cos
//   are soa::sincos, inline, libm only beyond |x| < 2^20) -- so they compute what
//   specialise::evaluate computes, bit for bit. They stay valid while the
//   Kernels object lives (it owns the JIT); Kernels is move-only.
// - Target: the host CPU and its features by default. options.cpu names an LLVM CPU
//   ("x86-64-v3", "skylake", "x86-64") to generate for instead -- e.g. to stay clear of
//   AVX-512, which valgrind 3.19 cannot run; options.features ("+fma,-avx512f") adjusts
//   the feature set of whichever CPU is used. An unknown CPU or feature, or a pass
//   pipeline LLVM cannot parse, is a UserError raised before anything is compiled.
// - Why the defaults (measured on the 7 standard kernels of talos_full + free flyer, 50
//   dofs, 170k operations, 2-core VM; benchmarks/jit_compile_main.cpp times them with
//   repetitions, tests/unit/test_jit.cpp "[jit-timing]" prints the split per kernel):
//   * no IR passes: specialise() has already folded, CSE'd and DCE'd the code, so the O2
//     pipeline ("default<O2>") gains nothing measurable at run time and costs more than
//     all of code generation (its SLP vectoriser alone ~1 s);
//   * parts of 250 operations (emit_llvm.hpp): LLVM's register allocator is superlinear
//     in the size of a basic block -- unsplit, a 47k-operation kernel alone took 6 s; in
//     parts of 500, 30% more than in parts of 250, which run as fast;
//   * parts sliced into modules of ~5000 operations, compiled concurrently: one large
//     kernel (Lambda of 13 tips, 85k operations) no longer serialises the compile;
//   * no machine scheduler: a third of code generation time, no measurable run-time gain
//     on an out-of-order core. LLVM offers this only as a process-wide option
//     (-enable-misched); compile() sets it once, unless the host process set it itself;
//     likewise no machine copy propagation (-disable-copyprop) and no x86 byte/word
//     fixup (-fixup-byte-word-insts=false): 5% and 4.5% of the compile work (callgrind),
//     run time within 2-3% on every kernel of the Panda and both Talos robots
//     (interleaved A/B; machine sinking, -1.6%, cost the Panda's kernels 3-4%: kept);
//   * FastISel at -O2: 40% less compile time than SelectionDAG, run time within a few
//     per cent (the Jacobian, mostly stores, 25% slower); and IR it selects all of
//     (emit_llvm.hpp): a FastISel miss on a vector constant among a mass matrix's
//     literal zeros sent the rest of the block to SelectionDAG (-4.2% once avoided);
//   * tune_cpu "generic": ~30% less compile time than the host's (znver3) scheduling
//     model, same run time;
//   * one compile thread per hardware thread (a third on 2 vCPUs was slower); every module
//     compiled as soon as it can be -- a slice without the entry function at once, the
//     entry's once its kernel's slices are in -- the largest kernels first; modules go
//     straight to the transform layer, not through LLJIT's entry layer, which would copy
//     each into a new context first (a fifth of the time);
//   * lanes 4: a Gram-form kernel's entries four at a time (lanes.hpp) -- Lambda's
//     instructions -25%, all kernels' compile CPU time -15%;
//   * small code model, position-independent code, linked by JITLink: a literal is one
//     RIP-relative operand, and FastISel selects the lane parts, which under the large
//     model (ORC's default) it hands to SelectionDAG: -15%;
//   * share_min_ops 4000: the Riccati sweep of 4 kernels compiled once -- talos_full's
//     168k operations become 143k, and 23% fewer instructions executed by compile()
//     (callgrind, one thread); the kernels' run time within 3% (interleaved A/B). Then
//     the joints' sines and cosines, which all 7 take, once (a Sin or a Cos weighs 80 in
//     the threshold: inline soa::sincos compiles at ~3x an addition's cost per instruction):
//     a further -10%, 7558 M -> 6777 M instructions;
//   Together (talos_full, 13 tips, 2 vCPUs, at equal machine speed): 1.45 s -> 0.95 s
//   wall, 3.2 s -> 1.75 s CPU before sharing; sharing then takes a further 23% of the work,
//   and the selectable IR and chained sharing 14% more (callgrind: 11.18 G -> 6.78 G
//   instructions executed by compile() in all).
//   codegen_level 0 compiles ~3x faster still, for code 30-60% slower. Other register
//   allocators (a process-wide choice in LLVM): basic -11% compile work, the Panda's
//   kernels 4-11% slower; fast -20%, up to 29% slower. Without machine CSE or the peephole
//   optimiser: about -1% each.
// - options.ir_file: also write every kernel into one textual .ll module (a single valid
//   module: `opt`/`llc` read it), after options.passes unless ir_optimised is false.
//   Written outside the timed region.
// - Errors: UserError for the caller's mistakes (options, names, duplicate kernels, an
//   unwritable ir_file), InternalError for a program violating the ScalarProgram contract
//   or IR failing the verifier, UserError("jit: ...") for a failure inside LLVM (e.g. an
//   unresolved symbol). Nothing aborts the process.
// - No global mutable state: LLVM's native target is initialised once (std::call_once);
//   everything else belongs to the Kernels object. compile() may run on several threads
//   at once, each with its own Kernels.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "emit-cpp/emit_cpp.hpp"
#include "exec/constants.hpp"
#include "exec/sweep_ir.hpp"
#include "specialise/scalar_program.hpp"

namespace soa::jit {

struct Options {
  // The code generator: 0 = -O0 (FastISel, fast register allocation: the quickest to
  // compile, ~25% slower code), 1..3 = -O1..-O3 (greedy register allocation, scheduling).
  int codegen_level = 2;
  bool fast_isel = true;  // at codegen_level > 0: FastISel instead of SelectionDAG
  // IR passes before code generation, in `opt -passes=` syntax: "" (none), "default<O2>"
  // (clang -O2's pipeline), "function(instcombine,early-cse)", ...
  std::string passes;
  int part_ops = 250;              // split kernels into functions of about this many operations; 0: never
  // Compute sums of products sharing a factor per term (a Gram matrix's entries) this many
  // outputs at a time (emit_llvm.hpp, lanes.hpp); 0 or 1: one at a time.
  int lanes = 4;
  // ...in kernels of at least this many operations. Why: packing the lanes' factors costs
  // run time that short Gram chains do not repay (the Panda's calM^-1, 1.9k operations:
  // ~10% slower), and only large kernels' compile time matters.
  int lane_min_ops = 10000;
  // Compile what several kernels compute alike -- the joints' sines and cosines, the
  // transforms and the articulated-body Riccati sweep that forward dynamics, calM^-1,
  // Lambda and the tip-force kernel share -- once, as a function each of them calls
  // (specialise/share.hpp), when it weighs at least this many operations (a Sin or a Cos
  // 80); 0: never. Why: talos_full's 7 kernels are 15% fewer operations to compile (168k
  // -> 143k), and their sin-cos pairs compiled once instead of four times; a kernel pays a
  // call and a copy of its inputs, which smaller robots' kernels (the Panda's 7 joints
  // weigh 1120), quick to compile anyway, need not pay.
  int share_min_ops = 4000;
  // Slice split kernels into modules of about this many operations (whole parts), compiled
  // concurrently like separate kernels; 0: one module per kernel.
  int module_ops = 5000;
  unsigned threads = 0;            // compile threads: 0 = one per hardware thread, 1 = the calling thread
  std::string cpu;                 // "" = the host CPU (with its detected features)
  std::string features;            // "+feat,-feat,...", applied on top of the CPU's
  // The CPU whose scheduling model the code generator uses ("tune-cpu", as -mtune):
  // "generic" by default, "cpu" for the target CPU's own. The generic model compiles ~30%
  // faster than znver3's, and the code ran as fast on the kernels measured.
  std::string tune_cpu = "generic";
  bool allow_contraction = false;  // allow FMA contraction (see emit_llvm.hpp)
  // Non-empty: each kernel's function is PREFIX_NAME, the generated C++'s extern "C" symbol
  // (emit_cpp.hpp; soac jit uses the robot's name, as soac emit does), so the IR's and the
  // C++'s kernels are interchangeable by name too. lookup() still takes the kernel's name.
  // Checked like soac emit --name (emit::check_name).
  std::string prefix;
  std::string ir_file;             // "" = none; else write the IR of all kernels here
  bool ir_optimised = true;        // ir_file holds the IR after (true) or before `passes`
};

using KernelFunction = void (*)(const double* in, double* out);

struct KernelTiming {
  std::string name;
  int ops = 0;                  // specialise::count_ops(program).total()
  int instructions = 0;         // LLVM instructions given to the code generator
  double emit_seconds = 0;      // ScalarProgram -> verified IR
  double optimise_seconds = 0;  // options.passes
  double codegen_seconds = 0;   // IR -> object code
  // A shared program's (Kernels::shared_timings()): the kernels calling it.
  std::vector<std::string> users;
};

class Kernels {
public:
  Kernels(Kernels&&) noexcept;
  Kernels& operator=(Kernels&&) noexcept;
  ~Kernels();

  // The kernel's entry point; UserError naming the known kernels when there is none.
  KernelFunction lookup(std::string_view name) const;
  // nullptr when there is none.
  KernelFunction find(std::string_view name) const noexcept;
  std::vector<std::string> names() const;  // in compile order

  // Per kernel, in compile order. With several threads, kernels compile concurrently:
  // their times add up to more than the wall clock.
  const std::vector<KernelTiming>& timings() const;
  // The programs several kernels share (Options::share_min_ops), each compiled once and
  // counted here, not in the kernels' timings.
  const std::vector<KernelTiming>& shared_timings() const;
  double total_seconds() const;  // compile() wall clock: JIT set-up, emission, optimisation, code generation, linking
  double cpu_seconds() const;    // the process's CPU time during compile(), all threads
  std::string cpu() const;       // the CPU code was generated for ("znver3", "x86-64-v3", ...)
  std::string features() const;  // its feature string, as LLVM spells it

  struct Impl;  // jit.cpp: the JIT and what compile() found
  explicit Kernels(std::unique_ptr<Impl> impl);

private:
  std::unique_ptr<Impl> impl_;
};

// Every kernel, JIT-compiled (see Contract). Names must be distinct C identifiers.
Kernels compile(const std::vector<std::pair<std::string, specialise::ScalarProgram>>& kernels,
                const Options& options = {});

// Kernels as the pipeline hands them to the back-ends (pipeline::specialise_kernel, the
// same objects emit_cpp() takes): name and code. With pipeline::lower_kernel this is
// `compile(robot, kernels)`: specs -> lower_kernel -> specialise_kernel -> compile.
Kernels compile(const std::vector<emit::Kernel>& kernels, const Options& options = {});

// Sweep programs specialised for one robot (specialise::specialise), then compiled: the
// closest this library gets to `compile(robot, kernels)`, since choosing and lowering the
// kernels (rewrite, lower) happens before. Names as above.
Kernels compile(const std::vector<std::pair<std::string, exec::SweepProgram>>& programs,
                const exec::RobotConstants<double>& robot, const Options& options = {});

// The host CPU's name as LLVM knows it.
std::string host_cpu();

}  // namespace soa::jit
