#include "algebra/arms.hpp"

#include <algorithm>

#include "algebra/vocabulary.hpp"
#include "support/error.hpp"

namespace soa::ir {
namespace {

// Calls f(arm) for every symbol of e.
template <typename F>
void for_each_arm(const Expr& e, const F& f) {
  if (e.is(Op::Symbol)) f(arm_of(e.name()));
  for (const auto& k : e.kids()) for_each_arm(k, f);
}

}  // namespace

int arm_of(std::string_view name) {
  const auto found = lookup_indexed(name);
  return found ? found->arm : 0;
}

std::string base_name(std::string_view name) {
  const auto found = lookup_indexed(name);
  return found ? std::string(found->info->name) : std::string(name);
}

Expr on_arm(const Expr& e, int arm) {
  std::vector<Expr> kids;
  for (const auto& k : e.kids()) kids.push_back(on_arm(k, arm));
  switch (e.op()) {
    case Op::Symbol: {
      const auto found = lookup_indexed(e.name());
      if (!found) return e;
      return symbol(indexed_name(found->info->name, arm), e.span());
    }
    case Op::Identity:
    case Op::Zero: return e;
    case Op::Sum: return sum(std::move(kids), e.span());
    case Op::Product: return product(std::move(kids), e.span());
    case Op::Scale: return scale(e.coef(), kids.front(), e.span());
    case Op::Adjoint: return adjoint(kids.front(), e.span());
    case Op::Inverse: return inverse(kids.front(), e.span());
    case Op::Derivative: return derivative(kids.front(), e.span());
  }
  SOA_ASSERT(false, "on_arm: unknown node kind");
  return e;
}

std::vector<int> arms_in(const Expr& e) {
  std::vector<int> arms;
  for_each_arm(e, [&](int a) {
    if (a > 0 && std::find(arms.begin(), arms.end(), a) == arms.end()) arms.push_back(a);
  });
  std::sort(arms.begin(), arms.end());
  return arms;
}

bool mentions_whole_robot(const Expr& e) {
  bool whole = false;
  for_each_arm(e, [&](int a) { whole = whole || a == 0; });
  return whole;
}

int single_arm(const Expr& e) {
  int arm = -1;  // -1: no symbol yet
  bool mixed = false;
  for_each_arm(e, [&](int a) {
    if (arm < 0)
      arm = a;
    else if (a != arm)
      mixed = true;
  });
  return mixed || arm < 0 ? 0 : arm;
}

}  // namespace soa::ir
