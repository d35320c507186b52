// Internal to compiler/rewrite: the single steps the search may take from one canonical
// form. Three kinds:
//   - a rule applied at one of its matches (rewrite.hpp: find_matches);
//   - distribute: L (s1 + s2) -> L s1 + L s2 or (s1 + s2) R -> s1 R + s2 R, one neighbouring
//     factor at a time, so that a rule can see a factor next to a term of a sum (L4 inside
//     calM^-1 (T - H phi X) after MINV);
//   - collect: the inverse, factoring the longest prefix (suffix) shared by all terms of a
//     sum that start (end) with the same factor; this is what turns two sweeps over the
//     same operator into one (H psi K T + H psi X -> H psi (K T + X)).
#pragma once

#include <string>
#include <vector>

#include "rewrite/rewrite.hpp"

namespace soa::rewrite {

struct Move {
  std::string rule, citation;
  Site site;        // in the form the move starts from
  ir::Expr result;  // normalised
};

// Every move from `e` (normalised) with the given rules, results deduplicated and different
// from `e`, in a deterministic order.
std::vector<Move> moves(const ir::Expr& e, const std::vector<const Rule*>& rules);

}  // namespace soa::rewrite
