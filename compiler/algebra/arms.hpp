// Arm indices on operator expressions (003 Part II, sec. 5): the symbols of one arm of a
// multi-arm robot are the vocabulary names with an arm digit (vocabulary.hpp: psi1, calM2).
//
// Contract: every function here reads a symbol's arm through lookup_indexed(); a symbol
// the vocabulary does not know counts as the whole robot's (arm 0). Nothing else in the IR
// knows about arms: an indexed symbol is an ordinary Symbol whose name carries the digit.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "algebra/expr.hpp"

namespace soa::ir {

// The arm of a symbol's name (0: none) and its base's canonical name ("calM1" -> "calM").
int arm_of(std::string_view name);
std::string base_name(std::string_view name);

// `e` with every symbol renamed to its base on arm `arm`: arm 0 strips the indices
// (psi1 -> psi), arm i >= 1 puts index i on every symbol (psi -> psi1; an indexed one keeps
// its base and takes the new index). I and 0 are untouched; spans are kept.
Expr on_arm(const Expr& e, int arm);

// The distinct arms (>= 1) whose symbols occur in `e`, increasing.
std::vector<int> arms_in(const Expr& e);

// Does `e` contain a symbol of the whole robot (one without an arm index)?
bool mentions_whole_robot(const Expr& e);

// The arm i when every symbol of `e` belongs to arm i (and there is at least one); else 0.
int single_arm(const Expr& e);

}  // namespace soa::ir
