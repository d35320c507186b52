#include "pipeline/kernels.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>

#include "algebra/print.hpp"
#include "exec/execute.hpp"
#include "lower/lower.hpp"
#include "exec/derivative.hpp"
#include "exec/newton_euler_derivatives.hpp"
#include "specialise/differentiate.hpp"
#include "specialise/specialise.hpp"
#include "support/error.hpp"
#include "syntax/diagnostics.hpp"

namespace soa::pipeline {

KernelSpec kernel_spec(const lower::KernelDecl& k) {
  auto src = std::make_shared<syntax::Source>(syntax::Source{"<standard kernel " + k.name + ">", k.expression});
  return {k.name, k.inputs, syntax::parse_expression(src), k.output, k.meaning, std::nullopt, k.wrt, k.form};
}

std::vector<KernelSpec> standard_kernels() {
  std::vector<KernelSpec> out;
  for (const lower::KernelDecl& k : lower::standard_kernels()) out.push_back(kernel_spec(k));
  return out;
}

std::vector<Hold> holds_of(const std::vector<syntax::Hold>& declared) {
  std::vector<Hold> holds;
  for (const syntax::Hold& h : declared) {
    std::string directions;
    for (const std::string& d : h.directions) directions += (directions.empty() ? "" : ",") + d;
    holds.push_back(
        {h.frame, h.to,
         h.kind == "contact"  ? kTranslations
         : directions.empty() ? kAllDirections
                              : parse_directions(directions).value(),
         h.kind == "grasp" ? std::optional<Spring>(Spring{-1, h.spring[0], h.spring[1], h.spring[2], h.spring[3]})
                           : std::nullopt,
         [h](const std::string& why) { syntax::fail(h.where, fmt::format("{} '{}': {}", h.kind, h.frame, why)); }});
  }
  return holds;
}

std::vector<KernelSpec> kernels_of(const syntax::Module& module) {
  std::vector<KernelSpec> out;
  for (const syntax::Kernel& k : module.kernels) {
    // A kernel's name becomes a C++ function and a C symbol (emit_cpp.hpp): refused here,
    // where the declaration can be pointed at, when it cannot be one.
    if (const std::string problem = specialise::name_problem(k.name); !problem.empty())
      syntax::fail(k.where, "kernel name '" + k.name + "' " + problem);
    out.push_back({k.name, k.inputs, k.body, "out", ir::print(k.body), k.where, k.wrt});
  }
  return out;
}

std::string kernel_expression(const KernelSpec& spec) {
  const std::string e = ir::print(spec.expression);
  if (spec.wrt.empty()) return e;
  std::string wrt;
  for (const std::string& w : spec.wrt) wrt += (wrt.empty() ? "" : ", ") + w;
  const std::string cor = "(d(" + e + ")/d(qd) + calM Z) / 2 at qdd = 0";
  switch (spec.form) {
    case exec::DerivativeForm::Jacobian: break;
    case exec::DerivativeForm::Coriolis: return cor;
    case exec::DerivativeForm::Christoffel: return "d(Cor)/d(qd), Cor = " + cor;
  }
  return "d(" + e + ")/d(" + wrt + ")";
}

std::vector<KernelSpec> kernel_set(const std::string& path, bool welded, bool derivatives, bool grasped) {
  if (path.empty()) {
    std::vector<KernelSpec> specs = standard_kernels();
    if (welded && !grasped)
      for (const lower::KernelDecl& k : lower::welded_kernels()) specs.push_back(kernel_spec(k));
    if (grasped)
      for (const lower::KernelDecl& k : lower::grasped_kernels(welded)) specs.push_back(kernel_spec(k));
    if (derivatives)
      for (const lower::KernelDecl& k : lower::derivative_kernels()) specs.push_back(kernel_spec(k));
    return specs;
  }
  std::vector<KernelSpec> specs = kernels_of(syntax::load_module(path));
  if (specs.empty()) throw UserError(path + ": no kernel declarations");
  return specs;
}

namespace {

// Runs `f`; a UserError from a declared kernel is reported at its declaration, naming it.
template <typename F>
auto at_declaration(const KernelSpec& spec, F&& f) {
  try {
    return f();
  } catch (const UserError& e) {
    const std::string what = e.what();
    if (!spec.where || what.find(": error: ") != std::string::npos) throw;
    const std::string named = "kernel '" + spec.name + "'";
    syntax::fail(*spec.where, what.starts_with(named) ? what : named + ": " + what);
  }
}

// The Coriolis or Christoffel form (exec/derivative.hpp) from `cor`, tau's derivative along
// the Coriolis directions (inputs q, qd, qdd in layout `l`), at qdd = 0 (the result does not
// depend on it, so qdd's inputs are dead and dropped: they come last); Christoffel: that
// program replayed at qd = e_k for each k, the literals folding through it.
// `cor` is the Coriolis directions' derivative of tau (inputs q, qd, qdd): made by forward
// mode from tau's code, or by the sensitivity recursion (coriolis_by_sensitivity).
specialise::ScalarProgram quadratic_form(const specialise::ScalarProgram& cor, const exec::Layout& l,
                                         const exec::RobotConstants<double>& robot, exec::DerivativeForm form) {
  const int qd_at = l.inputs[1].offset, qdd_at = l.inputs[2].offset, nv = robot.nv;
  specialise::Tracer tracer({});
  std::vector<specialise::Traced> in;
  for (int i = 0; i < l.input_size; ++i) in.push_back(i < qdd_at ? tracer.input(i) : specialise::Traced(0.0));
  if (form == exec::DerivativeForm::Coriolis) return tracer.finish(tracer.replay(cor, in), qdd_at);
  std::vector<specialise::Traced> out;
  for (int k = 0; k < nv; ++k) {
    for (int j = 0; j < nv; ++j) in[static_cast<std::size_t>(qd_at + j)] = specialise::Traced(j == k ? 1.0 : 0.0);
    for (const specialise::Traced& x : tracer.replay(cor, in)) out.push_back(x);
  }
  return tracer.finish(out, qd_at);
}

}  // namespace

namespace {

// The standard kernel `name`'s expression in the form the library derives it to.
ir::Expr derived_form(const std::string& name, const Library& library, const rewrite::Options& o) {
  for (const lower::KernelDecl& k : lower::standard_kernels())
    if (k.name == name) return rewrite::present(rewrite::derive(kernel_spec(k).expression, library.rules, o).final);
  throw InternalError("derived_form: no standard kernel " + name);
}

bool has_input(const KernelSpec& spec, const std::string& name) {
  return std::find(spec.inputs.begin(), spec.inputs.end(), name) != spec.inputs.end();
}

// The route a derivative kernel of form `form` takes (DerivativeRoute).
DerivativeRoute route_of(const KernelSpec& spec, const ir::Expr& form, const Library& library,
                         const rewrite::Options& o) {
  if (spec.wrt.empty()) return DerivativeRoute::ForwardMode;
  if (spec.form != exec::DerivativeForm::Jacobian)  // the Coriolis forms of tau(q, qd, qdd)
    return spec.inputs == std::vector<std::string>{"q", "qd", "qdd"} &&
                   form == derived_form("inverse_dynamics", library, o)
               ? DerivativeRoute::Sensitivity
               : DerivativeRoute::ForwardMode;
  for (const std::string& w : spec.wrt)
    if (w != "q" && w != "qd") return DerivativeRoute::ForwardMode;
  if (has_input(spec, "qdd") && form == derived_form("inverse_dynamics", library, o))
    return DerivativeRoute::Sensitivity;
  if (has_input(spec, "T") && form == derived_form("forward_dynamics", library, o))
    return DerivativeRoute::ImplicitForward;
  return DerivativeRoute::ForwardMode;
}

}  // namespace

LoweredKernel lower_kernel(const KernelSpec& spec, const Library& library, const rewrite::Options& options) {
  return at_declaration(spec, [&] {
    rewrite::Options o = options;
    o.definitions = &library.algebra.definitions;
    rewrite::Derivation d = rewrite::derive(spec.expression, library.rules, o);
    // A lone 0 or I (H 0 T folds to 0) has no shape of its own: the input, equal to it,
    // has one, and lowers to the same zeros.
    const bool shapeless = d.final.is(ir::Op::Zero) || d.final.is(ir::Op::Identity);
    const ir::Expr form = shapeless ? spec.expression : rewrite::present(d.final);
    exec::SweepProgram p = lower::lower(form, library.algebra, {spec.name, spec.output, spec.inputs});
    LoweredKernel k{spec, std::move(d), std::move(p), DerivativeRoute::ForwardMode, std::nullopt, std::nullopt};
    k.route = route_of(spec, form, library, o);
    if (k.route == DerivativeRoute::ImplicitForward)
      k.inverse_mass = lower::lower(derived_form("mass_matrix_inverse", library, o), library.algebra,
                                    {spec.name + "_calMinv", "calMinv", {"q"}});
    if (k.route == DerivativeRoute::Sensitivity && spec.form != exec::DerivativeForm::Jacobian)
      k.mass_matrix =
          lower::lower(derived_form("mass_matrix", library, o), library.algebra, {spec.name + "_calM", "calM", {"q"}});
    return k;
  });
}

std::string derivation_summary(const rewrite::Derivation& d) {
  std::string s = "derived: " + ir::print(rewrite::present(d.final));
  for (const auto& step : d.steps)
    if (step.rule != "normalise") s += "\n  by " + step.rule + " [" + step.citation + "]";
  return s;
}

std::string algorithm_summary(const exec::SweepProgram& p) {
  std::string loops;
  auto add = [&loops](const std::vector<exec::Loop>& ls) {
    for (const exec::Loop& l : ls)
      loops += fmt::format("{}{}", loops.empty() ? "" : ", ", exec::to_string(l.direction));
  };
  add(p.loops);
  const std::size_t prologue = p.loops.size();
  if (p.columns) add(p.columns->loops);
  std::string s;
  for (const exec::LoweringStep& step : p.lowering) {
    s += s.empty() ? "algorithm: " : "\n  then ";
    s += step.way;
    if (!step.identity.empty()) s += fmt::format(" ({} [{}])", step.identity, step.citation);
    s += ": " + step.what;
  }
  s += fmt::format("\n  loops: {}", loops.empty() ? "none" : loops);
  if (p.columns) s += fmt::format(" ({} once, the rest per column)", prologue);
  return s;
}

std::string derivation_summary(const LoweredKernel& k) {
  std::string s = derivation_summary(k.derivation) + "\n" + algorithm_summary(k.program);
  if (k.spec.wrt.empty()) return s;
  const std::string wrt = fmt::format("{}", fmt::join(k.spec.wrt, ", "));
  switch (k.route) {
    case DerivativeRoute::ForwardMode:
      s += fmt::format(
          "\n  then forward mode with respect to {} (q in its tangent space): the chain rule on the robot's "
          "straight-line code, a direction carried only by the operations it reaches",
          wrt);
      break;
    case DerivativeRoute::Sensitivity:
      s += fmt::format(
          "\n  then, with respect to {} (q in its tangent space), the Newton-Euler sensitivity recursion "
          "(docs/mathematics.md section 7): world-frame composites outward and inward, one pair of dot "
          "products per related pair of joint columns",
          wrt);
      break;
    case DerivativeRoute::ImplicitForward:
      s += fmt::format(
          "\n  then d qdd/d({}) = -calM^-1 d(calM qdd + C)/d({}) at this qdd (calM qdd + C = T at fixed T), "
          "d(calM qdd + C) by the Newton-Euler sensitivity recursion (docs/mathematics.md section 7), "
          "calM^-1 by 001 Identity 6",
          wrt, wrt);
      break;
  }
  return s;
}

std::vector<int> wrt_inputs(const LoweredKernel& k) {
  std::vector<int> out;
  for (const std::string& w : k.spec.wrt) {
    int at = -1;
    for (std::size_t i = 0; i < k.program.inputs.size(); ++i)
      if (k.program.vars[k.program.inputs[i]].name == w) at = static_cast<int>(i);
    if (at < 0)
      throw UserError("kernel '" + k.spec.name + "': the derivative is taken with respect to '" + w +
                      "', which is not among its inputs");
    out.push_back(at);
  }
  return out;
}

exec::Layout kernel_layout(const LoweredKernel& k, const exec::RobotConstants<double>& robot) {
  if (k.spec.wrt.empty()) return exec::layout(k.program, robot);
  return exec::form_layout(k.program, wrt_inputs(k), k.spec.form, robot.nq, robot.nv, robot.n(), robot.m());
}

void run_generic(const LoweredKernel& k, const exec::RobotConstants<double>& robot, const double* in, double* out) {
  if (k.spec.wrt.empty())
    exec::execute(k.program, robot, in, out);
  else if (k.spec.form == exec::DerivativeForm::Jacobian)
    exec::differentiate(k.program, robot, in, wrt_inputs(k), out);
  else
    exec::quadratic_form(k.program, robot, k.spec.form, in, out);
}

namespace {

using specialise::Traced;

// The recursion's [d tau/dq, d tau/dqd] at (q, qd, qdd), recorded by `tracer`, each body's
// operations labelled with it.
std::vector<Traced> traced_dtau(specialise::Tracer& tracer, const exec::RobotConstants<double>& robot, const Traced* q,
                                const Traced* qd, const Traced* qdd) {
  const exec::RobotConstants<Traced> constants = exec::convert<Traced>(robot);
  std::vector<Traced> dtau(static_cast<std::size_t>(2 * robot.nv * robot.nv));
  exec::newton_euler_derivatives(constants, q, qd, qdd, dtau.data(), [&](int body, const char* what) {
    tracer.set_label(fmt::format("{}: {}", constants.bodies[body].name, what));
  });
  return dtau;
}

// A program of q alone (calM, calM^-1) specialised and recorded again at `q`.
std::vector<Traced> replayed_at(specialise::Tracer& tracer, const exec::SweepProgram& p,
                                const exec::RobotConstants<double>& robot, const Traced* q,
                                const specialise::TraceOptions& options) {
  return tracer.replay(specialise::specialise(p, robot, options),
                       std::vector<Traced>(q, q + exec::layout(p, robot).input_size));
}

// The straight-line code of a Sensitivity or ImplicitForward Jacobian kernel (DerivativeRoute).
specialise::ScalarProgram sensitivity_code(const LoweredKernel& k, const exec::RobotConstants<double>& robot,
                                           const specialise::TraceOptions& options) {
  const exec::Layout plain = exec::layout(k.program, robot);
  specialise::Tracer tracer(options);
  std::vector<Traced> in;
  for (int i = 0; i < plain.input_size; ++i) in.push_back(tracer.input(i));
  auto input = [&](const std::string& name) {
    for (std::size_t i = 0; i < k.program.inputs.size(); ++i)
      if (k.program.vars[k.program.inputs[i]].name == name) return in.data() + plain.inputs[i].offset;
    throw InternalError("sensitivity_code: kernel '" + k.spec.name + "' has no input " + name);
  };
  const int nv = robot.nv;
  const Traced *q = input("q"), *qd = input("qd");
  // Forward dynamics' accelerations (ImplicitForward; a robot with no joints has none).
  const bool implicit = k.route == DerivativeRoute::ImplicitForward;
  std::vector<Traced> qdd;
  if (implicit) qdd = tracer.replay(specialise::specialise(k.program, robot, options), in);
  const std::vector<Traced> dtau = traced_dtau(tracer, robot, q, qd, implicit ? qdd.data() : input("qdd"));
  std::vector<Traced> out;  // the directions of wrt in order, nv numbers each
  for (const std::string& w : k.spec.wrt) {
    const std::size_t block = w == "q" ? 0 : 1;
    out.insert(out.end(), dtau.begin() + static_cast<std::ptrdiff_t>(block * nv * nv),
               dtau.begin() + static_cast<std::ptrdiff_t>((block + 1) * nv * nv));
  }
  if (k.route == DerivativeRoute::Sensitivity || nv == 0) return tracer.finish(out, plain.input_size);
  const std::vector<Traced> minv = replayed_at(tracer, *k.inverse_mass, robot, q, options);
  std::vector<Traced> dqdd(out.size());
  for (std::size_t d = 0; d < out.size() / static_cast<std::size_t>(nv); ++d) {
    tracer.set_label(fmt::format("direction {}: -calM^-1 d tau", d));
    // Entry r = -sum_j m(r,j) t(j) = sum_j +-(m' u'), m' and u' the values m and t negate
    // when they are negations (-m', -u'): a chain of plain products in j's order, the signs
    // its own (Tracer::sum). So every row of a column is one chain of the same terms, the
    // rows' factors m'(r,j) apart -- what the back-ends compute rows at a time (lane groups,
    // columns). Folded, a row whose first product came out negated turned the rest of its
    // chain inside out (-p1 + p2 = p2 - p1).
    std::vector<std::pair<Traced, bool>> terms;  // (m' u', subtracted)
    for (int r = 0; r < nv; ++r) {
      terms.clear();
      for (int j = 0; j < nv; ++j) {
        const Traced& t = out[d * nv + j];
        const Traced& m = minv[static_cast<std::size_t>(j * nv + r)];
        if ((t.is_literal() && t.literal() == 0.0) || (m.is_literal() && m.literal() == 0.0)) continue;
        const std::optional<Traced> u = tracer.negated(t), mn = tracer.negated(m);
        // -(m t) is subtracted unless exactly one of m and t is a negation
        terms.emplace_back((mn ? *mn : m) * (u ? *u : t), u.has_value() == mn.has_value());
      }
      const Traced acc = tracer.sum(terms);
      dqdd[d * nv + static_cast<std::size_t>(r)] = acc;
    }
  }
  return tracer.finish(dqdd, plain.input_size);
}

// tau's derivative along the Coriolis directions (exec::coriolis_tangents), column k =
// (d tau/dqd e_k + calM Z e_k) / 2, with d tau/dqd by the sensitivity recursion and calM
// from the mass matrix's own code (only where Z is not 0: ball joints, free-flyers).
specialise::ScalarProgram coriolis_by_sensitivity(const LoweredKernel& k, const exec::RobotConstants<double>& robot,
                                                  const specialise::TraceOptions& options) {
  const exec::Layout plain = exec::layout(k.program, robot);  // q, qd, qdd
  const int q_at = plain.inputs[0].offset, qd_at = plain.inputs[1].offset, qdd_at = plain.inputs[2].offset;
  const int nv = robot.nv;
  specialise::Tracer tracer(options);
  std::vector<Traced> in;
  for (int i = 0; i < plain.input_size; ++i) in.push_back(tracer.input(i));
  const std::vector<Traced> dtau = traced_dtau(tracer, robot, in.data() + q_at, in.data() + qd_at, in.data() + qdd_at);
  const std::vector<Traced> calM = replayed_at(tracer, *k.mass_matrix, robot, in.data() + q_at, options);
  const auto tangents = exec::coriolis_tangents(robot, in.data() + qd_at, qd_at, qdd_at);
  std::vector<Traced> out(static_cast<std::size_t>(nv * nv));
  for (int c = 0; c < nv; ++c) {
    tracer.set_label(fmt::format("column {}: (d tau/dqd + calM Z) / 2", c));
    for (int r = 0; r < nv; ++r) {
      Traced acc = Traced(0.5) * dtau[static_cast<std::size_t>((nv + c) * nv + r)];
      for (const auto& [at, rate] : tangents[static_cast<std::size_t>(c)])
        if (at >= qdd_at) acc = acc + calM[static_cast<std::size_t>((at - qdd_at) * nv + r)] * rate;
      out[static_cast<std::size_t>(c * nv + r)] = acc;
    }
  }
  return tracer.finish(out, plain.input_size);
}

// The kernel's straight-line code: the sweep program specialised, or for a derivative kernel
// the route it takes (DerivativeRoute) and the form it makes (exec::DerivativeForm).
specialise::ScalarProgram kernel_code(const LoweredKernel& k, const exec::RobotConstants<double>& robot,
                                      const specialise::TraceOptions& options) {
  if (k.spec.wrt.empty()) return specialise::specialise(k.program, robot, options);
  const bool by_sensitivity = k.route != DerivativeRoute::ForwardMode;
  if (k.spec.form == exec::DerivativeForm::Jacobian && by_sensitivity) return sensitivity_code(k, robot, options);
  // Forward mode on the straight-line code, seeded with each input's tangent directions
  // (exec/derivative.hpp): q's quaternions move at rates that depend on q.
  const exec::Layout plain = exec::layout(k.program, robot);
  if (k.spec.form == exec::DerivativeForm::Jacobian) {
    const std::vector<int> wrt = wrt_inputs(k);
    return specialise::differentiate(
        specialise::specialise(k.program, robot, options),
        [&](const std::vector<Traced>& in) { return exec::input_tangents(k.program, plain, robot, wrt, in.data()); });
  }
  const int qd_at = plain.inputs[1].offset, qdd_at = plain.inputs[2].offset;
  const specialise::ScalarProgram cor =
      by_sensitivity ? coriolis_by_sensitivity(k, robot, options)
                     : specialise::differentiate(
                           specialise::specialise(k.program, robot, options), [&](const std::vector<Traced>& in) {
                             return exec::coriolis_tangents(robot, in.data() + qd_at, qd_at, qdd_at);
                           });
  return quadratic_form(cor, plain, robot, k.spec.form);
}

}  // namespace

specialise::Kernel specialise_kernel(const LoweredKernel& k, const exec::RobotConstants<double>& robot,
                                     const specialise::TraceOptions& options) {
  return at_declaration(k.spec, [&] {
    specialise::Kernel kernel =
        specialise::make_kernel(k.spec.name, kernel_expression(k.spec), derivation_summary(k), k.spec.meaning,
                                k.program, kernel_layout(k, robot), kernel_code(k, robot, options));
    if (!k.spec.wrt.empty()) kernel.col_space.reset();  // a block of columns per direction
    return kernel;
  });
}

std::vector<specialise::Kernel> specialise_kernels(const std::vector<LoweredKernel>& kernels,
                                                   const exec::RobotConstants<double>& robot) {
  return specialise::cheaper_form(
      [&](const specialise::TraceOptions& options) {
        std::vector<specialise::Kernel> code;
        for (const LoweredKernel& k : kernels) code.push_back(specialise_kernel(k, robot, options));
        return code;
      },
      [](const specialise::Kernel& k) -> const specialise::ScalarProgram& { return k.code; });
}

std::vector<double> sample_inputs(const exec::SweepProgram& p, const exec::Layout& layout, const State& s,
                                  std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<double> in;
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    const std::string& name = p.vars[p.inputs[i]].name;
    const VecX* v = name == "q" ? &s.q : name == "qd" ? &s.qd : name == "qdd" ? &s.qdd : name == "f0" ? &s.f0 : nullptr;
    for (int j = 0; j < layout.inputs[i].size; ++j) in.push_back(v ? (*v)[j] : unit(rng));
  }
  return in;
}

RobotKernels compile_for_robot(const std::vector<KernelSpec>& specs, const Library& library, const Robot& robot,
                               const std::vector<int>& tips) {
  RobotKernels out{exec::make_constants(robot, tips), {}, {}};
  rewrite::Options options;
  options.serial_chain = robot.is_serial_chain();
  for (const KernelSpec& spec : specs) {
    out.lowered.push_back(lower_kernel(spec, library, options));
    const exec::SweepProgram& p = out.lowered.back().program;
    if (!exec::solves(p).empty()) {
      std::mt19937_64 rng(1);
      const exec::Layout layout = kernel_layout(out.lowered.back(), out.constants);
      const std::vector<double> in =
          sample_inputs(p, layout, random_state(robot, static_cast<int>(tips.size()), rng), rng);
      std::vector<double> result(static_cast<std::size_t>(layout.output_size()));
      run_generic(out.lowered.back(), out.constants, in.data(), result.data());
    }
  }
  out.code = specialise_kernels(out.lowered, out.constants);
  return out;
}

}  // namespace soa::pipeline
