// The vocabulary of the operator language: every name the language knows, its shape, its
// sweep structure and its spellings. One table, read by the parser (name splitting,
// aliases), the shape checker, the printers, the interpreters and the cost model.
// Definitions: docs/mathematics.md section 3.
#pragma once

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
  Memoryless,           // block diagonal: a per-body map
  Causal,               // phi, psi: inward recursion
  StrictlyCausal,       // E_phi, E_psi, K, phitilde, psitilde: inward, zero diagonal
  Full,                 // Omega, calM, J: products of causal and anticausal parts
  PickOff,              // B: picks the tip frames out of the bodies
  Vector,               // a state-dependent vector (qd, a, C, ...)
};

struct SymbolInfo {
  std::string_view name;     // canonical ASCII spelling, as printed
  std::string_view unicode;  // papers' symbol for text output (empty: same as name)
  std::string_view latex;    // LaTeX spelling
  Dim rows;
  Dim cols;
  Structure structure;
  bool symmetric;            // A* = A
  std::string_view meaning;  // one line, for --help and docs
};

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

std::string_view to_string(Dim d);       // "N", "6n", "6m", "1"
std::string_view describe(Dim d);        // "joint space", "spatial", "tip", "vector"
std::string_view to_string(Structure s);

}  // namespace soa::ir
