// What the derived operators of the vocabulary mean, as the identity library states them,
// and the adjoint of an expression.
//
// Definitions: the identities of the library marked `definition` (grammar/identities.soa):
// calM = H phi M phi* H* (NE), C, J, Omega, alpha, K = E_phi G, E_psi, phitilde, psitilde,
// and phi^-1 = I - E_phi, psi^-1 = I - E_psi. Nothing in the compiler states them again:
// the interpreter, the lowering and the cost model expand a derived symbol through this
// table, which compiler/pipeline builds from the library it loaded. Every symbol whose
// vocabulary role is Defined or Compound must have exactly one (check_complete).
//
// adjoint_of(): the adjoint of an expression with the star pushed down onto the symbols, by
// the rules of reference section 4: (AB)* = B* A*, (A + B)* = A* + B*, (cA)* = c A*,
// (A*)* = A, (A^-1)* = (A*)^-1, I* = I, and a symmetric symbol is its own adjoint.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "algebra/expr.hpp"
#include "algebra/vocabulary.hpp"

namespace soa::ir {

// Where a piece of the algebra comes from: an identity of the library.
struct Cited {
  std::string identity;  // "NE"
  std::string citation;  // "001 eq. 22, 002 eq. 2.11"
};

struct Definition {
  Expr body;  // what the symbol (or its inverse) means, in the whole robot's symbols
  Cited source;
};

class Definitions {
public:
  // `lhs` is a lone symbol of the whole robot, or the inverse of one; a second definition
  // of the same thing replaces nothing and is an InternalError (the parser refuses it).
  void add(const Expr& lhs, Expr body, Cited source);

  // The definition of `s` (of its inverse), if the library gives one.
  const Definition* of(Sym s) const;
  const Definition* of_inverse(Sym s) const;

  // The body of symbol `e` (any arm: the body on that arm), with its adjoint when
  // `adjoint`; nullopt when `e` has no definition.
  std::optional<Expr> expand_symbol(const Expr& e, bool adjoint = false) const;

  // `e` with every Defined and Compound symbol replaced by its definition, recursively, and
  // adjoints pushed onto symbols (adjoint_of). Symbols whose role is in `keep` stay.
  Expr expand(const Expr& e, std::span<const Role> keep = {}) const;

  // Every definition `other` has and this table lacks, copied.
  void fill_from(const Definitions& other);

  // The symbols of role Defined or Compound without a definition (empty: complete).
  std::vector<Sym> missing() const;

private:
  std::array<std::optional<Definition>, kSymCount> plain_, inverse_;
};

// The library's algebra as the stages after the parser read it: the definitions, and the
// identity behind each way of lowering the library allows (`lowering=WAY`).
struct LoweringWay {
  Cited source;
  std::vector<Expr> sides;  // the identity's statement
};

struct Algebra {
  Definitions definitions;
  std::map<std::string, LoweringWay, std::less<>> lowerings;

  const LoweringWay* lowering(std::string_view way) const {
    const auto it = lowerings.find(way);
    return it == lowerings.end() ? nullptr : &it->second;
  }
};

Expr adjoint_of(const Expr& e);

}  // namespace soa::ir
