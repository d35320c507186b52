// Sweep evaluation: every factor applied to a vector by its O(n) recursion (reference 5).
//
// Memoryless factors are per-body maps; causal ones (phi, psi, E_phi, E_psi, K) inward
// recursions over the tree, their adjoints outward ones. (s I + X)^-1 with X a sum of
// strictly causal products is a forward substitution over the bodies (causal_solve below):
// the recursion that the papers write out by hand for (I - E_phi)^-1 and for the
// innovations inverse (I + H phi K)^-1 (001 eqs. 49-51), found here for any such X.
#include <fmt/format.h>

#include <functional>
#include <optional>

#include "algebra/arms.hpp"
#include "algebra/definitions.hpp"
#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "interp/interpreter.hpp"
#include "support/error.hpp"

namespace soa::interp {
namespace {

using ir::Dim;
using ir::Expr;
using ir::Op;

// Offsets of one body's entries in a stacked vector of space d.
struct Slot {
  int offset, size;
};

Slot slot(const Evaluation& ev, Dim d, int k) {
  const Body& b = ev.robot->bodies[k];
  return d == Dim::Joint ? Slot{b.v_offset, b.nv()} : Slot{6 * k, 6};
}

// The name of the first symbol of `e` (for messages), or "".
std::string_view first_symbol(const Expr& e) {
  if (e.is(Op::Symbol)) return e.name();
  for (const auto& k : e.kids())
    if (const std::string_view s = first_symbol(k); !s.empty()) return s;
  return {};
}

// A per-body factor: its spaces and its block at body k.
struct Memoryless {
  Dim in, out;
  std::function<MatX(int)> block;
};

// A Block symbol's per-body map (nullopt for any other symbol).
std::optional<Memoryless> memoryless(const Evaluation& ev, const Expr& symbol, bool adj) {
  const auto& K = ev.kin.body;
  const auto& A = ev.art;
  auto sym6 = [&](const std::vector<Mat6>& v) {
    return Memoryless{Dim::Spatial, Dim::Spatial, [&v](int k) { return MatX(v[k]); }};
  };
  if (!symbol.info() || symbol.info()->role != ir::Role::Block) return std::nullopt;
  switch (symbol.info()->id) {
    case ir::Sym::H:
      if (adj) return Memoryless{Dim::Joint, Dim::Spatial, [&K](int k) { return MatX(K[k].Hstar); }};
      return Memoryless{Dim::Spatial, Dim::Joint, [&K](int k) { return MatX(K[k].Hstar.transpose()); }};
    case ir::Sym::G:
      if (adj) return Memoryless{Dim::Spatial, Dim::Joint, [&A](int k) { return MatX(A.G[k].transpose()); }};
      return Memoryless{Dim::Joint, Dim::Spatial, [&A](int k) { return A.G[k]; }};
    case ir::Sym::M: return Memoryless{Dim::Spatial, Dim::Spatial, [&K](int k) { return MatX(K[k].M); }};
    case ir::Sym::P: return sym6(A.P);
    case ir::Sym::R: return sym6(A.R);
    case ir::Sym::Upsilon: return sym6(A.Upsilon);
    case ir::Sym::D: return Memoryless{Dim::Joint, Dim::Joint, [&A](int k) { return A.D[k]; }};
    case ir::Sym::taubar:
      return Memoryless{Dim::Spatial, Dim::Spatial,
                        [&A, adj](int k) { return adj ? MatX(A.taubar[k].transpose()) : MatX(A.taubar[k]); }};
    case ir::Sym::tau:
      return Memoryless{Dim::Spatial, Dim::Spatial, [&A, &K, adj](int k) {
                          const MatX t = A.G[k] * K[k].Hstar.transpose();
                          return adj ? MatX(t.transpose()) : t;
                        }};
    default: throw InternalError(fmt::format("interp: the Block '{}' has no per-body map", symbol.name()));
  }
}

class Sweeps {
public:
  explicit Sweeps(const Evaluation& ev) : ev_(ev), bodies_(ev.robot->bodies) {}

  VecX apply(const Expr& e, const VecX& y) const {
    // A part that is all one arm's is that arm's own expression, swept over the arm alone
    // (interpreter.hpp); parts that mix arms (sums, products through the tip space) are
    // taken apart below until each piece is one arm's.
    if (const int arm = ir::single_arm(e); arm > 0)
      return Sweeps(ev_.arm(arm, first_symbol(e))).apply(ir::on_arm(e, 0), y);
    switch (e.op()) {
      case Op::Symbol: return symbol(e, false, y);
      case Op::Identity: return y;
      case Op::Zero: return VecX::Zero(y.size());
      case Op::Scale: return e.coef() * apply(e.kid(0), y);
      case Op::Adjoint:
        if (e.kid(0).is(Op::Symbol)) return symbol(e.kid(0), true, y);
        return apply(ir::adjoint_of(e.kid(0)), y);
      case Op::Inverse: return solve(e.kid(0), y);
      case Op::Sum: {
        VecX z = apply(e.kid(0), y);
        for (std::size_t i = 1; i < e.kids().size(); ++i) z += apply(e.kid(i), y);
        return z;
      }
      case Op::Product: {
        VecX z = y;
        for (auto it = e.kids().rbegin(); it != e.kids().rend(); ++it) z = apply(*it, z);
        return z;
      }
      case Op::Derivative: break;  // refused by check_no_coordinate
    }
    throw InternalError("unknown IR node");
  }

private:
  const Evaluation& ev_;
  const std::vector<Body>& bodies_;

  int n() const { return ev_.n; }

  // phi y: z(k) = y(k) + sum_c phi(k,c) z(c), children first (reference 5). Adjoint:
  // z(k) = y(k) + phi*(p(k),k) z(p(k)), parents first.
  VecX transfer(const std::vector<Mat6>& step, bool adj, bool strict, const VecX& y) const {
    VecX z = strict ? VecX::Zero(y.size()) : y;
    // Strict shifts read the input, causal recursions their own running output.
    const VecX& src = strict ? y : z;
    if (!adj) {
      for (int k = 0; k < n(); ++k) {
        const int p = bodies_[k].parent;
        if (p < 0) continue;
        z.segment<6>(6 * p) += step[k] * src.segment<6>(6 * k);
      }
    } else {
      for (int k = n() - 1; k >= 0; --k) {
        const int p = bodies_[k].parent;
        if (p < 0) continue;
        z.segment<6>(6 * k) += step[k].transpose() * src.segment<6>(6 * p);
      }
    }
    return z;
  }

  const std::vector<Mat6>& phis() const {
    if (phi_steps_.empty()) {
      phi_steps_.resize(n());
      for (int k = 0; k < n(); ++k) phi_steps_[k] = ev_.kin.body[k].phi;
    }
    return phi_steps_;
  }
  mutable std::vector<Mat6> phi_steps_;

  VecX per_body(const Memoryless& m, const VecX& y) const {
    VecX z(ev_.rows(m.out));
    for (int k = 0; k < n(); ++k) {
      const Slot i = slot(ev_, m.in, k), o = slot(ev_, m.out, k);
      z.segment(o.offset, o.size) = m.block(k) * y.segment(i.offset, i.size);
    }
    return z;
  }

  // Defined and Compound symbols are gone (the entry points expand them by the library).
  VecX symbol(const Expr& sym, bool adj, const VecX& y) const {
    if (auto m = memoryless(ev_, sym, adj)) return per_body(*m, y);
    if (sym.is(ir::Sym::phi)) return transfer(phis(), adj, false, y);
    if (sym.is(ir::Sym::psi)) return transfer(ev_.art.psi, adj, false, y);
    if (sym.is(ir::Sym::E_phi)) return transfer(phis(), adj, true, y);
    if (sym.is(ir::Sym::B)) {
      const auto& tips = ev_.kin.tips;
      VecX z = VecX::Zero(adj ? 6 * ev_.m : 6 * n());
      for (int t = 0; t < ev_.m; ++t) {
        if (adj)
          z.segment<6>(6 * t) = tips[t].phi.transpose() * y.segment<6>(6 * tips[t].body);
        else
          z.segment<6>(6 * tips[t].body) += tips[t].phi * y.segment<6>(6 * t);
      }
      return z;
    }
    throw UserError(fmt::format("'{}' is a vector, not an operator: it can only stand last", sym.name()));
  }

  // ---- inverses --------------------------------------------------------------------------

  VecX solve(const Expr& a, const VecX& y) const {
    switch (a.op()) {
      case Op::Identity: return y;
      case Op::Scale: return solve(a.kid(0), y) / a.coef();
      case Op::Symbol:
      case Op::Adjoint: {
        const bool adj = a.is(Op::Adjoint);
        const Expr& s = adj ? a.kid(0) : a;
        if (!s.is(Op::Symbol)) return solve(ir::adjoint_of(s), y);
        if (auto v = solve_symbol(s, adj, y)) return *v;
        break;
      }
      case Op::Product: {
        if (all_square(a)) {  // (F1 ... Fm)^-1 = Fm^-1 ... F1^-1
          VecX z = y;
          for (const auto& f : a.kids()) z = solve(f, z);
          return z;
        }
        break;
      }
      case Op::Sum:
        if (auto v = causal_solve(a, y)) return *v;
        break;
      case Op::Inverse: return apply(a.kid(0), y);
      default: break;
    }
    return solve_by_columns(a, y);
  }

  bool all_square(const Expr& product) const {
    for (const auto& f : product.kids()) {
      if (f.is(Op::Identity)) continue;
      if (!ir::infer_shape(f).square()) return false;
    }
    return true;
  }

  std::optional<VecX> solve_symbol(const Expr& sym, bool adj, const VecX& y) const {
    const std::string& name = sym.name();
    if (sym.info())
      if (const ir::Definition* d = ev_.definitions->of_inverse(sym.info()->id))  // phi^-1 = I - E_phi
        return apply(ev_.definitions->expand(adj ? ir::adjoint_of(d->body) : d->body), y);
    if (sym.is(ir::Sym::D)) {
      VecX z(y.size());
      for (int k = 0; k < n(); ++k) {
        const Slot s = slot(ev_, Dim::Joint, k);
        z.segment(s.offset, s.size) = ev_.art.Dinv[k] * y.segment(s.offset, s.size);
      }
      return z;
    }
    if (auto m = memoryless(ev_, sym, adj); m && m->in == m->out) {
      VecX z(y.size());
      for (int k = 0; k < n(); ++k) {
        const Slot s = slot(ev_, m->in, k);
        Eigen::FullPivLU<MatX> lu(m->block(k));
        if (!lu.isInvertible())
          throw UserError(fmt::format("cannot invert {}: its block at link '{}' is singular", name, bodies_[k].name));
        z.segment(s.offset, s.size) = lu.solve(y.segment(s.offset, s.size));
      }
      return z;
    }
    return std::nullopt;
  }

  // Joint- and tip-space operators with no recursion of their own: apply to the unit
  // vectors (O(N) sweeps of O(n)) and solve the small system. Spatial ones would need a
  // 6n x 6n matrix, which this evaluator never forms.
  VecX solve_by_columns(const Expr& a, const VecX& y) const {
    const ir::Shape s = ir::infer_shape(a);
    if (!s.square() || s.rows == Dim::Spatial)
      throw UserError(
          fmt::format("no sweep form for the inverse of {} ({}); rewrite it first", ir::print(a), ir::to_string(s)));
    const int size = static_cast<int>(y.size());
    MatX A(size, size);
    for (int j = 0; j < size; ++j) A.col(j) = apply(a, VecX::Unit(size, j));
    if (s.rows == Dim::Tip && s.row_arm == 0) return held_inverse(ev_, A, a) * y;
    Eigen::FullPivLU<MatX> lu(A);
    if (!lu.isInvertible()) throw UserError(fmt::format("cannot invert {}: it is singular here", ir::print(a)));
    return lu.solve(y);
  }

  // ---- (s I + X)^-1 for strictly causal X: substitution over the bodies ------------------

  // One factor of a chain: per-body map, or a transfer along the tree edges.
  struct Factor {
    enum Kind { PerBody, Causal, Strict } kind;
    Memoryless map;                           // PerBody
    const std::vector<Mat6>* step = nullptr;  // Causal / Strict
    Dim in, out;
  };
  struct Chain {
    double coef = 1.0;
    std::vector<Factor> f;  // left to right
    int strict = -1;        // rightmost strict factor
  };

  // Split one term of X into factors; nullopt when a factor is not causal (or not
  // anticausal when `outward`) or the term has no strict factor.
  std::optional<Chain> chain_of(const Expr& term, bool outward) const {
    Chain c;
    Expr t = term;
    if (t.is(Op::Scale)) {
      c.coef = t.coef();
      t = t.kid(0);
    }
    std::vector<Expr> factors =
        t.is(Op::Product) ? std::vector<Expr>(t.kids().begin(), t.kids().end()) : std::vector<Expr>{t};
    auto push_transfer = [&](const std::vector<Mat6>& step, bool strict, bool adj) {
      if (adj != outward) return false;
      c.f.push_back({strict ? Factor::Strict : Factor::Causal, {}, &step, Dim::Spatial, Dim::Spatial});
      return true;
    };
    for (const Expr& f0 : factors) {
      if (f0.is(Op::Identity)) continue;
      bool adj = false, inv = false;
      Expr f = f0;
      if (f.is(Op::Inverse)) {
        inv = true;
        f = f.kid(0);
      }
      if (f.is(Op::Adjoint)) {
        adj = true;
        f = f.kid(0);
      }
      if (!f.is(Op::Symbol)) return std::nullopt;
      if (inv) {
        if (!f.is(ir::Sym::D)) return std::nullopt;  // the one memoryless inverse chains need
        c.f.push_back({Factor::PerBody,
                       {Dim::Joint, Dim::Joint, [this](int k) { return ev_.art.Dinv[k]; }},
                       nullptr,
                       Dim::Joint,
                       Dim::Joint});
        continue;
      }
      if (auto m = memoryless(ev_, f, adj)) {
        c.f.push_back({Factor::PerBody, *m, nullptr, m->in, m->out});
        continue;
      }
      bool ok = true;
      if (f.is(ir::Sym::phi))
        ok = push_transfer(phis(), false, adj);
      else if (f.is(ir::Sym::psi))
        ok = push_transfer(ev_.art.psi, false, adj);
      else if (f.is(ir::Sym::E_phi))
        ok = push_transfer(phis(), true, adj);
      else
        return std::nullopt;
      if (!ok) return std::nullopt;
    }
    for (int i = static_cast<int>(c.f.size()) - 1; i >= 0; --i)
      if (c.f[i].kind == Factor::Strict) {
        c.strict = i;
        break;
      }
    if (c.strict < 0) return std::nullopt;
    return c;
  }

  std::optional<VecX> causal_solve(const Expr& sum, const VecX& y) const {
    const auto [s, rest] = ir::identity_part(sum);
    if (s == 0.0 || rest.empty()) return std::nullopt;
    for (bool outward : {false, true}) {
      std::vector<Chain> chains;
      for (const auto& t : rest) {
        auto c = chain_of(t, outward);
        if (!c) break;
        chains.push_back(std::move(*c));
      }
      if (chains.size() == rest.size()) return substitute(s, chains, outward, y, ir::infer_shape(sum).rows);
    }
    return std::nullopt;
  }

  // z = (y - X z) / s, body by body: inward (children first) for causal X, outward for
  // anticausal. out[c][i][k] is factor i's output at body k; factor m's input is z.
  VecX substitute(double s, const std::vector<Chain>& chains, bool outward, const VecX& y, Dim space) const {
    const int N = n();
    std::vector<std::vector<std::vector<VecX>>> out(chains.size());
    for (std::size_t c = 0; c < chains.size(); ++c) out[c].assign(chains[c].f.size() + 1, std::vector<VecX>(N));
    VecX z(y.size());

    // Factor i's own incoming edge sum at body k (children inward, parent outward).
    auto edge_sum = [&](const Chain& ch, std::size_t c, std::size_t i, int k) {
      const Factor& f = ch.f[i];
      const auto& src = out[c][f.kind == Factor::Causal ? i : i + 1];
      Vec6 acc = Vec6::Zero();
      if (!outward) {
        for (int child : bodies_[k].children) acc += (*f.step)[child] * src[child];
      } else if (const int p = bodies_[k].parent; p >= 0) {
        acc = (*f.step)[k].transpose() * src[p];
      }
      return acc;
    };
    auto eval_factor = [&](const Chain& ch, std::size_t c, std::size_t i, int k) {
      const Factor& f = ch.f[i];
      switch (f.kind) {
        case Factor::PerBody: out[c][i][k] = f.map.block(k) * out[c][i + 1][k]; break;
        case Factor::Causal: out[c][i][k] = out[c][i + 1][k] + edge_sum(ch, c, i, k); break;
        case Factor::Strict: out[c][i][k] = edge_sum(ch, c, i, k); break;
      }
    };

    for (int step = 0; step < N; ++step) {
      const int k = outward ? N - 1 - step : step;
      const Slot sl = slot(ev_, space, k);
      VecX Xz = VecX::Zero(sl.size);
      for (std::size_t c = 0; c < chains.size(); ++c) {
        const Chain& ch = chains[c];
        for (int i = ch.strict; i >= 0; --i) eval_factor(ch, c, i, k);
        Xz += ch.coef * out[c][0][k];
      }
      z.segment(sl.offset, sl.size) = (y.segment(sl.offset, sl.size) - Xz) / s;
      for (std::size_t c = 0; c < chains.size(); ++c) {
        const Chain& ch = chains[c];
        out[c][ch.f.size()][k] = z.segment(sl.offset, sl.size);
        for (int i = static_cast<int>(ch.f.size()) - 1; i > ch.strict; --i) eval_factor(ch, c, i, k);
      }
    }
    return z;
  }
};

}  // namespace

namespace {

// Derivatives with respect to q_i have no sweeps here: the dense interpreter's differences
// are their reference (dense.cpp).
void check_no_coordinate(const Expr& e) {
  if (ir::needs_coordinate(e))
    throw UserError(fmt::format("{}: d(...)/dq_i and X_i are evaluated densely only", ir::print(e)));
}

}  // namespace

VecX apply_sweeps(const Evaluation& ev, const Expr& e, const VecX& y) {
  check_no_coordinate(e);
  check_arms(ev, e);
  // Sweeps size a 0 by its input, which is right only for a square one: fold them first.
  const Expr folded = fold_zeros(ev.definitions->expand(e));
  if (folded.is(Op::Zero)) {
    const ir::Shape shape = ir::infer_shape(e);
    return VecX::Zero(rows(ev, shape.rows, shape.row_arm, e));
  }
  return Sweeps(ev).apply(folded, y);
}

MatX eval_sweeps(const Evaluation& ev, const Expr& original) {
  check_no_coordinate(original);
  check_arms(ev, original);
  const ir::Shape shape = ir::infer_shape(original);
  // Sweeps size a 0 by its input, which is right only for a square one: fold them first.
  const Expr e = fold_zeros(ev.definitions->expand(original));
  if (e.is(Op::Zero))
    return MatX::Zero(rows(ev, shape.rows, shape.row_arm, original), rows(ev, shape.cols, shape.col_arm, original));
  const Sweeps sweeps(ev);
  if (shape.rows == Dim::One && shape.cols != Dim::One) {
    return eval_sweeps(ev, ir::adjoint_of(e)).transpose();
  }
  if (shape.cols != Dim::One) {
    const int cols = rows(ev, shape.cols, shape.col_arm, e);
    MatX X(rows(ev, shape.rows, shape.row_arm, e), cols);
    for (int j = 0; j < cols; ++j) X.col(j) = sweeps.apply(e, VecX::Unit(cols, j));
    return X;
  }
  // Is factor `f` a row vector? An I, however wrapped (I^-1*), has no shape of its own but
  // is square, so it is not one.
  const auto row_vector = [](const Expr& f) {
    try {
      return ir::infer_shape(f).rows == Dim::One;
    } catch (const ir::ShapeError&) {
      return false;
    }
  };
  // A vector-valued expression: evaluate its rightmost vector, then apply the rest.
  std::function<VecX(const Expr&)> value = [&](const Expr& x) -> VecX {
    switch (x.op()) {
      case Op::Symbol: return dense_symbol(ev, x);
      case Op::Zero: {
        const ir::Shape z = ir::infer_shape(x);
        return VecX::Zero(rows(ev, z.rows, z.row_arm, x));
      }
      case Op::Scale: return x.coef() * value(x.kid(0));
      case Op::Sum: {
        VecX v = value(x.kid(0));
        for (std::size_t i = 1; i < x.kids().size(); ++i) v += value(x.kid(i));
        return v;
      }
      case Op::Product: {
        const auto kids = x.kids();
        const Expr& first = kids.front();
        const Expr rest = ir::product(std::vector<Expr>(kids.begin() + 1, kids.end()));
        if (row_vector(first))  // a row vector times a vector: a dot product
          return VecX::Constant(1, value(ir::adjoint_of(first)).dot(value(rest)));
        VecX v = value(kids.back());
        for (std::size_t i = kids.size() - 1; i-- > 0;) v = sweeps.apply(kids[i], v);
        return v;
      }
      default: throw UserError(fmt::format("cannot evaluate {} as a vector by sweeps", ir::print(x)));
    }
  };
  return value(e);
}

}  // namespace soa::interp
