// The specialise stage: a sweep program and one robot -> a straight-line ScalarProgram.
//
// Contract
// - specialise(program, robot) runs the generic runtime's executor (runtime/exec) with the
//   tracing scalar (traced.hpp): the program's inputs become Input nodes, the robot's
//   numbers (axes, fixed transforms, inertias, gravity, tip frames) literals. The loops
//   unroll over the robot's bodies, so the result is the robot's own straight-line kernel
//   with its constants folded: zeros of axis-aligned joints and sparse inertias vanish,
//   each joint's sin and cos is computed once, equal subexpressions are shared (CSE), and
//   nothing that does not reach an output remains (DCE).
// - The ScalarProgram computes what exec::execute<double> computes, in the same input and
//   output layout (exec::Layout), up to rounding (tests/unit/test_specialise.cpp: 1e-12).
// - Node labels name the body and the statement's operator factor ("panda_link3: psi K";
//   "column 4, panda_link3: phi R H*" inside operator-valued kernels).
#pragma once

#include "exec/constants.hpp"
#include "exec/sweep_ir.hpp"
#include "specialise/scalar_program.hpp"
#include "specialise/traced.hpp"

namespace soa::specialise {

ScalarProgram specialise(const exec::SweepProgram& program, const exec::RobotConstants<double>& robot,
                         const TraceOptions& options = {});

// A kernel set's code, `trace(options)` (a vector of kernels, `program(kernel)` each one's
// ScalarProgram) with and without TraceOptions::reversed_sub: the form with fewer operations
// in total. The rule shares what a kernel computes on both signs of one value (the
// constrained equations' residual, the sensitivity recursion's terms) but elsewhere only
// moves negations about, and the kernels of a set must agree on it for what they compute
// alike to be shared (share.hpp).
template <class Trace, class Program>
auto cheaper_form(Trace&& trace, Program&& program) {
  const auto ops = [&](const auto& set) {
    int n = 0;
    for (const auto& k : set) n += count_ops(program(k)).total();
    return n;
  };
  auto with = trace(TraceOptions{.reversed_sub = true});
  auto without = trace(TraceOptions{.reversed_sub = false});
  return ops(with) < ops(without) ? with : without;
}

}  // namespace soa::specialise
