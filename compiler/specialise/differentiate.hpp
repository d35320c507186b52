// Forward-mode differentiation of straight-line code: a pass from ScalarProgram to
// ScalarProgram, how the specialised derivative kernels are made unless the derivative of
// inverse or forward dynamics has a route of its own (pipeline::DerivativeRoute;
// docs/mathematics.md, "Derivatives").
//
// Contract
// - differentiate(p, seeds) returns a program with p's inputs whose outputs are the
//   directional derivatives of p's outputs: out[d * p.outputs.size() + o] = the derivative
//   of output o along direction d. `seeds` receives the new program's input nodes and returns,
//   per direction, the rates of the inputs it moves as (input index, rate) pairs; a rate
//   may be an expression of the inputs (a quaternion's rate in the tangent space of q).
// - The derivative is exact arithmetic on p's operations (the chain rule node by node:
//   sum, product and quotient rules, d sqrt x = dx / (2 sqrt x), d sin x = cos x dx,
//   d cos x = -sin x dx), recorded through a Tracer with folding and CSE: a rate that is
//   zero is never formed, so a joint's angle moves only the nodes downstream of it (the
//   bodies outboard of the joint in an outward sweep, their ancestors in an inward one).
//   That sparsity is what keeps the derivative of an O(N) kernel O(N * depth).
// - Labels are p's, so generated code still says which body and factor a line belongs to.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "specialise/scalar_program.hpp"
#include "specialise/traced.hpp"

namespace soa::specialise {

using Seeds = std::function<std::vector<std::vector<std::pair<int, Traced>>>(const std::vector<Traced>& inputs)>;

ScalarProgram differentiate(const ScalarProgram& p, const Seeds& seeds, const TraceOptions& options = {});

}  // namespace soa::specialise
