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

}  // namespace soa::specialise
