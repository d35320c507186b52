// Chains: outputs that are sums of terms, ((t1 +- t2) +- t3) ..., as the Gram entries of
// calM^-1 and Lambda are (sums of products over common ancestors). Read by the back-ends
// that compute such outputs other than one operation at a time: the LLVM back-end's lane
// groups (several entries side by side) and dot tables (dot_table.hpp: one loop over a
// table).
//
// Contract
// - ChainFacts: per node, how many operands refer to it and whether it is an output.
// - A link is an Add or Sub whose one use is the next link of its chain, and no output.
// - linearise(f, root, ...) gives the root's terms in evaluation order (each with its sign:
//   `sub` for a subtracted term) and the chain's Add/Sub nodes (`links`, the root first),
//   following links down from the root; where both operands of a sum are links it goes on
//   through the later node (the running sum), the other being a term. A node that is
//   neither Add nor Sub is a chain of one term. It returns true (every root is a chain).
//   A term that is a negation -y used only there (Tracer::sum's subtracted first term) is
//   the term y, its sign flipped, the negation one of the links.
//   `pair`: the chain starts t1 + t2 or t1 - t2, which are t2 + t1 and -t2 + t1 to the
//   bit, so the first two terms may be taken in either order (a subtracted term taken
//   first starts the sum at -t2). Evaluated as acc = t1, then acc = acc + t or acc - t
//   term by term, a chain gives the root's value to the bit (IEEE addition is
//   commutative, a - b = a + (-b) exactly, negation is exact).
#pragma once

#include <vector>

#include "specialise/scalar_program.hpp"

namespace soa::specialise {

struct ChainTerm {
  int node;
  bool sub;
};

struct ChainFacts {
  const ScalarProgram& p;
  std::vector<int> uses;
  std::vector<char> output;

  explicit ChainFacts(const ScalarProgram& program);
  ScalarOp op(int x) const { return p.nodes[x].op; }
  bool link(int x) const { return (op(x) == ScalarOp::Add || op(x) == ScalarOp::Sub) && uses[x] == 1 && !output[x]; }
};

bool linearise(const ChainFacts& f, int root, std::vector<ChainTerm>& terms, std::vector<int>& links, bool& pair);

}  // namespace soa::specialise
