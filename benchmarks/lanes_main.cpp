// soa_lanes: the lane planner (compiler/specialise/lanes.hpp, both back-ends' vectoriser) on every
// standard kernel of talos_full, the largest shipped robot: the planning time, and as
// counters what the plan takes over -- operations of the kernel, nodes computed by the
// groups alone, groups of 4 and of 2 lanes, scalar terms and the vector steps they take.
// (Its correctness is tests/unit/test_lanes.cpp's; this only measures.)
#include <benchmark/benchmark.h>

#include "specialise/lanes.hpp"
#include "model/robot.hpp"
#include "pipeline/kernels.hpp"

namespace {

using namespace soa;

const pipeline::RobotKernels& talos_full() {
  static const pipeline::RobotKernels kernels = [] {
    const Robot robot = load_urdf(SOA_ROBOTS_DIR "/talos_full.urdf", LoadOptions{true});
    return pipeline::compile_for_robot(pipeline::standard_kernels(), pipeline::load_library(), robot,
                                       robot.default_tips());
  }();
  return kernels;
}

void plan(benchmark::State& state, std::size_t kernel) {
  const specialise::ScalarProgram& p = talos_full().code.at(kernel).code;
  specialise::LanePlan lanes;
  for (auto _ : state) {
    lanes = specialise::plan_lanes(p, specialise::kMaxLanes);
    benchmark::DoNotOptimize(lanes.groups.data());
  }
  int ops = 0, removed = 0, widths[specialise::kMaxLanes + 1] = {};
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    ops += specialise::arity(p.nodes[i].op) > 0;
    removed += lanes.removed[i];
  }
  for (const specialise::LaneGroup& g : lanes.groups) ++widths[g.width];
  state.counters["ops"] = ops;
  state.counters["removed"] = removed;
  state.counters["groups4"] = widths[4];
  state.counters["groups2"] = widths[2];
  state.counters["terms"] = lanes.terms;
  state.counters["steps"] = lanes.steps;
}

const int registered = [] {
  const std::vector<pipeline::KernelSpec> kernels = pipeline::standard_kernels();
  for (std::size_t k = 0; k < kernels.size(); ++k)
    benchmark::RegisterBenchmark(("plan_lanes/talos_full/" + kernels[k].name).c_str(), plan, k)
        ->Unit(benchmark::kMillisecond);
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
