// What the derived operators of the vocabulary mean, for the stages that must expand them
// (the interpreter's sweeps, the lowering): one definition each, here.
//
// definition(): reference section 3 -- calM = H phi M phi* H* (001 eq. 22),
// C = H phi (M phi* a + b), J = B* phi* H* (000 eq. 3.3), Omega = psi* H* D^-1 H psi,
// alpha = phi* (H* qdd + a) (001 eq. 16); a null Expr for every other name.
//
// adjoint_of(): the adjoint of an expression with the star pushed down onto the symbols, by the rules of
// reference section 4: (AB)* = B* A*, (A + B)* = A* + B*, (cA)* = c A*, (A*)* = A,
// (A^-1)* = (A*)^-1, I* = I, and a symmetric symbol (M, P, D, R, Upsilon, Omega, calM) is
// its own adjoint. Every stage that needs "A* applied" (the interpreter's sweeps, the
// lowering) uses this one definition.
#pragma once

#include <string_view>

#include "algebra/expr.hpp"

namespace soa::ir {

Expr definition(std::string_view name);
Expr adjoint_of(const Expr& e);

}  // namespace soa::ir
