#include "specialise/scalar_program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "support/error.hpp"
#include "support/sincos.hpp"

namespace soa::specialise {

std::string_view to_string(ScalarOp op) {
  switch (op) {
    case ScalarOp::Input: return "input";
    case ScalarOp::Const: return "const";
    case ScalarOp::Add: return "add";
    case ScalarOp::Sub: return "sub";
    case ScalarOp::Mul: return "mul";
    case ScalarOp::Div: return "div";
    case ScalarOp::Neg: return "neg";
    case ScalarOp::Sqrt: return "sqrt";
    case ScalarOp::Sin: return "sin";
    case ScalarOp::Cos: return "cos";
  }
  return "?";
}

int arity(ScalarOp op) {
  switch (op) {
    case ScalarOp::Input:
    case ScalarOp::Const: return 0;
    case ScalarOp::Neg:
    case ScalarOp::Sqrt:
    case ScalarOp::Sin:
    case ScalarOp::Cos: return 1;
    default: return 2;
  }
}

OpCounts count_ops(const ScalarProgram& p) {
  OpCounts c;
  for (const ScalarNode& n : p.nodes) {
    switch (n.op) {
      case ScalarOp::Add: ++c.add; break;
      case ScalarOp::Sub: ++c.sub; break;
      case ScalarOp::Mul: ++c.mul; break;
      case ScalarOp::Div: ++c.div; break;
      case ScalarOp::Neg: ++c.neg; break;
      case ScalarOp::Sqrt: ++c.sqrt; break;
      case ScalarOp::Sin: ++c.sin; break;
      case ScalarOp::Cos: ++c.cos; break;
      default: break;
    }
  }
  return c;
}

std::string to_string(const OpCounts& c) {
  return fmt::format("{} ops: {} mul, {} add, {} sub, {} neg, {} div, {} sqrt, {} sin, {} cos", c.total(), c.mul, c.add,
                     c.sub, c.neg, c.div, c.sqrt, c.sin, c.cos);
}

std::vector<int> trig_inputs(const ScalarProgram& p, int first, int last) {
  std::vector<int> angles;
  for (int i = first; i < last; ++i) {
    const ScalarNode& n = p.nodes[i];
    if ((n.op == ScalarOp::Sin || n.op == ScalarOp::Cos) && p.nodes[n.a].op == ScalarOp::Input) angles.push_back(n.a);
  }
  std::sort(angles.begin(), angles.end(),
            [&](int x, int y) { return std::pair(p.nodes[x].a, x) < std::pair(p.nodes[y].a, y); });
  angles.erase(std::unique(angles.begin(), angles.end()), angles.end());
  return angles;
}

void evaluate(const ScalarProgram& p, const double* in, double* out) {
  const std::vector<double> v = node_values(p, in);
  for (std::size_t i = 0; i < p.outputs.size(); ++i) out[i] = v[p.outputs[i]];
}

std::vector<double> node_values(const ScalarProgram& p, const double* in) {
  std::vector<double> v(p.nodes.size());
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const ScalarNode& n = p.nodes[i];
    const double a = arity(n.op) >= 1 ? v[n.a] : 0.0, b = arity(n.op) == 2 ? v[n.b] : 0.0;
    switch (n.op) {
      case ScalarOp::Input: v[i] = in[n.a]; break;
      case ScalarOp::Const: v[i] = n.value; break;
      case ScalarOp::Add: v[i] = a + b; break;
      case ScalarOp::Sub: v[i] = a - b; break;
      case ScalarOp::Mul: v[i] = a * b; break;
      case ScalarOp::Div: v[i] = a / b; break;
      case ScalarOp::Neg: v[i] = -a; break;
      case ScalarOp::Sqrt: v[i] = std::sqrt(a); break;
      case ScalarOp::Sin: v[i] = soa::sincos(a).s; break;
      case ScalarOp::Cos: v[i] = soa::sincos(a).c; break;
    }
  }
  return v;
}

void check(const ScalarProgram& p) {
  const int size = static_cast<int>(p.nodes.size());
  for (int i = 0; i < size; ++i) {
    const ScalarNode& n = p.nodes[i];
    if (n.op == ScalarOp::Input)
      SOA_ASSERT(n.a >= 0 && n.a < p.input_count, fmt::format("scalar program: node {} reads a missing input", i));
    if (arity(n.op) >= 1) SOA_ASSERT(n.a >= 0 && n.a < i, fmt::format("scalar program: node {} is out of order", i));
    if (arity(n.op) == 2) SOA_ASSERT(n.b >= 0 && n.b < i, fmt::format("scalar program: node {} is out of order", i));
    SOA_ASSERT(n.label < static_cast<int>(p.labels.size()), "scalar program: unknown label");
  }
  for (int o : p.outputs) SOA_ASSERT(o >= 0 && o < size, "scalar program: output out of range");
}

ScalarProgram without_dead_nodes(ScalarProgram p) {
  std::vector<char> live(p.nodes.size(), 0);
  for (int o : p.outputs) live[o] = 1;
  for (int i = static_cast<int>(p.nodes.size()) - 1; i >= 0; --i) {
    if (!live[i]) continue;
    const ScalarNode& n = p.nodes[i];
    if (arity(n.op) >= 1) live[n.a] = 1;
    if (arity(n.op) == 2) live[n.b] = 1;
  }
  std::vector<int> moved(p.nodes.size(), -1);
  std::vector<ScalarNode> kept;
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    if (!live[i]) continue;
    ScalarNode n = p.nodes[i];
    if (arity(n.op) >= 1) n.a = moved[n.a];
    if (arity(n.op) == 2) n.b = moved[n.b];
    moved[i] = static_cast<int>(kept.size());
    kept.push_back(n);
  }
  p.nodes = std::move(kept);
  for (int& o : p.outputs) o = moved[o];
  return p;
}

}  // namespace soa::specialise
