#include "rewrite/cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "algebra/arms.hpp"
#include "algebra/print.hpp"
#include "algebra/vocabulary.hpp"

namespace soa::rewrite {
namespace {

using ir::Expr;
using ir::Op;

// ---- causality as the set of block parts a matrix may have ------------------------------

struct Parts {
  bool diag = false, lower = false, upper = false;
};

Parts parts_of(ir::Structure s) {
  switch (s) {
    case ir::Structure::Memoryless:
    case ir::Structure::PickOff:
    case ir::Structure::Vector: return {true, false, false};
    case ir::Structure::Causal: return {true, true, false};
    case ir::Structure::StrictlyCausal: return {false, true, false};
    case ir::Structure::Full: return {true, true, true};
  }
  return {true, true, true};
}

// Block parts of a product: diag x X = X, lower x lower = lower, lower x upper = all.
Parts times(Parts a, Parts b) {
  Parts r;
  auto add = [&r](bool d, bool l, bool u) {
    r.diag |= d;
    r.lower |= l;
    r.upper |= u;
  };
  if (a.diag && b.diag) add(true, false, false);
  if ((a.diag && b.lower) || (a.lower && b.diag) || (a.lower && b.lower)) add(false, true, false);
  if ((a.diag && b.upper) || (a.upper && b.diag) || (a.upper && b.upper)) add(false, false, true);
  if ((a.lower && b.upper) || (a.upper && b.lower)) add(true, true, true);
  return r;
}

Parts parts(const Expr& e) {
  switch (e.op()) {
    case Op::Symbol: return e.info() ? parts_of(e.info()->structure) : Parts{true, true, true};
    case Op::Identity: return {true, false, false};
    case Op::Zero: return {};
    case Op::Scale: return parts(e.kid(0));
    case Op::Derivative: return {true, true, true};  // d(a)/dq_i: no structure assumed
    case Op::Adjoint: {
      const Parts p = parts(e.kid(0));
      return {p.diag, p.upper, p.lower};
    }
    case Op::Inverse: {
      // The inverse of a block triangular matrix is block triangular with the same
      // orientation (and has a diagonal); a strictly triangular one is singular.
      const Parts p = parts(e.kid(0));
      if (p.lower && p.upper) return {true, true, true};
      return {true, p.lower, p.upper};
    }
    case Op::Sum: {
      Parts r;
      for (const auto& t : e.kids()) {
        const Parts p = parts(t);
        r.diag |= p.diag;
        r.lower |= p.lower;
        r.upper |= p.upper;
      }
      return r;
    }
    case Op::Product: {
      Parts r{true, false, false};
      for (const auto& f : e.kids()) r = times(r, parts(f));
      return r;
    }
  }
  return {true, true, true};
}

Causality classify(Parts p) {
  if (p.lower && p.upper) return Causality::Full;
  if (p.lower) return p.diag ? Causality::Causal : Causality::StrictlyCausal;
  if (p.upper) return p.diag ? Causality::Anticausal : Causality::StrictlyAnticausal;
  return Causality::Memoryless;
}

bool is_square(const Expr& e) {
  try {
    return ir::infer_shape(e).square();
  } catch (const ir::ShapeError&) {
    return false;
  }
}

// c I + (terms all strictly causal, or all strictly anticausal), c != 0: unipotent up to
// the factor c, hence invertible (reference 3: phi = (I - E_phi)^-1 is the model case).
bool unipotent_sum(const Expr& e) {
  if (!e.is(Op::Sum)) return false;
  int identities = 0;
  Parts rest;
  for (const auto& t : e.kids()) {
    const Expr& body = t.is(Op::Scale) ? t.kid(0) : t;
    if (body.is(Op::Identity)) {
      ++identities;
      continue;
    }
    const Parts p = parts(body);
    rest.diag |= p.diag;
    rest.lower |= p.lower;
    rest.upper |= p.upper;
  }
  return identities == 1 && !rest.diag && !(rest.lower && rest.upper);
}

// ---- costs --------------------------------------------------------------------------------

struct Acc {
  int fixed_order = 0;  // one-time work independent of the columns (dense factorisation)
  int dense = 0;        // how many such factorisations
  int sweeps = 0;
  int opaque = 0;
  double flops = 0.0;
  Acc& operator+=(const Acc& o) {
    fixed_order = std::max(fixed_order, o.fixed_order);
    dense += o.dense;
    sweeps += o.sweeps;
    opaque += o.opaque;
    flops += o.flops;
    return *this;
  }
};

constexpr double kVectorOp = 6.0;       // adding or scaling a 6-vector per body
constexpr double kSubstitution = 36.0;  // bookkeeping of an implicit (substitution) sweep
constexpr double kSmallSolve = 36.0;    // forming and factoring a tip-space matrix, per body

// Prices an expression: each symbol by its vocabulary weight, a Defined operator by its
// library definition.
struct Pricer {
  const ir::Definitions& definitions;

  // An arm's symbol costs what its base costs (vocabulary.hpp): psi1 is one sweep over arm 1.
  // A Defined operator counts as opaque until the rewriter removes it.
  Acc symbol_cost(const Expr& s, bool adjoint) const {
    const ir::SymbolInfo* info = s.info();
    if (!info) return Acc{.flops = 36};
    if (info->role == ir::Role::Defined)  // operators and vectors (C) alike
      if (const auto def = definitions.expand_symbol(s, adjoint)) {
        Acc a = apply_cost(*def);
        a.opaque += 1;
        return a;
      }
    if (info->structure == ir::Structure::Vector) return {};  // an input or a model quantity
    Acc a;
    a.flops = info->flops;
    if (info->recursive) a.sweeps = 1;
    return a;
  }

  Acc inverse_cost(const Expr& k) const {
    const Expr& base = k.is(Op::Adjoint) ? k.kid(0) : k;
    if (base.is(Op::Symbol) && base.info())
      if (const ir::Definition* d = definitions.of_inverse(base.info()->id))
        return apply_cost(ir::on_arm(d->body, base.arm()));  // phi^-1 = I - E_phi: no recursion
    // A tip-space matrix (J calM^-1 J*, 6m x 6m): its 6m columns by its own sweeps, then a
    // dense factorisation whose size does not grow with N (000 eq. 5.11: O(n1 + n2)).
    if (ir::tip_square(k)) {
      Acc a = apply_cost(k);
      a.flops += kSmallSolve;
      return a;
    }
    const Causality c = classify(parts(k));
    if (c == Causality::Memoryless) {
      Acc a = apply_cost(k);  // per-body solve with a factor formed once per body
      a.flops += 1;
      return a;
    }
    if (c == Causality::Causal || c == Causality::Anticausal) {
      Acc a = apply_cost(k);  // forward (backward) substitution over the bodies
      a.sweeps = std::max(1, a.sweeps);
      a.flops += kSubstitution;
      return a;
    }
    Acc a;  // dense: form the matrix (O(N^2)) and factor it (O(N^3))
    a.fixed_order = 3;
    a.dense = 1;
    return a;
  }

  Acc apply_cost(const Expr& e) const {
    switch (e.op()) {
      case Op::Symbol: return symbol_cost(e, false);
      case Op::Identity:
      case Op::Zero: return {};
      case Op::Adjoint: {
        if (e.kid(0).is(Op::Symbol)) return symbol_cost(e.kid(0), true);
        return apply_cost(e.kid(0));  // not normalised: same work, other direction
      }
      case Op::Inverse: return inverse_cost(e.kid(0));
      case Op::Derivative: {
        // No sweep applies a derivative: priced as the interpreter forms it, the operand's
        // work at the four points of its differences (interp/dense.cpp), then densely.
        const Acc k = apply_cost(e.kid(0));
        Acc a;
        a.fixed_order = 3;
        a.dense = 1 + 4 * k.dense;
        a.sweeps = 4 * k.sweeps;
        a.opaque = 4 * k.opaque;
        a.flops = 4 * k.flops;
        return a;
      }
      case Op::Scale: {
        Acc a = apply_cost(e.kid(0));
        a.flops += kVectorOp;
        return a;
      }
      case Op::Sum: {
        // A term -x is a subtraction: as cheap as an addition.
        Acc a;
        for (const auto& t : e.kids())
          a += t.is(Op::Scale) && std::fabs(t.coef()) == 1.0 ? apply_cost(t.kid(0)) : apply_cost(t);
        a.flops += kVectorOp * static_cast<double>(e.kids().size() - 1);
        return a;
      }
      case Op::Product: {
        // A vector-valued product whose right part was priced before (the same operators
        // applied to the same vector elsewhere in the expression) costs its left part only:
        // the lowering's statements and the specialiser's CSE compute it once.
        const auto kids = e.kids();
        std::size_t shared = kids.size();
        if (priced && is_vector(kids.back())) {
          std::vector<std::size_t> h(kids.size());  // h[i]: hash of the right part kids[i..]
          h.back() = kids.back().hash();
          for (std::size_t i = kids.size() - 1; i-- > 0;) h[i] = h[i + 1] * 1000003u ^ kids[i].hash();
          for (std::size_t i = 0; i + 1 < kids.size() && shared == kids.size(); ++i) {
            for (const RightPart& p : *priced) {
              if (p.hash != h[i]) continue;
              const auto other = p.product.kids().subspan(p.from);
              if (std::equal(other.begin(), other.end(), kids.begin() + static_cast<std::ptrdiff_t>(i), kids.end())) {
                shared = i;
                break;
              }
            }
          }
          for (std::size_t i = 0; i < shared && i + 1 < kids.size(); ++i) priced->push_back({h[i], e, i});
        }
        Acc a;
        for (std::size_t i = 0; i < shared; ++i) a += apply_cost(kids[i]);
        return a;
      }
    }
    return {};
  }

  // The right parts of vector-valued products priced so far: product.kids()[from..] (a
  // few dozen per expression: a flat list is the cheapest to fill and to scan).
  struct RightPart {
    std::size_t hash;
    Expr product;
    std::size_t from;
  };
  std::vector<RightPart>* priced = nullptr;

  static bool is_vector(const Expr& e) {
    switch (e.op()) {
      case Op::Symbol: return e.info() && e.info()->structure == ir::Structure::Vector;
      case Op::Scale: return is_vector(e.kid(0));
      case Op::Sum: return !e.kids().empty() && is_vector(e.kid(0));
      case Op::Product: return !e.kids().empty() && is_vector(e.kids().back());
      default: return false;
    }
  }
};

}  // namespace

bool same_cost(const Cost& a, const Cost& b) {
  return a.order == b.order && a.dense == b.dense && a.sweeps == b.sweeps && a.opaque == b.opaque &&
         std::fabs(a.flops - b.flops) <= 1e-9 * std::max(1.0, std::fabs(a.flops));
}

bool operator<(const Cost& a, const Cost& b) {
  if (a.order != b.order) return a.order < b.order;
  if (a.dense != b.dense) return a.dense < b.dense;
  if (a.sweeps != b.sweeps) return a.sweeps < b.sweeps;
  if (a.opaque != b.opaque) return a.opaque < b.opaque;
  if (same_cost(a, b)) return false;
  return a.flops < b.flops;
}

std::string to_string(const Cost& c) {
  std::string order = fmt::format("O(N^{})", c.order);
  if (c.order <= 1) order = c.order == 0 ? "O(1)" : "O(N)";
  if (c.dense > 1) order += fmt::format(" x {}", c.dense);
  std::string s = fmt::format("{}, {} sweep{}, {} flops/body", order, c.sweeps, c.sweeps == 1 ? "" : "s",
                              ir::format_number(c.flops));
  if (c.opaque > 0) s += fmt::format(", {} opaque", c.opaque);
  return s;
}

Cost cost(const ir::Expr& e, const ir::Definitions& definitions, std::optional<ir::Shape> shape) {
  std::vector<Pricer::RightPart> priced;
  priced.reserve(64);
  Pricer pricer{definitions};
  pricer.priced = &priced;
  const Acc a = pricer.apply_cost(e);
  if (!shape) {
    try {
      shape = ir::infer_shape(e);
    } catch (const ir::ShapeError&) {
      shape = ir::Shape{ir::Dim::One, ir::Dim::One};
    }
  }
  const bool many_columns = shape->cols == ir::Dim::Joint || shape->cols == ir::Dim::Spatial;
  const bool work = a.sweeps > 0 || a.flops > 0;
  Cost c;
  c.order = std::max(a.fixed_order, work ? 1 + (many_columns ? 1 : 0) : 0);
  c.dense = a.dense;
  c.sweeps = a.sweeps;
  c.opaque = a.opaque;
  c.flops = a.flops;
  return c;
}

Causality causality(const ir::Expr& e) { return classify(parts(e)); }

bool known_invertible(const ir::Expr& e) {
  switch (e.op()) {
    case Op::Identity: return true;
    case Op::Zero:
    case Op::Derivative: return false;
    case Op::Symbol: return e.info() && e.info()->invertible;
    case Op::Adjoint:
    case Op::Inverse: return known_invertible(e.kid(0));
    case Op::Scale: return e.coef() != 0.0 && known_invertible(e.kid(0));
    case Op::Product:
      return std::all_of(e.kids().begin(), e.kids().end(),
                         [](const Expr& f) { return is_square(f) && known_invertible(f); });
    case Op::Sum: return unipotent_sum(e);
  }
  return false;
}

}  // namespace soa::rewrite
