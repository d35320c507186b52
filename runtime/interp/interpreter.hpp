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
#pragma once

#include <string_view>
#include <vector>

#include "algebra/expr.hpp"
#include "algebra/vocabulary.hpp"
#include "model/kinematics.hpp"
#include "model/robot.hpp"

namespace soa::interp {

// Everything the operators of one robot in one state are made of.
struct Evaluation {
  const Robot* robot = nullptr;
  State state;
  std::vector<int> tips;  // frame indices
  Kinematics kin;
  Articulated art;
  int N = 0;  // joint-space size (robot->nv)
  int n = 0;  // bodies
  int m = 0;  // tip frames
  int rows(ir::Dim d) const;  // size of a space: N, 6n, 6m or 1
};

Evaluation prepare(const Robot& robot, const State& state, std::vector<int> tips);

// The full block matrix of a vocabulary symbol (vectors as one column).
MatX dense_symbol(const Evaluation& ev, std::string_view name);

// Dense evaluation. Throws UserError when the value is undefined (a singular inverse, a
// lone I whose size nothing fixes).
MatX eval_dense(const Evaluation& ev, const ir::Expr& e);

// Sweep evaluation of e applied to y (rows(cols of e) entries).
VecX apply_sweeps(const Evaluation& ev, const ir::Expr& e, const VecX& y);

// Sweep evaluation of a whole expression: a vector-valued one directly, an operator-valued
// one column by column.
MatX eval_sweeps(const Evaluation& ev, const ir::Expr& e);

}  // namespace soa::interp
