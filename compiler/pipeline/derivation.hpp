// A derivation for people and programs: the numeric check of its steps and its renderings
// (text, LaTeX, JSON, a self-contained HTML page). One implementation for `soac derive`
// and the Python module, so that both print the same thing.
//
// Contract
// - check_derivation evaluates the input and every step's result densely (interp::eval_dense)
//   on `samples` random states of `robot` (seeds seed, seed+1, ...) and records, per step, the
//   largest entry error relative to its own row and column (verify::relative_errors); a step
//   whose error exceeds 1e-9 is `failed_step` (the first one, 1-based). Steps whose result has
//   no size of its own (I, 0) are not evaluated (their error is 0).
// - The renderings only read; `check` may be null (no check was asked for).
// - derivation_html is one page with nothing outside it: KaTeX (Debian's libjs-katex, embedded
//   when soac was built) and its fonts are inlined, so the page works offline. It shows the
//   input and its cost, one block per step (class "step": number, rule, citation, `before`
//   with the rewritten part highlighted, `after`, the cost after it, with a check the step's
//   largest relative error and PASS/FAIL, and in a <details> element the rule's statement),
//   the final form and its cost, and the check's summary. Every formula is an element of
//   class "tex" whose data-tex attribute holds its LaTeX (its text: the Unicode form, what a
//   reader without scripts sees); a script typesets each with KaTeX on load, and marks one it
//   cannot typeset with class "katex-error". `rules` (pipeline::Library::rules) gives each
//   step's rule statement: a step whose rule is not there (the algebra's own moves, an
//   unknown name) shows its citation alone. An arm's instance ("MINV[1]") is stated as its
//   whole-robot rule on that arm.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "algebra/definitions.hpp"
#include "algebra/print.hpp"
#include "model/robot.hpp"
#include "model/tips.hpp"
#include "rewrite/rewrite.hpp"

namespace soa::pipeline {

struct DerivationCheck {
  std::string robot;  // Robot::source
  int samples = 0;
  double max_rel = 0.0;
  int failed_step = -1;              // 1-based step that changed the value; -1: none
  std::vector<double> step_max_rel;  // per step, its largest relative error over the states
};

DerivationCheck check_derivation(const rewrite::Derivation& d, const ir::Definitions& definitions, const Robot& robot,
                                 const std::vector<int>& tips, int samples, std::uint64_t seed);
// The robot a derivation of `input` is checked on when none is given (soac derive --check,
// soac.derive(check=True)): random_robot(seed) of 7 bodies, random arms when `input` names
// arms; for a tip-space inverse ((J calM^-1 J*)^-1, defined only where the tips' directions
// are independent) 10 bodies less branched, and without arms one tip, the leaf with the most
// degrees of freedom behind it, so that the matrix is invertible.
LoadedRobot check_robot(const ir::Expr& input, std::uint64_t seed);

std::string derivation_text(const rewrite::Derivation& d, const DerivationCheck* check);
std::string derivation_latex(const rewrite::Derivation& d, const DerivationCheck* check);
std::string derivation_json(const rewrite::Derivation& d, const DerivationCheck* check);
std::string derivation_html(const rewrite::Derivation& d, const DerivationCheck* check,
                            std::span<const rewrite::Rule> rules = {});

// How a step's `before` is printed with its rewritten part marked (rewrite::Step's site).
ir::PrintOptions marked(const rewrite::Step& s, ir::Syntax syntax);
// A cost for LaTeX: rewrite::to_string's order in math mode ("O(N^{3}) \times 2") and the
// counts after it as they are (", 4 sweeps, ..."; empty when there are none), for the
// caller to set in its own mode.
struct LatexCost {
  std::string order, counts;
};
LatexCost latex_cost(const rewrite::Cost& c);

}  // namespace soa::pipeline
