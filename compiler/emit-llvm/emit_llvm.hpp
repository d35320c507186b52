// The LLVM back-end, part 1: ScalarPrograms (compiler/specialise) -> LLVM IR.
//
// Contract
// - emit_llvm_function(m, name, p) adds to `m` one function per kernel,
//     void NAME(const double* noalias nocapture readonly in, double* noalias nocapture writeonly out)
//   nounwind -- the calling convention of the C++ back-end's `extern "C"` entry points
//   (emit_cpp.hpp), so a JIT-compiled kernel and a compiled generated one are
//   interchangeable. The body is the program's SSA list, in its order: one `load double`
//   per input read (each input index loaded once; in a split kernel, see below, at each
//   use), literals as ConstantFP, fadd / fsub /
//   fmul / fdiv / fneg, the llvm.sqrt intrinsic, and one `store double` per output
//   (out[i] = value of outputs[i], exec::Layout) -- except runs of outputs that are the
//   literal +0.0, which vector stores of zeros write (vectors loaded from a module table
//   of zeros; one llvm.memset from 32 on).
// - Sin and Cos are soa::sincos (support/sincos.hpp) built in place, once per operand (and
//   part). The pairs of inputs (joint angles) that the function's (or part's) Sin and Cos
//   nodes read come first, in input order, before any other operation -- independent, their
//   latencies overlap; a computed value's pair comes at its first Sin or Cos. Each is the
//   fast path as straight-line IR, then a branch,
//   weighted as never taken, to a cold block at the end of the function that calls the C
//   library's sin and cos (through pointers held in module constants) when |x| < 2^20
//   fails (large, infinite, NaN), and a phi. So a
//   kernel is a chain of blocks, not one; the operations and their order are
//   soa::sincos's, so its values are specialise::evaluate's to the bit. With
//   options.sincos_lanes >= 2 and at least 4 input angles, their pairs are built that many
//   at a time on vectors of angles (the last padded with zeros), the same operations lane
//   by lane; the branch is taken when every lane is in range, and the cold block calls
//   libm for each lane that is not (the JIT asks for 4 lanes where SelectionDAG compiles
//   the kernel: FastISel selects no vector constant).
// - With options.part_ops > 0 and more operations than that, the body is split, in program
//   order, into `internal noinline` functions NAME.part0, NAME.part1, ... (external when
//   sliced over modules, see LlvmOptions) of part_ops
//   operations each, which the kernel calls in order; a value one part computes and a
//   later part reads goes through a stack array of the kernel (slots reused once no later
//   part reads them). Why: LLVM's register allocator and machine scheduler are
//   superlinear in the size of a basic block, and a kernel of tens of thousands of
//   operations is one block -- split, it compiles several times faster and runs as fast
//   (the values crossing a part boundary would be spilled anyway). The values are the
//   same to the bit either way.
// - With options.lanes >= 2 as well (and a split kernel), sums of products that share a
//   factor term by term (lanes.hpp: a Gram matrix's entries) are computed `lanes` outputs
//   at a time by lane parts NAME.partK after the scalar ones: <W x double> multiplies,
//   adds and blends whose lanes perform each output's own operations in its own order, so
//   the same bits again. Their factors lie side by side in scratch (stored there by the
//   scalar part computing each), and the scalar parts skip what the groups compute.
// - Every instruction is one FastISel selects (no vector constant operands, no intrinsic
//   or direct calls to library functions it leaves to SelectionDAG): a miss hands the
//   rest of its block to SelectionDAG, at many times the compile cost (lit: llc
//   -fast-isel-report-on-fallback reports nothing on a Talos's kernels).
// - IEEE semantics, as the generated C++ at -O2: no fast-math flags, so no reassociation,
//   no reciprocal tricks, no finite-math assumptions. FMA contraction is off unless
//   `allow_contraction` (then fadd/fsub/fmul carry the `contract` flag and the code
//   generator fuses where the CPU has FMA). Why off by default: g++ -O2 contracts across
//   statements (-ffp-contract=fast is GCC's default outside ISO C) but only when the target
//   has FMA, which baseline x86-64 (no -march) does not; clang -O2 contracts only within one
//   expression (-ffp-contract=on) and the generated C++ has one operation per statement. So
//   the generated C++ as documented (-O2, no -march) never fuses, and neither do we.
// - Errors: a program violating the ScalarProgram contract (an operand that is not an
//   earlier node, an input or output out of range, an unknown op) is a bug upstream:
//   InternalError naming the kernel and the node, raised before any IR is built (nothing
//   is half-added to `m`). A name neither back-end takes (specialise::check_name: not a C
//   identifier, a C or C++ keyword, reserved), used twice in one module,
//   or that would shadow a C library function the kernels call (sin, cos, sqrt, sincos, memset,
//   memcpy, memmove and their f/l variants) is the caller's mistake: UserError. verify()
//   runs llvm::verifyModule and turns a failure into an InternalError carrying the
//   verifier's report; it never aborts.
// - Names: function and global names are the kernel names (checked as above) and names
//   derived from them (NAME.partK, NAME.zeros, soa.sin); nothing else read from a file --
//   robot, link or joint names, paths, expressions -- enters the IR, which carries no
//   comments or metadata of its own.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "specialise/scalar_program.hpp"

namespace soa::emit {

struct LlvmOptions {
  bool allow_contraction = false;  // mark fadd/fsub/fmul `contract` (FMA fusion allowed)
  int part_ops = 0;                // > 0: split kernels into parts of this many operations
  int lanes = 0;                   // >= 2: lane groups of up to this many outputs (split kernels only)
  std::string tune_cpu;            // non-empty: the "tune-cpu" attribute of every function
  // >= 2: the sines and cosines of a function's inputs (the joint angles), this many at a
  // time as vector code (from 4 angles on). For SelectionDAG only: FastISel selects no
  // vector constant and would hand the block to SelectionDAG.
  int sincos_lanes = 0;
  // A split kernel sliced over several modules, so that its parts compile concurrently
  // (jit.cpp): this module defines parts [first_part, end_part) (end_part < 0: to the
  // last) as external functions, and the entry function NAME only if `entry`, declaring
  // the parts other modules define. The defaults put the whole kernel in one module.
  int first_part = 0;
  int end_part = -1;
  bool entry = true;
};

// How many parts emit_llvm_function() splits `p` into with this part_ops (1: unsplit).
int part_count(const specialise::ScalarProgram& p, int part_ops);

// A kernel's parts, scratch slots and lane groups under these options: computed once and
// handed to emit_llvm_function() for each slice, which must all agree on them.
struct LlvmKernelPlan;
std::shared_ptr<const LlvmKernelPlan> plan_llvm_kernel(const specialise::ScalarProgram& p, const LlvmOptions& options);
int part_count(const LlvmKernelPlan& plan);  // scalar and lane parts

// A kernel as the LLVM back-end sees it: its function name and its code.
using NamedProgram = std::pair<std::string, specialise::ScalarProgram>;

// Throws (see Contract) when `p` violates the ScalarProgram contract or `name` is unusable.
void check_llvm_kernel(const std::string& name, const specialise::ScalarProgram& p);

// Adds the kernel to `m` (see Contract) and returns it (nullptr for a slice without the
// entry function). `m` should carry the target's data
// layout and triple already when the IR is meant for one target (the JIT sets them).
// `plan`, when given, must be plan_llvm_kernel(p, options) (slicing fields aside).
llvm::Function* emit_llvm_function(llvm::Module& m, const std::string& name, const specialise::ScalarProgram& p,
                                   const LlvmOptions& options = {}, const LlvmKernelPlan* plan = nullptr);

// The entry point of a kernel factored by specialise::share() (share.hpp), with the
// kernels' signature: NAME(in, out) copies its own_inputs inputs into a stack array of
// `inputs` doubles, has each shared program's function, in the order given, read the
// array and write its outputs into it at index `at` (f(array, array + at): share.hpp's
// layout, where a program reads earlier ones' outputs), then calls body(array, out),
// the factored program emitted under the name `body`. The functions it calls are
// declared in `m` unless already there; the JIT defines them in modules of their own.
// Of `options`, only tune_cpu applies.
llvm::Function* emit_llvm_shared_entry(llvm::Module& m, const std::string& name, const std::string& body,
                                       int own_inputs, int inputs,
                                       const std::vector<std::pair<std::string, int>>& shared,
                                       const LlvmOptions& options = {});

// A module holding every kernel, verified.
std::unique_ptr<llvm::Module> emit_llvm_module(llvm::LLVMContext& context, const std::string& module_name,
                                               const std::vector<NamedProgram>& kernels,
                                               const LlvmOptions& options = {});

// llvm::verifyModule; a broken module -> InternalError("emit-llvm: ... : <verifier report>").
void verify(const llvm::Module& m);

// The module as textual IR (.ll).
std::string to_text(const llvm::Module& m);

}  // namespace soa::emit
