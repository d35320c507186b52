// ScalarProgram: a robot-specialised kernel as a flat SSA list of scalar operations -- the
// one contract every back-end reads (emit-cpp, emit-llvm).
//
// Contract
// - nodes are in topological order: a node's operands have smaller indices. Input nodes
//   read in[index]; Const nodes hold a literal; every other op takes one (Neg, Sqrt, Sin,
//   Cos) or two (Add, Sub, Mul, Div) operands. Nothing C++-specific is stored: a back-end
//   decides names, literal syntax and layout.
// - Semantics: IEEE-754 double, round to nearest; Sqrt is std::sqrt (correctly rounded);
//   Sin and Cos are soa::sincos(x).s and .c (support/sincos.hpp: inline, within 1 ulp,
//   libm beyond |x| < 2^20), not libm's sin and cos. evaluate() is the reference: both
//   back-ends compute the same operations in the same order, so the same bits (the
//   generated C++ when compiled without FMA contraction, as documented in emit_cpp.hpp).
// - outputs[i] is the node whose value is out[i]: the kernel's output in the layout of
//   exec::Layout (vectors stacked, matrices column-major).
// - labels[node.label] says where a node came from ("panda_link3: psi K", with the column
//   for operator-valued kernels), for comments in generated code. -1: no label.
// - A program produced by specialise() has no dead nodes: every node reaches an output.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace soa::specialise {

enum class ScalarOp : std::uint8_t { Input, Const, Add, Sub, Mul, Div, Neg, Sqrt, Sin, Cos };
std::string_view to_string(ScalarOp op);
int arity(ScalarOp op);  // 0, 1 or 2

struct ScalarNode {
  ScalarOp op = ScalarOp::Const;
  int a = -1, b = -1;  // operands (node indices); Input: a = the input index
  double value = 0.0;  // Const
  int label = -1;
};

struct ScalarProgram {
  int input_count = 0;
  std::vector<ScalarNode> nodes;
  std::vector<int> outputs;
  std::vector<std::string> labels;
};

// Arithmetic operations by kind (Input and Const nodes are not operations).
struct OpCounts {
  int add = 0, sub = 0, mul = 0, div = 0, neg = 0, sqrt = 0, sin = 0, cos = 0;
  int total() const { return add + sub + mul + div + neg + sqrt + sin + cos; }
};
OpCounts count_ops(const ScalarProgram& p);
std::string to_string(const OpCounts& c);  // "1234 ops: 600 mul, 500 add, ..."

// The SSA interpreter, the reference for the back-ends: out[i] = value of outputs[i] for
// inputs in[0 .. input_count).
void evaluate(const ScalarProgram& p, const double* in, double* out);
// Every node's value, as evaluate() computes it.
std::vector<double> node_values(const ScalarProgram& p, const double* in);

// The Input nodes (joint angles) whose sine or cosine the nodes [first, last) take, each
// once, ordered by input index: the back-ends compute their sin-cos pairs first, together.
std::vector<int> trig_inputs(const ScalarProgram& p, int first, int last);
// From this many such inputs on, the back-ends compute those pairs as vector code, several
// angles per instruction (emit-cpp's soa_sincos_n, emit-llvm's LlvmOptions::sincos_lanes).
inline constexpr int kTrigVectorMin = 4;

// Throws InternalError when the invariants above do not hold.
void check(const ScalarProgram& p);

// `p` without the nodes no output reaches, the others in their order (still topological).
ScalarProgram without_dead_nodes(ScalarProgram p);

}  // namespace soa::specialise
