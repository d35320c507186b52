// The lower stage: operator IR (compiler/algebra) -> sweep IR (runtime/exec/sweep_ir.hpp).
//
// Contract
// - lower(e, algebra) turns a well-shaped operator expression, ideally already rewritten into
//   its cheapest form (compiler/rewrite), into a robot-independent SweepProgram. The
//   algebra is the identity library's (compiler/algebra/definitions.hpp): its definitions
//   and the ways of lowering it allows; the lowering states no operator of its own. Steps:
//     1. expand():  Defined symbols (calM, C, J, Omega, alpha) by their library definitions,
//                   adjoints pushed onto symbols. Compound symbols (K, E_psi, phitilde,
//                   psitilde) stay, and are applied through their definitions in step 3.
//     2. factor():  the newton-euler way (library: lowering=newton-euler, RNEA): common
//                   left factors of a vector sum pulled out (A x + A y = A (x + y)), which
//                   makes `calM qdd + C` one outward and one inward pass,
//                   H phi (M phi* (H* qdd + a) + b): the recursive Newton-Euler algorithm.
//     3. statements: the expression applied to its vector, factor by factor from the right
//                   (reference 5). Memoryless factors stay inside per-body expressions
//                   (they fuse into whichever sweep visits the body); phi and psi become
//                   recursions; E_phi and B edge terms; phi^-1 and psi^-1 their library
//                   definitions (I - E_phi); (s I + X)^-1 with X strictly causal (or
//                   anticausal) the substitution z = (y - X z) / s, one body at a time.
//                   The model quantities a factor needs (phi(q), V, a, b; P, D, G; R;
//                   Upsilon) are added once, on first use, and reused.
//     4. schedule(): statements into the fewest loops (schedule.hpp), so that consecutive
//                   factors of one direction share a loop and the prologue recursions fuse
//                   with the first sweep of the same direction.
//   Every way taken is recorded in SweepProgram::lowering, with the library identity that
//   allows it, for derivations and banners.
// - Operator-valued expressions are computed column by column: the expression applied to
//   e_j, one column per run of the column loops after the prologue has run once. Because
//   e_j is zero outside one body, each column's sweeps are short in specialised code (the
//   zeros fold away), which makes J O(N) per tip column. Two ways of the library beat that:
//   composite-body (lowering=composite-body, CRB-H, 004 eq. 5.45): calM = H phi R H* + H R
//   phitilde* H*, so each column is the inward sweep H phi R H* e_j from body(j) to the
//   base, and the rows below body(j) come from symmetry (Fill::SymmetricFromAncestors) --
//   the composite-rigid-body algorithm, with R a rigid-body inertia (10 numbers).
//   gram (lowering=gram, MINV, 001 Identity 6): a product A* W A with W one symmetric
//   per-body block (D^-1, D, M, P, R) -- MINV's calM^-1 = (I - H psi K)* D^-1 (I - H psi K)
//   and the derived Lambda B* psi* H* D^-1 H psi B -- as a Gram matrix (exec::Fill::Gram):
//   per column only A's sweep, A e_j and W A e_j, then out(i,j) = (A e_i) . (W A e_j) for
//   i <= j, mirrored. A = I - H psi K is causal, so A e_j lives on body(j) and its
//   ancestors, and the specialised dot products run over common ancestors only: O(N d) per
//   column, d the common-ancestor dofs, where A*'s outward sweep per column costs O(N) with
//   a larger constant. In the generic runtime, which cannot skip zeros, the Gram step is a
//   dense O(N^3) product.
//   A scalar factor c X takes X's way, with c applied to one factor inside it (the weight
//   of a Gram form, the causal part of composite-body), so that 2 calM costs what calM does.
// - Errors (UserError): the inverse of a Defined operator left unrewritten ("rewrite
//   first"), an inverse without a sweep form, a vector used as an operator, an undeclared
//   or unknown input.
#pragma once

#include <string>
#include <vector>

#include "algebra/definitions.hpp"
#include "algebra/expr.hpp"
#include "exec/sweep_ir.hpp"

namespace soa::lower {

struct LowerOptions {
  std::string name;            // kernel name, for printing and code generation
  std::string output = "out";  // output name
  // Declared input order (e.g. {"q", "qd", "qdd"}); empty: q, then qd, qdd, T, f0 as used.
  std::vector<std::string> inputs;
};

exec::SweepProgram lower(const ir::Expr& e, const ir::Algebra& algebra, const LowerOptions& options = {});

// Passes 1 and 2, exposed for tests and `soac lower`.
ir::Expr expand(const ir::Expr& e, const ir::Definitions& definitions);
ir::Expr factor(const ir::Expr& e);

}  // namespace soa::lower
