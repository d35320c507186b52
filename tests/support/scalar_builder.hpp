// Hand-written ScalarPrograms for the tests (test_jit, test_lanes, test_specialise): nodes appended
// in order, each call returning the new node's index.
#pragma once

#include "specialise/scalar_program.hpp"

namespace soa::test {

struct ScalarBuilder {
  specialise::ScalarProgram p;
  explicit ScalarBuilder(int inputs) { p.input_count = inputs; }
  int add(specialise::ScalarOp op, int a = -1, int b = -1, double value = 0.0) {
    p.nodes.push_back(specialise::ScalarNode{op, a, b, value, -1});
    return static_cast<int>(p.nodes.size()) - 1;
  }
  int in(int i) { return add(specialise::ScalarOp::Input, i); }
  int lit(double x) { return add(specialise::ScalarOp::Const, -1, -1, x); }
};

}  // namespace soa::test
