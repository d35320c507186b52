// Parts: a long ScalarProgram cut into pieces a back-end compiles as functions of their
// own. Code generators (g++'s and LLVM's register allocation and scheduling) cost more
// than linearly in the length of one straight-line block: a humanoid's calM^-1 is tens
// of thousands of operations. Cut into parts of bounded size, the cost is linear in the
// program, and the parts of one program can even be compiled apart (emit-cpp's sources,
// emit-llvm's modules).
//
// Contract
// - partition(p, part_ops, removed, whole_ops) cuts the operations (nodes of arity >= 1)
//   not marked `removed` into consecutive runs of part_ops operations in program order (the
//   last may be shorter): part[n] is node n's part; Input and Const nodes are in part 0,
//   removed ones in part -1. part_ops <= 0, or no more operations than part_ops or
//   whole_ops: one part (a short program gains nothing from parts and loses the values
//   they pass through memory).
// - begin[k]..begin[k + 1] are the nodes of part k (begin has parts + 1 entries).
// - A value that a later part reads gets a scratch slot (slot[n] >= 0): its part stores it
//   there and the later parts load it. Slots are reused once no later part reads their
//   value, so `slots` is at most the number of values live across one part boundary.
//   Outputs are not given slots for being outputs: outputs[k] lists the output positions
//   whose node part k computes, for it to store. A node read only by its own part, or by
//   removed nodes, has no slot (a back-end computing removed nodes tracks their operands),
//   unless `slotted` marks it (a per-body loop's value that a later instance reads).
//   Without a slot to give, a program of one part has none.
// - atomic: ranges [first, last) of nodes (ascending, disjoint, operations only, none
//   removed) that are each exactly one part, whatever their size (step_loops.hpp: a loop
//   is a function of its own); with any, the program is cut even when short.
// - together: ranges [first, last) of nodes (ascending, disjoint, operations only, none
//   removed) that one part holds whole (a pack of vector steps, step_loops.hpp): no part
//   starts inside one, which may make its part longer than part_ops.
// - blocks: up to 4 nodes each (a pack's values at one position, lane by lane; -1: no
//   node), given 4 consecutive slots when any of them takes one: node k of a block the
//   slot s + k, s a multiple of 4 (a back-end moves the 4 values with one vector store and
//   load). A block's nodes are in one part.
// - Deterministic: the same program and options, the same partition.
#pragma once

#include <array>
#include <utility>
#include <vector>

#include "specialise/scalar_program.hpp"

namespace soa::specialise {

struct Partition {
  std::vector<int> part;   // per node
  std::vector<int> begin;  // parts + 1 entries
  std::vector<int> slot;   // per node: scratch slot, or -1
  int parts = 1, slots = 0;
  std::vector<std::vector<int>> outputs;  // per part: output positions it computes
};

Partition partition(const ScalarProgram& p, int part_ops, const std::vector<char>& removed = {}, int whole_ops = 0,
                    const std::vector<std::pair<int, int>>& atomic = {}, const std::vector<char>& slotted = {},
                    const std::vector<std::pair<int, int>>& together = {},
                    const std::vector<std::array<int, 4>>& blocks = {});

}  // namespace soa::specialise
