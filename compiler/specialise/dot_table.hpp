// Dot tables: a kernel's outputs that are sums of products -- the Gram entries of calM^-1
// and Lambda, out(i,j) = sum over the common ancestors r of a_i[r] * wa_j[r] -- computed by
// one loop over a table of index runs instead of two lines of code per product. These
// entries are O(N^2) and their products O(N^2 depth): straight-line, half or more of such a
// kernel's code, and of the compile time of generated C++, for no speed (each entry is a
// chain of dependent additions either way).
//
// Contract
// - dot_table(p, min_terms) reads p only. An entry is an output node ("root") that is a
//   chain (chains.hpp) of at least two terms, used by no other node; each term is a
//   product x * s (a Mul node only chains use: it is not computed apart) or any other
//   value v (then x is the literal 1.0: 1.0 * v = v exactly). When the entries' terms
//   number fewer than min_terms (or min_terms <= 0), the table is empty: nothing to gain.
// - The factors are gathered in one array `g` (factors[i] is the node whose value g[i]
//   holds; kOneFactor: 1.0): the factors of products split into two colours so that a
//   product's two factors live apart (a_i[r] on one side, wa_j[r] on the other), each side
//   in order of first use, the longest chains first (a Gram matrix's diagonal entries); a factor may be held negated
//   (negated[i]: g[i] = -value), chosen so that as many terms as possible are added (a - x s = a + (-x) s, exactly).
//   Then the terms of one entry are runs: `count` consecutive terms g[x + k] * g[s + k], all added or all subtracted.
// - Entry e: runs [first_run, first_run + runs) in order; its value is acc = (first term),
//   negated when its run is subtracted, then acc = acc + t or acc - t for each further
//   term: the root's value to the bit. It
//   is stored at every output position of the root (a Gram entry at (i,j) and (j,i)):
//   positions[first_position .. first_position + position_count).
// - removed[n]: node n is computed by the table's loop alone (a root, a chain link, a
//   product only chains use); a back-end computes the other nodes as usual, stores each
//   factor's value in g, then runs the loop (evaluate() below is the reference).
// - Deterministic: the same program, the same table.
#pragma once

#include <vector>

#include "specialise/scalar_program.hpp"

namespace soa::specialise {

inline constexpr int kOneFactor = -2;

struct DotTable {
  struct Run {
    int x = 0, s = 0, count = 0;
    bool sub = false;
  };
  struct Entry {
    int first_run = 0, runs = 0;
    int first_position = 0, position_count = 0;
  };
  std::vector<int> factors;   // per g index: a node, or kOneFactor
  std::vector<char> negated;  // per g index: g holds minus the node's value
  std::vector<Run> runs;
  std::vector<Entry> entries;
  std::vector<int> positions;  // output positions, per entry in a block
  std::vector<char> removed;   // per node
  std::vector<int> factor_of;  // per node: its g index, or -1
  int terms = 0;
  bool empty() const { return entries.empty(); }
};

DotTable dot_table(const ScalarProgram& p, int min_terms);

// The table's outputs from the program's node values (as evaluate() computes them): what
// the loop of generated code computes. Writes only the entries' positions of `out`.
void evaluate(const DotTable& t, const std::vector<double>& value, double* out);

}  // namespace soa::specialise
