// Checks and renderings of a derivation (derivation.hpp).
#include "pipeline/derivation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <random>

#include "algebra/arms.hpp"
#include "algebra/shape.hpp"
#include "interp/interpreter.hpp"
#include "model/kinematics.hpp"
#include "verify/verify.hpp"

namespace soa::pipeline {

DerivationCheck check_derivation(const rewrite::Derivation& d, const ir::Definitions& definitions, const Robot& robot,
                                 const std::vector<int>& tips, int samples, std::uint64_t seed) {
  DerivationCheck report{robot.source, samples, 0.0, -1, std::vector<double>(d.steps.size(), 0.0)};
  // A derivation of d(...)/dq_i is checked at several coordinates i per state, against the
  // dense interpreter's differences, as verify checks such claims (verify.hpp).
  const bool per_coordinate = ir::needs_coordinate(d.input);
  const double tol = per_coordinate ? verify::kDerivativeTol : 1e-9;
  for (int s = 0; s < samples; ++s) {
    std::mt19937_64 rng(seed + static_cast<std::uint64_t>(s));
    interp::Evaluation ev =
        interp::prepare(robot, random_state(robot, static_cast<int>(tips.size()), rng), tips, definitions);
    const std::vector<int> coordinates = per_coordinate ? verify::sample_coordinates(ev.N, rng) : std::vector<int>{-1};
    for (const int coordinate : coordinates) {
      ev.coordinate = coordinate;
      const MatX reference = interp::eval_dense(ev, d.input);
      for (std::size_t i = 0; i < d.steps.size(); ++i) {
        const ir::Expr& after = d.steps[i].after;
        if (after.is(ir::Op::Identity) || after.is(ir::Op::Zero)) continue;  // no size of its own
        // Each entry against its own row and column, as verify judges (verify.hpp).
        const double rel = verify::max_relative_error(reference, interp::eval_dense(ev, after));
        report.step_max_rel[i] = std::max(report.step_max_rel[i], rel);
        report.max_rel = std::max(report.max_rel, rel);
        if (!(rel <= tol) && report.failed_step < 0) report.failed_step = static_cast<int>(i) + 1;
      }
    }
  }
  return report;
}

namespace {

// Does `e` invert a tip-space matrix?
bool inverts_tip_matrix(const ir::Expr& e) {
  if (e.is(ir::Op::Inverse) && ir::tip_square(e.kid(0))) return true;
  for (const ir::Expr& k : e.kids())
    if (inverts_tip_matrix(k)) return true;
  return false;
}

}  // namespace

LoadedRobot check_robot(const ir::Expr& input, std::uint64_t seed) {
  const std::vector<int> arms = ir::arms_in(input);
  const bool tip_inverse = inverts_tip_matrix(input);
  LoadedRobot r = random_robot(
      seed, arms.empty() ? 0 : arms.back(),
      tip_inverse ? RandomTreeOptions{10, false, true, true, 0.2} : RandomTreeOptions{7, false, true, true, 0.5});
  if (tip_inverse && arms.empty()) {
    int deepest = -1, most = -1;
    for (int leaf : r.robot.leaf_bodies()) {
      int dofs = 0;
      for (int b = leaf; b >= 0; b = r.robot.bodies[b].parent) dofs += r.robot.bodies[b].nv();
      if (dofs > most) most = dofs, deepest = leaf;
    }
    r.tips = {*r.robot.find_frame(r.robot.bodies[deepest].name)};
  }
  return r;
}

ir::PrintOptions marked(const rewrite::Step& s, ir::Syntax syntax) {
  return ir::PrintOptions{syntax, s.site_in_before, s.begin, s.end};
}

std::string derivation_text(const rewrite::Derivation& d, const DerivationCheck* check) {
  using ir::Syntax;
  std::string out =
      fmt::format("input: {}\ncost:  {}\n", ir::print(d.input, Syntax::Unicode), rewrite::to_string(d.input_cost));
  for (std::size_t i = 0; i < d.steps.size(); ++i) {
    const rewrite::Step& s = d.steps[i];
    out += fmt::format("\n{}. {}  ({})\n   before: {}\n   after:  {}\n   cost:   {}\n", i + 1, s.rule, s.citation,
                       ir::print(s.before, marked(s, Syntax::Unicode)), ir::print(s.after, Syntax::Unicode),
                       rewrite::to_string(s.cost_after));
  }
  if (d.steps.empty()) out += "\nno cheaper form found: the expression is left as it is\n";
  out += fmt::format("\nfinal: {}\ncost:  {}\n", ir::print(rewrite::present(d.final), Syntax::Unicode),
                     rewrite::to_string(d.cost));
  if (check)
    out += fmt::format("check: every step keeps the value on {} ({} states): max rel {:.2e}\n", check->robot,
                       check->samples, check->max_rel);
  out += "citations: docs/bibliography.md; mathematics: docs/mathematics.md\n";
  return out;
}

namespace {

// Text for LaTeX text mode: every special character escaped.
std::string latex_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\textbackslash{}"; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '_':
      case '&':
      case '%':
      case '#':
      case '$':
      case '{':
      case '}':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

LatexCost latex_cost(const rewrite::Cost& c) {
  const std::string text = rewrite::to_string(c);
  const std::size_t comma = text.find(',');
  std::string order = text.substr(0, comma), math;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i] == '^') {
      std::size_t j = i + 1;
      while (j < order.size() && std::isdigit(static_cast<unsigned char>(order[j]))) ++j;
      math += "^{" + order.substr(i + 1, j - i - 1) + "}";
      i = j - 1;
    } else if (order.compare(i, 3, " x ") == 0) {
      math += " \\times ";
      i += 2;
    } else {
      math += order[i];
    }
  }
  return {math, comma == std::string::npos ? "" : text.substr(comma)};
}

namespace {

// A cost in LaTeX text mode: "$O(N^{3}) \times 2$, 4 sweeps, ...".
std::string latex_cost_text(const rewrite::Cost& c) {
  const LatexCost l = latex_cost(c);
  return "$" + l.order + "$" + latex_text(l.counts);
}

// 3.12e-16 as $3.12 \times 10^{-16}$.
std::string latex_scientific(double x) {
  const std::string s = fmt::format("{:.2e}", x);
  const std::size_t e = s.find('e');
  if (e == std::string::npos) return "$" + s + "$";
  const int exponent = std::stoi(s.substr(e + 1));
  return fmt::format("${} \\times 10^{{{}}}$", s.substr(0, e), exponent);
}

nlohmann::ordered_json cost_json(const rewrite::Cost& c) {
  return {{"order", c.order},
          {"sweeps", c.sweeps},
          {"opaque", c.opaque},
          {"flops", c.flops},
          {"text", rewrite::to_string(c)}};
}

}  // namespace

std::string derivation_latex(const rewrite::Derivation& d, const DerivationCheck* check) {
  using ir::Syntax;
  std::string out = "\\documentclass{article}\n\\usepackage{amsmath,amssymb}\n\\begin{document}\n";
  out += fmt::format("\\section*{{Derivation}}\nInput: $ {} $ \\quad ({})\n", ir::print(d.input, Syntax::Latex),
                     latex_cost_text(d.input_cost));
  if (!d.steps.empty()) {
    out += "\\begin{enumerate}\n";
    for (const rewrite::Step& s : d.steps)
      out += fmt::format("\\item \\textbf{{{}}} ({}):\\\\\n$ {} $\\\\\n$ \\;\\rightarrow\\; {} $ \\quad ({})\n",
                         latex_text(s.rule), latex_text(s.citation), ir::print(s.before, marked(s, Syntax::Latex)),
                         ir::print(s.after, Syntax::Latex), latex_cost_text(s.cost_after));
    out += "\\end{enumerate}\n";
  }
  out += fmt::format("Final: $ {} $ \\quad ({})\n", ir::print(rewrite::present(d.final), Syntax::Latex),
                     latex_cost_text(d.cost));
  if (check)
    out += fmt::format("\n\\noindent Checked on {} ({} states): max relative error {}.\n", latex_text(check->robot),
                       check->samples, latex_scientific(check->max_rel));
  out += "\n\\noindent\\footnotesize Citations: docs/bibliography.md; mathematics: docs/mathematics.md.\n";
  out += "\\end{document}\n";
  return out;
}

std::string derivation_json(const rewrite::Derivation& d, const DerivationCheck* check) {
  nlohmann::ordered_json j;
  j["input"] = ir::print(d.input);
  j["steps"] = nlohmann::ordered_json::array();
  for (const rewrite::Step& s : d.steps)
    j["steps"].push_back({{"rule", s.rule},
                          {"citation", s.citation},
                          {"before", ir::print(s.before)},
                          {"after", ir::print(s.after)},
                          {"cost", cost_json(s.cost_after)}});
  j["final"] = ir::print(rewrite::present(d.final));
  j["cost"] = cost_json(d.cost);
  if (check) j["check"] = {{"robot", check->robot}, {"samples", check->samples}, {"max_rel", check->max_rel}};
  return j.dump(2) + "\n";
}

}  // namespace soa::pipeline
