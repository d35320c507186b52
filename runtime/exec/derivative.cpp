#include "exec/derivative.hpp"

#include <unsupported/Eigen/AutoDiff>

#include <algorithm>

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

Layout form_layout(const SweepProgram& program, const std::vector<int>& wrt, DerivativeForm form, int nq, int nv, int n,
                   int m) {
  Layout l = derivative_layout(program, wrt, nq, nv, n, m);
  if (form == DerivativeForm::Jacobian) return l;
  SOA_ASSERT(l.inputs.size() == 3 && l.rows == nv && l.cols == nv, "the Coriolis forms take tau(q, qd, qdd)");
  l.inputs.resize(form == DerivativeForm::Coriolis ? 2 : 1);
  l.input_size = l.inputs.back().offset + l.inputs.back().size;
  if (form == DerivativeForm::Christoffel) l.cols = nv * nv;
  return l;
}

namespace {

// The derivative of the output along each of `seeds`' directions ((input entry, rate)
// pairs), at `in` (the program's full input layout `base`), into out (one block per direction).
void along(const SweepProgram& program, const RobotConstants<double>& robot, const Layout& base, const double* in,
           const std::vector<std::vector<std::pair<int, double>>>& seeds, double* out) {
  const int size = base.output_size();
  const int directions = static_cast<int>(seeds.size());
  // A tip-space solve checks its pivots only with S = double: a plain run first, so that
  // redundant constraints are the same UserError here.
  if (!solves(program).empty()) {
    std::vector<double> plain(static_cast<std::size_t>(size));
    execute(program, robot, in, plain.data());
  }
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

}  // namespace

void differentiate(const SweepProgram& program, const RobotConstants<double>& robot, const double* in,
                   const std::vector<int>& wrt, double* out) {
  const Layout base = layout(program, robot);
  along(program, robot, base, in, input_tangents(program, base, robot, wrt, in), out);
}

void quadratic_form(const SweepProgram& program, const RobotConstants<double>& robot, DerivativeForm form,
                    const double* in, double* out) {
  const Layout base = layout(program, robot);
  SOA_ASSERT(form != DerivativeForm::Jacobian && base.inputs.size() == 3, "quadratic_form: tau(q, qd, qdd) only");
  const int nq = robot.nq, nv = robot.nv;
  const int qd_at = base.inputs[1].offset, qdd_at = base.inputs[2].offset;
  std::vector<double> x(static_cast<std::size_t>(base.input_size), 0.0);  // qdd = 0
  std::copy(in, in + nq, x.begin());
  if (form == DerivativeForm::Coriolis) {
    std::copy(in + nq, in + nq + nv, x.begin() + qd_at);
    along(program, robot, base, x.data(), coriolis_tangents(robot, x.data() + qd_at, qd_at, qdd_at), out);
    return;
  }
  // Christoffel: Cor is linear in qd, so its derivative along qd_k is Cor at qd = e_k.
  const int block = nv * nv;
  for (int k = 0; k < nv; ++k) {
    std::fill(x.begin() + qd_at, x.begin() + qd_at + nv, 0.0);
    x[static_cast<std::size_t>(qd_at + k)] = 1.0;
    along(program, robot, base, x.data(), coriolis_tangents(robot, x.data() + qd_at, qd_at, qdd_at),
          out + static_cast<std::ptrdiff_t>(k) * block);
  }
}

}  // namespace soa::exec
