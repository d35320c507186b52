// The vocabulary of the operator language: every name the language knows, its shape, its
// sweep structure, its role in the lowering, its cost weight and its spellings. One table,
// grammar/vocabulary.def, read by the parser (name splitting, aliases), the shape checker,
// the printers, the interpreter, the cost model and the lowering. Stages name symbols by
// the typed Sym below, never by string: a misspelt name does not compile.
// Definitions: docs/mathematics.md section 3; the defining identities: grammar/identities.soa.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace soa::ir {

// The three spaces an operator maps between; "One" is the single column of a vector.
enum class Dim : unsigned char {
  Joint,    // N: sum of the joints' velocity dimensions
  Spatial,  // 6n: one 6-vector per body
  Tip,      // 6m: one 6-vector per tip frame
  One,      // a column vector's width
};

// How an operator becomes a sweep (reference section 3 "kind"). Causal = lower block
// triangular in the tip-to-base numbering = an inward (tip-to-base) sweep.
enum class Structure : unsigned char {
  Memoryless,      // block diagonal: a per-body map
  Causal,          // phi, psi: inward recursion
  StrictlyCausal,  // E_phi, E_psi, K, phitilde, psitilde: inward, zero diagonal
  Full,            // Omega, calM, J: products of causal and anticausal parts
  PickOff,         // B: picks the tip frames out of the bodies
  Vector,          // a state-dependent vector (qd, a, C, ...)
};

// What the lowering and the interpreter do with a symbol (grammar/vocabulary.def).
enum class Role : unsigned char {
  Block,      // a per-body block of the model (H, M, P, D, G, tau, taubar, R, Upsilon)
  Shift,      // E_phi: one step along the parent edge
  Recursion,  // phi, psi: a sweep over the bodies
  PickOff,    // B
  Compound,   // a short product of the above, by its library definition (K = E_phi G)
  Defined,    // evaluated through its library definition (calM, J, Omega, C, alpha)
  Input,      // a kernel argument (qd, qdd, T, f0)
  Quantity,   // a per-body vector the model computes (V, a, b)
};

// Every name of the vocabulary, as a type: stages compare symbols with Sym, not strings.
enum class Sym : unsigned char {
#define SOA_SYMBOL(id, ...) id,
#include "grammar/vocabulary.def"
#undef SOA_SYMBOL
};

inline constexpr std::size_t kSymCount = 0
#define SOA_SYMBOL(id, ...) +1
#include "grammar/vocabulary.def"
#undef SOA_SYMBOL
    ;

struct SymbolInfo {
  Sym id;
  std::string_view name;     // canonical ASCII spelling, as printed
  std::string_view unicode;  // papers' symbol for text output (empty: same as name)
  std::string_view latex;    // LaTeX spelling
  Dim rows;
  Dim cols;
  Structure structure;
  Role role;
  bool symmetric;            // A* = A
  bool invertible;           // square and invertible on every valid model
  bool recursive;            // applying it is a sweep over the bodies
  double flops;              // cost model weight: multiply-adds per body and column
  std::string_view meaning;  // one line, for --help and docs
};

// The row of `s`, and its canonical spelling.
const SymbolInfo& info(Sym s);
std::string_view name_of(Sym s);

// Every canonical name, in a stable order.
std::span<const SymbolInfo> vocabulary();

// Look up a canonical name or an alias (φ, ψ, Ω, Υ, ℳ, "Phi", ...). nullptr if unknown.
// An indexed name (below) gives its base's entry, so that structure, symmetry and shape
// queries treat psi1 like psi everywhere.
const SymbolInfo* lookup(std::string_view name);

// Arms (003 Part II, sec. 5: "an operator expression ... stands for the parallel application
// of this operator to all arms"; eq. 5.2b states M_i = ... per arm i). A vocabulary name
// followed by one digit 1-9 is that quantity of arm i alone: J1, calM2, psi1, qd2, f01 (f0
// of arm 1: the digit is always the last character, so f0 itself never splits). Arm i is the
// i-th root subtree of the robot in joint-space order (compiler/interp/interpreter.hpp).
inline constexpr int kMaxArm = 9;

struct Indexed {
  const SymbolInfo* info;
  int arm;  // 0: the whole robot (no index); 1..kMaxArm: that arm
};

// `name` as a canonical name or alias, possibly followed by an arm digit. nullopt if unknown.
std::optional<Indexed> lookup_indexed(std::string_view name);

// The canonical spelling of `base` (a canonical name) for arm `arm` (0: `base` itself).
std::string indexed_name(std::string_view base, int arm);

// Canonical spellings plus aliases that the parser may split juxtaposed words into
// ("HpsiK" -> H psi K). Returned longest first.
std::span<const std::string_view> splittable_names();

std::string_view to_string(Dim d);  // "N", "6n", "6m", "1"
std::string_view describe(Dim d);   // "joint space", "spatial", "tip", "vector"
std::string_view to_string(Structure s);
std::string_view to_string(Role r);

}  // namespace soa::ir
