#include "algebra/expr.hpp"

#include <functional>
#include <optional>

#include "support/error.hpp"

namespace soa::ir {
namespace {

std::size_t mix(std::size_t h, std::size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

Expr make(Op op, std::string name, double coef, std::vector<Expr> kids, Span span,
          std::optional<Indexed> indexed = std::nullopt) {
  auto n = std::make_shared<Node>();
  n->op = op;
  n->name = std::move(name);
  if (indexed) {
    n->info = indexed->info;
    n->arm = indexed->arm;
  }
  n->coef = coef;
  n->kids = std::move(kids);
  n->span = span;
  std::size_t h = std::hash<int>{}(static_cast<int>(op));
  const std::size_t name_hash = std::hash<std::string>{}(n->name);
  h = mix(h, name_hash);
  h = mix(h, std::hash<double>{}(n->coef));
  if (op == Op::Symbol) n->symbols = std::uint64_t{1} << (name_hash % 64);
  for (const auto& k : n->kids) {
    h = mix(h, k.hash());
    n->size += k.get()->size;
    n->symbols |= k.get()->symbols;
  }
  n->hash = h;
  return Expr(std::move(n));
}

}  // namespace

Op Expr::op() const { return node_->op; }
const std::string& Expr::name() const { return node_->name; }
double Expr::coef() const { return node_->coef; }
std::span<const Expr> Expr::kids() const { return node_->kids; }
Span Expr::span() const { return node_->span; }
std::size_t Expr::hash() const { return node_->hash; }
bool Expr::is_symbol(std::string_view n) const { return op() == Op::Symbol && name() == n; }
const SymbolInfo* Expr::info() const { return node_->info; }
int Expr::arm() const { return node_->arm; }
bool Expr::is(Sym s) const { return node_->info && node_->info->id == s; }

bool operator==(const Expr& a, const Expr& b) {
  if (a.node_ == b.node_) return true;
  if (!a.node_ || !b.node_) return false;
  if (a.hash() != b.hash() || a.op() != b.op() || a.name() != b.name() || a.coef() != b.coef() ||
      a.kids().size() != b.kids().size())
    return false;
  for (std::size_t i = 0; i < a.kids().size(); ++i)
    if (a.kid(i) != b.kid(i)) return false;
  return true;
}

Expr symbol(std::string name, Span span) {
  SOA_ASSERT(!name.empty(), "symbol without a name");
  const auto indexed = lookup_indexed(name);
  return make(Op::Symbol, std::move(name), 1.0, {}, span, indexed);
}

Expr symbol(Sym s, int arm) { return symbol(indexed_name(name_of(s), arm)); }

Expr identity(Span span) { return make(Op::Identity, "", 1.0, {}, span); }
Expr zero(Span span) { return make(Op::Zero, "", 1.0, {}, span); }

Expr sum(std::vector<Expr> terms, Span span) {
  std::vector<Expr> flat;
  for (auto& t : terms) {
    SOA_ASSERT(static_cast<bool>(t), "null term in sum");
    if (t.is(Op::Sum))
      flat.insert(flat.end(), t.kids().begin(), t.kids().end());
    else
      flat.push_back(std::move(t));
  }
  SOA_ASSERT(!flat.empty(), "empty sum");
  if (flat.size() == 1) return flat.front();
  return make(Op::Sum, "", 1.0, std::move(flat), span);
}

Expr product(std::vector<Expr> factors, Span span) {
  std::vector<Expr> flat;
  for (auto& f : factors) {
    SOA_ASSERT(static_cast<bool>(f), "null factor in product");
    if (f.is(Op::Product))
      flat.insert(flat.end(), f.kids().begin(), f.kids().end());
    else
      flat.push_back(std::move(f));
  }
  SOA_ASSERT(!flat.empty(), "empty product");
  if (flat.size() == 1) return flat.front();
  return make(Op::Product, "", 1.0, std::move(flat), span);
}

Expr scale(double c, Expr e, Span span) {
  SOA_ASSERT(static_cast<bool>(e), "null operand of scale");
  if (e.is(Op::Scale)) return scale(c * e.coef(), e.kid(0), span);
  if (c == 1.0) return e;
  return make(Op::Scale, "", c, {std::move(e)}, span);
}

Expr neg(Expr e, Span span) { return scale(-1.0, std::move(e), span); }

Expr adjoint(Expr e, Span span) {
  SOA_ASSERT(static_cast<bool>(e), "null operand of adjoint");
  if (e.is(Op::Adjoint)) return e.kid(0);
  return make(Op::Adjoint, "", 1.0, {std::move(e)}, span);
}

Expr inverse(Expr e, Span span) {
  SOA_ASSERT(static_cast<bool>(e), "null operand of inverse");
  if (e.is(Op::Inverse)) return e.kid(0);
  return make(Op::Inverse, "", 1.0, {std::move(e)}, span);
}

Expr derivative(Expr e, Span span) {
  SOA_ASSERT(static_cast<bool>(e), "null operand of a derivative");
  return make(Op::Derivative, "", 1.0, {std::move(e)}, span);
}

Expr sub(Expr a, Expr b, Span span) { return sum({std::move(a), neg(std::move(b))}, span); }

Expr rebuild(const Expr& e, std::vector<Expr> kids) {
  switch (e.op()) {
    case Op::Sum: return sum(std::move(kids));
    case Op::Product: return product(std::move(kids));
    case Op::Scale: return scale(e.coef(), std::move(kids.at(0)));
    case Op::Adjoint: return adjoint(std::move(kids.at(0)));
    case Op::Inverse: return inverse(std::move(kids.at(0)));
    case Op::Derivative: return derivative(std::move(kids.at(0)));
    default: return e;
  }
}

Expr copy(const Expr& e) {
  std::vector<Expr> kids;
  for (const Expr& k : e.kids()) kids.push_back(copy(k));
  return make(e.op(), e.name(), e.coef(), std::move(kids), e.span(),
              e.is(Op::Symbol) ? lookup_indexed(e.name()) : std::nullopt);
}

Expr with_span(const Expr& e, Span span) {
  std::vector<Expr> kids(e.kids().begin(), e.kids().end());
  return make(e.op(), e.name(), e.coef(), std::move(kids), span);
}

std::size_t node_count(const Expr& e) { return e.get()->size; }

bool mentions(const Expr& e, std::string_view name) {
  if (e.is_symbol(name)) return true;
  for (const auto& k : e.kids())
    if (mentions(k, name)) return true;
  return false;
}

IdentityPart identity_part(const Expr& sum) {
  IdentityPart p;
  for (const Expr& t : sum.kids()) {
    if (t.is(Op::Identity))
      p.s += 1.0;
    else if (t.is(Op::Scale) && t.kid(0).is(Op::Identity))
      p.s += t.coef();
    else
      p.rest.push_back(t);
  }
  return p;
}

bool mentions(const Expr& e, Sym s) {
  if (e.is(s)) return true;
  for (const auto& k : e.kids())
    if (mentions(k, s)) return true;
  return false;
}

bool needs_coordinate(const Expr& e) {
  if (e.is(Op::Derivative) || e.is(Sym::X_i)) return true;
  for (const auto& k : e.kids())
    if (needs_coordinate(k)) return true;
  return false;
}

}  // namespace soa::ir
