// The lower stage: operator IR (compiler/algebra) -> sweep IR (runtime/exec/sweep_ir.hpp).
//
// Contract
// - lower(e) turns a well-shaped operator expression, ideally already rewritten into its
//   cheapest form (compiler/rewrite), into a robot-independent SweepProgram. The pipeline:
//     1. expand():  derived symbols by their definitions (calM = H phi M phi* H*,
//                   C = H phi (M phi* a + b), J = B* phi* H*, Omega, alpha); adjoints pushed
//                   onto symbols.
//     2. factor():  common left factors of a vector sum pulled out (A x + A y = A (x + y)),
//                   which is what makes `calM qdd + C` one outward and one inward pass:
//                   H phi (M phi* (H* qdd + a) + b), the recursive Newton-Euler algorithm.
//     3. statements: the expression applied to its vector, factor by factor from the right
//                   (reference 5). Memoryless factors stay inside per-body expressions
//                   (they fuse into whichever sweep visits the body); phi, psi and their
//                   adjoints become recursions; E_phi, K, B and their adjoints edge terms;
//                   (s I + X)^-1 with X strictly causal (or anticausal) the substitution
//                   z = (y - X z) / s, one body at a time (as interp/sweeps.cpp does).
//                   The model quantities a factor needs (phi(q), V, a, b; P, D, G; R;
//                   Upsilon) are added once, on first use, and reused.
//     4. schedule(): statements into the fewest loops (schedule.hpp), so that consecutive
//                   factors of one direction share a loop and the prologue recursions fuse
//                   with the first sweep of the same direction.
// - Operator-valued expressions are computed column by column: the expression applied to
//   e_j, one column per run of the column loops after the prologue has run once. Because
//   e_j is zero outside one body, each column's sweeps are short in specialised code (the
//   zeros fold away), which makes J O(N) per tip column; calM, calM^-1 and Lambda have
//   forms of their own (below).
//   calM itself goes the composite-body way instead (CRB-H, 004 eq. 5.45: calM = H phi R
//   H* + H R phitilde* H*): each column is the inward sweep H phi R H* e_j from body(j)
//   to the base, and the rows below body(j) come from symmetry (Fill::SymmetricFromAncestors)
//   -- the composite-rigid-body algorithm, with R a rigid-body inertia (10 numbers).
//   A product A* W A with W one symmetric per-body block (D^-1, D, M, P, R) -- MINV's
//   calM^-1 = (I - H psi K)* D^-1 (I - H psi K) (001 Identity 6) and the derived Lambda
//   B* psi* H* D^-1 H psi B -- goes the Gram way (exec::Fill::Gram): per column only A's
//   sweep, A e_j and W A e_j, then out(i,j) = (A e_i) . (W A e_j) for i <= j, mirrored.
//   A = I - H psi K is causal, so A e_j lives on body(j) and its ancestors (A is the
//   inverse of the innovations factor I + H phi K: the explicit L^-1 of calM = L D L*), and
//   the specialised dot products run over common ancestors only: O(N d) per column, d
//   the common-ancestor dofs, where A*'s outward 6x6 sweep per column cost O(N) with a
//   constant ~30 flops a body. The Gram form wins while d averages below ~15, as on every
//   shared robot (Talos, 50 dofs: 2.4x fewer operations for calM^-1); lowering is robot
//   independent, so a 100-link chain gets it too, where the sweep would be cheaper. In the
//   generic runtime, which cannot skip zeros, the Gram step is a dense O(N^3) product.
// - Errors (UserError): calM^-1 left unrewritten ("rewrite first"), an inverse without a
//   sweep form, a vector used as an operator, an undeclared or unknown input.
#pragma once

#include <string>
#include <vector>

#include "algebra/expr.hpp"
#include "exec/sweep_ir.hpp"

namespace soa::lower {

struct LowerOptions {
  std::string name;                 // kernel name, for printing and code generation
  std::string output = "out";       // output name
  // Declared input order (e.g. {"q", "qd", "qdd"}); empty: q, then qd, qdd, T, f0 as used.
  std::vector<std::string> inputs;
};

exec::SweepProgram lower(const ir::Expr& e, const LowerOptions& options = {});

// Passes 1 and 2, exposed for tests and `soac lower`.
ir::Expr expand(const ir::Expr& e);
ir::Expr factor(const ir::Expr& e);

}  // namespace soa::lower
