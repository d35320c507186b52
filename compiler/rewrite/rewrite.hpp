// The rewrite stage: from an operator expression to the cheapest equivalent form that the
// identity library (grammar/identities.soa) can reach, with every step recorded.
//
// Contract
// - Input: a well-shaped ir::Expr (compiler/algebra). Output: a Derivation whose `final`
//   is equal to the input as a matrix on every robot and state, provided every rule used is
//   a true identity (the library's rules are verified numerically by tests/unit/
//   test_identities.cpp) -- the stage itself only adds the algebra of adjoints, inverses,
//   scales, distribution and collection (reference section 4, last paragraph).
// - Rules are data (struct Rule), built from the identity library by
//   rules_from_identities(); the engine has no identity of its own. `false` identities
//   never become rules, `rewrite=none` ones neither, `serial` ones only apply when
//   Options::serial_chain says the robot is a serial chain.
// - Arms (003 Part II sec. 5; vocabulary.hpp): derive() instantiates every rule of the
//   whole robot's symbols once per arm index i in the input, renaming each symbol X to Xi
//   ("MINV[1]", "L4[2] (reversed)"); the whole robot's own rules take part only when the
//   input has whole-robot symbols. The cost model prices Xi as X. Options::serial_chain
//   is about the whole robot, so `serial` rules get no arm instances unless it is set.
// - Passes are free functions IR -> IR: normalize() (canonical form), present() (display
//   form), derive() (search). No global mutable state; everything is deterministic (same
//   input, same rules, same options: same derivation).
// - Canonical form (normalize): adjoints pushed onto symbols ((AB)* = B* A*, (A+B)* = A* +
//   B*, (cA)* = c A*, I* = I, symmetric symbols lose their star, (A^-1)* = (A*)^-1 kept as
//   inverse-of-adjoint); scales pulled out of products and folded; identity factors
//   removed; adjacent X X^-1 cancelled; (AB)^-1 = B^-1 A^-1 only for square factors known
//   to be invertible (cost.hpp: known_invertible); zeros absorbed; sums flattened, like
//   terms combined, terms sorted in a fixed order (positive terms first; sums are
//   commutative, so matching sums is matching term sets) and a coefficient common to all
//   terms, or the sign of an all-negative sum, factored out. Rules are normalised the same
//   way, which is what makes matching literal.
// - The search (derive) is "directed rewriting with look-ahead": in rounds, a bounded
//   best-first exploration from the current form (rule applications at every site, plus
//   distribution and collection moves) to depth Options::lookahead finds the cheapest form
//   within reach; if it is strictly cheaper (cost.hpp total order) the path to it is
//   committed, otherwise the search stops. Bounds: lookahead depth, expansions per round,
//   rounds, and the size of any form considered (Options::max_nodes): so it terminates on
//   every input, and returns the input (normalised) when it finds nothing cheaper. Limits:
//   an improvement that needs more than `lookahead` non-improving steps, or lies beyond the
//   expansion budget, is not found; the result is the cheapest form found, not a proof of
//   optimality. Options::via applies named rules first (a route a person chooses: 004's
//   composite-body form of d(calM)/dq_i, which costs more than the product rule's).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "algebra/expr.hpp"
#include "algebra/shape.hpp"
#include "rewrite/cost.hpp"

namespace soa::rewrite {

// ---- normalisation (normalize.cpp) ----------------------------------------------------------

// The canonical form described above. Idempotent: normalize(normalize(e)) == normalize(e).
ir::Expr normalize(const ir::Expr& e);

// For people: the canonical form with adjoints folded back outward where that needs fewer
// stars, e.g. I - K* psi* H* -> (I - H psi K)*. normalize(present(e)) == normalize(e).
ir::Expr present(const ir::Expr& e);

// The fixed total order of sum terms (ignores a term's coefficient first): -1, 0, 1.
int compare(const ir::Expr& a, const ir::Expr& b);

// ---- rules (rules.cpp) ----------------------------------------------------------------------

// An identity as the library states it; neutral so that this stage does not depend on the
// parser's types. attributes: "serial", "false", "rewrite=ltr|rtl|both|none".
struct IdentitySpec {
  std::string name;
  std::string citation;
  std::vector<ir::Expr> sides;  // S0 = S1 = ... (at least two)
  std::vector<std::string> attributes;
};

enum class Direction {
  LeftToRight,  // an earlier side of the identity rewritten to a later one
  RightToLeft,  // a later side rewritten to an earlier one ("(reversed)")
};

struct Guards {
  bool serial_only = false;        // the identity holds on serial chains only
  bool introduces_vector = false;  // rhs mentions a state vector (T, qdd, C, ...) lhs lacks
};

struct Rule {
  std::string name;      // "L4", "L4 (reversed)", "L4*", "LAMBDA (1 -> 3)", ...
  std::string identity;  // the identity's name, "L4"
  std::string citation;  // "000 Lemma 5.1, 002 Lemma 4"
  ir::Expr lhs, rhs;     // normalised
  Direction direction = Direction::LeftToRight;
  bool adjoint = false;  // generated as the adjoint of the identity: B* A* = C*
  Guards guards;
};

// Every rule of the identities, in their order: for sides S0 = S1 = ... every pair i < j
// gives Si -> Sj (unless rewrite=rtl or none) and Sj -> Si (unless rewrite=ltr or none);
// then, for each rule, its adjoint form when that differs from every rule so far. Sides
// are normalised; a rule whose sides normalise to the same expression, or whose lhs is I,
// 0 or a lone state vector, is dropped. Names: the identity's name for S0 -> S1, "NAME
// (reversed)" for S1 -> S0, "NAME (i -> j)" (1-based) for other pairs; the adjoint form
// appends * to the identity's name ("L4*", "L4* (reversed)").
std::vector<Rule> rules_from_identities(std::span<const IdentitySpec> identities);

// ---- matching (match.cpp) -----------------------------------------------------------------

// Where a pattern occurs in an expression: the node at `path` (child indices from the
// root), or factors [begin, end) of the product at `path`, or the terms `terms` of the sum
// at `path` (a sub-multiset: sums are commutative).
struct Site {
  enum class Kind { Node, Factors, Terms };
  Kind kind = Kind::Node;
  std::vector<std::size_t> path;
  std::size_t begin = 0, end = 0;  // Factors
  std::vector<std::size_t> terms;  // Terms, increasing
  double factor = 1.0;             // the occurrence is `factor` times the pattern
};

// Every occurrence of `pattern` (normalised) in `target` (normalised): a product pattern
// matches any contiguous run of factors of any product (associative, not commutative); a
// sum pattern matches any sum containing its terms all multiplied by one factor (H psi K -
// I contains -1 x (I - H psi K)); c X matches X with factor 1/c; anything else matches
// equal nodes.
std::vector<Site> find_matches(const ir::Expr& target, const ir::Expr& pattern);

// The node at a path.
const ir::Expr& node_at(const ir::Expr& root, std::span<const std::size_t> path);

// `target` with the matched part replaced by site.factor x `replacement` (not normalised).
ir::Expr replace_at(const ir::Expr& target, const Site& site, const ir::Expr& replacement);

// ---- search (search.cpp, moves.cpp) ----------------------------------------------------------

struct Options {
  // The library's definitions, by which the cost model prices calM, J, Omega (required).
  const ir::Definitions* definitions = nullptr;
  bool serial_chain = false;       // allow rules of `serial` identities
  bool allow_new_vectors = false;  // allow rules that introduce a state vector (see rules.cpp)
  int lookahead = 4;               // depth of the exploration in each round
  std::size_t expansions = 600;    // forms expanded per round
  std::size_t rounds = 40;         // committed improvements at most
  std::size_t max_nodes = 0;       // largest form considered; 0: 2 x the current form + 40 nodes
  int sweep_slack = 2;             // explored forms may cost this many sweeps more
  // Rules (by a Rule's name, "SENS-CRB", "L4 (reversed)") applied first, in order, each at
  // its first match, whatever they cost: a route chosen by the user (soac derive --via),
  // the search going on from where it leads. A name no rule has, or a rule that does not
  // apply, is a UserError naming it.
  std::vector<std::string> via;
};

struct Step {
  std::string rule;      // a Rule's name, or "normalise", "distribute", "collect"
  std::string citation;  // the identity's citation, or the algebra used
  ir::Expr before, after;
  // Where in `before`: this node, or factors [begin, end) of it when it is a product and
  // end > begin (ir::PrintOptions{syntax, site_in_before, begin, end} marks it).
  const ir::Node* site_in_before = nullptr;
  std::size_t begin = 0, end = 0;
  Cost cost_after;
};

struct Derivation {
  ir::Expr input, final;  // final is in canonical form; present(final) for people
  std::vector<Step> steps;
  Cost cost;        // of final
  Cost input_cost;  // of the input
  // The input's shape, when it has one: a final 0 or I (J J^-1 ...) has none of its own.
  std::optional<ir::Shape> shape;
};

Derivation derive(const ir::Expr& input, const std::vector<Rule>& rules, const Options& options = {});

// The names of the rules a derivation used, in order (for tests and reports).
std::vector<std::string> rules_used(const Derivation& d);

// One line per step: "RULE: before-with-[mark]  ->  after   (cost)".
std::string explain(const Derivation& d);

}  // namespace soa::rewrite
