// Step loops: the steps a kernel repeats column after column -- the same operations on each
// column's vector at one body (calM's columns phi* H* e_j, the columns A e_j of calM^-1
// and Lambda, J's columns) -- run as one loop over a table of the columns instead of one
// copy per column. Those steps are O(N depth) copies of O(N) different steps: written out,
// they are most of a big tree's O(N^2) kernels and of g++'s time; as loops, their code is
// O(N) and their tables O(N depth) short rows.
//
// Contract
// - step_loops(p, dots, options) reads p, and dots for the nodes its table computes (not
//   part of any step) and the factors the steps store for it. A step is the set of a
//   label's operations (ScalarProgram::labels: "column 7, b99: psi K"), removed ones
//   excepted. Steps are alike when their operations match one for one: the same operation
//   on the same constants and inputs, on the same positions of the step, or on values
//   from outside the step in the same pattern, operands taken in step_operand's order (a
//   sum's or product's literal last); and what leaves the step matches too (a
//   value read outside it, a factor stored for the dot table with its sign, the number of
//   output positions). Steps holding Sin or Cos are left out (packs: only the Sin and Cos,
//   below).
// - A loop is a set of at least `min_instances` alike steps of at least `min_size`
//   operations each, `min_ops` in all, none reading another's values (per-body loops: none
//   reading a later one's), that can run together: the program is reordered (a topological
//   order; each loop's steps contiguous, in their original order, each step's operations in
//   its original order). A set that would close a cycle is cut into its runs (steps that
//   follow one another in program order among the cycle's sets), each a loop if still worth
//   one; a set of one run on a cycle is not a loop. Instance k of loop L is the nodes
//   [first + k size, first + (k + 1) size); node t of every instance is alike.
// - Per-body loops (options.vary): steps are alike up to their literals and up to which
//   input of one group (options.input_group: a port's entries) they read -- the same sweep
//   step at bodies of one joint type, their transforms' constants differing -- and a step
//   may read the values of an earlier step of its set (a sweep: a body reads its child's),
//   which makes the set a loop whose instances run in order. A back-end reads the literals
//   and input indices that differ from a table, and gives the values one instance reads of
//   another a place in memory.
// - Packs (options.pack = W > 0, emit-cpp's vector steps): the sets are cut instead into
//   loops of 2 to W instances, each a back-end computes side by side, one vector operation
//   per node of the step, lane k instance k. Steps are then alike whatever leaves them (each
//   lane stores its own values) and whichever values from outside they read (each lane
//   reads its own); steps with Sqrt are left out. A set's steps are ordered so that those
//   reading values of one earlier pack are packed together, in the order of the lanes they
//   read (the first such operand of a step decides); the rest follow in program order.
//   A set whose steps read one another's (a sweep's step along a chain) is first cut into
//   sets that do not, each step joining the first that holds none of the steps it reads.
//   Packs of bodies (below) are cut by what their steps depend on through any node, not
//   only by what they read: a step joins the set after the last one holding a step it
//   depends on (a body's s x V_p depends on its parent's through the body's pose, another
//   kind of step). Sets that still close a cycle between two kinds of step, whose levels
//   so counted do not line up, are cut again once: each such kind, all its steps, by
//   levels counted over every step of the program, along which every dependency climbs.
//   Sets still on a cycle are then cut into runs, as loops are.
//   Steps of a set left alone are not a loop, nor are two of under `pair_min_size`
//   operations that read no pack. A program whose packs would hold under 5% of its
//   operations gets none. Sines and cosines are left out of packs' steps (a back-end
//   computes a part's angles first, all at once; each lane reads its own): a body's pose
//   is a step like any other.
// - Packs of bodies (options.pack with options.vary): after the exactly alike steps, those
//   left are matched again up to their literals and up to which input of one group they
//   read (each lane its own, as its own values): the same step at several bodies, such as
//   the sensitivity recursion's world-frame products, whose operands are dense and alike
//   at every body of a joint type. A sum and a difference match there too, as signed sums
//   of the same operands (signed_sum): the tracer folds a constant's sign into the
//   operation that reads it, so the same step at two bodies whose frames differ by a
//   signed permutation differs in its additions' signs; negations are left out of the
//   steps (two bodies negate different entries). As for every pack, no step of a pack
//   reads another's.
// - The reordered program computes the same values (operations are not changed, only
//   moved): Input and Const nodes first, then the rest. Node i of p is node new_of[i].
//   No loops: the program is p unchanged.
// - Deterministic: the same program, the same loops.
#pragma once

#include <vector>

#include "specialise/dot_table.hpp"
#include "specialise/scalar_program.hpp"

namespace soa::specialise {

struct LoopOptions {
  int min_instances = 2;
  int min_size = 2;
  int min_ops = 16;
  // What a loop costs in lines besides its step and its rows: a set of steps is a loop
  // when that is fewer lines than the steps written out.
  int loop_lines = 12;
  // Per-body loops (see the contract): steps alike up to literals and inputs of one group,
  // instances that may read earlier ones.
  bool vary = false;
  std::vector<int> input_group;  // per input: its group (vary only; empty: all inputs one group)
  // Packs of at most this many steps instead of loops (see the contract); 0: loops.
  int pack = 0;
  // ...of two steps reading no earlier pack only from this many operations a step (smaller
  // ones cost about what they save: their values are put together lane by lane). 32: the
  // Panda's inverse dynamics' derivatives 0.93 of their time with pairs of the bodies'
  // steps of the recursion (docs/performance.md, "Derivatives").
  int pair_min_size = 32;
};

struct StepLoops {
  struct Loop {
    int first = 0, size = 0, instances = 0;
  };
  ScalarProgram program;
  std::vector<int> new_of;   // per node of the input: its index in `program`
  std::vector<Loop> loops;   // in program order
  std::vector<int> loop_of;  // per node of `program`: its loop, or -1
  bool empty() const { return loops.empty(); }
};

StepLoops step_loops(const ScalarProgram& p, const DotTable& dots, const LoopOptions& options = {});

// Operand `which` (0 or 1) of node n of p in the order steps are matched in: as recorded,
// except that a sum's or product's literal comes last. The tracer orders a sum's or
// product's operands by index, and a literal, recorded once for every step that reads it,
// has the index of the first such step: the same step at a mirrored limb, or at another
// body of a joint type, then reads it first where the other reads it last. Back-ends
// writing a loop or a pack read its steps' operands in this order.
inline int step_operand(const ScalarProgram& p, const ScalarNode& n, int which) {
  const bool swap = (n.op == ScalarOp::Add || n.op == ScalarOp::Mul) && p.nodes[n.a].op == ScalarOp::Const &&
                    p.nodes[n.b].op != ScalarOp::Const;
  return (which == 0) != swap ? n.a : n.b;
}

// A sum or difference as packs of bodies match it (see the contract): its operands in
// step_operand's order, except that a value of n's own step comes first (two of them: the
// earlier first), each with its sign. `a - b` at one body and `b + a` at another, the
// same step whose constants' signs differ, become the same two operands with signs
// differing lane by lane; a lane computing `sign_a a + sign_b b` gets the scalar result to
// the bit (a sign change is exact and rounding is symmetric).
inline bool is_sum(const ScalarNode& n) { return n.op == ScalarOp::Add || n.op == ScalarOp::Sub; }
struct SignedSum {
  int x[2] = {-1, -1};
  bool minus[2] = {false, false};
};
inline SignedSum signed_sum(const ScalarProgram& p, const ScalarNode& n) {
  SignedSum s;
  s.x[0] = step_operand(p, n, 0);
  s.x[1] = step_operand(p, n, 1);
  s.minus[1] = n.op == ScalarOp::Sub;  // step_operand keeps a difference's order
  // In n's step: an operation of its label, negations excepted (packs of bodies leave them
  // out of the steps, and a back-end may move them past the step when it reorders).
  const auto own = [&](int x) {
    return arity(p.nodes[x].op) > 0 && p.nodes[x].op != ScalarOp::Neg && p.nodes[x].label == n.label;
  };
  if ((own(s.x[1]) && !own(s.x[0])) || (own(s.x[0]) && own(s.x[1]) && s.x[1] < s.x[0])) {
    std::swap(s.x[0], s.x[1]);
    std::swap(s.minus[0], s.minus[1]);
  }
  return s;
}

// The table `t` of the program p, for the program reordered by new_of (node i of p is node
// new_of[i]): the same runs and entries, its node indices renumbered.
DotTable renumbered(const DotTable& t, const std::vector<int>& new_of);

}  // namespace soa::specialise
