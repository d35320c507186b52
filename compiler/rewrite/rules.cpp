// Rules as data: the identity library read as directed rewrite rules (rewrite.hpp).
//
// Like egg's rw!("name"; lhs => rhs) and MLIR's DRR patterns, a rule is a name, a
// citation and two canonical expressions; guards say when it may fire. The engine adds no
// identity of its own: everything comes from grammar/identities.soa.
#include <algorithm>
#include <set>

#include "algebra/vocabulary.hpp"
#include "rewrite/rewrite.hpp"

namespace soa::rewrite {
namespace {

using ir::Expr;
using ir::Op;

struct Attributes {
  bool serial = false;
  bool known_false = false;
  bool ltr = true, rtl = true;
  bool definition = false;  // S0 is a symbol and S1 what it means
};

Attributes read_attributes(const std::vector<std::string>& attributes) {
  Attributes a;
  for (const auto& s : attributes) {
    if (s == "serial")
      a.serial = true;
    else if (s == "false")
      a.known_false = true;
    else if (s == "rewrite=ltr")
      a.rtl = false;
    else if (s == "rewrite=rtl")
      a.ltr = false;
    else if (s == "rewrite=none")
      a.ltr = a.rtl = false;
    else if (s == "definition")
      a.definition = true;
    // "rewrite=both" and attributes of other stages change nothing here.
  }
  return a;
}

void vectors_in(const Expr& e, std::set<std::string>& out) {
  if (e.is(Op::Symbol) && e.info() && e.info()->structure == ir::Structure::Vector) out.insert(e.name());
  for (const auto& k : e.kids()) vectors_in(k, out);
}

// State vectors are the inputs of the algorithm an expression describes. A rule that makes
// one appear (EOM read either way turns calM^-1 (T - C) into qdd, def-C reversed folds
// H phi (M phi* a + b) into C) is true of the interpreter's state but describes a
// different, circular computation, so the search does not use it unless asked to. Writing
// a defined vector out by its library definition (def-C: C = H phi (M phi* a + b)) is no
// such thing: it is what the vector means, and the rewriter's to use when it pays.
bool introduces_vector(const Expr& lhs, const Expr& rhs) {
  std::set<std::string> l, r;
  vectors_in(lhs, l);
  vectors_in(rhs, r);
  return !std::includes(l.begin(), l.end(), r.begin(), r.end());
}

std::string rule_name(const std::string& identity, std::size_t from, std::size_t to) {
  if (from == 0 && to == 1) return identity;
  if (from == 1 && to == 0) return identity + " (reversed)";
  return identity + " (" + std::to_string(from + 1) + " -> " + std::to_string(to + 1) + ")";
}

bool usable(const Expr& lhs, const Expr& rhs) {
  if (lhs == rhs) return false;
  return !lhs.is(Op::Identity) && !lhs.is(Op::Zero);
}

bool known(const std::vector<Rule>& rules, const Expr& lhs, const Expr& rhs) {
  return std::any_of(rules.begin(), rules.end(), [&](const Rule& r) { return r.lhs == lhs && r.rhs == rhs; });
}

}  // namespace

std::vector<Rule> rules_from_identities(std::span<const IdentitySpec> identities) {
  std::vector<Rule> rules;
  for (const auto& id : identities) {
    const Attributes a = read_attributes(id.attributes);
    if (a.known_false || id.sides.size() < 2) continue;
    std::vector<Expr> sides;
    for (const auto& s : id.sides) sides.push_back(normalize(s));
    auto add = [&](std::size_t from, std::size_t to, Direction d) {
      const Expr& lhs = sides[from];
      const Expr& rhs = sides[to];
      if (!usable(lhs, rhs) || known(rules, lhs, rhs)) return;
      Rule r;
      r.name = rule_name(id.name, from, to);
      r.identity = id.name;
      r.citation = id.citation;
      r.lhs = lhs;
      r.rhs = rhs;
      r.direction = d;
      r.guards.serial_only = a.serial;
      r.guards.introduces_vector = !(a.definition && from == 0) && introduces_vector(lhs, rhs);
      rules.push_back(std::move(r));
    };
    for (std::size_t i = 0; i < sides.size(); ++i)
      for (std::size_t j = i + 1; j < sides.size(); ++j) {
        if (a.ltr) add(i, j, Direction::LeftToRight);
        if (a.rtl) add(j, i, Direction::RightToLeft);
      }
  }
  // If A B = C then B* A* = C*: the adjoint of every rule, unless it is one already (the
  // library states some adjoints itself, e.g. L4-adjoint; symmetric ones are their own).
  const std::size_t stated = rules.size();
  for (std::size_t k = 0; k < stated; ++k) {
    const Rule& r = rules[k];
    // Copies: a rule and its adjoint applied in one derivation must not put one node at two
    // places (a step's site is marked by node, ir::copy).
    Expr lhs = normalize(ir::adjoint(ir::copy(r.lhs)));
    Expr rhs = normalize(ir::adjoint(ir::copy(r.rhs)));
    if (!usable(lhs, rhs) || known(rules, lhs, rhs)) continue;
    Rule a = r;
    const std::string suffix = r.name.substr(r.identity.size());
    a.name = r.identity + "*" + suffix;
    a.lhs = std::move(lhs);
    a.rhs = std::move(rhs);
    a.adjoint = true;
    rules.push_back(std::move(a));
  }
  return rules;
}

}  // namespace soa::rewrite
