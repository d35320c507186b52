// Loop formation: unordered per-body statements -> loops (internal to compiler/lower).
//
// Contract
// - Input: the statements the lowering made, each defining one var or model quantity, in
//   creation order; the vars that must be computed (the output); optionally the unit var
//   of an operator-valued output.
// - Output: the live statements placed into as few loops as the dependencies allow.
//   Statements that depend on the unit var go into the per-column loops, the others run
//   once before them (prologue: kinematics, Riccati, ... are computed once and reused).
// - Rules (reference section 5): a statement reading a value at k needs it computed earlier
//   in the same loop or in an earlier loop; reading it at the children (EdgeIn) is possible
//   within the same loop only if the loop is inward, at the parent (EdgeOut) only if
//   outward. Statements that read each other through edges (a recursion, or the
//   substitution loop of (I + X)^-1) form a group that must share one loop; its direction
//   is that of the edges. Groups are placed as early as possible in an alternating sequence
//   of inward and outward loops, starting with either direction, and the shorter of the two
//   schedules wins (outward first on a tie). For a fixed alternation the earliest placement
//   is optimal: every constraint is a lower bound that grows with its operands' loops.
// - A group whose statements read each other at the same body in a cycle is not a
//   recursion at all ((I + X)^-1 with X not strictly causal): UserError. So is a group whose
//   edges point both ways.
#pragma once

#include <optional>
#include <vector>

#include "exec/sweep_ir.hpp"

namespace soa::lower {

enum class Where : unsigned char { Self, Children, Parent };

// What a statement reads: a var or a model quantity, and where relative to body k.
struct Read {
  bool quantity = false;
  int id = 0;  // var id, or the Quantity's value
  Where where = Where::Self;
};

std::vector<Read> reads(const exec::Stmt& s);

// The value `s` defines, numbered as the scheduler numbers values: its var id, or
// var_count + the Quantity a Compute statement computes.
int defined_value(const exec::Stmt& s, int var_count);

struct Schedule {
  std::vector<exec::Loop> loops;         // run once
  std::vector<exec::Loop> column_loops;  // run per column (empty without a unit var)
};

// `unit` is the var receiving e_j, or -1 for a vector-valued program.
Schedule schedule(const std::vector<exec::Stmt>& statements, int var_count, const std::vector<int>& outputs, int unit);

}  // namespace soa::lower
