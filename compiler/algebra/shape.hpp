// Shape checking for operator expressions.
//
// Contract: every well-formed expression has rows and cols drawn from {N, 6n, 6m, 1}
// (vocabulary.hpp). I and 0 take the shape their context forces (unification); I is
// square. Products need inner dimensions to agree, sums need equal shapes, ^-1 needs a
// square operand. A violation throws ShapeError naming the offending subterm's span and
// saying what the shapes were ("M is 6n x 6n (spatial) but H is N x 6n").
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "algebra/expr.hpp"
#include "algebra/vocabulary.hpp"

namespace soa::ir {

struct Shape {
  Dim rows;
  Dim cols;
  friend bool operator==(const Shape&, const Shape&) = default;
};

std::string to_string(const Shape& s);  // "6n x N"

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

// Check an equation: both sides well shaped and of one shape. Throws ShapeError.
Shape check_equation(const Expr& lhs, const Expr& rhs);

}  // namespace soa::ir
