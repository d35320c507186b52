// A readable SSA listing of a ScalarProgram (soac --emit=scalar, --emit=shared).
//
// Contract
// - One line per node, in program order: "%i = in[k]", "%i = const 1.5", "%i = mul %a, %b"
//   (the op names of to_string(ScalarOp)); then one line per output, "out[j] = %i".
//   Literals print with 17 significant digits, so the listing states every value exactly.
// - A node's label (scalar_program.hpp: where it came from) is printed as a comment line
//   "; label" before the first node of a run carrying it, not on every node.
// - input_names[k] / output_names[j], when given, annotate in[k] / out[j] ("; q[3]").
// - Deterministic: the same program prints the same text.
#pragma once

#include <string>
#include <vector>

#include "specialise/scalar_program.hpp"

namespace soa::specialise {

struct PrintOptions {
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  std::string indent = "  ";
};

std::string print(const ScalarProgram& p, const PrintOptions& options = {});

}  // namespace soa::specialise
