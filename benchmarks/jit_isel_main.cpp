// soa_jit_isel: what the LLVM back-end's instruction selector costs and buys on large
// programs -- forward dynamics of random trees on a free-flyer, 50 to 400 bodies, compiled
// with FastISel everywhere (fast_isel_min_ops 0) and with SelectionDAG, the default for an
// O(N) kernel of any size (jit::Options::fast_isel_min_ops).
//
// Per tree and selector: `compile/...` times one pipeline::jit_compile of the kernel (wall
// clock; CPU of all threads as a counter), `run/...` one call of the compiled kernel,
// cycling over 16 random states. Before timing, each compiled kernel is checked against the
// SSA interpreter (the same bits), so a broken JIT posts no time.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "emit-llvm/jit.hpp"
#include "model/kinematics.hpp"
#include "model/robot.hpp"
#include "pipeline/jit.hpp"
#include "pipeline/kernels.hpp"
#include "pipeline/pipeline.hpp"
#include "specialise/specialise.hpp"

namespace {

using namespace soa;

struct Tree {
  pipeline::RobotKernels kernels;
  std::vector<std::vector<double>> inputs;
};

std::shared_ptr<const Tree> tree(int bodies) {
  RandomTreeOptions o;
  o.bodies = bodies;
  o.floating = true;
  const Robot robot = random_tree(1, o);
  const std::vector<int> tips = robot.default_tips();
  std::vector<pipeline::KernelSpec> specs;
  for (const pipeline::KernelSpec& k : pipeline::standard_kernels())
    if (k.name == "forward_dynamics") specs.push_back(k);
  auto t = std::make_shared<Tree>();
  t->kernels = pipeline::compile_for_robot(specs, pipeline::load_library(), robot, tips);
  const pipeline::LoweredKernel& k = t->kernels.lowered.front();
  const exec::Layout layout = pipeline::kernel_layout(k, t->kernels.constants);
  std::mt19937_64 rng(1);
  for (int s = 0; s < 16; ++s)
    t->inputs.push_back(
        pipeline::sample_inputs(k.program, layout, random_state(robot, static_cast<int>(tips.size()), rng), rng));
  return t;
}

pipeline::JitOptions options(bool dag) {
  pipeline::JitOptions o;
  if (!dag) o.fast_isel_min_ops = 0;
  return o;
}

void register_tree(int bodies) {
  const std::shared_ptr<const Tree> t = tree(bodies);
  const specialise::ScalarProgram& p = t->kernels.code.front().code;
  for (const bool dag : {false, true}) {
    const std::string name = std::to_string(bodies) + "_bodies/" + (dag ? "selection_dag" : "fast_isel");
    benchmark::RegisterBenchmark(("compile/" + name).c_str(),
                                 [t, dag](benchmark::State& state) {
                                   double cpu = 0;
                                   for (auto _ : state) {
                                     const std::clock_t start = std::clock();
                                     const jit::Kernels k = pipeline::jit_compile(t->kernels.code, options(dag));
                                     cpu += static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
                                   }
                                   state.counters["cpu_s"] =
                                       benchmark::Counter(cpu, benchmark::Counter::kAvgIterations);
                                 })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(1);
    auto code = std::make_shared<jit::Kernels>(pipeline::jit_compile(t->kernels.code, options(dag)));
    const jit::KernelFunction f = code->lookup("forward_dynamics");
    std::vector<double> got(p.outputs.size()), want(p.outputs.size());
    f(t->inputs.front().data(), got.data());
    specialise::evaluate(p, t->inputs.front().data(), want.data());
    const bool same = got == want;
    benchmark::RegisterBenchmark(("run/" + name).c_str(), [t, code, f, same, bodies](benchmark::State& state) {
      if (!same) state.SkipWithError("JIT kernel differs from the SSA interpreter");
      std::vector<double> out(t->kernels.code.front().code.outputs.size());
      std::size_t s = 0;
      for (auto _ : state) {
        f(t->inputs[s++ & 15].data(), out.data());
        benchmark::DoNotOptimize(out.data());
      }
      state.counters["bodies"] = bodies;
      state.counters["ops"] = specialise::count_ops(t->kernels.code.front().code).total();
    });
  }
}

}  // namespace

int main(int argc, char** argv) {
  jit::tune_llvm_process_options();  // as soac does (docs/performance.md, "The JIT's compile time")
  for (int bodies : {50, 100, 200, 400}) register_tree(bodies);  // compiles: after the tuning
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
