#include "specialise/traced.hpp"

#include <bit>
#include <cmath>

#include "support/error.hpp"
#include "support/sincos.hpp"

namespace soa::specialise {

namespace {

double compute(ScalarOp op, double a, double b) {
  switch (op) {
    case ScalarOp::Add: return a + b;
    case ScalarOp::Sub: return a - b;
    case ScalarOp::Mul: return a * b;
    case ScalarOp::Div: return a / b;
    case ScalarOp::Neg: return -a;
    case ScalarOp::Sqrt: return std::sqrt(a);
    case ScalarOp::Sin: return soa::sincos(a).s;  // as every back-end computes a Sin node
    case ScalarOp::Cos: return soa::sincos(a).c;
    default: break;
  }
  throw InternalError("tracer: not an arithmetic operation");
}

Tracer* tracer_of(const Traced& a, const Traced& b) { return a.tracer() ? a.tracer() : b.tracer(); }

}  // namespace

Traced operator+(const Traced& a, const Traced& b) {
  if (Tracer* t = tracer_of(a, b)) return t->binary(ScalarOp::Add, a, b);
  return a.literal() + b.literal();
}
Traced operator-(const Traced& a, const Traced& b) {
  if (Tracer* t = tracer_of(a, b)) return t->binary(ScalarOp::Sub, a, b);
  return a.literal() - b.literal();
}
Traced operator*(const Traced& a, const Traced& b) {
  if (Tracer* t = tracer_of(a, b)) return t->binary(ScalarOp::Mul, a, b);
  return a.literal() * b.literal();
}
Traced operator/(const Traced& a, const Traced& b) {
  if (Tracer* t = tracer_of(a, b)) return t->binary(ScalarOp::Div, a, b);
  return a.literal() / b.literal();
}
Traced operator-(const Traced& a) { return a.tracer() ? a.tracer()->unary(ScalarOp::Neg, a) : Traced(-a.literal()); }
Traced sqrt(const Traced& a) {
  return a.tracer() ? a.tracer()->unary(ScalarOp::Sqrt, a) : Traced(std::sqrt(a.literal()));
}
Traced sin(const Traced& a) {
  return a.tracer() ? a.tracer()->unary(ScalarOp::Sin, a) : Traced(soa::sincos(a.literal()).s);
}
Traced cos(const Traced& a) {
  return a.tracer() ? a.tracer()->unary(ScalarOp::Cos, a) : Traced(soa::sincos(a.literal()).c);
}

std::size_t Tracer::KeyHash::operator()(const Key& k) const {
  std::size_t h = static_cast<std::size_t>(k.op);
  for (std::uint64_t x : {static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.a)),
                          static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.b)), k.bits})
    h = (h ^ x) * 0x100000001b3ULL + (h >> 29);
  return h;
}

int Tracer::append(ScalarNode n) {
  n.label = label_;
  const Key key{n.op, n.a, n.b, std::bit_cast<std::uint64_t>(n.value)};
  if (options_.cse)
    if (auto it = cse_.find(key); it != cse_.end()) return it->second;
  nodes_.push_back(n);
  const int id = static_cast<int>(nodes_.size()) - 1;
  if (options_.cse) cse_.emplace(key, id);
  return id;
}

Traced Tracer::input(int index) { return {this, append({ScalarOp::Input, index, -1, 0.0, -1})}; }

Traced Tracer::constant(double value) { return {this, append({ScalarOp::Const, -1, -1, value, -1})}; }

void Tracer::set_label(const std::string& label) {
  auto [it, fresh] = label_ids_.emplace(label, static_cast<int>(labels_.size()));
  if (fresh) labels_.push_back(label);
  label_ = it->second;
}

int Tracer::materialise(const Traced& x) {
  if (!x.is_literal()) {
    SOA_ASSERT(x.tracer() == this, "tracer: values of two tracers mixed");
    return x.node();
  }
  return constant(x.literal()).node();
}

std::optional<double> Tracer::value_of(const Traced& x) const {
  if (x.is_literal()) return x.literal();
  if (options_.fold && nodes_[x.node()].op == ScalarOp::Const) return nodes_[x.node()].value;
  return std::nullopt;
}

bool Tracer::is(const Traced& x, ScalarOp op) const { return !x.is_literal() && nodes_[x.node()].op == op; }

Traced Tracer::operand(const Traced& x) { return {this, nodes_[x.node()].a}; }

std::optional<Traced> Tracer::negated(const Traced& x) {
  if (x.tracer() != this || !is(x, ScalarOp::Neg)) return std::nullopt;
  return operand(x);
}

Traced Tracer::record(ScalarOp op, const Traced& a, const Traced& b) {
  int x = materialise(a), y = materialise(b);
  if ((op == ScalarOp::Add || op == ScalarOp::Mul) && y < x) std::swap(x, y);  // canonical order for CSE
  // a - b when b - a is recorded: its negation, which products pass outward and sums absorb,
  // so a sweep run on -y (the constrained equations' two signs of one residual) is shared.
  if (op == ScalarOp::Sub && options_.fold && options_.cse && options_.reversed_sub)
    if (auto it = cse_.find(Key{ScalarOp::Sub, y, x, 0}); it != cse_.end())
      return {this, append({ScalarOp::Neg, it->second, -1, 0.0, -1})};
  return {this, append({op, x, y, 0.0, -1})};
}

Traced Tracer::binary(ScalarOp op, const Traced& a, const Traced& b) {
  if (!options_.fold) return record(op, a, b);
  return fold_binary(op, a, b);
}

Traced Tracer::fold_binary(ScalarOp op, const Traced& a, const Traced& b) {
  const auto va = value_of(a), vb = value_of(b);
  if (va && vb) return compute(op, *va, *vb);
  switch (op) {
    case ScalarOp::Add:
      if (va == 0.0) return b;
      if (vb == 0.0) return a;
      if (is(b, ScalarOp::Neg)) return fold_binary(ScalarOp::Sub, a, operand(b));
      if (is(a, ScalarOp::Neg)) return fold_binary(ScalarOp::Sub, b, operand(a));
      break;
    case ScalarOp::Sub:
      if (vb == 0.0) return a;
      if (va == 0.0) return unary(ScalarOp::Neg, b);
      if (!a.is_literal() && !b.is_literal() && a.node() == b.node()) return 0.0;
      if (is(b, ScalarOp::Neg)) return fold_binary(ScalarOp::Add, a, operand(b));
      if (is(a, ScalarOp::Neg)) return unary(ScalarOp::Neg, fold_binary(ScalarOp::Add, operand(a), b));
      break;
    case ScalarOp::Mul: {
      if (va == 0.0 || vb == 0.0) return 0.0;
      if (va == 1.0) return b;
      if (vb == 1.0) return a;
      if (va == -1.0) return unary(ScalarOp::Neg, b);
      if (vb == -1.0) return unary(ScalarOp::Neg, a);
      if (is(a, ScalarOp::Neg)) return unary(ScalarOp::Neg, fold_binary(ScalarOp::Mul, operand(a), b));
      if (is(b, ScalarOp::Neg)) return unary(ScalarOp::Neg, fold_binary(ScalarOp::Mul, a, operand(b)));
      if (va || vb) {  // c1 * (c2 * x) = (c1 c2) * x
        const double c = va ? *va : *vb;
        const Traced& x = va ? b : a;
        if (is(x, ScalarOp::Mul)) {
          const ScalarNode m = nodes_[x.node()];
          for (auto [k, other] : {std::pair{m.a, m.b}, std::pair{m.b, m.a}})
            if (nodes_[k].op == ScalarOp::Const)
              return fold_binary(ScalarOp::Mul, c * nodes_[k].value, Traced(this, other));
        }
      }
      break;
    }
    case ScalarOp::Div:
      if (va == 0.0) return 0.0;
      if (vb) return fold_binary(ScalarOp::Mul, a, 1.0 / *vb);
      break;
    default: throw InternalError("tracer: not a binary operation");
  }
  return record(op, a, b);
}

Traced Tracer::unary(ScalarOp op, const Traced& a) {
  if (options_.fold) {
    if (const auto v = value_of(a)) return compute(op, *v, 0.0);
    if (op == ScalarOp::Neg && is(a, ScalarOp::Neg)) return operand(a);
    if (op == ScalarOp::Neg && is(a, ScalarOp::Sub)) {
      const ScalarNode& s = nodes_[a.node()];
      return record(ScalarOp::Sub, Traced(this, s.b), Traced(this, s.a));
    }
  }
  return {this, append({op, materialise(a), -1, 0.0, -1})};
}

Traced Tracer::sum(const std::vector<std::pair<Traced, bool>>& terms) {
  Traced acc(0.0);
  bool empty = true;
  for (const auto& [t, sub] : terms) {
    if (t.is_literal() && t.literal() == 0.0) continue;
    if (empty) {
      acc = sub ? Traced(this, append({ScalarOp::Neg, materialise(t), -1, 0.0, -1})) : t;
      empty = false;
      continue;
    }
    // The running sum first, as written (not record()'s canonical order): terms in order.
    acc = Traced(this, append({sub ? ScalarOp::Sub : ScalarOp::Add, materialise(acc), materialise(t), 0.0, -1}));
  }
  return acc;
}

ScalarProgram Tracer::finish(const std::vector<Traced>& outputs, int input_count) {
  ScalarProgram p;
  p.input_count = input_count;
  p.labels = labels_;
  for (const Traced& o : outputs) p.outputs.push_back(materialise(o));
  p.nodes = nodes_;                      // after materialise(), which may append literal nodes
  p = without_dead_nodes(std::move(p));  // keep what reaches an output, in order
  check(p);
  return p;
}

std::vector<Traced> Tracer::replay(const ScalarProgram& p, const std::vector<Traced>& inputs) {
  SOA_ASSERT(static_cast<int>(inputs.size()) == p.input_count, "replay: one value per input");
  std::vector<Traced> value(p.nodes.size());
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const ScalarNode& n = p.nodes[i];
    set_label(n.label >= 0 ? p.labels[static_cast<std::size_t>(n.label)] : std::string());
    const auto v = [&](int k) -> const Traced& { return value[static_cast<std::size_t>(k)]; };
    switch (n.op) {
      case ScalarOp::Input: value[i] = inputs[static_cast<std::size_t>(n.a)]; break;
      case ScalarOp::Const: value[i] = constant(n.value); break;
      case ScalarOp::Add:
      case ScalarOp::Sub:
      case ScalarOp::Mul:
      case ScalarOp::Div: value[i] = binary(n.op, v(n.a), v(n.b)); break;
      case ScalarOp::Neg:
      case ScalarOp::Sqrt:
      case ScalarOp::Sin:
      case ScalarOp::Cos: value[i] = unary(n.op, v(n.a)); break;
    }
  }
  std::vector<Traced> out;
  for (int o : p.outputs) out.push_back(value[static_cast<std::size_t>(o)]);
  return out;
}

}  // namespace soa::specialise
