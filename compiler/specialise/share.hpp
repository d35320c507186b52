// Sharing: what several kernels of one robot compute alike -- the joints' sines and
// cosines, the transforms phi, the articulated-body Riccati sweep that forward dynamics,
// calM^-1, Lambda and the tip-force kernel all begin with (docs/mathematics.md section 3) -- factored out
// of them into programs of its own, so that a back-end compiles it once (the LLVM JIT,
// whose compile time is the cost that matters). A pass from ScalarPrograms to
// ScalarPrograms; nothing back-end specific.
//
// Contract
// - share(kernels, min_ops) numbers the kernels' values all together: the same operation
//   on the same operands is the same value -- inputs by index (in[i] of whichever kernel
//   runs: a shared program reads the calling kernel's own inputs, so it computes exactly
//   what that kernel would have, whatever in[i] means to it), literals by their bits, Add
//   and Mul up to operand order (IEEE-754 addition and multiplication are commutative).
// - The operations two or more kernels compute are grouped by that set of kernels (their
//   users). A group weighing at least min_ops -- an operation weighs 1, a Sin or a Cos 80,
//   what soa::sincos inline costs a code generator -- becomes a SharedProgram: the group
//   with every operation it needs (its closure: computed by each user too). Groups with
//   more users come first, and a later group's closure stops at the values of a program
//   taken for a superset of its users, which it reads from that program's outputs
//   (chained: the joints' sines and cosines that all kernels take, then the Riccati sweep
//   four of them share). A group whose closure overlaps in any other way a program's
//   serving a kernel in common is left alone, so no kernel computes a value twice.
// - Layout: a caller holds one array: its own inputs at [0, own_inputs), then program j's
//   outputs at [base + programs[j].offset, ...), base being the largest own_inputs of the
//   set (so every kernel and program finds program j's outputs at the same place). A
//   program reads kernel inputs and earlier programs' outputs at those indices; so does
//   each FactoredKernel, whose program is its own without the closures of the programs
//   in `uses` (each of their values it still reads now an input). Callers run the programs
//   in `uses`, in that order, then the factored program, on the array.
// - Bits: doing so gives the original program's outputs exactly (evaluate() below: the
//   reference the tests hold the pass and the JIT to). Node order, labels and the
//   ScalarProgram contract are kept; no program is left with dead nodes.
// - min_ops <= 0, or nothing shared that large: no programs, every kernel as it was.
#pragma once

#include <vector>

#include "specialise/scalar_program.hpp"

namespace soa::specialise {

struct SharedProgram {
  ScalarProgram code;      // input_count = 1 + the largest index it reads
  std::vector<int> users;  // indices of the kernels calling it, ascending
  int offset = 0;          // its outputs go to the caller's array at base + offset
};

struct FactoredKernel {
  ScalarProgram code;  // input_count: up to the end of the last used program's outputs
  int own_inputs = 0;
  std::vector<int> uses;  // indices into Sharing::programs, in call order
};

struct Sharing {
  std::vector<SharedProgram> programs;  // in call order: a program reads only earlier ones
  std::vector<FactoredKernel> kernels;  // kernels[i] is the i-th kernel given
  int base = 0;                         // where programs' outputs start in a caller's array
};

// The back-ends' default `min_ops`: below it a kernel's call and input copy cost more than
// the smaller code saves (pipeline::JitOptions::share_min_ops, soac --share-min-ops).
inline constexpr int kDefaultShareMinOps = 4000;

Sharing share(const std::vector<const ScalarProgram*>& kernels, int min_ops);

// Program j's outputs in another order: its output order[p] goes to position p (order is a
// permutation of its output positions), and every later program and kernel reading them
// reads them there. A back-end lays out the outputs for the way it reads them (emit-cpp:
// the values of one pack side by side, moved with one vector store and load); evaluate()
// below gives the same bits before and after.
Sharing reorder_outputs(Sharing sharing, int j, const std::vector<int>& order);

// Kernel k of the set, through its shared programs: what evaluate(original, in, out) gives.
void evaluate(const Sharing& sharing, int k, const double* in, double* out);

}  // namespace soa::specialise
