#include "algebra/vocabulary.hpp"

#include <algorithm>
#include <iterator>
#include <vector>

namespace soa::ir {
namespace {

using D = Dim;
using S = Structure;

// Reference section 3. Rows x cols; vectors have cols = One.
constexpr SymbolInfo kTable[] = {
    {"E_phi", "Eφ", "\\mathcal{E}_{\\phi}", D::Spatial, D::Spatial, S::StrictlyCausal, false,
     "shift operator: block (p(k),k) = phi(p(k),k)"},
    {"phi", "φ", "\\phi", D::Spatial, D::Spatial, S::Causal, false,
     "(I - E_phi)^-1: rigid-body transformation operator"},
    {"phitilde", "φ̃", "\\tilde{\\phi}", D::Spatial, D::Spatial, S::StrictlyCausal, false,
     "phi - I"},
    {"H", "H", "H", D::Joint, D::Spatial, S::Memoryless, false, "joint map diag H(k)"},
    {"M", "M", "M", D::Spatial, D::Spatial, S::Memoryless, true,
     "spatial inertia diag M(k) about O_k"},
    {"B", "B", "B", D::Spatial, D::Tip, S::PickOff, false, "tip pick-off operator"},
    {"P", "P", "P", D::Spatial, D::Spatial, S::Memoryless, true,
     "articulated-body inertia diag P(k) (Riccati)"},
    {"D", "D", "D", D::Joint, D::Joint, S::Memoryless, true, "H P H*"},
    {"G", "G", "G", D::Spatial, D::Joint, S::Memoryless, false, "Kalman gain P H* D^-1"},
    {"K", "K", "K", D::Spatial, D::Joint, S::StrictlyCausal, false, "E_phi G"},
    {"tau", "τ", "\\tau", D::Spatial, D::Spatial, S::Memoryless, false, "G H"},
    {"taubar", "τ̄", "\\bar{\\tau}", D::Spatial, D::Spatial, S::Memoryless, false, "I - G H"},
    {"E_psi", "Eψ", "\\mathcal{E}_{\\psi}", D::Spatial, D::Spatial, S::StrictlyCausal, false,
     "E_phi taubar"},
    {"psi", "ψ", "\\psi", D::Spatial, D::Spatial, S::Causal, false,
     "(I - E_psi)^-1: articulated transformation operator"},
    {"psitilde", "ψ̃", "\\tilde{\\psi}", D::Spatial, D::Spatial, S::StrictlyCausal, false,
     "psi - I"},
    {"R", "R", "R", D::Spatial, D::Spatial, S::Memoryless, true,
     "composite-body inertia diag R(k)"},
    {"Upsilon", "Υ", "\\Upsilon", D::Spatial, D::Spatial, S::Memoryless, true,
     "diag Upsilon(k), base-to-tip recursion"},
    {"Omega", "Ω", "\\Omega", D::Spatial, D::Spatial, S::Full, true, "psi* H* D^-1 H psi"},
    {"J", "J", "J", D::Tip, D::Joint, S::Full, false, "Jacobian B* phi* H*"},
    {"calM", "ℳ", "\\mathcal{M}", D::Joint, D::Joint, S::Full, true,
     "mass matrix H phi M phi* H*"},
    {"qd", "q̇", "\\dot{q}", D::Joint, D::One, S::Vector, false, "joint velocities"},
    {"qdd", "q̈", "\\ddot{q}", D::Joint, D::One, S::Vector, false, "joint accelerations"},
    {"T", "T", "T", D::Joint, D::One, S::Vector, false, "joint forces (inverse dynamics of qdd, f0)"},
    {"f0", "f₀", "f_0", D::Tip, D::One, S::Vector, false, "tip forces, one 6-vector per tip"},
    {"a", "a", "\\mathfrak{a}", D::Spatial, D::One, S::Vector, false,
     "Coriolis/centripetal acceleration bias, with gravity at the roots"},
    {"b", "b", "\\mathfrak{b}", D::Spatial, D::One, S::Vector, false, "gyroscopic force bias"},
    {"V", "V", "V", D::Spatial, D::One, S::Vector, false, "spatial velocities"},
    {"alpha", "α", "\\alpha", D::Spatial, D::One, S::Vector, false, "spatial accelerations"},
    {"C", "C", "\\mathcal{C}", D::Joint, D::One, S::Vector, false,
     "Coriolis, centrifugal and gravity forces H phi (M phi* a + b)"},
};

constexpr std::size_t kCount = std::size(kTable);

struct Alias {
  std::string_view alias;
  std::string_view name;
};

constexpr Alias kAliases[] = {
    {"φ", "phi"},         {"Phi", "phi"},        {"ψ", "psi"},        {"Psi", "psi"},
    {"Ω", "Omega"},       {"Υ", "Upsilon"},      {"ℳ", "calM"},       {"Eφ", "E_phi"},
    {"Eψ", "E_psi"},      {"E_φ", "E_phi"},      {"E_ψ", "E_psi"},    {"φ̃", "phitilde"},
    {"ψ̃", "psitilde"},    {"τ", "tau"},          {"τ̄", "taubar"},     {"α", "alpha"},
    {"q̇", "qd"},          {"q̈", "qdd"},          {"f₀", "f0"},        {"mathcalM", "calM"},
};

}  // namespace

std::span<const SymbolInfo> vocabulary() { return {kTable, kCount}; }

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
  if (const SymbolInfo* info = lookup_base(name.substr(0, name.size() - 1)))
    return Indexed{info, name.back() - '0'};
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
    std::stable_sort(v.begin(), v.end(),
                     [](std::string_view a, std::string_view b) { return a.size() > b.size(); });
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
