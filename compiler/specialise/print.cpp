#include "specialise/print.hpp"

#include <fmt/format.h>

namespace soa::specialise {

std::string print(const ScalarProgram& p, const PrintOptions& o) {
  std::string s;
  int label = -1;
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const ScalarNode& n = p.nodes[i];
    // A label once per run of nodes from the same place: the listing reads like the sweeps.
    if (n.label != label && n.label >= 0 && n.label < static_cast<int>(p.labels.size()))
      s += fmt::format("{}; {}\n", o.indent, p.labels[n.label]);
    label = n.label;
    s += fmt::format("{}%{} = ", o.indent, i);
    switch (arity(n.op)) {
      case 0:
        if (n.op == ScalarOp::Input) {
          s += fmt::format("in[{}]", n.a);
          if (n.a >= 0 && n.a < static_cast<int>(o.input_names.size())) s += "  ; " + o.input_names[n.a];
        } else {
          s += fmt::format("const {:.17g}", n.value);
        }
        break;
      case 1: s += fmt::format("{} %{}", to_string(n.op), n.a); break;
      default: s += fmt::format("{} %{}, %{}", to_string(n.op), n.a, n.b); break;
    }
    s += '\n';
  }
  for (std::size_t j = 0; j < p.outputs.size(); ++j) {
    s += fmt::format("{}out[{}] = %{}", o.indent, j, p.outputs[j]);
    if (j < o.output_names.size()) s += "  ; " + o.output_names[j];
    s += '\n';
  }
  return s;
}

}  // namespace soa::specialise
