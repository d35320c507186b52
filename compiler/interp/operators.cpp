// Dense block matrices of every vocabulary symbol (reference section 3): the ground truth.
#include <fmt/format.h>

#include <functional>

#include "algebra/arms.hpp"
#include "interp/interpreter.hpp"
#include "support/error.hpp"

namespace soa::interp {
namespace {

// A causal transformation operator from its single-step blocks: block (i, j) is the product
// of the steps along the path from j up to i (reference 2: phi(i,j)).
MatX path_operator(const Evaluation& ev, const std::vector<Mat6>& step) {
  const auto& bodies = ev.robot->bodies;
  MatX X = MatX::Zero(6 * ev.n, 6 * ev.n);
  for (int j = 0; j < ev.n; ++j) {
    Mat6 acc = Mat6::Identity();
    for (int i = j;;) {
      X.block<6, 6>(6 * i, 6 * j) = acc;
      const int p = bodies[i].parent;
      if (p < 0) break;
      acc = step[i] * acc;
      i = p;
    }
  }
  return X;
}

// Strictly causal shift with blocks (p(k), k) = step[k] (6 x cols(k)).
MatX shift_operator(const Evaluation& ev, const std::vector<MatX>& step, ir::Dim cols) {
  const auto& bodies = ev.robot->bodies;
  MatX X = MatX::Zero(6 * ev.n, ev.rows(cols));
  for (int k = 0; k < ev.n; ++k) {
    const int p = bodies[k].parent;
    if (p < 0) continue;
    const int c = cols == ir::Dim::Joint ? bodies[k].v_offset : 6 * k;
    X.block(6 * p, c, 6, step[k].cols()) = step[k];
  }
  return X;
}

// Block diagonal operator; each body's block sits at its row and column offsets.
MatX diagonal(const Evaluation& ev, ir::Dim rows, ir::Dim cols,
              const std::function<MatX(int)>& block) {
  const auto& bodies = ev.robot->bodies;
  MatX X = MatX::Zero(ev.rows(rows), ev.rows(cols));
  for (int k = 0; k < ev.n; ++k) {
    const int r = rows == ir::Dim::Joint ? bodies[k].v_offset : 6 * k;
    const int c = cols == ir::Dim::Joint ? bodies[k].v_offset : 6 * k;
    const MatX b = block(k);
    X.block(r, c, b.rows(), b.cols()) = b;
  }
  return X;
}

VecX stacked(const Evaluation& ev, Vec6 BodyBlocks::*member) {
  VecX v(6 * ev.n);
  for (int k = 0; k < ev.n; ++k) v.segment<6>(6 * k) = ev.kin.body[k].*member;
  return v;
}

}  // namespace

MatX dense_symbol(const Evaluation& ev, std::string_view name) {
  using ir::Dim;
  if (const int arm = ir::arm_of(name); arm > 0)
    return dense_symbol(ev.arm(arm, name), ir::base_name(name));
  const auto& K = ev.kin.body;
  const auto& A = ev.art;
  const int S = 6 * ev.n;
  auto phis = [&] {
    std::vector<Mat6> s(ev.n);
    for (int k = 0; k < ev.n; ++k) s[k] = K[k].phi;
    return s;
  };
  if (name == "E_phi") {
    std::vector<MatX> s(ev.n);
    for (int k = 0; k < ev.n; ++k) s[k] = K[k].phi;
    return shift_operator(ev, s, Dim::Spatial);
  }
  if (name == "phi") return path_operator(ev, phis());
  if (name == "phitilde") return path_operator(ev, phis()) - MatX::Identity(S, S);
  if (name == "H")
    return diagonal(ev, Dim::Joint, Dim::Spatial, [&](int k) { return MatX(K[k].Hstar.transpose()); });
  if (name == "M") return diagonal(ev, Dim::Spatial, Dim::Spatial, [&](int k) { return MatX(K[k].M); });
  if (name == "B") {
    MatX X = MatX::Zero(S, 6 * ev.m);
    for (int t = 0; t < ev.m; ++t) X.block<6, 6>(6 * ev.kin.tips[t].body, 6 * t) = ev.kin.tips[t].phi;
    return X;
  }
  if (name == "P") return diagonal(ev, Dim::Spatial, Dim::Spatial, [&](int k) { return MatX(A.P[k]); });
  if (name == "D") return diagonal(ev, Dim::Joint, Dim::Joint, [&](int k) { return A.D[k]; });
  if (name == "G") return diagonal(ev, Dim::Spatial, Dim::Joint, [&](int k) { return A.G[k]; });
  if (name == "K") {
    std::vector<MatX> s(ev.n);
    for (int k = 0; k < ev.n; ++k) s[k] = K[k].phi * A.G[k];
    return shift_operator(ev, s, Dim::Joint);
  }
  if (name == "tau")
    return diagonal(ev, Dim::Spatial, Dim::Spatial,
                    [&](int k) { return MatX(A.G[k] * K[k].Hstar.transpose()); });
  if (name == "taubar")
    return diagonal(ev, Dim::Spatial, Dim::Spatial, [&](int k) { return MatX(A.taubar[k]); });
  if (name == "E_psi") {
    std::vector<MatX> s(A.psi.begin(), A.psi.end());
    return shift_operator(ev, s, Dim::Spatial);
  }
  if (name == "psi") return path_operator(ev, A.psi);
  if (name == "psitilde") return path_operator(ev, A.psi) - MatX::Identity(S, S);
  if (name == "R") return diagonal(ev, Dim::Spatial, Dim::Spatial, [&](int k) { return MatX(A.R[k]); });
  if (name == "Upsilon")
    return diagonal(ev, Dim::Spatial, Dim::Spatial, [&](int k) { return MatX(A.Upsilon[k]); });
  if (name == "Omega") {
    const MatX Hpsi = dense_symbol(ev, "H") * dense_symbol(ev, "psi");
    return Hpsi.transpose() * dense_symbol(ev, "D").inverse() * Hpsi;
  }
  if (name == "J")
    return dense_symbol(ev, "B").transpose() * dense_symbol(ev, "phi").transpose() *
           dense_symbol(ev, "H").transpose();
  if (name == "calM") {
    const MatX Hphi = dense_symbol(ev, "H") * dense_symbol(ev, "phi");
    return Hphi * dense_symbol(ev, "M") * Hphi.transpose();
  }
  if (name == "qd") return ev.state.qd;
  if (name == "qdd") return ev.state.qdd;
  if (name == "f0") return ev.state.f0;
  if (name == "T") return ev.kin.T;
  if (name == "C") return ev.kin.C;
  if (name == "a") return stacked(ev, &BodyBlocks::a);
  if (name == "b") return stacked(ev, &BodyBlocks::b);
  if (name == "V") return stacked(ev, &BodyBlocks::V);
  if (name == "alpha") return stacked(ev, &BodyBlocks::alpha);
  throw UserError(fmt::format("no value for '{}' in the interpreter", name));
}

}  // namespace soa::interp
