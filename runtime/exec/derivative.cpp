#include "exec/derivative.hpp"

#include <unsupported/Eigen/AutoDiff>

#include "exec/execute_impl.hpp"
#include "support/error.hpp"

namespace soa::exec {

constexpr int kChunk = 8;
using Dual = Eigen::AutoDiffScalar<Eigen::Matrix<double, kChunk, 1>>;

int tangent_size(const SweepProgram& program, int input, int nq, int nv, int n, int m) {
  SOA_ASSERT(input >= 0 && input < static_cast<int>(program.inputs.size()), "tangent_size: no such input");
  const Space s = program.vars[program.inputs[input]].space;
  return s == Space::Config ? nv : space_size(s, nq, nv, n, m);
}

Layout derivative_layout(const SweepProgram& program, const std::vector<int>& wrt, int nq, int nv, int n, int m) {
  Layout l = layout(program, nq, nv, n, m);
  int directions = 0;
  for (int i : wrt) directions += tangent_size(program, i, nq, nv, n, m);
  l.cols *= directions;
  return l;
}

void differentiate(const SweepProgram& program, const RobotConstants<double>& robot, const double* in,
                   const std::vector<int>& wrt, double* out) {
  const Layout base = layout(program, robot);
  const Layout l = derivative_layout(program, wrt, robot.nq, robot.nv, robot.n(), robot.m());
  const int size = base.output_size();
  const int directions = l.cols / base.cols;
  // A tip-space solve checks its pivots only with S = double: a plain run first, so that
  // redundant constraints are the same UserError here.
  if (!solves(program).empty()) {
    std::vector<double> plain(static_cast<std::size_t>(size));
    execute(program, robot, in, plain.data());
  }
  // Every direction's seed: (input entry, rate) pairs.
  const std::vector<std::vector<std::pair<int, double>>> seeds = input_tangents(program, base, robot, wrt, in);
  SOA_ASSERT(static_cast<int>(seeds.size()) == directions, "differentiate: directions miscounted");
  // kChunk directions per run: fixed-size derivative vectors, so that every literal the
  // executor makes carries its (zero) derivatives and nothing is allocated per operation.
  const RobotConstants<Dual> constants = convert<Dual>(robot, [](double v) { return Dual(v); });
  std::vector<Dual> x(static_cast<std::size_t>(base.input_size));
  std::vector<Dual> y(static_cast<std::size_t>(size));
  for (int first = 0; first < directions; first += kChunk) {
    for (int i = 0; i < base.input_size; ++i) x[static_cast<std::size_t>(i)] = Dual(in[i]);
    for (int k = 0; k < kChunk && first + k < directions; ++k)
      for (const auto& [at, rate] : seeds[static_cast<std::size_t>(first + k)])
        x[static_cast<std::size_t>(at)].derivatives()[k] = rate;
    execute(program, constants, x.data(), y.data());
    for (int k = 0; k < kChunk && first + k < directions; ++k)
      for (int i = 0; i < size; ++i)
        out[static_cast<std::ptrdiff_t>(first + k) * size + i] = y[static_cast<std::size_t>(i)].derivatives()[k];
  }
}

}  // namespace soa::exec
