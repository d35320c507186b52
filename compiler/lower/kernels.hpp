// The kernels every robot gets, as operator-language declarations.
//
// Contract: each entry is what a user would write in a .soa file
// (`kernel NAME(INPUTS) = EXPRESSION;`, grammar/README.md); the pipeline rewrites the
// expression (compiler/rewrite) before lowering it, e.g. forward dynamics
// `calM^-1 (T - C)` becomes `(I - H psi K)* D^-1 (I - H psi K) (T - C)` by MINV
// (001 Identity 6). Inputs are listed in layout order (execute.hpp).
#pragma once

#include <string>
#include <vector>

#include "exec/derivative.hpp"

namespace soa::lower {

struct KernelDecl {
  std::string name;                 // C identifier, used in generated function names
  std::vector<std::string> inputs;  // q, qd, qdd, T, f0
  std::string expression;           // before rewriting
  std::string output;               // output name in generated code
  std::string meaning;              // one line for the generated header
  // Empty for a plain kernel. Otherwise the kernel is the derivative of the expression with
  // respect to these inputs (q in its tangent space, exec/derivative.hpp): its output is the
  // expression's output once per direction, the directions of wrt[0] first.
  std::vector<std::string> wrt = {};
  // What is formed from the derivative (exec/derivative.hpp): the Jacobian itself, or for
  // tau = calM qdd + C the Coriolis matrix or the Christoffel symbols.
  exec::DerivativeForm form = exec::DerivativeForm::Jacobian;
};

const std::vector<KernelDecl>& standard_kernels();

// The kernels of a robot whose tip frames are held by constraints with the world (000 eqs.
// 5.6-5.11, 003 Part II): EOM with the constraints' forces f, T = calM qdd + C + J* f (f as
// f0: what each tip exerts, [torque; force] in its frame), under the constraint that the
// held rows of every tip's spatial acceleration (body frame, reference 2) vanish, S (J qdd
// + B* phi* abar) = 0 -- all six rows for a weld, the translations for a point contact
// (Frame::held; its point then keeps its velocity, zero). Eliminating qdd gives f = (J
// calM^-1 J*)^-1 (J calM^-1 (T - C) + B* phi* abar) and qdd = calM^-1 (T - C - J* f), the
// tip-space inverse taken on the held rows (sweep_ir.hpp Solve: S* (S X S*)^-1 S, so f is 0
// in the free rows); the rewriter turns J calM^-1 J* into its O(N) form inside the inverse.
const std::vector<KernelDecl>& welded_kernels();
// With compliant grasps (model/robot.hpp Spring): grasp_forces (fg) and the forward dynamics
// under their forces, calM^-1 (T - C - J* fg); `welded`: held tips too, the constrained
// forward dynamics and constraint forces with the springs' forces among the applied ones
// (welded_kernels with T - C read as T - C - J* fg).
std::vector<KernelDecl> grasped_kernels(bool welded);

// The derivatives of the dynamics (docs/mathematics.md, "Derivatives"): of inverse dynamics
// with respect to q and qd (d/dqdd is calM), of forward dynamics with respect to q and qd
// (d/dT is calM^-1), of the mass matrix with respect to q (N matrices, block i =
// d calM / dq_i), the Coriolis matrix and the Christoffel symbols (004 section 5). Not among the standard kernels:
// their code grows as N * depth, and a build that does not want it should not pay for it (soac --derivatives,
// soac_generate DERIVATIVES).
const std::vector<KernelDecl>& derivative_kernels();

}  // namespace soa::lower
