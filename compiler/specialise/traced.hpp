// The tracing scalar: a number whose arithmetic is recorded into an SSA graph.
//
// Contract
// - A Traced is either a literal (no tracer: a plain double) or a node of one Tracer.
//   Arithmetic on two literals is done on the spot; arithmetic involving a node asks the
//   node's Tracer, which appends a node (or finds an equal one: hash-consing CSE, with
//   + and * canonically ordered).
// - With TraceOptions::fold (the default) the tracer simplifies as it records: constant
//   operands are folded, x*0 = 0, x*1 = x, x*-1 = -x, x+0 = x, x-x = 0, x/c = x*(1/c),
//   c1*(c2*x) = (c1 c2)*x, and negations are pushed outward (-x*y = -(x*y), a+(-b) = a-b,
//   -(a-b) = b-a) so that CSE sees through them. These are the rules that make a robot's
//   zeros (axis-aligned joints, sparse inertias) and ones vanish. Without fold, every
//   operation is recorded as written (the baseline folding is measured against).
// - With fold, CSE and TraceOptions::reversed_sub, a-b is recorded as -(b-a) when b-a is: a
//   negation that products pass outward and sums absorb (specialise.hpp's cheaper_form
//   decides per kernel set whether to use it).
// - Each node carries the tracer's current label (set_label) for comments.
// - A Tracer is single-threaded scratch state owned by one specialise() call.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "specialise/scalar_program.hpp"

namespace soa::specialise {

class Tracer;

class Traced {
public:
  Traced() = default;
  Traced(double literal) : c_(literal) {}  // literals convert implicitly, as for double
  Traced(Tracer* tracer, int node) : t_(tracer), node_(node) {}

  bool is_literal() const { return t_ == nullptr; }
  double literal() const { return c_; }
  Tracer* tracer() const { return t_; }
  int node() const { return node_; }

private:
  Tracer* t_ = nullptr;
  int node_ = -1;
  double c_ = 0.0;
};

Traced operator+(const Traced& a, const Traced& b);
Traced operator-(const Traced& a, const Traced& b);
Traced operator*(const Traced& a, const Traced& b);
Traced operator/(const Traced& a, const Traced& b);
Traced operator-(const Traced& a);
Traced sqrt(const Traced& a);
Traced sin(const Traced& a);
Traced cos(const Traced& a);

struct TraceOptions {
  bool fold = true;          // constant folding and the algebraic rules above
  bool cse = true;           // hash-consing
  bool reversed_sub = true;  // with both: a - b is -(b - a) when b - a is recorded
};

class Tracer {
public:
  explicit Tracer(TraceOptions options) : options_(options) {}
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  Traced input(int index);
  Traced constant(double value);  // a Const node: a number that must not be folded
  void set_label(const std::string& label);

  Traced binary(ScalarOp op, const Traced& a, const Traced& b);
  Traced unary(ScalarOp op, const Traced& a);
  // y when x is recorded as the negation -y (folding moves negations outward: a caller
  // building a sum can take -y's sign into the sum's own operations), else nullopt.
  std::optional<Traced> negated(const Traced& x);

  // The left-deep chain t1 (+|-) t2 (+|-) t3 ... of `terms` (value, subtracted), recorded as
  // written: the chain's own additions and subtractions are not folded, and a subtracted
  // first term is the negation -t1 (chains.hpp reads it as a subtracted term). Folding would
  // move a negation outward and turn the rest of the chain inside out (-t1 + t2 = t2 - t1),
  // so that rows computing alike sums with other signs no longer line up term by term, as
  // the back-ends' lane groups and columns need. Literal zero terms are left out; no terms
  // is 0.
  Traced sum(const std::vector<std::pair<Traced, bool>>& terms);

  // The program computing `outputs`, without dead nodes.
  ScalarProgram finish(const std::vector<Traced>& outputs, int input_count);

  // `p` recorded again with `inputs` (values of this tracer, or literals) for its inputs: its
  // outputs. A literal input folds through p (partial evaluation: p at qd = e_k).
  std::vector<Traced> replay(const ScalarProgram& p, const std::vector<Traced>& inputs);

private:
  struct Key {
    ScalarOp op;
    int a, b;
    std::uint64_t bits;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };

  TraceOptions options_;
  std::vector<ScalarNode> nodes_;
  std::unordered_map<Key, int, KeyHash> cse_;
  std::unordered_map<std::string, int> label_ids_;
  std::vector<std::string> labels_;
  int label_ = -1;

  int append(ScalarNode n);
  int materialise(const Traced& x);
  std::optional<double> value_of(const Traced& x) const;
  bool is(const Traced& x, ScalarOp op) const;
  Traced operand(const Traced& x);  // the operand of a unary node
  Traced fold_binary(ScalarOp op, const Traced& a, const Traced& b);
  Traced record(ScalarOp op, const Traced& a, const Traced& b);
};

}  // namespace soa::specialise
