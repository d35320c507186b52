// Dense block matrices of every vocabulary symbol (reference section 3): the ground truth.
#include <fmt/format.h>

#include <algorithm>
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
MatX diagonal(const Evaluation& ev, ir::Dim rows, ir::Dim cols, const std::function<MatX(int)>& block) {
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

// A frame's world pose (R: its axes in the world's, o: its origin) from the bodies'
// phi(p(k), k) = [[R, l~ R], [0, R]] composed from the root, then `frame` (phi(O_k, frame)).
struct Pose {
  Eigen::Matrix3d R;
  Eigen::Vector3d o;
};
Pose compose(const Pose& a, const Mat6& phi) {
  const Eigen::Matrix3d R = phi.block<3, 3>(0, 0);
  const Eigen::Matrix3d lx = phi.block<3, 3>(0, 3) * R.transpose();
  return {a.R * R, a.o + a.R * Eigen::Vector3d(lx(2, 1), lx(0, 2), lx(1, 0))};
}
Pose world_pose(const Evaluation& ev, int body, const Mat6& frame) {
  std::vector<int> path;
  for (int k = body; k >= 0; k = ev.robot->bodies[k].parent) path.push_back(k);
  Pose x{Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero()};
  for (auto k = path.rbegin(); k != path.rend(); ++k) x = compose(x, ev.kin.body[*k].phi);
  return compose(x, frame);
}

// The tip index of frame `other`, the partner of tip t in `what` (fg, ex).
int partner_tip(const Evaluation& ev, int t, int other, const char* what, const char* relation) {
  const auto it = std::find(ev.tips.begin(), ev.tips.end(), other);
  if (it == ev.tips.end())
    throw UserError(fmt::format("{}: frame '{}' {} '{}', which is not a tip", what,
                                ev.robot->frames[static_cast<std::size_t>(ev.tips[t])].name, relation,
                                ev.robot->frames[static_cast<std::size_t>(other)].name));
  return static_cast<int>(it - ev.tips.begin());
}

// Tip t's pose relative to tip u's, from their world poses: R (t's axes in u's) and l (t's
// origin in u's coordinates); e = vee(R - R*) / 2 and p = R* l, t's pose error (fg, ex).
struct Relative {
  Eigen::Matrix3d R;
  Eigen::Vector3d l, e, p;
};
Relative relative_pose(const Evaluation& ev, int t, int u) {
  const TipBlocks &bt = ev.kin.tips[t], &bu = ev.kin.tips[u];
  const Pose Pt = world_pose(ev, bt.body, bt.phi), Pu = world_pose(ev, bu.body, bu.phi);
  Relative r;
  r.R = Pu.R.transpose() * Pt.R;
  r.l = Pu.R.transpose() * (Pt.o - Pu.o);
  const Eigen::Matrix3d A = (r.R - r.R.transpose()) / 2;
  r.e = Eigen::Vector3d(A(2, 1), A(0, 2), A(1, 0));
  r.p = r.R.transpose() * r.l;
  return r;
}

// fg (vocabulary.def): for each tip t grasping u (Frame::spring), s = [kr e + dr w; kt p + dt
// v] at t and -phi(u,t) s at u, from the frames' world poses and twists (the executor goes
// through their common ancestor instead).
VecX grasp_forces(const Evaluation& ev) {
  VecX f = VecX::Zero(6 * ev.m);
  for (int t = 0; t < ev.m; ++t) {
    const Spring& c = ev.robot->frames[static_cast<std::size_t>(ev.tips[t])].spring;
    if (c.to < 0) continue;
    const int u = partner_tip(ev, t, c.to, "fg", "grasps");
    const Relative x = relative_pose(ev, t, u);
    const Mat6 phi_ut = make_phi(x.R, x.l);  // forces at t to u
    const TipBlocks &bt = ev.kin.tips[t], &bu = ev.kin.tips[u];
    const Vec6 rel = bt.phi.transpose() * ev.kin.body[bt.body].V -
                     phi_ut.transpose() * (bu.phi.transpose() * ev.kin.body[bu.body].V);
    Vec6 s;
    s << c.kr * x.e + c.dr * rel.head<3>(), c.kt * x.p + c.dt * rel.tail<3>();
    f.segment<6>(6 * t) += s;
    f.segment<6>(6 * u) -= phi_ut * s;
  }
  return f;
}

// ex (vocabulary.def): for each tip t welded to u (Frame::held_to), [e; p] of t's pose
// relative to u's, from the frames' world poses; 0 at the other tips.
VecX weld_errors(const Evaluation& ev) {
  VecX e = VecX::Zero(6 * ev.m);
  for (int t = 0; t < ev.m; ++t) {
    const Frame& frame = ev.robot->frames[static_cast<std::size_t>(ev.tips[t])];
    if (!frame.held || frame.held_to < 0) continue;
    const Relative x = relative_pose(ev, t, partner_tip(ev, t, frame.held_to, "ex", "is welded to"));
    e.segment<6>(6 * t) << x.e, x.p;
  }
  return e;
}

}  // namespace

MatX dense_symbol(const Evaluation& ev, const ir::Expr& symbol) {
  using ir::Dim;
  using ir::Sym;
  if (symbol.arm() > 0) return dense_symbol(ev.arm(symbol.arm(), symbol.name()), ir::on_arm(symbol, 0));
  const ir::SymbolInfo* info = symbol.info();
  if (!info) throw UserError(fmt::format("no value for '{}' in the interpreter", symbol.name()));
  const auto& K = ev.kin.body;
  const auto& A = ev.art;
  const int S = 6 * ev.n;
  switch (info->id) {
    case Sym::E_phi: {
      std::vector<MatX> s(ev.n);
      for (int k = 0; k < ev.n; ++k) s[k] = K[k].phi;
      return shift_operator(ev, s, Dim::Spatial);
    }
    case Sym::phi: {
      std::vector<Mat6> s(ev.n);
      for (int k = 0; k < ev.n; ++k) s[k] = K[k].phi;
      return path_operator(ev, s);
    }
    case Sym::psi: return path_operator(ev, A.psi);
    case Sym::H: return diagonal(ev, Dim::Joint, Dim::Spatial, [&](int k) { return MatX(K[k].Hstar.transpose()); });
    case Sym::M: return diagonal(ev, Dim::Spatial, Dim::Spatial, [&](int k) { return MatX(K[k].M); });
    case Sym::B: {
      MatX X = MatX::Zero(S, 6 * ev.m);
      for (int t = 0; t < ev.m; ++t) X.block<6, 6>(6 * ev.kin.tips[t].body, 6 * t) = ev.kin.tips[t].phi;
      return X;
    }
    case Sym::P: return diagonal(ev, Dim::Spatial, Dim::Spatial, [&](int k) { return MatX(A.P[k]); });
    case Sym::D: return diagonal(ev, Dim::Joint, Dim::Joint, [&](int k) { return A.D[k]; });
    case Sym::G: return diagonal(ev, Dim::Spatial, Dim::Joint, [&](int k) { return A.G[k]; });
    case Sym::tau:
      return diagonal(ev, Dim::Spatial, Dim::Spatial, [&](int k) { return MatX(A.G[k] * K[k].Hstar.transpose()); });
    case Sym::taubar: return diagonal(ev, Dim::Spatial, Dim::Spatial, [&](int k) { return MatX(A.taubar[k]); });
    case Sym::R: return diagonal(ev, Dim::Spatial, Dim::Spatial, [&](int k) { return MatX(A.R[k]); });
    case Sym::Upsilon: return diagonal(ev, Dim::Spatial, Dim::Spatial, [&](int k) { return MatX(A.Upsilon[k]); });
    case Sym::X_i: {
      // 004 eq. 3.37's pick-off, generalised: the force cross product of coordinate i's axis
      // at its body, zero elsewhere (docs/mathematics.md section 7).
      if (ev.coordinate < 0 || ev.coordinate >= ev.N)
        throw UserError(fmt::format(
            "X_i needs a coordinate i (0 to {}): soac eval --coordinate I gives one, soac verify checks several",
            ev.N - 1));
      return diagonal(ev, Dim::Spatial, Dim::Spatial, [&](int k) {
        const int c = ev.coordinate - ev.robot->bodies[k].v_offset;
        MatX X = MatX::Zero(6, 6);
        if (c < 0 || c >= K[k].Hstar.cols()) return X;
        const Eigen::Vector3d w = K[k].Hstar.col(c).head<3>(), v = K[k].Hstar.col(c).tail<3>();
        X.block<3, 3>(0, 0) = X.block<3, 3>(3, 3) = skew(w);
        X.block<3, 3>(0, 3) = skew(v);
        return X;
      });
    }
    // The vectors: the state, and the model's own recursions (model/kinematics.hpp), so
    // that the library's definitions of C and alpha are checked against them.
    case Sym::qd: return ev.state.qd;
    case Sym::qdd: return ev.state.qdd;
    case Sym::f0: return ev.state.f0;
    case Sym::T: return ev.kin.T;
    case Sym::C: return ev.kin.C;
    case Sym::a: return stacked(ev, &BodyBlocks::a);
    case Sym::abar: return stacked(ev, &BodyBlocks::abar);
    case Sym::b: return stacked(ev, &BodyBlocks::b);
    case Sym::V: return stacked(ev, &BodyBlocks::V);
    case Sym::fg: return grasp_forces(ev);
    case Sym::ex: return weld_errors(ev);
    case Sym::alpha: return stacked(ev, &BodyBlocks::alpha);
    // Derived operators: their library definitions (calM = H phi M phi* H*, K = E_phi G, ...).
    case Sym::phitilde:
    case Sym::K:
    case Sym::E_psi:
    case Sym::psitilde:
    case Sym::Omega:
    case Sym::J:
    case Sym::calM: {
      const auto body = ev.definitions->expand_symbol(symbol);
      if (!body) throw UserError(fmt::format("the identity library defines no '{}'", symbol.name()));
      return eval_dense(ev, *body);
    }
  }
  throw InternalError(fmt::format("no dense value for '{}'", symbol.name()));
}

}  // namespace soa::interp
