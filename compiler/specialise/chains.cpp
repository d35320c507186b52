#include "specialise/chains.hpp"

#include <algorithm>

namespace soa::specialise {

ChainFacts::ChainFacts(const ScalarProgram& program)
    : p(program), uses(program.nodes.size(), 0), output(program.nodes.size(), 0) {
  for (const ScalarNode& n : p.nodes) {
    if (arity(n.op) >= 1) ++uses[n.a];
    if (arity(n.op) == 2) ++uses[n.b];
  }
  for (int o : p.outputs) output[o] = 1;
}

// The root's terms in evaluation order and the chain's Add/Sub nodes; false when the root
// is not a left-deep chain in the sense of the Contract. `pair`: the chain starts t1 + t2,
// which is t2 + t1 to the bit -- the first two terms may be taken in either order.
bool linearise(const ChainFacts& f, int root, std::vector<ChainTerm>& terms, std::vector<int>& links, bool& pair) {
  terms.clear();
  links.clear();
  pair = false;
  int n = root;
  for (;;) {
    const ScalarNode& node = f.p.nodes[n];
    if (node.op == ScalarOp::Sub) {
      links.push_back(n);
      terms.push_back({node.b, true});
      if (f.link(node.a)) {
        n = node.a;
        continue;
      }
      terms.push_back({node.a, false});
      pair = true;  // t1 - t2 is -t2 + t1 to the bit
      break;
    }
    if (node.op == ScalarOp::Add) {
      links.push_back(n);
      bool la = f.link(node.a), lb = f.link(node.b);
      // Both sums used only here: the chain goes on through the later one (the running sum
      // is computed after the terms it adds), the other is a term.
      if (la && lb) (node.a > node.b ? lb : la) = false;
      if (la || lb) {
        terms.push_back({la ? node.b : node.a, false});
        n = la ? node.a : node.b;
        continue;
      }
      terms.push_back({node.b, false});
      terms.push_back({node.a, false});
      pair = true;
      break;
    }
    terms.push_back({n, false});  // a chain of one term
    break;
  }
  // A term that is a negation used only here, -y, is y subtracted: acc + (-y) = acc - y and
  // acc - (-y) = acc + y exactly, and a chain starting -y starts at -y (Tracer::sum).
  for (ChainTerm& t : terms) {
    const ScalarNode& node = f.p.nodes[t.node];
    if (t.node != root && node.op == ScalarOp::Neg && f.uses[t.node] == 1 && !f.output[t.node]) {
      links.push_back(t.node);
      t = {node.a, !t.sub};
    }
  }
  std::reverse(terms.begin(), terms.end());
  return true;
}

}  // namespace soa::specialise
