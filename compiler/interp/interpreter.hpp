// The reference interpreter: any well-shaped operator expression, for any robot and state
// loaded at run time, evaluated two independent ways.
//
// Contract
// - dense: every vocabulary symbol is formed as its full block matrix (operators.cpp) and
//   the expression is evaluated with dense linear algebra. O(n^3); the ground truth.
// - sweeps: an expression applied to a vector is evaluated factor by factor, each factor by
//   its O(n) recursion (inward for causal, outward for anticausal, per body for
//   memoryless; (I + X)^-1 for strictly causal X as a forward substitution over the
//   bodies; D^-1 and M^-1 per body). No 6n x 6n matrix is ever formed. Operator-valued
//   expressions are evaluated column by column.
// The two agree to 1e-10 relative (tests/unit/test_interp.cpp).
// - Arms (003 Part II): an indexed symbol (vocabulary.hpp: psi1, J2, f01) is its base
//   evaluated on arm i alone: the i-th root subtree of the robot in joint-space order
//   (Robot::roots(); baxter: 1 head, 2 right arm, 3 left arm), as a robot of its own in
//   the restriction of the state (q, qd, qdd of its joints; f0 of its tips), with the tips
//   that lie in it. Through a fixed base the arms do not couple, so J1 calM1^-1 J1* is the
//   block of J calM^-1 J* at arm 1's tips. The arms' tip spaces are one space (shape.hpp):
//   an expression that couples arms through it needs them to hold equally many tips.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "algebra/definitions.hpp"
#include "algebra/expr.hpp"
#include "algebra/vocabulary.hpp"
#include "model/kinematics.hpp"
#include "model/robot.hpp"

namespace soa::interp {

// Everything the operators of one robot in one state are made of.
struct Evaluation {
  const Robot* robot = nullptr;
  // The library's definitions (compiler/algebra/definitions.hpp): Defined and Compound
  // operators (calM, J, K, ...) are evaluated through them, never by a formula of their own.
  const ir::Definitions* definitions = nullptr;
  State state;
  std::vector<int> tips;  // frame indices
  Kinematics kin;
  Articulated art;
  int N = 0;                  // joint-space size (robot->nv)
  int n = 0;                  // bodies
  int m = 0;                  // tip frames
  int rows(ir::Dim d) const;  // size of a space: N, 6n, 6m or 1
  // The coordinate i of d(...)/dq_i and X_i (an index into qd; soac verify sets it to each
  // in turn); -1: an expression holding either is an error.
  int coordinate = -1;
  double step = 1e-3;  // of d(...)/dq_i's differences (dense.cpp)

  // The root subtrees (arms) of the robot; with a single root, arm 1 is this evaluation.
  std::vector<int> roots;
  std::vector<std::shared_ptr<const Evaluation>> arms;  // one per root when there are several
  std::shared_ptr<const Robot> arm_robot;               // an arm's own robot (`robot` points to it)
  // Arm i (1-based); throws UserError naming `symbol` when the robot has no arm i.
  const Evaluation& arm(int i, std::string_view symbol) const;
};

// The evaluation of `robot` in `state` with tip frames `tips`, and of each of its arms when
// it has several roots.
Evaluation prepare(const Robot& robot, const State& state, std::vector<int> tips, const ir::Definitions& definitions);

// Throws UserError unless every arm that `e` names exists and the arms whose tip spaces `e`
// joins hold equally many tips. eval_dense and eval_sweeps check this first.
void check_arms(const Evaluation& ev, const ir::Expr& e);

// The size of space `d` of arm `arm` (shape.hpp: 0 the whole robot, ir::kArmTips the arms'
// shared tip space, sized by the first arm `e` names).
int rows(const Evaluation& ev, ir::Dim d, int arm, const ir::Expr& e);

// `e` with its zeros folded away: a product with a 0 factor is 0, a 0 term leaves its sum
// (0 and 0* alike). Afterwards a 0 is the whole expression or under a ^-1, so that neither
// evaluator has to size a 0, which only its context can (0 + H, H 0 T: shape.hpp).
// eval_dense, eval_sweeps and apply_sweeps fold first.
ir::Expr fold_zeros(const ir::Expr& e);

// The full block matrix of a vocabulary symbol (vectors as one column): the model's blocks
// for the primitive operators, the dense value of the library definition for a Defined or
// Compound one, the state or the model's own recursions (kinematics.hpp) for the vectors.
MatX dense_symbol(const Evaluation& ev, const ir::Expr& symbol);

// Dense evaluation. Throws UserError when the value is undefined (a singular inverse, a
// lone I whose size nothing fixes).
MatX eval_dense(const Evaluation& ev, const ir::Expr& e);

// The constraints' rows on tip space, Q (one row per held direction, 6m columns): row r of
// a held tip t is e_r at t and, when t is welded to a partner u (Frame::held_to), minus row
// r of X(t,u) (u's twist in t's coordinates) at u; a tip only a partner holds has no rows of
// its own. With no tip held, Q = I (the tips of J calM^-1 J*). The inverse of a tip-space
// operator is taken on these rows: X^-1 means Q* (Q X Q*)^-1 Q, as the executor's tip-space
// solve (sweep_ir.hpp Solve); the plain inverse when no tip is held.
MatX constraint_rows(const Evaluation& ev);
// That inverse of X (6m x 6m); UserError naming `what` when Q X Q* is singular.
MatX held_inverse(const Evaluation& ev, const MatX& X, const ir::Expr& what);

// The dense reference of constrained dynamics (tip frames held, lower/kernels.hpp
// welded_kernels): qdd and the tips' forces f of [[calM, Jc*], [Jc, 0]] [qdd; fc] =
// [T - C; -Q Jdot_qd], Jc = Q J (constraint_rows), calM and J formed densely, solved by
// full-pivot LU -- Lagrange multipliers, independent of the operator factorisations. f is
// Q* fc: each weld's force at its frame and the opposite at its partner. `Jdot_qd` (6m) is
// the caller's.
struct SaddlePoint {
  VecX qdd, f;
};
SaddlePoint saddle_point(const Evaluation& ev, const VecX& T, const VecX& Jdot_qd);

// Sweep evaluation of e applied to y (rows(cols of e) entries).
VecX apply_sweeps(const Evaluation& ev, const ir::Expr& e, const VecX& y);

// Sweep evaluation of a whole expression: a vector-valued one directly, an operator-valued
// one column by column.
MatX eval_sweeps(const Evaluation& ev, const ir::Expr& e);

}  // namespace soa::interp
