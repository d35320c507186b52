// soac.derive: the cheapest form of an expression the identity library reaches, step by
// step, printed by pipeline/derivation.hpp as `soac derive` prints it.
#include <fmt/format.h>

#include "algebra/print.hpp"
#include "convert.hpp"
#include "pipeline/derivation.hpp"
#include "pipeline/pipeline.hpp"
#include "rewrite/rewrite.hpp"
#include "support/error.hpp"
#include "syntax/syntax.hpp"

namespace soa::python {
namespace {

using namespace pybind11::literals;

struct PyDerivation {
  rewrite::Derivation d;
  std::optional<pipeline::DerivationCheck> check;
  std::vector<rewrite::Rule> rules;  // the library's: the HTML page states each step's rule
};

struct StepView {
  std::string rule, citation, before, after, part, cost;
  std::optional<double> max_rel;
};

PyDerivation derive(const std::string& expression, const py::object& robot_object, bool check, int samples,
                    std::uint64_t seed, const std::optional<std::filesystem::path>& library_path) {
  if (samples < 1 || samples > 10000) throw UserError(fmt::format("samples: {} is not in 1 to 10000", samples));
  const RobotPtr robot = robot_object.is_none() ? nullptr : robot_arg(robot_object);
  py::gil_scoped_release released;
  const pipeline::Library lib = pipeline::load_library(library_path ? library_path->string() : "");
  auto source = std::make_shared<syntax::Source>(syntax::Source{kExpressionSource, expression});
  const ir::Expr input = syntax::parse_expression(source, &lib.module);
  rewrite::Options options;
  if (robot) options.serial_chain = robot->robot.is_serial_chain();
  options.definitions = &lib.algebra.definitions;
  PyDerivation out{rewrite::derive(input, lib.rules, options), std::nullopt, lib.rules};
  if (check) {
    // Without a robot, on the one soac derive --check uses: both print the same check line.
    std::optional<LoadedRobot> random;
    if (!robot) random = pipeline::check_robot(out.d.input, seed);
    const LoadedRobot& r = robot ? *robot : *random;
    out.check = pipeline::check_derivation(out.d, lib.algebra.definitions, r.robot, r.tips, samples, seed);
  }
  return out;
}

std::optional<ir::Expr> find_node(const ir::Expr& e, const ir::Node* node) {
  if (e.get() == node) return e;
  for (const ir::Expr& k : e.kids())
    if (auto found = find_node(k, node)) return found;
  return std::nullopt;
}

// The part of `before` a step rewrote (its marked part): the node, or factors [begin, end).
ir::Expr rewritten_part(const rewrite::Step& s) {
  const std::optional<ir::Expr> node = s.site_in_before ? find_node(s.before, s.site_in_before) : std::nullopt;
  if (!node) return s.before;
  if (node->is(ir::Op::Product) && s.end > s.begin) {
    const auto kids = node->kids();
    if (s.end - s.begin == 1) return kids[s.begin];
    return ir::product(
        std::vector<ir::Expr>(kids.begin() + static_cast<long>(s.begin), kids.begin() + static_cast<long>(s.end)));
  }
  return *node;
}

StepView step_view(const PyDerivation& p, std::size_t i) {
  const rewrite::Step& s = p.d.steps[i];
  using ir::Syntax;
  StepView v{s.rule,
             s.citation,
             ir::print(s.before, pipeline::marked(s, Syntax::Unicode)),
             ir::print(s.after, Syntax::Unicode),
             ir::print(rewritten_part(s), Syntax::Unicode),
             rewrite::to_string(s.cost_after),
             std::nullopt};
  if (p.check) v.max_rel = p.check->step_max_rel[i];
  return v;
}

// Text in math mode that LaTeX and MathJax (Jupyter) both typeset: runs of plain characters
// in \text{}, the characters special to either escaped in math mode.
std::string math_text(const std::string& s) {
  std::string out, run;
  const auto flush = [&] {
    if (!run.empty()) out += "\\text{" + run + "}";
    run.clear();
  };
  for (char c : s) {
    const char* escaped = nullptr;
    switch (c) {
      case '_': escaped = "\\_"; break;
      case '&': escaped = "\\&"; break;
      case '%': escaped = "\\%"; break;
      case '#': escaped = "\\#"; break;
      case '$': escaped = "\\$"; break;
      case '{': escaped = "\\{"; break;
      case '}': escaped = "\\}"; break;
      case '\\': escaped = "\\backslash "; break;
      case '^': escaped = "\\hat{}"; break;
      case '~': escaped = "\\sim "; break;
      default: break;
    }
    if (escaped) {
      flush();
      out += escaped;
    } else {
      run += c;
    }
  }
  flush();
  return out;
}

// A cost in math mode: "O(N^{3}) \times 2\text{, 4 sweeps, ...}".
std::string math_cost(const rewrite::Cost& c) {
  const pipeline::LatexCost l = pipeline::latex_cost(c);
  return l.order + math_text(l.counts);
}

// For Jupyter's _repr_latex_: the derivation as one display-math block (a whole document,
// derivation_latex, is for a paper and is not rendered by notebooks).
std::string latex_display(const PyDerivation& p) {
  using ir::Syntax;
  const rewrite::Derivation& d = p.d;
  std::string out = "$$\\begin{aligned}\n";
  out += fmt::format("&\\text{{input}} && {} && {} \\\\\n", ir::print(d.input, Syntax::Latex), math_cost(d.input_cost));
  for (std::size_t i = 0; i < d.steps.size(); ++i) {
    const rewrite::Step& s = d.steps[i];
    out += fmt::format("&{} && {} \\\\\n", math_text(fmt::format("{}. {} ({})", i + 1, s.rule, s.citation)),
                       ir::print(s.before, pipeline::marked(s, Syntax::Latex)));
    out +=
        fmt::format("& && \\rightarrow\\; {} && {} \\\\\n", ir::print(s.after, Syntax::Latex), math_cost(s.cost_after));
  }
  out += fmt::format("&\\text{{final}} && {} && {}\n", ir::print(rewrite::present(d.final), Syntax::Latex),
                     math_cost(d.cost));
  out += "\\end{aligned}$$";
  if (p.check)
    out += fmt::format("\n$${}$$", math_text(fmt::format("checked on {} ({} states): max rel {:.2e}", p.check->robot,
                                                         p.check->samples, p.check->max_rel)));
  return out;
}

const pipeline::DerivationCheck* check_of(const PyDerivation& p) { return p.check ? &*p.check : nullptr; }

}  // namespace

void init_derive(py::module_& m) {
  py::class_<rewrite::Cost>(m, "Cost", "What evaluating a form costs (rewrite/cost.hpp), ordered by these fields.")
      .def_readonly("order", &rewrite::Cost::order, "evaluation is O(N^order)")
      .def_readonly("dense", &rewrite::Cost::dense, "dense factorisations")
      .def_readonly("sweeps", &rewrite::Cost::sweeps, "recursions over the bodies, per column")
      .def_readonly("opaque", &rewrite::Cost::opaque, "calM, J, Omega left for the lowering to expand")
      .def_readonly("flops", &rewrite::Cost::flops, "multiply-adds per body per column (rough)")
      .def("__str__", [](const rewrite::Cost& c) { return rewrite::to_string(c); })
      .def("__repr__", [](const rewrite::Cost& c) { return "<soac.Cost " + rewrite::to_string(c) + ">"; });

  py::class_<StepView>(m, "Step", "One rewriting step of a derivation.")
      .def_readonly("rule", &StepView::rule, "the rule: an identity's name, 'normalise', 'distribute' or 'collect'")
      .def_readonly("citation", &StepView::citation, "where the identity comes from (docs/bibliography.md)")
      .def_readonly("before", &StepView::before, "the form before, the rewritten part in [ ]")
      .def_readonly("after", &StepView::after, "the form after")
      .def_readonly("part", &StepView::part, "the rewritten part of `before`")
      .def_readonly("cost", &StepView::cost, "the cost after the step")
      .def_readonly("max_rel", &StepView::max_rel, "checked derivations: the step's largest relative error")
      .def("__repr__",
           [](const StepView& s) { return fmt::format("<soac.Step {}: {} -> {}>", s.rule, s.before, s.after); });

  py::class_<pipeline::DerivationCheck>(m, "DerivationCheck", "The numeric check of every step (derive(check=True)).")
      .def_readonly("robot", &pipeline::DerivationCheck::robot)
      .def_readonly("samples", &pipeline::DerivationCheck::samples)
      .def_readonly("max_rel", &pipeline::DerivationCheck::max_rel)
      .def_property_readonly(
          "failed_step",
          [](const pipeline::DerivationCheck& c) {
            return c.failed_step > 0 ? py::object(py::int_(c.failed_step)) : py::none();
          },
          "the first step (1-based) that changed the value, or None")
      .def_property_readonly("passed", [](const pipeline::DerivationCheck& c) { return c.failed_step < 0; })
      .def_readonly("step_max_rel", &pipeline::DerivationCheck::step_max_rel)
      .def("__repr__", [](const pipeline::DerivationCheck& c) {
        return fmt::format("<soac.DerivationCheck {} on {} ({} states), max rel {:.2e}>",
                           c.failed_step < 0 ? "passed" : fmt::format("step {} failed", c.failed_step), c.robot,
                           c.samples, c.max_rel);
      });

  py::class_<PyDerivation>(m, "Derivation",
                           "A derivation: the input, every step (rule, citation, rewritten part, cost) and the final\n"
                           "form. str() is `soac derive`'s text; latex(), json() and html() its other renderings;\n"
                           "Jupyter shows it through _repr_latex_ and _repr_html_.")
      .def_property_readonly("input", [](const PyDerivation& p) { return ir::print(p.d.input, ir::Syntax::Unicode); })
      .def_property_readonly(
          "final", [](const PyDerivation& p) { return ir::print(rewrite::present(p.d.final), ir::Syntax::Unicode); })
      .def_property_readonly(
          "final_ascii", [](const PyDerivation& p) { return ir::print(rewrite::present(p.d.final)); },
          "the final form in the operator language (parses back)")
      .def_property_readonly("input_cost", [](const PyDerivation& p) { return p.d.input_cost; })
      .def_property_readonly("cost", [](const PyDerivation& p) { return p.d.cost; })
      .def_property_readonly("steps",
                             [](const PyDerivation& p) {
                               std::vector<StepView> steps;
                               for (std::size_t i = 0; i < p.d.steps.size(); ++i) steps.push_back(step_view(p, i));
                               return steps;
                             })
      .def_property_readonly("rules", [](const PyDerivation& p) { return rewrite::rules_used(p.d); })
      .def_readonly("check", &PyDerivation::check, "the check (derive(check=True)), else None")
      .def(
          "text", [](const PyDerivation& p) { return pipeline::derivation_text(p.d, check_of(p)); },
          "soac derive's text (also str())")
      .def(
          "latex", [](const PyDerivation& p) { return pipeline::derivation_latex(p.d, check_of(p)); },
          "soac derive --format latex: a LaTeX document")
      .def(
          "json", [](const PyDerivation& p) { return pipeline::derivation_json(p.d, check_of(p)); },
          "soac derive --format json")
      .def(
          "html", [](const PyDerivation& p) { return pipeline::derivation_html(p.d, check_of(p), p.rules); },
          "a self-contained HTML page (KaTeX inlined: works offline)")
      .def("__str__", [](const PyDerivation& p) { return pipeline::derivation_text(p.d, check_of(p)); })
      .def("__repr__",
           [](const PyDerivation& p) {
             return fmt::format("<soac.Derivation {} -> {} ({} steps)>", ir::print(p.d.input, ir::Syntax::Unicode),
                                ir::print(rewrite::present(p.d.final), ir::Syntax::Unicode), p.d.steps.size());
           })
      .def("_repr_latex_", &latex_display)
      .def("_repr_html_", [](const PyDerivation& p) { return pipeline::derivation_html(p.d, check_of(p), p.rules); });

  m.def("derive", &derive, "expression"_a, "robot"_a = py::none(), py::kw_only(), "check"_a = false, "samples"_a = 3,
        "seed"_a = 1, "library"_a = py::none(),
        "The cheapest equivalent form of `expression` the identity library reaches, every step with\n"
        "rule, citation, rewritten part and cost: soac derive EXPRESSION [--robot] [--check].\n\n"
        "robot: a soac.Robot or URDF path; a serial chain allows the library's [serial] rules, and\n"
        "  check=True checks on it. check: evaluate the input and every step densely on `samples`\n"
        "  random states (seeds seed, seed+1, ...), on `robot` or else on the random tree soac derive\n"
        "  --check uses; a step that changes the value is reported in .check (nothing is raised).\n"
        "library: an identity library file (default: $SOAC_LIBRARY, else the built-in one).\n"
        "Raises soac.Error for a bad expression ('<expression>:1:5: error: ...', detail: the caret).");
}

}  // namespace soa::python
