// Cost model of the rewrite stage: what an operator expression costs when it is evaluated
// the way compiler/lower will evaluate it (reference section 5), so that the search can
// tell a cheaper equivalent form from a dearer one.
//
// Contract
// - The expression is evaluated applied to vectors: a vector-valued expression directly, an
//   operator-valued one column by column (as the sweep interpreter does).
// - Per column, every factor is applied right to left:
//     memoryless (H, M, P, D, G, tau, taubar, R, Upsilon, B)  fused into a sweep: 0 sweeps;
//     phi, psi, phitilde, psitilde and their adjoints             1 sweep each (inward for
//                                                                the causal ones, outward
//                                                                for their adjoints);
//     E_phi, E_psi, K                                            0 sweeps: a one-level shift
//                                                                (each body reads only its
//                                                                children), no recursion;
//     calM, J, Omega                                              their definitions
//                                                                (reference 3: calM = H phi M
//                                                                phi* H*, 2 sweeps; J = B*
//                                                                phi* H*; Omega = psi* H*
//                                                                D^-1 H psi) plus one
//                                                                "opaque" mark: the lowering
//                                                                has to expand them first;
//     memoryless^-1                                               per-body solve, 0 sweeps;
//     phi^-1, psi^-1                                              I - E_phi: 0 sweeps;
//     (c I + strictly causal)^-1, causal^-1                       1 substitution sweep (001
//                                                                eqs. 49-51 style) plus a
//                                                                bookkeeping surcharge;
//     a tip-space matrix^-1 ((J calM^-1 J*)^-1, 6m x 6m)          its columns by its own
//                                                                cost plus a surcharge: the
//                                                                factorisation's size does
//                                                                not grow with N (6m is O(1));
//     anything else ^-1 (calM^-1 before MINV)                     dense: form and factor the
//                                                                matrix, O(N^3).
//   Sums and products add their parts' costs; state vectors (T, qd, f0, a, ...) are inputs
//   and cost nothing. A vector computed twice is priced once: a product whose right part
//   (the same operators applied to the same vector) was priced earlier in the expression
//   costs its left factors only, as the lowering and the specialiser's CSE compute it once.
//   (Constrained dynamics reuses the free dynamics' (I - H psi K) (T - C) in its correction,
//   TIPF's form, instead of repeating the inward sweeps.)
// - order = the exponent of N of the whole evaluation: max(3 if a dense solve is needed,
//   1 for O(N) work per column + 1 if the columns are N or 6n many); 0 if nothing depends
//   on N. The number of tip frames 6m is taken as O(1).
// - dense = the number of dense factorisations (O(N^3) each). It separates forms of one
//   order: a sum of several arms' J_i calM_i^-1 J_i* stays O(N^3) until the last term
//   loses its inverse, but each term that does is progress (003 Part II eq. 6.8: Lambda
//   is O(N) arm by arm).
// - Total order (documented, used by the search): order first, then dense, then sweeps (per
//   column), then opaque, then flops (per body per column; a rough multiply-add count that
//   only breaks ties). Sweeps are counted unfused: two inward sweeps that the lowering might
//   fuse still count 2, so that removing a recursion is always visible.
#pragma once

#include <optional>
#include <string>

#include "algebra/definitions.hpp"
#include "algebra/expr.hpp"
#include "algebra/shape.hpp"

namespace soa::rewrite {

struct Cost {
  int order = 0;       // evaluation is O(N^order)
  int dense = 0;       // dense factorisations
  int sweeps = 0;      // recursions over the bodies, per column
  int opaque = 0;      // calM, J, Omega left for the lowering to expand
  double flops = 0.0;  // multiply-adds per body per column (rough)
};

// Lexicographic (order, dense, sweeps, opaque, flops); flops compared with a small tolerance.
bool operator<(const Cost& a, const Cost& b);
bool same_cost(const Cost& a, const Cost& b);

// "O(N), 3 sweeps, 120 flops/body" (and ", 1 opaque" when there is any, "O(N^3) x 2" for
// two dense factorisations).
std::string to_string(const Cost& c);

// The cost of `e`. `shape` is the shape of the whole expression when the caller knows it
// (a lone I has none of its own); otherwise it is inferred, and taken as a vector when it
// cannot be.
// Defined operators (calM, J, Omega, ...) are priced by their library definitions.
Cost cost(const ir::Expr& e, const ir::Definitions& definitions, std::optional<ir::Shape> shape = std::nullopt);

// Causality of an expression as a block matrix in the tip-to-base numbering (reference 3):
// the structure the cost model and the normaliser's invertibility test need.
enum class Causality {
  Memoryless,          // block diagonal (also I, 0, B)
  Causal,              // lower block triangular
  StrictlyCausal,      // ... with zero diagonal
  Anticausal,          // upper
  StrictlyAnticausal,  // ... with zero diagonal
  Full,                // anything else
};

Causality causality(const ir::Expr& e);

// Conservatively: is `e` known to be invertible whenever it is well defined? D, M, P, R,
// phi, psi, calM, I; I plus strictly (anti)causal terms (unipotent); adjoints, inverses,
// non-zero scales and products of square invertible factors of those.
bool known_invertible(const ir::Expr& e);

}  // namespace soa::rewrite
