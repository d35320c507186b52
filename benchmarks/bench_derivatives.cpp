// soa_bench_derivatives: the derivative kernels (soac --derivatives) against the plain
// kernels they differentiate, same run, compiled by soac's LLVM back-end for this CPU and as
// the generated C++ of soac_generate(... DERIVATIVES) with this build's flags. Each compiled
// kernel is first checked against the generic runtime's dual numbers (exec::differentiate)
// on the benchmark's states, the generated C++ against the JIT's numbers.
//
// Issue 16's bar: Pinocchio 3.7's analytical derivatives cost 1.7-3.5x its rnea and
// 1.3-2.8x its aba; 3x faster than that is panda <= 500 ns (ID) and 900 ns (FD),
// talos_reduced <= 2300 ns and 4500 ns.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

#include "bench_report.hpp"
#include "emit-llvm/jit.hpp"
#include "pipeline/jit.hpp"
#include "pipeline/kernels.hpp"
#include "specialise/scalar_program.hpp"

#include "panda_d.hpp"
#include "talos_d.hpp"

namespace {

using namespace soa;

constexpr int kStates = 64;

using GeneratedKernel = void (*)(const double*, double*);

// The generated C++ of the kernels the tables compare, by name.
std::vector<std::pair<std::string, GeneratedKernel>> generated(const std::string& key) {
#define SOA_BENCH_KERNELS(P)                                                                                  \
  {                                                                                                           \
    {"inverse_dynamics", P##_inverse_dynamics}, {"forward_dynamics", P##_forward_dynamics},                   \
        {"mass_matrix", P##_mass_matrix}, {"inverse_dynamics_derivatives", P##_inverse_dynamics_derivatives}, \
        {"forward_dynamics_derivatives", P##_forward_dynamics_derivatives},                                   \
        {"mass_matrix_derivative", P##_mass_matrix_derivative}, {"coriolis_matrix", P##_coriolis_matrix}, {   \
      "christoffel", P##_christoffel                                                                          \
    }                                                                                                         \
  }
  if (key == "panda") return SOA_BENCH_KERNELS(panda_d);
  return SOA_BENCH_KERNELS(talos_d);
#undef SOA_BENCH_KERNELS
}

// max |got - want| / max(1, max |want|): the checks' measure of agreement.
double relative_error(const std::vector<double>& got, const std::vector<double>& want) {
  double scale = 1.0, diff = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::abs(want[i]));
    diff = std::max(diff, std::abs(want[i] - got[i]));
  }
  return diff / scale;
}

struct Robotcase {
  std::string key, label;
  pipeline::RobotKernels kernels;
  std::unique_ptr<jit::Kernels> code;
  std::vector<std::vector<std::vector<double>>> inputs;  // per kernel, per state
};

std::unique_ptr<Robotcase> make_case(const std::string& key, const std::string& label, const Robot& robot) {
  auto c = std::make_unique<Robotcase>();
  c->key = key;
  c->label = label;
  const std::vector<int> tips = robot.default_tips();
  c->kernels =
      pipeline::compile_for_robot(pipeline::kernel_set("", false, true), pipeline::load_library(), robot, tips);
  // The same derivatives by forward mode on the plain kernel's code (the route the
  // sensitivity recursion replaced), compiled beside them: NAME_forward_mode.
  for (std::size_t i = 0, n = c->kernels.lowered.size(); i < n; ++i) {
    if (c->kernels.lowered[i].route == pipeline::DerivativeRoute::ForwardMode) continue;
    pipeline::LoweredKernel k = c->kernels.lowered[i];
    k.route = pipeline::DerivativeRoute::ForwardMode;
    k.spec.name += "_forward_mode";
    c->kernels.code.push_back(pipeline::specialise_kernel(k, c->kernels.constants));
    c->kernels.lowered.push_back(std::move(k));
  }
  c->code = std::make_unique<jit::Kernels>(pipeline::jit_compile(c->kernels.code));
  std::mt19937_64 rng(1);
  for (const pipeline::LoweredKernel& k : c->kernels.lowered) {
    const exec::Layout l = pipeline::kernel_layout(k, c->kernels.constants);
    auto& per_state = c->inputs.emplace_back();
    double worst = 0.0;
    for (int s = 0; s < kStates; ++s) {
      per_state.push_back(
          pipeline::sample_inputs(k.program, l, random_state(robot, static_cast<int>(tips.size()), rng), rng));
      if (s >= 8) continue;
      std::vector<double> want(l.output_size()), got(l.output_size());
      pipeline::run_generic(k, c->kernels.constants, per_state.back().data(), want.data());
      c->code->lookup(k.spec.name)(per_state.back().data(), got.data());
      worst = std::max(worst, relative_error(got, want));
    }
    std::printf("check %s %s on 8 states: JIT vs runtime %.1e\n", key.c_str(), k.spec.name.c_str(), worst);
    if (worst > 1e-11) throw std::runtime_error("the compiled kernel disagrees with the runtime: " + k.spec.name);
  }
  for (std::size_t i = 0; i < c->kernels.lowered.size(); ++i) {
    const std::string& name = c->kernels.lowered[i].spec.name;
    const jit::KernelFunction f = c->code->lookup(name);
    const auto* in = &c->inputs[i];
    const int size = pipeline::kernel_layout(c->kernels.lowered[i], c->kernels.constants).output_size();
    bench::add_benchmark(key + "/" + name, kStates, size,
                         [f, in](int s, double* out) { f((*in)[static_cast<std::size_t>(s)].data(), out); });
    for (const auto& [generated_name, g] : generated(key)) {
      if (generated_name != name) continue;
      // The generated C++ against the JIT (g++ may contract into FMAs: to rounding).
      double worst = 0.0;
      for (int s = 0; s < 8; ++s) {
        std::vector<double> want(size), got(size);
        f((*in)[s].data(), want.data());
        g((*in)[s].data(), got.data());
        worst = std::max(worst, relative_error(got, want));
      }
      std::printf("check %s %s on 8 states: generated C++ vs JIT %.1e\n", key.c_str(), name.c_str(), worst);
      if (worst > 1e-9) throw std::runtime_error("the generated kernel disagrees with the JIT's: " + name);
      bench::add_benchmark(key + "/" + name + "/generated", kStates, size,
                           [g, in](int s, double* out) { g((*in)[static_cast<std::size_t>(s)].data(), out); });
    }
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  jit::tune_llvm_process_options();
  std::vector<std::unique_ptr<Robotcase>> cases;
  try {
    cases.push_back(make_case("panda", "panda (9 dof)", load_urdf(SOA_BENCH_PANDA)));
    cases.push_back(
        make_case("talos", "talos_reduced, free-flyer (38 dof)", load_urdf(SOA_BENCH_TALOS, LoadOptions{true})));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soa_bench_derivatives: %s\n", e.what());
    return 1;
  }
  const std::string load_before = bench::load_average();
  bench::Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  std::printf("\n<!-- soa_bench_derivatives table -->\n");
  std::printf("Median CPU time per call, %d random states cycled; load average before %s, after %s.\n\n", kStates,
              load_before.c_str(), bench::load_average().c_str());
  std::printf(
      "| robot | derivative kernel | ops | JIT (ns) | generated C++ (ns) | plain kernel | ops | JIT (ns) | generated "
      "C++ "
      "(ns) | derivative / plain (JIT, C++) | target (ns) |\n");
  std::printf("|---|---|--:|--:|--:|---|--:|--:|--:|--:|--:|\n");
  const std::vector<std::array<std::string, 2>> pairs = {{"inverse_dynamics_derivatives", "inverse_dynamics"},
                                                         {"forward_dynamics_derivatives", "forward_dynamics"},
                                                         {"mass_matrix_derivative", "mass_matrix"},
                                                         {"coriolis_matrix", "inverse_dynamics"},
                                                         {"christoffel", "mass_matrix"}};
  for (const auto& c : cases) {
    auto ops = [&](const std::string& name) {
      for (std::size_t i = 0; i < c->kernels.lowered.size(); ++i)
        if (c->kernels.lowered[i].spec.name == name) return specialise::count_ops(c->kernels.code[i].code).total();
      return 0;
    };
    for (const auto& [d, plain] : pairs) {
      const double td = collector.median(c->key + "/" + d), tp = collector.median(c->key + "/" + plain);
      const double gd = collector.median(c->key + "/" + d + "/generated");
      const double gp = collector.median(c->key + "/" + plain + "/generated");
      std::string target = "-";
      if (d == "inverse_dynamics_derivatives") target = c->key == "panda" ? "500" : "2300";
      if (d == "forward_dynamics_derivatives") target = c->key == "panda" ? "900" : "4500";
      std::printf("| %s | %s | %d | %s | %s | %s | %d | %s | %s | %s, %s | %s |\n", c->label.c_str(), d.c_str(), ops(d),
                  bench::ns(td).c_str(), bench::ns(gd).c_str(), plain.c_str(), ops(plain), bench::ns(tp).c_str(),
                  bench::ns(gp).c_str(), bench::ratio(td, tp).c_str(), bench::ratio(gd, gp).c_str(), target.c_str());
    }
  }
  std::printf("\n<!-- soa_bench_derivatives routes -->\n");
  std::printf(
      "| robot | derivative kernel | sensitivity: ops | ns | forward mode: ops | ns | forward mode / sensitivity |\n");
  std::printf("|---|---|--:|--:|--:|--:|--:|\n");
  for (const auto& c : cases) {
    auto ops = [&](const std::string& name) {
      for (std::size_t i = 0; i < c->kernels.lowered.size(); ++i)
        if (c->kernels.lowered[i].spec.name == name) return specialise::count_ops(c->kernels.code[i].code).total();
      return 0;
    };
    for (const std::string d :
         {"inverse_dynamics_derivatives", "forward_dynamics_derivatives", "coriolis_matrix", "christoffel"}) {
      const std::string fm = d + "_forward_mode";
      const double ts = collector.median(c->key + "/" + d), tf = collector.median(c->key + "/" + fm);
      std::printf("| %s | %s | %d | %s | %d | %s | %s |\n", c->label.c_str(), d.c_str(), ops(d), bench::ns(ts).c_str(),
                  ops(fm), bench::ns(tf).c_str(), bench::ratio(tf, ts).c_str());
    }
  }
  return 0;
}
