#include "specialise/differentiate.hpp"

#include <algorithm>

#include "support/error.hpp"

namespace soa::specialise {

namespace {

// A node's derivative: its nonzero rates, by direction (sorted).
using Tangent = std::vector<std::pair<int, Traced>>;

Tangent combine(const Tangent& a, const Tangent& b, double sign) {
  Tangent out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].first < b[j].first)) {
      out.push_back(a[i++]);
    } else if (i == a.size() || b[j].first < a[i].first) {
      out.emplace_back(b[j].first, sign > 0 ? b[j].second : -b[j].second);
      ++j;
    } else {
      out.emplace_back(a[i].first, sign > 0 ? a[i].second + b[j].second : a[i].second - b[j].second);
      ++i, ++j;
    }
  }
  return out;
}

Tangent scaled(const Tangent& a, const Traced& f) {
  Tangent out;
  out.reserve(a.size());
  for (const auto& [d, x] : a) out.emplace_back(d, x * f);
  return out;
}

}  // namespace

ScalarProgram differentiate(const ScalarProgram& p, const Seeds& seeds, const TraceOptions& options) {
  Tracer tracer(options);
  std::vector<Traced> inputs;
  for (int i = 0; i < p.input_count; ++i) inputs.push_back(tracer.input(i));
  const std::vector<std::vector<std::pair<int, Traced>>> rates = seeds(inputs);
  std::vector<Tangent> input_rates(static_cast<std::size_t>(p.input_count));
  for (std::size_t d = 0; d < rates.size(); ++d)
    for (const auto& [at, rate] : rates[d]) {
      SOA_ASSERT(at >= 0 && at < p.input_count, "differentiate: a seed names no input");
      input_rates[static_cast<std::size_t>(at)].emplace_back(static_cast<int>(d), rate);
    }
  std::vector<Traced> value(p.nodes.size());
  std::vector<Tangent> rate(p.nodes.size());
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const ScalarNode& n = p.nodes[i];
    tracer.set_label(n.label >= 0 ? p.labels[static_cast<std::size_t>(n.label)] : std::string());
    const auto v = [&](int k) -> const Traced& { return value[static_cast<std::size_t>(k)]; };
    const auto t = [&](int k) -> const Tangent& { return rate[static_cast<std::size_t>(k)]; };
    switch (n.op) {
      case ScalarOp::Input:
        value[i] = inputs[static_cast<std::size_t>(n.a)];
        rate[i] = input_rates[static_cast<std::size_t>(n.a)];
        break;
      case ScalarOp::Const: value[i] = tracer.constant(n.value); break;
      case ScalarOp::Add:
        value[i] = v(n.a) + v(n.b);
        rate[i] = combine(t(n.a), t(n.b), 1.0);
        break;
      case ScalarOp::Sub:
        value[i] = v(n.a) - v(n.b);
        rate[i] = combine(t(n.a), t(n.b), -1.0);
        break;
      case ScalarOp::Mul:
        value[i] = v(n.a) * v(n.b);
        rate[i] = combine(scaled(t(n.a), v(n.b)), scaled(t(n.b), v(n.a)), 1.0);
        break;
      case ScalarOp::Div: {
        // d(a / b) = (da - (a / b) db) / b
        value[i] = v(n.a) / v(n.b);
        if (t(n.a).empty() && t(n.b).empty()) break;
        const Traced inverse = Traced(1.0) / v(n.b);
        rate[i] = scaled(combine(t(n.a), scaled(t(n.b), value[i]), -1.0), inverse);
        break;
      }
      case ScalarOp::Neg:
        value[i] = -v(n.a);
        rate[i] = scaled(t(n.a), Traced(-1.0));
        break;
      case ScalarOp::Sqrt:
        value[i] = sqrt(v(n.a));
        if (!t(n.a).empty()) rate[i] = scaled(t(n.a), Traced(0.5) / value[i]);
        break;
      case ScalarOp::Sin:
        value[i] = sin(v(n.a));
        if (!t(n.a).empty()) rate[i] = scaled(t(n.a), cos(v(n.a)));
        break;
      case ScalarOp::Cos:
        value[i] = cos(v(n.a));
        if (!t(n.a).empty()) rate[i] = scaled(t(n.a), -sin(v(n.a)));
        break;
    }
  }
  const std::size_t outputs = p.outputs.size(), directions = rates.size();
  std::vector<Traced> out(outputs * directions, Traced(0.0));
  for (std::size_t o = 0; o < outputs; ++o)
    for (const auto& [d, x] : rate[static_cast<std::size_t>(p.outputs[o])])
      out[static_cast<std::size_t>(d) * outputs + o] = x;
  return tracer.finish(out, p.input_count);
}

}  // namespace soa::specialise
