// Operator IR: the algebra of the Spatial Operator Algebra as immutable expression values.
//
// Contract
// - An Expr is a small immutable value (a shared pointer to a const node). Build it only
//   through the make functions below: they keep the canonical invariants every pass may
//   rely on:
//     * Product and Sum are n-ary with at least two children and never directly contain a
//       child of their own kind (they are flattened);
//     * Scale never has coefficient 1 and never wraps another Scale (coefficients multiply);
//     * Adjoint never wraps Adjoint, Inverse never wraps Inverse.
//   Nothing else is normalised here (adjoint pushing, identity removal, ...): those are
//   passes in compiler/rewrite.
// - Equality and hashing are structural and ignore source spans.
// - Spans point into the text the expression was parsed from (byte offsets); they are for
//   diagnostics only and are dropped by passes that build new nodes.
// - Symbol names are canonical vocabulary names (see vocabulary.hpp), never aliases.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "algebra/vocabulary.hpp"

namespace soa::ir {

struct Span {
  std::uint32_t begin = 0;  // byte offset of the first character
  std::uint32_t end = 0;    // one past the last character; begin == end means "unknown"
  bool known() const { return end > begin; }
};

enum class Op : std::uint8_t {
  Symbol,    // an operator or vector of the vocabulary (phi, H, calM, qd, ...)
  Identity,  // I, of whatever square size its context gives it
  Zero,      // 0, of whatever size its context gives it
  Sum,       // a + b + ...
  Product,   // a b ... (matrix product, left to right)
  Scale,     // c * a for a real constant c (negation is c = -1)
  Adjoint,   // a*
  Inverse,   // a^-1
  // d(a)/dq_i: the derivative of a with respect to coordinate i of q's tangent space, i
  // symbolic (docs/mathematics.md section 7). For soac derive and soac verify: the
  // interpreter takes i from its evaluation, the lowering refuses it.
  Derivative,
};

struct Node;

class Expr {
public:
  Expr() = default;  // a null expression; only valid as a placeholder
  explicit Expr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}

  Op op() const;
  const std::string& name() const;  // Symbol only
  double coef() const;              // Scale only
  std::span<const Expr> kids() const;
  const Expr& kid(std::size_t i) const { return kids()[i]; }
  Span span() const;
  std::size_t hash() const;
  const Node* get() const { return node_.get(); }
  explicit operator bool() const { return static_cast<bool>(node_); }

  // Symbol only: its vocabulary row (nullptr for a name the vocabulary does not know) and
  // its arm (0: the whole robot; vocabulary.hpp).
  const SymbolInfo* info() const;
  int arm() const;

  bool is(Op o) const { return op() == o; }
  // A Symbol of base `s`, on any arm (psi1 is psi).
  bool is(Sym s) const;
  bool is_symbol(std::string_view n) const;

  friend bool operator==(const Expr& a, const Expr& b);
  friend bool operator!=(const Expr& a, const Expr& b) { return !(a == b); }

private:
  std::shared_ptr<const Node> node_;
};

struct Node {
  Op op;
  std::string name;
  const SymbolInfo* info = nullptr;  // Symbol: its row of the vocabulary, if it has one
  int arm = 0;                       // Symbol: its arm index
  double coef = 1.0;
  std::vector<Expr> kids;
  Span span;
  std::size_t hash = 0;
  std::size_t size = 1;  // nodes in this tree (node_count)
  // The symbols in this tree as a 64-bit set of their names' hashes (a Bloom filter): a
  // tree holds every symbol of another only if its set holds the other's. Pattern matching
  // skips the subtrees that cannot hold a rule's left side.
  std::uint64_t symbols = 0;
  // Set by rewrite::normalize on the trees it returns: this node is in canonical form, so
  // normalising it again would give an equal tree. A cache of a property of the node's
  // structure, like `hash` (the search renormalises each candidate form, which shares all
  // but the rewritten path with its parent form).
  mutable std::atomic<bool> canonical{false};
};

struct ExprHash {
  std::size_t operator()(const Expr& e) const { return e.hash(); }
};

// Checked constructors (see the invariants above).
Expr symbol(std::string name, Span span = {});
Expr symbol(Sym s, int arm = 0);
Expr identity(Span span = {});
Expr zero(Span span = {});
Expr sum(std::vector<Expr> terms, Span span = {});
Expr product(std::vector<Expr> factors, Span span = {});
Expr scale(double c, Expr e, Span span = {});
Expr neg(Expr e, Span span = {});
Expr adjoint(Expr e, Span span = {});
Expr inverse(Expr e, Span span = {});
Expr derivative(Expr e, Span span = {});   // d(e)/dq_i
Expr sub(Expr a, Expr b, Span span = {});  // a + (-1) b

// `e`'s operation over new children, through the checked constructors (so a product that
// receives a product child is flattened again). Leaves come back unchanged.
Expr rebuild(const Expr& e, std::vector<Expr> kids);

// A copy of `e` that shares no node with it. Printers mark a step's site by node
// (print.hpp), so a subexpression placed twice (a rule's right side applied at two sites,
// a factor distributed over several terms) must be a node of its own at each place.
Expr copy(const Expr& e);

// The same node with another span (used by the parser to widen spans over parentheses).
Expr with_span(const Expr& e, Span span);

// Number of nodes (kept in the node); a cheap size measure for termination arguments.
std::size_t node_count(const Expr& e);

// A sum read as s I + (the other terms), as the substitution (s I + X)^-1 needs it: s sums
// the coefficients of the I terms (0 when there is none), `rest` holds the others.
struct IdentityPart {
  double s = 0.0;
  std::vector<Expr> rest;
};
IdentityPart identity_part(const Expr& sum);

// Does `e` hold a d(...)/dq_i or X_i, which only a coordinate index i gives a value?
bool needs_coordinate(const Expr& e);

// Does `e` contain the symbol `name` (of base `s`, on any arm) anywhere?
bool mentions(const Expr& e, std::string_view name);
bool mentions(const Expr& e, Sym s);

}  // namespace soa::ir
