#include "algebra/vocabulary.hpp"

#include <algorithm>
#include <iterator>
#include <vector>

namespace soa::ir {
namespace {

using D = Dim;
using S = Structure;

// grammar/vocabulary.def, in its order: kTable[i].id == Sym(i).
constexpr SymbolInfo kTable[] = {
#define SOA_SYMBOL(id, unicode, latex, rows, cols, structure, role, symmetric, invertible, recursive, flops, meaning) \
  {Sym::id,    #id,       unicode,    latex,     D::rows, D::cols, S::structure,                                      \
   Role::role, symmetric, invertible, recursive, flops,   meaning},
#include "grammar/vocabulary.def"
#undef SOA_SYMBOL
};

constexpr std::size_t kCount = std::size(kTable);

struct Alias {
  std::string_view alias;
  std::string_view name;
};

constexpr Alias kAliases[] = {
    {"φ", "phi"},     {"Phi", "phi"},    {"ψ", "psi"},      {"Psi", "psi"},  {"Ω", "Omega"},
    {"Υ", "Upsilon"}, {"ℳ", "calM"},     {"Eφ", "E_phi"},   {"Eψ", "E_psi"}, {"E_φ", "E_phi"},
    {"E_ψ", "E_psi"}, {"φ̃", "phitilde"}, {"ψ̃", "psitilde"}, {"τ", "tau"},    {"τ̄", "taubar"},
    {"α", "alpha"},   {"q̇", "qd"},       {"q̈", "qdd"},      {"f₀", "f0"},    {"mathcalM", "calM"},
};

}  // namespace

std::span<const SymbolInfo> vocabulary() { return {kTable, kCount}; }

const SymbolInfo& info(Sym s) { return kTable[static_cast<std::size_t>(s)]; }
std::string_view name_of(Sym s) { return info(s).name; }

namespace {

const SymbolInfo* lookup_base(std::string_view name) {
  for (std::size_t i = 0; i < kCount; ++i)
    if (kTable[i].name == name) return &kTable[i];
  for (const auto& a : kAliases)
    if (a.alias == name) return lookup_base(a.name);
  return nullptr;
}

}  // namespace

std::optional<Indexed> lookup_indexed(std::string_view name) {
  if (const SymbolInfo* info = lookup_base(name)) return Indexed{info, 0};
  if (name.size() < 2 || name.back() < '1' || name.back() > '0' + kMaxArm) return std::nullopt;
  if (const SymbolInfo* info = lookup_base(name.substr(0, name.size() - 1))) return Indexed{info, name.back() - '0'};
  return std::nullopt;
}

const SymbolInfo* lookup(std::string_view name) {
  const auto found = lookup_indexed(name);
  return found ? found->info : nullptr;
}

std::string indexed_name(std::string_view base, int arm) {
  std::string s(base);
  if (arm > 0) s += static_cast<char>('0' + arm);
  return s;
}

std::span<const std::string_view> splittable_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (std::size_t i = 0; i < kCount; ++i) v.push_back(kTable[i].name);
    for (const auto& a : kAliases) v.push_back(a.alias);
    v.push_back("I");
    std::stable_sort(v.begin(), v.end(), [](std::string_view a, std::string_view b) { return a.size() > b.size(); });
    return v;
  }();
  return names;
}

std::string_view to_string(Dim d) {
  switch (d) {
    case Dim::Joint: return "N";
    case Dim::Spatial: return "6n";
    case Dim::Tip: return "6m";
    case Dim::One: return "1";
  }
  return "?";
}

std::string_view describe(Dim d) {
  switch (d) {
    case Dim::Joint: return "joint space";
    case Dim::Spatial: return "spatial";
    case Dim::Tip: return "tip";
    case Dim::One: return "vector";
  }
  return "?";
}

std::string_view to_string(Role r) {
  switch (r) {
    case Role::Block: return "per-body block";
    case Role::Shift: return "shift";
    case Role::Recursion: return "recursion";
    case Role::PickOff: return "pick-off";
    case Role::Compound: return "compound";
    case Role::Defined: return "defined";
    case Role::Input: return "input";
    case Role::Quantity: return "model quantity";
  }
  return "?";
}

std::string_view to_string(Structure s) {
  switch (s) {
    case Structure::Memoryless: return "memoryless";
    case Structure::Causal: return "causal";
    case Structure::StrictlyCausal: return "strictly causal";
    case Structure::Full: return "full";
    case Structure::PickOff: return "pick-off";
    case Structure::Vector: return "vector";
  }
  return "?";
}

}  // namespace soa::ir
