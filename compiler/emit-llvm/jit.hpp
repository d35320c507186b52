// The LLVM back-end, part 2: ScalarPrograms -> machine code in this process (ORC LLJIT).
//
// Contract
// - compile(code, options) turns the programs it is given into functions, and nothing
//   else: which kernels there are, what they share and what their functions are called is
//   decided before (compiler/pipeline, pipeline/jit.hpp). Each program is emitted
//   (emit_llvm.hpp) into modules of its own, options.passes run on each (a new-pass-manager
//   pipeline, installed as LLJIT's IR transform layer) and code is generated for
//   options.cpu at options.codegen_level. Every function is materialised before compile()
//   returns (LLJIT is lazy: all symbols are looked up inside the timed region), so the
//   Kernels hold ready function pointers and timings() is the real cost of compilation.
// - Shared programs (Code::shared, made by specialise::share) are compiled once each, as
//   functions the kernels listing them in KernelCode::calls call first: such a kernel's
//   entry copies its inputs into an array, has the shared functions (which may read each
//   other's outputs: a chain) write their outputs beside them, and runs its own program on
//   it all (emit_llvm_shared_entry). Same operations, same bits; shared_timings() counts them.
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
// - The defaults trade run time for compile time where the trade is lopsided (the
//   figures, and the commands that measure them: docs/performance.md, "The JIT's compile
//   time"): no IR passes (specialise() has folded, CSE'd and DCE'd the code), kernels split
//   into parts (LLVM's register allocator is superlinear in a block's size) sliced into
//   modules compiled concurrently, FastISel in large O(N^2) programs (SelectionDAG, slower
//   to compile and faster to run, in the rest: the O(N) kernels), the generic scheduling
//   model, lane groups in large kernels, the small code model.
// - options.ir_file: also write every function into one textual .ll module (a single valid
//   module: `opt`/`llc` read it), after options.passes unless ir_optimised is false.
//   Written outside the timed region.
// - Errors: UserError for the caller's mistakes (options, names, two kernels or functions
//   of one name, a call of no shared function, an unwritable ir_file), InternalError for a program violating the
//   ScalarProgram contract or IR failing the verifier, UserError("jit: ...") for a failure inside LLVM (e.g. an
//   unresolved symbol). Nothing aborts the process.
// - No hidden global state: LLVM's native target is initialised once (std::call_once);
//   everything else belongs to the Kernels object, and no LLVM option of the process is
//   changed (tune_llvm_process_options() does that, when its caller asks). compile() may
//   run on several threads at once, each with its own Kernels.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "specialise/scalar_program.hpp"

namespace soa::jit {

struct Options {
  // The code generator: 0 = -O0 (FastISel, fast register allocation: the quickest to
  // compile, slower code), 1..3 = -O1..-O3 (greedy register allocation, scheduling).
  int codegen_level = 2;
  bool fast_isel = true;  // at codegen_level > 0: FastISel instead of SelectionDAG
  // ...for programs of at least this many operations whose outputs grow with pairs of
  // bodies: kernels with more outputs than inputs (calM, calM^-1, Lambda, J, derivatives)
  // and what only they share. SelectionDAG compiles the rest -- small programs, and the O(N)
  // kernels (no more outputs than inputs: ID, FD, constrained FD, forces) with what they
  // share, however large -- to code 10-25% faster on a humanoid and up to 2x on large
  // trees, for 2-3x the code generation time (docs/performance.md, "The JIT's compile
  // time"): on a large robot, the O(N^2) kernels are most of the compile time.
  // 0: FastISel for every program.
  int fast_isel_min_ops = 20000;
  // IR passes before code generation, in `opt -passes=` syntax: "" (none), "default<O2>"
  // (clang -O2's pipeline), "function(instcombine,early-cse)", ...
  std::string passes;
  int part_ops = 250;  // split programs into functions of about this many operations; 0: never
  // Compute sums of products sharing a factor per term (a Gram matrix's entries) this many
  // outputs at a time (emit_llvm.hpp, lanes.hpp); 0 or 1: one at a time.
  int lanes = 4;
  // ...in programs of at least this many operations. Why: packing the lanes' factors costs
  // run time that short Gram chains do not repay, and only large programs' compile time
  // matters.
  int lane_min_ops = 10000;
  // Slice split programs into modules of about this many operations (whole parts), compiled
  // concurrently like separate programs; 0: one module per program.
  int module_ops = 5000;
  unsigned threads = 0;  // compile threads: 0 = one per hardware thread, 1 = the calling thread
  std::string cpu;       // "" = the host CPU (with its detected features)
  std::string features;  // "+feat,-feat,...", applied on top of the CPU's
  // The CPU whose scheduling model the code generator uses ("tune-cpu", as -mtune):
  // "generic" by default, "cpu" for the target CPU's own, which compiles more slowly for
  // no faster code on the kernels measured.
  std::string tune_cpu = "generic";
  bool allow_contraction = false;  // allow FMA contraction (see emit_llvm.hpp)
  std::string ir_file;             // "" = none; else write the IR of all functions here
  bool ir_optimised = true;        // ir_file holds the IR after (true) or before `passes`
};

// What compile() turns into machine code: programs already specialised and, where several
// kernels compute alike, already factored (specialise/share.hpp), with the names of their
// functions. The programs are borrowed: they must outlive compile(). Every symbol is a
// usable name (specialise::check_name) and no two functions share one.
struct SharedFunction {
  std::string symbol;                                  // its function, called by kernels only
  const specialise::ScalarProgram* program = nullptr;  // a specialise::SharedProgram's code
  std::vector<std::string> users;                      // the kernels calling it (shared_timings())
};
struct KernelCode {
  std::string name;                                    // what Kernels::lookup() takes
  std::string symbol;                                  // its function, void symbol(const double* in, double* out)
  const specialise::ScalarProgram* program = nullptr;  // the function's program, or with `calls` its body's
  // Non-empty: the kernel calls shared functions (emit_llvm_shared_entry): `symbol` copies
  // its own_inputs inputs into an array of program->input_count doubles, has each of
  // `calls` (a SharedFunction's symbol, where its outputs go in the array) write there in
  // order, then runs `body`, the function compiled from `program`, on the array.
  std::vector<std::pair<std::string, int>> calls;
  std::string body;
  int own_inputs = 0;
};
struct Code {
  std::vector<SharedFunction> shared;
  std::vector<KernelCode> kernels;
  // The caller's time making this code (sharing it), wall clock and CPU: counted into
  // Kernels::total_seconds() and cpu_seconds(), which are then the cost of compiling from
  // the kernels' ScalarPrograms.
  double prepare_seconds = 0, prepare_cpu_seconds = 0;
};

using KernelFunction = void (*)(const double* in, double* out);

struct KernelTiming {
  std::string name;
  int ops = 0;                  // specialise::count_ops(program).total()
  int instructions = 0;         // LLVM instructions given to the code generator
  double emit_seconds = 0;      // ScalarProgram -> verified IR
  double optimise_seconds = 0;  // options.passes
  double codegen_seconds = 0;   // IR -> object code
  bool fast_isel = false;       // its code was selected by FastISel (Options::fast_isel_min_ops)
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
  std::vector<std::string> names() const;  // in Code::kernels' order

  // Per kernel, in Code::kernels' order. With several threads, kernels compile concurrently:
  // their times add up to more than the wall clock.
  const std::vector<KernelTiming>& timings() const;
  // The shared functions (Code::shared), each compiled once and counted here, not in the
  // kernels' timings.
  const std::vector<KernelTiming>& shared_timings() const;
  // compile() wall clock (JIT set-up, emission, optimisation, code generation, linking),
  // and the process's CPU time during compile(), all threads; each plus Code's prepare time.
  double total_seconds() const;
  double cpu_seconds() const;
  std::string cpu() const;       // the CPU code was generated for ("znver3", "x86-64-v3", ...)
  std::string features() const;  // its feature string, as LLVM spells it

  struct Impl;  // jit.cpp: the JIT and what compile() found
  explicit Kernels(std::unique_ptr<Impl> impl);

private:
  std::unique_ptr<Impl> impl_;
};

// Every kernel and shared function of `code`, JIT-compiled (see Contract). Kernel names
// must be distinct.
Kernels compile(const Code& code, const Options& options = {});

// Each program a kernel of its own, its function named as the kernel, nothing shared.
Kernels compile(const std::vector<std::pair<std::string, specialise::ScalarProgram>>& kernels,
                const Options& options = {});

// Sets three of LLVM's process-wide command-line options (llvm::cl) to what suits
// compile()'s straight-line kernels, each unless the process has set it already (an
// embedding program's own choice is kept):
//   -enable-misched=false         no machine instruction scheduler,
//   -disable-copyprop=true        no machine copy propagation,
//   -fixup-byte-word-insts=false  no x86 byte/word instruction fixup.
// Why: together they are a large share of code generation's time on these kernels and buy
// no measurable run time on an out-of-order core (docs/performance.md). LLVM offers them
// only as process-wide options, so calling this changes code generation for every user of
// LLVM in the process -- another JIT, a shader compiler -- and cannot be undone. compile()
// never calls it: it works without it, more slowly. soac's command line and the
// benchmarks call it first. Thread-safe; later calls do nothing.
void tune_llvm_process_options();

// The host CPU's name as LLVM knows it.
std::string host_cpu();

}  // namespace soa::jit
