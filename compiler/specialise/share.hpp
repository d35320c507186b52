// Sharing: what several kernels of one robot compute alike -- the joints' sines and
// cosines, the transforms phi, the articulated-body Riccati sweep that forward dynamics,
// calM^-1, Lambda and the tip-force kernel all begin with (soa-reference.md section 3) -- factored out
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
//   users). A group of at least min_ops operations becomes a SharedProgram: the group with
//   every operation it needs (its closure: computed by each user too), reading the
//   kernels' inputs at their indices; its outputs are the closure's values a user reads
//   from outside the closure (or outputs). Largest closures first; a group whose closure
//   overlaps one already taken by a kernel that would use both is left alone, so no kernel
//   computes a value twice.
// - Each kernel becomes a FactoredKernel: its program without the closures of the shared
//   programs it uses, each of their values it still reads now an input. Its inputs are its
//   own, then (from own_inputs on) the outputs of the programs in `uses`, in that order,
//   one after the other (offset = where a program's outputs start, counted from own_inputs).
// - Bits: running the used programs on a kernel's inputs and then its factored program
//   gives the original program's outputs exactly (evaluate() below does that: the
//   reference the tests hold the pass and the JIT to). Node order, labels and the
//   ScalarProgram contract are kept; the factored program has no dead nodes.
// - min_ops <= 0, or nothing shared that large: no programs, every kernel as it was.
#pragma once

#include <vector>

#include "specialise/scalar_program.hpp"

namespace soa::specialise {

struct SharedProgram {
  ScalarProgram code;      // input_count = 1 + the largest input index it reads
  std::vector<int> users;  // indices of the kernels calling it, ascending
};

struct SharedUse {
  int program = 0;  // index into Sharing::programs
  int offset = 0;   // its outputs are the kernel's inputs own_inputs + offset + i
};

struct FactoredKernel {
  ScalarProgram code;  // input_count = own_inputs + every used program's outputs
  int own_inputs = 0;
  std::vector<SharedUse> uses;  // in call order
};

struct Sharing {
  std::vector<SharedProgram> programs;
  std::vector<FactoredKernel> kernels;  // kernels[i] is the i-th kernel given
};

Sharing share(const std::vector<const ScalarProgram*>& kernels, int min_ops);

// Kernel k of the set, through its shared programs: what evaluate(original, in, out) gives.
void evaluate(const Sharing& sharing, int k, const double* in, double* out);

}  // namespace soa::specialise
