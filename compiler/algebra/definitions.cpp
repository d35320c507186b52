#include "algebra/definitions.hpp"

#include <algorithm>

#include "algebra/arms.hpp"
#include "support/error.hpp"

namespace soa::ir {

void Definitions::add(const Expr& lhs, Expr body, Cited source) {
  const bool inverse = lhs.is(Op::Inverse);
  const Expr& s = inverse ? lhs.kid(0) : lhs;
  SOA_ASSERT(s.is(Op::Symbol) && s.info() && s.arm() == 0, "a definition of something other than a symbol");
  auto& slot = (inverse ? inverse_ : plain_).at(static_cast<std::size_t>(s.info()->id));
  SOA_ASSERT(!slot, "a symbol defined twice");
  slot = Definition{std::move(body), std::move(source)};
}

const Definition* Definitions::of(Sym s) const {
  const auto& slot = plain_.at(static_cast<std::size_t>(s));
  return slot ? &*slot : nullptr;
}

const Definition* Definitions::of_inverse(Sym s) const {
  const auto& slot = inverse_.at(static_cast<std::size_t>(s));
  return slot ? &*slot : nullptr;
}

std::optional<Expr> Definitions::expand_symbol(const Expr& e, bool adjoint) const {
  if (!e.is(Op::Symbol) || !e.info()) return std::nullopt;
  const Definition* d = of(e.info()->id);
  if (!d) return std::nullopt;
  const Expr body = e.arm() > 0 ? on_arm(d->body, e.arm()) : d->body;
  return adjoint ? adjoint_of(body) : body;
}

Expr Definitions::expand(const Expr& e, std::span<const Role> keep) const {
  switch (e.op()) {
    case Op::Symbol: {
      if (e.info() && std::find(keep.begin(), keep.end(), e.info()->role) != keep.end()) return e;
      const auto body = expand_symbol(e);
      return body ? expand(*body, keep) : e;
    }
    case Op::Identity:
    case Op::Zero: return e;
    case Op::Scale: return scale(e.coef(), expand(e.kid(0), keep));
    case Op::Adjoint: return adjoint_of(expand(e.kid(0), keep));
    case Op::Inverse: return inverse(expand(e.kid(0), keep));
    case Op::Derivative: return derivative(expand(e.kid(0), keep));
    case Op::Sum:
    case Op::Product: {
      std::vector<Expr> kids;
      for (const Expr& k : e.kids()) kids.push_back(expand(k, keep));
      return rebuild(e, std::move(kids));
    }
  }
  throw InternalError("expand: unknown IR node");
}

void Definitions::fill_from(const Definitions& other) {
  for (std::size_t i = 0; i < kSymCount; ++i) {
    if (!plain_[i]) plain_[i] = other.plain_[i];
    if (!inverse_[i]) inverse_[i] = other.inverse_[i];
  }
}

std::vector<Sym> Definitions::missing() const {
  std::vector<Sym> out;
  for (const SymbolInfo& s : vocabulary())
    if ((s.role == Role::Defined || s.role == Role::Compound) && !of(s.id)) out.push_back(s.id);
  return out;
}

Expr adjoint_of(const Expr& e) {
  switch (e.op()) {
    case Op::Symbol: return e.info() && e.info()->symmetric ? e : adjoint(e);
    case Op::Identity:
    case Op::Zero: return e;
    case Op::Scale: return scale(e.coef(), adjoint_of(e.kid(0)));
    case Op::Adjoint: return e.kid(0);
    case Op::Inverse: return inverse(adjoint_of(e.kid(0)));
    case Op::Derivative: return derivative(adjoint_of(e.kid(0)));  // (d a)* = d(a*)
    case Op::Sum: {
      std::vector<Expr> t;
      for (const Expr& k : e.kids()) t.push_back(adjoint_of(k));
      return sum(std::move(t));
    }
    case Op::Product: {
      std::vector<Expr> f;
      for (auto it = e.kids().rbegin(); it != e.kids().rend(); ++it) f.push_back(adjoint_of(*it));
      return product(std::move(f));
    }
  }
  throw InternalError("adjoint_of: unknown IR node");
}

}  // namespace soa::ir
