// Test glue for the code-generation tests (test_lower, test_exec, test_specialise,
// test_emit_cpp): the standard kernels through the rewriter and the lowering, and the
// inputs of a sweep program taken from an interpreter state.
#pragma once

#include <map>
#include <random>
#include <string>
#include <vector>

#include "algebra/print.hpp"
#include "exec/execute.hpp"
#include "interp/interpreter.hpp"
#include "lower/kernels.hpp"
#include "lower/lower.hpp"
#include "pipeline/kernels.hpp"
#include "rewrite/rewrite.hpp"
#include "specialise/kernel.hpp"
#include "specialise/specialise.hpp"
#include "support/test_support.hpp"
#include "syntax/syntax.hpp"

namespace soa::test {

inline ir::Expr parse(const std::string& text) {
  return syntax::parse_expression(std::make_shared<syntax::Source>(syntax::Source{"<test>", text}));
}

inline const pipeline::Library& library() {
  static const pipeline::Library lib = pipeline::load_library(source_path("grammar/identities.soa"));
  return lib;
}

inline const std::vector<rewrite::Rule>& library_rules() { return library().rules; }

// The library's algebra: its definitions (calM = H phi M phi* H*, K = E_phi G, ...) and the
// ways of lowering it allows.
inline const ir::Algebra& algebra() { return library().algebra; }
inline const ir::Definitions& definitions() { return library().algebra.definitions; }

inline bool uses_rule(const rewrite::Derivation& d, const std::string& rule) {
  for (const auto& s : d.steps)
    if (s.rule == rule) return true;
  return false;
}

// Rewrite options with the library's definitions (the cost model prices calM by them).
inline rewrite::Options rewrite_options(rewrite::Options o = {}) {
  o.definitions = &definitions();
  return o;
}

// A standard kernel through the pipeline's rewrite and lowering (compiler/pipeline). Sweep
// programs are robot independent, so each kernel is derived once per test process.
inline const pipeline::LoweredKernel& lowered(const lower::KernelDecl& k) {
  static std::map<std::string, pipeline::LoweredKernel> cache;
  auto it = cache.find(k.name);
  if (it == cache.end()) it = cache.emplace(k.name, pipeline::lower_kernel(pipeline::kernel_spec(k), library())).first;
  return it->second;
}

inline const exec::SweepProgram& kernel_program(const lower::KernelDecl& k) { return lowered(k).program; }

// One standard kernel for one robot: rewrite, lower, specialise.
inline specialise::Kernel build_kernel(const lower::KernelDecl& k, const exec::RobotConstants<double>& robot) {
  return pipeline::specialise_kernel(lowered(k), robot);
}

// Joint forces uniform in [-10, 10] (N m, N): a constrained or compliant kernel's T.
inline VecX random_forces(int nv, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  VecX T(nv);
  for (int j = 0; j < nv; ++j) T[j] = 10.0 * u(rng);
  return T;
}

// A random valid input vector for a program (unit quaternions where the robot needs them).
inline std::vector<double> random_input(const exec::SweepProgram& p, const Robot& robot, int tips,
                                        std::mt19937_64& rng) {
  const State s = random_state(robot, tips, rng);
  std::vector<double> in;
  for (int v : p.inputs) {
    const std::string& n = p.vars[v].name;
    const VecX& x = n == "q" ? s.q : n == "qd" ? s.qd : n == "qdd" || n == "T" ? s.qdd : s.f0;
    in.insert(in.end(), x.data(), x.data() + x.size());
  }
  return in;
}

// The program's inputs, in layout order, from an interpreter state (T is the state's RNEA
// torque, so that forward dynamics must give back qdd).
inline std::vector<double> program_inputs(const exec::SweepProgram& p, const interp::Evaluation& ev) {
  std::vector<double> in;
  for (int v : p.inputs) {
    const std::string& n = p.vars[v].name;
    const VecX& x = n == "q"     ? ev.state.q
                    : n == "qd"  ? ev.state.qd
                    : n == "qdd" ? ev.state.qdd
                    : n == "T"   ? ev.kin.T
                                 : ev.state.f0;
    in.insert(in.end(), x.data(), x.data() + x.size());
  }
  return in;
}

inline double relative_difference(const MatX& a, const MatX& b) {
  const double scale = std::max({a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff(), 1.0});
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

}  // namespace soa::test
