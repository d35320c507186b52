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
//   x[l] (a vector) by its one s (a broadcast). A lane without a term at step k keeps its
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
LanePlan plan_lanes(const ScalarProgram& p, int width, bool narrow = true);

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

}  // namespace soa::specialise
