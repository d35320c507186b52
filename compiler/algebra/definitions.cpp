#include "algebra/definitions.hpp"

#include "algebra/vocabulary.hpp"
#include "support/error.hpp"

namespace soa::ir {

Expr definition(std::string_view name) {
  const auto s = [](const char* n) { return symbol(n); };
  const auto star = [](const char* n) { return adjoint(symbol(n)); };
  if (name == "calM") return product({s("H"), s("phi"), s("M"), star("phi"), star("H")});
  if (name == "C") return product({s("H"), s("phi"), sum({product({s("M"), star("phi"), s("a")}), s("b")})});
  if (name == "J") return product({star("B"), star("phi"), star("H")});
  if (name == "Omega") return product({star("psi"), star("H"), inverse(s("D")), s("H"), s("psi")});
  if (name == "alpha") return product({star("phi"), sum({product({star("H"), s("qdd")}), s("a")})});
  return {};
}

Expr adjoint_of(const Expr& e) {
  switch (e.op()) {
    case Op::Symbol: {
      const SymbolInfo* info = lookup(e.name());
      return info && info->symmetric ? e : adjoint(e);
    }
    case Op::Identity:
    case Op::Zero: return e;
    case Op::Scale: return scale(e.coef(), adjoint_of(e.kid(0)));
    case Op::Adjoint: return e.kid(0);
    case Op::Inverse: return inverse(adjoint_of(e.kid(0)));
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
