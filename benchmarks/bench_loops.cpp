// soa_bench_loops: what step loops (specialise/step_loops.hpp) cost at run time. The same
// kernels in two forms of generated C++, same run, interleaved: the columns' repeated steps
// (and, in the tree's large set, per-body loops: the sweeps' steps alike up to their bodies'
// constants) as loops over tables, and written out. A 100-body random tree with a free-flyer (soac
// emit --random-tree 100 --floating) and talos_reduced with a free-flyer, each with loops
// wherever steps repeat (--loop-min-ops 1; the default, 25000, gives the same form for the
// tree and writes talos' kernels out) and written out (--loop-min-ops 0). Then what packs
// gain (the written-out steps four columns at a time as vector code, emit_cpp.hpp; compiled
// only where the compiler targets AVX): talos_reduced written out without them (--step-lanes
// 1) and with. Each pair is first checked to give the same bits; built with FMA
// (-march=native), the compiler contracts the two forms differently, so there the check is
// to rounding (1e-12 relative to the output's largest entry).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench_report.hpp"
#include "model/kinematics.hpp"
#include "model/robot.hpp"

using KernelFn = void (*)(const double*, double*);

#define SOA_KERNELS(ns)                                             \
  extern "C" void ns##_inverse_dynamics(const double*, double*);    \
  extern "C" void ns##_forward_dynamics(const double*, double*);    \
  extern "C" void ns##_mass_matrix(const double*, double*);         \
  extern "C" void ns##_mass_matrix_inverse(const double*, double*); \
  extern "C" void ns##_jacobian(const double*, double*);            \
  extern "C" void ns##_lambda(const double*, double*);
SOA_KERNELS(tree)
SOA_KERNELS(tree_straight)
SOA_KERNELS(talos_straight)
SOA_KERNELS(talos_loops)
SOA_KERNELS(talos_body)
SOA_KERNELS(talos_scalar)
// The six kernels of one namespace, in kNames' order.
#define SOA_KERNEL_ARRAY(ns)                                                                                 \
  {                                                                                                          \
    ns##_inverse_dynamics, ns##_forward_dynamics, ns##_mass_matrix, ns##_mass_matrix_inverse, ns##_jacobian, \
        ns##_lambda                                                                                          \
  }

namespace {

using namespace soa;

constexpr int kStates = 64;
constexpr int kKernels = 6;
const char* const kNames[kKernels] = {"inverse_dynamics",    "forward_dynamics", "mass_matrix",
                                      "mass_matrix_inverse", "jacobian",         "lambda"};

struct Case {
  std::string key, label, loops_form, straight_form;
  Robot robot;
  int tips = 0;
  std::array<KernelFn, kKernels> loops{}, straight{};
  std::vector<std::vector<double>> q, qqdv;  // per state: q; and q, qd, qdd (or T)
  int output_size(int k) const {
    const int n = robot.nv, m = 6 * tips;
    return k < 2 ? n : k < 4 ? n * n : k == 4 ? m * n : m * m;
  }
  const std::vector<std::vector<double>>& inputs(int k) const { return k < 2 ? qqdv : q; }
};

#ifdef __FMA__
constexpr const char* kSameWhat = "to rounding (FMA contracted differently)";
bool same(const std::vector<double>& a, const std::vector<double>& b) {
  double scale = 1.0, diff = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, std::fabs(a[i]));
    diff = std::max(diff, std::fabs(a[i] - b[i]));
  }
  return diff <= 1e-12 * scale;
}
#else
constexpr const char* kSameWhat = "bit for bit";
bool same(const std::vector<double>& a, const std::vector<double>& b) {
  return std::memcmp(a.data(), b.data(), sizeof(double) * a.size()) == 0;
}
#endif

void add(Case& c) {
  std::mt19937_64 rng(1);
  for (int s = 0; s < kStates; ++s) {
    const State x = random_state(c.robot, c.tips, rng);
    c.q.emplace_back(x.q.data(), x.q.data() + x.q.size());
    std::vector<double> all = c.q.back();
    all.insert(all.end(), x.qd.data(), x.qd.data() + x.qd.size());
    all.insert(all.end(), x.qdd.data(), x.qdd.data() + x.qdd.size());
    c.qqdv.push_back(std::move(all));
  }
  for (int k = 0; k < kKernels; ++k) {
    const std::vector<std::vector<double>>& in = c.inputs(k);
    std::vector<double> a(c.output_size(k)), b(c.output_size(k));
    for (int s = 0; s < 8; ++s) {
      c.loops[k](in[s].data(), a.data());
      c.straight[k](in[s].data(), b.data());
      if (!same(a, b)) throw std::runtime_error(fmt::format("{} {}: the two forms differ", c.key, kNames[k]));
    }
    std::printf("check %s %s on 8 states: the two forms agree, %s\n", c.key.c_str(), kNames[k], kSameWhat);
    for (const bool loops : {true, false}) {
      const KernelFn f = loops ? c.loops[k] : c.straight[k];
      const auto* q = &in;
      bench::add_benchmark(fmt::format("{}/{}/{}", c.key, kNames[k], loops ? "loops" : "straight"), kStates,
                           c.output_size(k), [f, q](int s, double* out) { f((*q)[s].data(), out); });
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::vector<Case> cases(4);
  try {
    RandomTreeOptions o;
    o.bodies = 100;
    o.floating = true;
    const auto set = [](Case& c, std::string key, std::string label, std::string loops_form, const Robot& robot,
                        const std::array<KernelFn, kKernels>& loops, const std::array<KernelFn, kKernels>& straight) {
      c.key = std::move(key);
      c.label = std::move(label);
      c.loops_form = std::move(loops_form);
      c.straight_form = "--loop-min-ops 0";
      c.robot = robot;
      c.loops = loops;
      c.straight = straight;
    };
    const Robot talos = load_urdf(SOA_BENCH_TALOS, LoadOptions{true});
    set(cases[0], "tree", "random 100-body tree, free-flyer (173 dof)", "default", random_tree(1, o),
        SOA_KERNEL_ARRAY(tree), SOA_KERNEL_ARRAY(tree_straight));
    set(cases[1], "talos", "talos_reduced, free-flyer (38 dof)", "--loop-min-ops 1", talos,
        SOA_KERNEL_ARRAY(talos_loops), SOA_KERNEL_ARRAY(talos_straight));
    // The humanoid with per-body loops as well (a large set's form, forced): what they cost
    // a robot below large_set_ops.
    set(cases[2], "talos_body", "talos_reduced, free-flyer (38 dof), per-body loops",
        "--loop-min-ops 1 --large-set-ops 1", talos, SOA_KERNEL_ARRAY(talos_body), SOA_KERNEL_ARRAY(talos_straight));
    // Packs: "loops" is the scalar form here, "straight" the packed one (its own table).
    set(cases[3], "talos_packs", "talos_reduced, free-flyer (38 dof)", "--loop-min-ops 0 --step-lanes 1", talos,
        SOA_KERNEL_ARRAY(talos_scalar), SOA_KERNEL_ARRAY(talos_straight));
    for (Case& c : cases) {
      c.tips = static_cast<int>(c.robot.default_tips().size());
      add(c);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soa_bench_loops: %s\n", e.what());
    return 1;
  }
  const std::string load_before = bench::load_average();
  bench::Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  std::printf("\n<!-- soa_bench_loops table -->\n");
  std::printf("Median CPU time per call, %d random states cycled; load average before %s, after %s.\n\n", kStates,
              load_before.c_str(), bench::load_average().c_str());
  const std::vector<Case> loop_cases(cases.begin(), cases.end() - 1);
  for (const Case& c : loop_cases)
    std::printf("%s: loops = soac emit %s, written out = soac emit %s.\n", c.label.c_str(), c.loops_form.c_str(),
                c.straight_form.c_str());
  std::printf("\n| robot | kernel | loops (ns) | written out (ns) | loops / written out |\n|---|---|--:|--:|--:|\n");
  for (const Case& c : loop_cases)
    for (const char* k : kNames) {
      const double l = collector.median(fmt::format("{}/{}/loops", c.key, k));
      const double s = collector.median(fmt::format("{}/{}/straight", c.key, k));
      std::printf("| %s | %s | %s | %s | %s |\n", c.label.c_str(), k, bench::ns(l).c_str(), bench::ns(s).c_str(),
                  bench::ratio(l, s).c_str());
    }
  const Case& p = cases.back();
  std::printf("\n<!-- soa_bench_loops packs table -->\n%s: without packs = soac emit %s, packs = soac emit %s%s.\n",
              p.label.c_str(), p.loops_form.c_str(), p.straight_form.c_str(),
#ifdef __AVX__
              ""
#else
              " (built without AVX: the same scalar form twice)"
#endif
  );
  std::printf("\n| robot | kernel | without packs (ns) | packs (ns) | without / with |\n|---|---|--:|--:|--:|\n");
  for (const char* k : kNames) {
    const double l = collector.median(fmt::format("{}/{}/loops", p.key, k));
    const double s = collector.median(fmt::format("{}/{}/straight", p.key, k));
    std::printf("| %s | %s | %s | %s | %s |\n", p.label.c_str(), k, bench::ns(l).c_str(), bench::ns(s).c_str(),
                bench::ratio(l, s).c_str());
  }
  return 0;
}
