// soa_jit_compile: the LLVM back-end's compile time (all standard kernels of the Panda and
// of Talos robots up to 50 dofs), measured as the rest of the suite is, with Google
// Benchmark and repetitions.
//
// Per robot configuration: the 7 standard kernels are rewritten, lowered and specialised
// once, outside the timed region; each iteration is one pipeline::jit_compile of all of
// them with the default options (one compile thread per hardware thread), after
// jit::tune_llvm_process_options() as in soac, i.e. what `soac jit` reports as "total
// compile time". Real (wall) time is the figure; the CPU time of all threads is reported
// as a counter, since Google Benchmark's own CPU time covers the calling thread only, and so
// are the kernels' operations (ops) and those compiled, what several kernels share counted
// once (compiled_ops; pipeline::JitOptions::share_min_ops).
// Each run also checks one kernel against the SSA interpreter, so a broken JIT cannot
// post a time.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "emit-llvm/jit.hpp"
#include "model/robot.hpp"
#include "pipeline/jit.hpp"
#include "pipeline/kernels.hpp"
#include "pipeline/pipeline.hpp"
#include "specialise/specialise.hpp"

namespace {

using namespace soa;

struct Config {
  std::string name, urdf;
  bool floating;
  std::vector<std::string> tips;  // empty: the default tips (Robot::default_tips)
};

std::vector<specialise::Kernel> specialised(const Config& c) {
  const Robot robot = load_urdf(c.urdf, LoadOptions{c.floating});
  std::vector<int> tips;
  for (const std::string& t : c.tips) tips.push_back(robot.find_frame(t).value());
  if (tips.empty()) tips = robot.default_tips();
  const pipeline::Library library = pipeline::load_library();
  return pipeline::compile_for_robot(pipeline::standard_kernels(), library, robot, tips).code;
}

void register_config(const Config& c) {
  auto code = std::make_shared<std::vector<specialise::Kernel>>(specialised(c));
  int ops = 0;
  for (const specialise::Kernel& k : *code) ops += specialise::count_ops(k.code).total();
  benchmark::RegisterBenchmark(
      ("jit_compile/" + c.name).c_str(),
      [code, ops](benchmark::State& state) {
        double cpu = 0;
        int compiled =
            0;  // operations after sharing (pipeline::JitOptions::share_min_ops): what the code generator sees
        for (auto _ : state) {
          const std::clock_t start = std::clock();
          const jit::Kernels kernels = pipeline::jit_compile(*code);
          cpu += static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
          compiled = 0;
          for (const auto* timings : {&kernels.timings(), &kernels.shared_timings()})
            for (const jit::KernelTiming& t : *timings) compiled += t.ops;
          // One kernel against the interpreter: a broken JIT posts no time.
          const specialise::Kernel& k = code->front();
          std::vector<double> in(k.code.input_count), got(k.code.outputs.size()), want(k.code.outputs.size());
          std::mt19937_64 rng(1);
          std::uniform_real_distribution<double> u(-1.0, 1.0);
          for (double& x : in) x = u(rng);
          kernels.lookup(k.name)(in.data(), got.data());
          specialise::evaluate(k.code, in.data(), want.data());
          if (got != want) state.SkipWithError("JIT kernel differs from the SSA interpreter");
        }
        state.counters["cpu_s"] = benchmark::Counter(cpu, benchmark::Counter::kAvgIterations);
        state.counters["ops"] = ops;
        state.counters["compiled_ops"] = compiled;
      })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->Iterations(1);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  jit::tune_llvm_process_options();
  const std::string shared = SOA_ROBOTS_DIR "/";
  const std::vector<Config> configs = {
      {"panda", SOA_BENCH_PANDA, false, {}},
      {"talos_reduced+ff", shared + "talos_reduced.urdf", true, {}},
      {"talos_full+ff/hands_feet",
       shared + "talos_full.urdf",
       true,
       {"leg_right_6_link", "leg_left_6_link", "arm_right_7_link", "arm_left_7_link"}},
      // The stress case: every leaf body a tip, 10 of them gripper finger links (Lambda 78 x 78).
      {"talos_full+ff/leaf_tips",
       shared + "talos_full.urdf",
       true,
       {"leg_right_6_link", "leg_left_6_link", "gripper_right_fingertip_3_link", "gripper_right_motor_single_link",
        "gripper_right_fingertip_2_link", "gripper_right_fingertip_1_link", "gripper_right_motor_double_link",
        "gripper_left_fingertip_3_link", "gripper_left_motor_single_link", "gripper_left_fingertip_2_link",
        "gripper_left_fingertip_1_link", "gripper_left_motor_double_link", "head_2_link"}},
  };
  for (const Config& c : configs) register_config(c);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
