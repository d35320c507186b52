#include "algebra/shape.hpp"

#include <fmt/format.h>

#include <vector>

#include "algebra/print.hpp"

namespace soa::ir {
namespace {

// A space: a dimension and the arm it belongs to (shape.hpp).
struct Space {
  Dim dim = Dim::One;
  int arm = 0;
  friend bool operator==(const Space&, const Space&) = default;
};

// A dimension that is either known or a unification variable (the size of an I or 0).
struct Term {
  int var = -1;
  Space space;
};

struct Inferred {
  Term rows, cols;
};

Span join(Span a, Span b) {
  if (!a.known()) return b;
  if (!b.known()) return a;
  return {std::min(a.begin, b.begin), std::max(a.end, b.end)};
}

class Inference {
public:
  Inferred infer(const Expr& e) {
    switch (e.op()) {
      case Op::Symbol: {
        const auto found = lookup_indexed(e.name());
        if (!found) throw ShapeError(fmt::format("unknown name '{}'", e.name()), e.span());
        const SymbolInfo& info = *found->info;
        return {{-1, {info.rows, dim_arm(info.rows, found->arm)}}, {-1, {info.cols, dim_arm(info.cols, found->arm)}}};
      }
      case Op::Identity: {
        const Term v = fresh();
        return {v, v};
      }
      case Op::Zero: return {fresh(), fresh()};
      case Op::Scale:
      case Op::Derivative: return infer(e.kid(0));
      case Op::Adjoint: {
        const Inferred k = infer(e.kid(0));
        return {k.cols, k.rows};
      }
      case Op::Inverse: {
        const Inferred k = infer(e.kid(0));
        if (!unify(k.rows, k.cols))
          throw ShapeError(fmt::format("{} is {}, not square, so it has no inverse", print(e.kid(0)), show(k)),
                           e.span().known() ? e.span() : e.kid(0).span());
        return k;
      }
      case Op::Sum: {
        const Inferred first = infer(e.kid(0));
        Span so_far = e.kid(0).span();
        for (std::size_t i = 1; i < e.kids().size(); ++i) {
          const Expr& t = e.kid(i);
          const Inferred next = infer(t);
          const std::string before = show(first);
          if (!unify(first.rows, next.rows) || !unify(first.cols, next.cols))
            throw ShapeError(fmt::format("cannot add {} ({}) and {} ({})", print(e.kid(0)), before,
                                         print(strip_sign(t)), show(next)),
                             join(so_far, t.span()));
          so_far = join(so_far, t.span());
        }
        return first;
      }
      case Op::Product: {
        Inferred acc = infer(e.kid(0));
        Span so_far = e.kid(0).span();
        for (std::size_t i = 1; i < e.kids().size(); ++i) {
          const Expr& f = e.kid(i);
          const Inferred next = infer(f);
          if (!unify(acc.cols, next.rows)) {
            const Expr left = i == 1 ? e.kid(0) : product(std::vector<Expr>(e.kids().begin(), e.kids().begin() + i));
            throw ShapeError(fmt::format("cannot multiply {} ({}) by {} ({}): {} columns but {} rows", print(left),
                                         show(acc), print(f), show(next), show_dim(acc.cols), show_dim(next.rows)),
                             join(e.kid(i - 1).span(), f.span()));
          }
          acc.cols = next.cols;
          so_far = join(so_far, f.span());
        }
        return acc;
      }
    }
    throw ShapeError("malformed expression", e.span());
  }

  std::optional<Space> resolve(Term t) {
    if (t.var < 0) return t.space;
    const int r = find(t.var);
    return value_[r];
  }

private:
  std::vector<int> parent_;
  std::vector<std::optional<Space>> value_;

  static Expr strip_sign(const Expr& t) { return t.is(Op::Scale) ? t.kid(0) : t; }

  Term fresh() {
    parent_.push_back(static_cast<int>(parent_.size()));
    value_.emplace_back();
    return {static_cast<int>(parent_.size()) - 1, {}};
  }

  int find(int v) {
    while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
    return v;
  }

  bool unify(Term a, Term b) {
    const std::optional<Space> va = resolve(a), vb = resolve(b);
    if (va && vb) return *va == *vb;
    if (a.var >= 0 && b.var >= 0) {
      const int ra = find(a.var), rb = find(b.var);
      if (ra != rb) {
        parent_[ra] = rb;
        if (!value_[rb]) value_[rb] = value_[ra];
      }
      return true;
    }
    if (a.var >= 0)
      value_[find(a.var)] = *vb;
    else
      value_[find(b.var)] = *va;
    return true;
  }

  std::string show_dim(Term t) {
    const auto d = resolve(t);
    return d ? to_string(d->dim, d->arm) : "any";
  }

  std::string show(const Inferred& s) { return show_dim(s.rows) + " x " + show_dim(s.cols); }
};

Shape finish(Inference& inf, const Inferred& s, const Expr& e) {
  const auto r = inf.resolve(s.rows), c = inf.resolve(s.cols);
  if (!r || !c)
    throw ShapeError(fmt::format("cannot tell the size of {}: nothing around it fixes it", print(e)), e.span());
  return {r->dim, c->dim, r->arm, c->arm};
}

}  // namespace

int dim_arm(Dim d, int arm) {
  if (arm == 0 || d == Dim::One) return 0;
  return d == Dim::Tip ? kArmTips : arm;
}

std::string to_string(Dim d, int arm) {
  if (arm == kArmTips) return std::string(to_string(d)) + "_i";
  if (arm > 0) return fmt::format("{}{}", to_string(d), arm);
  return std::string(to_string(d));
}

std::string to_string(const Shape& s) {
  return fmt::format("{} x {}", to_string(s.rows, s.row_arm), to_string(s.cols, s.col_arm));
}

bool tip_square(const Expr& e) {
  try {
    const Shape s = infer_shape(e);
    return s.rows == Dim::Tip && s.cols == Dim::Tip;
  } catch (const ShapeError&) {
    return false;
  }
}

Shape infer_shape(const Expr& e) {
  Inference inf;
  const Inferred s = inf.infer(e);
  return finish(inf, s, e);
}

Shape check_equation(const Expr& lhs, const Expr& rhs) {
  Inference inf;
  const Inferred l = inf.infer(lhs);
  const Inferred r = inf.infer(rhs);
  const auto lr = inf.resolve(l.rows), lc = inf.resolve(l.cols);
  const auto rr = inf.resolve(r.rows), rc = inf.resolve(r.cols);
  auto differ = [](std::optional<Space> a, std::optional<Space> b) { return a && b && *a != *b; };
  if (differ(lr, rr) || differ(lc, rc)) {
    auto text = [](std::optional<Space> a) { return a ? to_string(a->dim, a->arm) : "any"; };
    auto show = [&](std::optional<Space> a, std::optional<Space> b) {
      return fmt::format("{} x {}", text(a), text(b));
    };
    throw ShapeError(fmt::format("the two sides differ in shape: {} is {} but {} is {}", print(lhs), show(lr, lc),
                                 print(rhs), show(rr, rc)),
                     rhs.span());
  }
  // Unify across the equals sign so that an I on one side takes the other side's size.
  auto either = [&](std::optional<Space> a, std::optional<Space> b) {
    if (!a && !b) throw ShapeError("cannot tell the size of either side", lhs.span());
    return a ? *a : *b;
  };
  const Space rows = either(lr, rr), cols = either(lc, rc);
  return {rows.dim, cols.dim, rows.arm, cols.arm};
}

}  // namespace soa::ir
