// Lane groups: the back-ends' vectoriser. Finds, in a ScalarProgram, outputs that are
// sums of products sharing one factor per term -- W of them computed side by side, one
// vector operation per term instead of W scalar ones.
//
// Why: a Gram-form kernel (lower.hpp: calM^-1, Lambda) ends with out(i,j) = sum_r
// a_i[r] * wa_j[r] over the common ancestors of i and j -- half or more of its operations
// (talos_full's Lambda: 29.6k of those products out of 85k operations). Rows i..i+W-1 of
// column j share wa_j[r] term by term, so W entries are one chain of W-wide multiplies and
// adds: 1/W of the work for the CPU, and for LLVM's code generator (its cost is per
// instruction). LLVM's own SLP vectoriser finds these too but costs more than all of code
// generation (jit.hpp), and g++'s finds nothing in straight-line scalar code; this one knows
// the shape it looks for. Both back-ends read the plan: emit-llvm as <W x double>
// operations, emit-cpp as GCC vector extensions.
//
// Contract
// - plan_lanes(p, width) reads p only. A group is W = width or 2 outputs (W <= kMaxLanes)
//   out[first_output + l], l < W, whose nodes ("roots") are each the left-deep chain
//       ((t1 (+|-) t2) (+|-) t3) ...    of Add and Sub nodes used once each,
//   every term t a product x * s or a value s (then x = 1.0). Terms are aligned across
//   lanes by their shared factor s: step k of the group multiplies the lanes' factors
//   x[l] (a vector) by its one s (a broadcast); a lane with s twice has it at two steps,
//   its first use at one and its second at another. A lane without a term at step k keeps its
//   value (a blend); a lane's first term starts it. So each lane performs exactly its
//   root's operations, in their order (a chain starting t1 + t2 or t1 - t2 may take those
//   two in either order, a subtracted first term starting the lane at -t2): the same bits
//   as specialise::evaluate (a + b = b + a and a - b = a + (-b) = -b + a exactly, in IEEE
//   arithmetic). A root may also be -(chain), its chain
//   used by the negation alone (forward dynamics' derivatives, -calM^-1 d tau): the
//   lanes of a group are all such roots or none, and end negated (`negate`, exact).
// - Roots are taken at their last output position (a Gram entry is stored twice, in the
//   upper and the lower triangle: the upper is its last), and groups are formed greedily
//   in runs of consecutive such positions from the start of each run (a column's rows
//   from 0), W lanes, else 2, else none -- so a row tuple (x_i .. x_i+W-1) recurs in every
//   column and is stored once. A root used by another node is never taken; a group is
//   kept only when it saves work: at least two terms a step and three a lane, and every
//   lane sharing at least half its terms' factors with another lane.
// - removed[n]: node n is computed by the groups alone -- a chain node, a product only
//   the groups' chains use, or a root -- and no group reads it as a factor.
// - Deterministic: the same program, the same plan.
#pragma once

#include <array>
#include <compare>
#include <vector>

#include "specialise/dot_table.hpp"
#include "specialise/scalar_program.hpp"

namespace soa::specialise {

inline constexpr int kMaxLanes = 4;
inline constexpr int kOne = -2;     // a factor that is the literal 1.0
inline constexpr int kAbsent = -1;  // a lane without a term at this step

struct LaneTerm {
  int x = kAbsent;     // the lane's factor: a node, kOne, or kAbsent (no term here)
  bool sub = false;    // subtracted (acc - x s) rather than added
  bool first = false;  // the lane's first term: it starts the lane (at -x s when sub)
};

struct LaneStep {
  int shared = kOne;  // the factor every present lane multiplies by: a node or kOne
  std::array<LaneTerm, kMaxLanes> lane;
};

struct LaneGroup {
  int width = 0;
  bool negate = false;                // the roots are -(chain): the lanes end negated
  int first_output = 0;               // lane l is out[first_output + l]
  std::array<int, kMaxLanes> root{};  // lane l's node
  std::vector<LaneStep> steps;
};

struct LanePlan {
  std::vector<LaneGroup> groups;
  std::vector<char> removed;  // per node (see Contract)
  int terms = 0;              // scalar terms the groups compute
  int steps = 0;              // vector steps they take
};

// width < 2: no groups (removed all 0). narrow = false: groups of `width` lanes only, no
// pairs where `width` outputs do not form one (emit-cpp: a pair's few terms take about as
// many lines of vector code as of scalar code, for little speed).
// column_rows > 0: the outputs are columns of that many rows (column-major); runs end at
// each column's end, and a run that is a whole column, whose groups of `width` leave its
// last 2 or 3 rows, takes them as a group of their own (so that the column's groups cover
// it: lane_columns).
LanePlan plan_lanes(const ScalarProgram& p, int width, bool narrow = true, int column_rows = 0);

// The factors the groups read (shared and lanes' own, nodes only: kOne is a literal), each
// once, in order of first use, gathered as a dot table's are (dot_table.hpp: `factors`,
// `factor_of`, `negated` all 0, `removed` = plan.removed; no entries): a back-end storing
// each into its array g as it computes it (emit-cpp) reuses the dot table's machinery.
DotTable gathered_factors(const LanePlan& plan, int nodes);

// The plan of program p for the program reordered by new_of (node i of p is node
// new_of[i], step_loops.hpp): the same groups, their node indices renumbered.
LanePlan renumbered(const LanePlan& plan, const std::vector<int>& new_of);

// The group's lanes evaluated one at a time from node values `value` (as evaluate() has
// them): what the vector code computes, for tests of the plan without LLVM.
std::array<double, kMaxLanes> evaluate_group(const LaneGroup& g, const std::vector<double>& value);

// Columns: where the groups of one column of a matrix output are a dense product. In
// -calM^-1 d tau (forward dynamics' derivatives), rows 0..N-1 of a column share every term's
// factor d tau(j, c), and their own factors are a column of calM^-1, the same N nodes in
// every column that has that term. Written out, the groups are a vector step per 4 rows per
// term: talos_reduced's 13,000, most of the kernel's code and of its time. As a column
// product, a back-end keeps the rows' factors once per distinct vector (X, `vectors`) and
// runs one loop over the terms of each column: acc += X[v] * y, the accumulators of all
// rows in registers.
//
// Contract
// - lane_columns(plan, p, min_rows) reads plan and its program p. A column is a set of the plan's groups
//   that compute out[first_output + r], r < rows, each output once (a root stored at one
//   position), with the same steps: at step k every group multiplies the same shared
//   factor (a node, not kOne), every lane has a term (a node, not kOne), and the groups
//   are negated alike (`negate`). Step k's rows' factors, in row order, are
//   vectors[vector[k]], each with its sign: row r's term is subtracted when sub[k] differs
//   from its `negated` (so row 0's never is; a vector of calM^-1's column with its rows'
//   signs recurs in every column). Equal vectors are kept once.
// - One height (`rows`, at least min_rows and 2): the one that covers the most rows, a
//   longer column cut to it where one of its groups ends there (the rest of it, like every
//   group no column takes, is listed in `rest`, in plan order). min_rows <= 0: no columns.
// - Evaluated per row as acc = -0.0, then acc + (+-x) (+-y) step by step (a row's first term
//   starts it: -0.0 + t = t exactly; a - x y = a + x (-y) = a + (-x) y exactly), negated at
//   the end when `negate`, a column gives its groups' values to the bit (evaluate_column;
//   a group's lane does the same).
// - Deterministic: the same plan, the same columns.
struct ColumnFactor {
  int node = 0;
  bool negated = false;
  auto operator<=>(const ColumnFactor&) const = default;
};

struct LaneColumn {
  int first_output = 0;
  bool negate = false;
  std::vector<int> shared;  // per step: the factor every row multiplies
  std::vector<char> sub;    // per step: subtracted (row 0's sign)
  std::vector<int> vector;  // per step: its rows' factors, an index into LaneColumns::vectors
};

struct LaneColumns {
  int rows = 0;
  std::vector<std::vector<ColumnFactor>> vectors;  // per vector: a factor per row
  std::vector<LaneColumn> columns;
  std::vector<int> rest;  // indices of the plan's groups no column takes
  int terms() const {     // the scalar products the columns compute
    int t = 0;
    for (const LaneColumn& c : columns) t += static_cast<int>(c.shared.size()) * rows;
    return t;
  }
};

LaneColumns lane_columns(const LanePlan& plan, const ScalarProgram& p, int min_rows);

// The columns of program p for the program reordered by new_of (as renumbered() above).
LaneColumns renumbered(const LaneColumns& columns, const std::vector<int>& new_of);

// Column c's rows evaluated from node values `value` (as evaluate() has them): what a
// back-end's column loop computes.
std::vector<double> evaluate_column(const LaneColumns& columns, int c, const std::vector<double>& value);

}  // namespace soa::specialise
