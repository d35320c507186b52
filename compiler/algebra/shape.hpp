// Shape checking for operator expressions.
//
// Contract: every well-formed expression has rows and cols drawn from {N, 6n, 6m, 1}
// (vocabulary.hpp). I and 0 take the shape their context forces (unification); I is
// square. Products need inner dimensions to agree, sums need equal shapes, ^-1 needs a
// square operand. A violation throws ShapeError naming the offending subterm's span and
// saying what the shapes were ("M is 6n x 6n (spatial) but H is N x 6n").
//
// Arms (003 Part II, sec. 5): the joint space and the bodies of arm i are spaces of their
// own, N_i and 6n_i, distinct from each other's and from the whole robot's N and 6n, so
// J1 calM2 is a shape error ("N1 columns but N2 rows"). The tips are different: every arm
// grasps the one held object, and the arms' tip spaces are a single space (kArmTips,
// printed 6m_i: 6 per tip of an arm, the same for every arm), so J1 calM1^-1 J1* + J2 calM2^-1
// J2* is well shaped (6m_i x 6m_i) and J1* J2 (N1 x N2) couples the arms through the object
// (003 Part II eqs. 6.7-6.8). The whole robot's 6m is not an arm's tip space.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "algebra/expr.hpp"
#include "algebra/vocabulary.hpp"

namespace soa::ir {

// The arm a dimension belongs to: 0 the whole robot (and the vector width 1), i >= 1 the
// N or 6n of arm i, kArmTips the tip space every arm shares.
inline constexpr int kArmTips = -1;

// The arm of dimension `d` of a symbol of arm `arm` (0: the whole robot's symbol).
int dim_arm(Dim d, int arm);

struct Shape {
  Dim rows;
  Dim cols;
  int row_arm = 0;
  int col_arm = 0;
  bool square() const { return rows == cols && row_arm == col_arm; }
  friend bool operator==(const Shape&, const Shape&) = default;
};

std::string to_string(Dim d, int arm);  // "N", "N1", "6n2", "6m", "6m_i", "1"
std::string to_string(const Shape& s);  // "6n x N", "6m_i x N1"

class ShapeError : public std::runtime_error {
public:
  ShapeError(const std::string& message, Span where) : std::runtime_error(message), where_(where) {}
  Span where() const { return where_; }

private:
  Span where_;
};

// The shape of `e`. Throws ShapeError for an ill-shaped expression, or for one whose shape
// cannot be determined at all (a lone I).
Shape infer_shape(const Expr& e);

// Is `e` a well-shaped tip-space matrix (6m x 6m, e.g. J calM^-1 J*)? Its inverse is a small
// solve whose size does not grow with N (000 eq. 5.11).
bool tip_square(const Expr& e);

// Check an equation: both sides well shaped and of one shape. Throws ShapeError.
Shape check_equation(const Expr& lhs, const Expr& rhs);

}  // namespace soa::ir
