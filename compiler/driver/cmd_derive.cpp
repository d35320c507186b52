// soac derive: the cheapest equivalent form of an expression that the identity library
// reaches, with every step (rule, citation, the rewritten part marked, cost after it).
#include <fmt/format.h>

#include <cctype>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "algebra/arms.hpp"
#include "algebra/print.hpp"
#include "driver/driver.hpp"
#include "interp/interpreter.hpp"
#include "pipeline/pipeline.hpp"
#include "verify/verify.hpp"

namespace soa::driver {
namespace {

struct DeriveOptions {
  std::string expression;
  std::string format = "text";
  std::string library;
  RobotOptions robot;
  bool check = false;
  int samples = 3;
  std::uint64_t seed = 1;
};

// The value check: every intermediate form evaluated (dense) on the robot equals the input.
struct CheckReport {
  std::string robot;
  int samples = 0;
  double max_rel = 0.0;
  int failed_step = -1;  // 1-based step that changed the value
};

// Does `e` invert a tip-space matrix ((J calM^-1 J*)^-1: defined only where the tips'
// directions are independent)?
bool inverts_tip_matrix(const ir::Expr& e) {
  if (e.is(ir::Op::Inverse) && ir::tip_square(e.kid(0))) return true;
  for (const ir::Expr& k : e.kids())
    if (inverts_tip_matrix(k)) return true;
  return false;
}

// On `loaded` (--robot), else on a random tree (random arms when the input names arms). A
// tip-space inverse is checked on a longer tree with one tip, its deepest leaf, so that the
// matrix is invertible.
CheckReport check_steps(const rewrite::Derivation& d, const DeriveOptions& o, const std::optional<LoadedRobot>& loaded,
                        const ir::Definitions& definitions) {
  const std::vector<int> arms = ir::arms_in(d.input);
  const bool tip_inverse = inverts_tip_matrix(d.input);
  LoadedRobot r = loaded ? *loaded
                         : random_robot(o.seed, arms.empty() ? 0 : arms.back(),
                                        tip_inverse ? RandomTreeOptions{10, false, true, true, 0.2}
                                                    : RandomTreeOptions{7, false, true, true, 0.5});
  if (!loaded && tip_inverse && arms.empty()) {
    int deepest = -1, most = -1;
    for (int leaf : r.robot.leaf_bodies()) {
      int dofs = 0;
      for (int b = leaf; b >= 0; b = r.robot.bodies[b].parent) dofs += r.robot.bodies[b].nv();
      if (dofs > most) most = dofs, deepest = leaf;
    }
    r.tips = {*r.robot.find_frame(r.robot.bodies[deepest].name)};
  }
  const Robot& robot = r.robot;
  const std::vector<int>& tips = r.tips;
  CheckReport report{robot.source, o.samples, 0.0, -1};
  for (int s = 0; s < o.samples; ++s) {
    std::mt19937_64 rng(o.seed + static_cast<std::uint64_t>(s));
    const interp::Evaluation ev =
        interp::prepare(robot, random_state(robot, static_cast<int>(tips.size()), rng), tips, definitions);
    const MatX reference = interp::eval_dense(ev, d.input);
    for (std::size_t i = 0; i < d.steps.size(); ++i) {
      const ir::Expr& after = d.steps[i].after;
      if (after.is(ir::Op::Identity) || after.is(ir::Op::Zero)) continue;  // no size of its own
      // Each entry against its own row and column, as verify judges (verify.hpp).
      const double rel = verify::relative_errors(reference, interp::eval_dense(ev, after)).maxCoeff();
      report.max_rel = std::max(report.max_rel, rel);
      if (!(rel <= 1e-9) && report.failed_step < 0) report.failed_step = static_cast<int>(i) + 1;
    }
  }
  return report;
}

ir::PrintOptions marked(const rewrite::Step& s, ir::Syntax syntax) {
  return ir::PrintOptions{syntax, s.site_in_before, s.begin, s.end};
}

void print_text(const rewrite::Derivation& d, const std::optional<CheckReport>& check) {
  using ir::Syntax;
  fmt::print("input: {}\ncost:  {}\n", ir::print(d.input, Syntax::Unicode), rewrite::to_string(d.input_cost));
  for (std::size_t i = 0; i < d.steps.size(); ++i) {
    const rewrite::Step& s = d.steps[i];
    fmt::print("\n{}. {}  ({})\n   before: {}\n   after:  {}\n   cost:   {}\n", i + 1, s.rule, s.citation,
               ir::print(s.before, marked(s, Syntax::Unicode)), ir::print(s.after, Syntax::Unicode),
               rewrite::to_string(s.cost_after));
  }
  if (d.steps.empty()) fmt::print("\nno cheaper form found: the expression is left as it is\n");
  fmt::print("\nfinal: {}\ncost:  {}\n", ir::print(rewrite::present(d.final), Syntax::Unicode),
             rewrite::to_string(d.cost));
  if (check)
    fmt::print("check: every step keeps the value on {} ({} states): max rel {:.2e}\n", check->robot, check->samples,
               check->max_rel);
  fmt::print("citations: docs/bibliography.md; mathematics: docs/mathematics.md\n");
}

// Text mode: every character LaTeX treats specially is escaped, so that robot paths and
// citations print as they are.
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

// A cost in text mode: its order ("O(N^3) x 2", the part before the first comma of
// rewrite::to_string) in math mode, the counts after it as text.
std::string latex_cost(const rewrite::Cost& c) {
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
  return "$" + math + "$" + (comma == std::string::npos ? "" : latex_text(text.substr(comma)));
}

// 3.12e-16 as $3.12 \times 10^{-16}$.
std::string latex_scientific(double x) {
  const std::string s = fmt::format("{:.2e}", x);
  const std::size_t e = s.find('e');
  if (e == std::string::npos) return "$" + s + "$";
  const int exponent = std::stoi(s.substr(e + 1));
  return fmt::format("${} \\times 10^{{{}}}$", s.substr(0, e), exponent);
}

void print_latex(const rewrite::Derivation& d, const std::optional<CheckReport>& check) {
  using ir::Syntax;
  fmt::print("\\documentclass{{article}}\n\\usepackage{{amsmath,amssymb}}\n\\begin{{document}}\n");
  fmt::print("\\section*{{Derivation}}\nInput: $ {} $ \\quad ({})\n", ir::print(d.input, Syntax::Latex),
             latex_cost(d.input_cost));
  if (!d.steps.empty()) {
    fmt::print("\\begin{{enumerate}}\n");
    for (const rewrite::Step& s : d.steps)
      fmt::print("\\item \\textbf{{{}}} ({}):\\\\\n$ {} $\\\\\n$ \\;\\rightarrow\\; {} $ \\quad ({})\n",
                 latex_text(s.rule), latex_text(s.citation), ir::print(s.before, marked(s, Syntax::Latex)),
                 ir::print(s.after, Syntax::Latex), latex_cost(s.cost_after));
    fmt::print("\\end{{enumerate}}\n");
  }
  fmt::print("Final: $ {} $ \\quad ({})\n", ir::print(rewrite::present(d.final), Syntax::Latex), latex_cost(d.cost));
  if (check)
    fmt::print("\n\\noindent Checked on {} ({} states): max relative error {}.\n", latex_text(check->robot),
               check->samples, latex_scientific(check->max_rel));
  fmt::print("\n\\noindent\\footnotesize Citations: docs/bibliography.md; mathematics: docs/mathematics.md.\n");
  fmt::print("\\end{{document}}\n");
}

nlohmann::ordered_json cost_json(const rewrite::Cost& c) {
  return {{"order", c.order},
          {"sweeps", c.sweeps},
          {"opaque", c.opaque},
          {"flops", c.flops},
          {"text", rewrite::to_string(c)}};
}

void print_json(const rewrite::Derivation& d, const std::optional<CheckReport>& check) {
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
  fmt::print("{}\n", j.dump(2));
}

int run_derive(const DeriveOptions& o) {
  const pipeline::Library lib = pipeline::load_library(o.library);
  auto source = std::make_shared<syntax::Source>(syntax::Source{"<command line>", o.expression});
  const ir::Expr input = syntax::parse_expression(source, &lib.module);
  rewrite::Options options;
  std::optional<LoadedRobot> robot;
  if (!o.robot.path.empty()) robot = load_robot(o.robot);
  if (robot) options.serial_chain = robot->robot.is_serial_chain();
  options.definitions = &lib.algebra.definitions;
  const rewrite::Derivation d = rewrite::derive(input, lib.rules, options);

  std::optional<CheckReport> check;
  if (o.check) check = check_steps(d, o, robot, lib.algebra.definitions);
  if (o.format == "latex")
    print_latex(d, check);
  else if (o.format == "json")
    print_json(d, check);
  else
    print_text(d, check);

  if (check && check->failed_step > 0) {
    const rewrite::Step& s = d.steps[check->failed_step - 1];
    std::cerr << fmt::format("soac: error: --check: step {} ({}) changed the value on {} (max rel {:.3e}): {} -> {}\n",
                             check->failed_step, s.rule, check->robot, check->max_rel, ir::print(s.before),
                             ir::print(s.after));
    return kCheckFailed;
  }
  return kOk;
}

}  // namespace

void add_derive(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<DeriveOptions>();
  CLI::App* cmd = app.add_subcommand("derive", "rewrite an expression into its cheapest known form, step by step");
  cmd->add_option("expression", opts->expression, "operator expression, e.g. \"J calM^-1 J*\"")->required();
  cmd->add_option("--format", opts->format, "text, latex or json")->check(CLI::IsMember({"text", "latex", "json"}));
  cmd->add_option("--library", opts->library,
                  "identity library (default: $SOAC_LIBRARY, else the built-in identities.soa)");
  opts->robot.add_to(*cmd, false);
  cmd->add_flag("--check", opts->check,
                "evaluate every intermediate form on the robot (or a random tree) and fail if one changes the value");
  cmd->add_option("--samples", opts->samples, "states for --check")->check(CLI::Range(1, 10000));
  cmd->add_option("--seed", opts->seed, "seed of the states (and of the random tree) for --check");
  cmd->callback([opts, &run] { run = [opts] { return run_derive(*opts); }; });
}

}  // namespace soa::driver
