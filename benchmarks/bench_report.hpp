// What soa_bench and soa_bench_constraints share: a reporter that keeps, per benchmark, the
// median CPU time per call, and the formatting of the tables they print.
#pragma once

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace soa::bench {

// Keeps what the console shows and remembers, per benchmark, the median CPU time per call:
// the "median" aggregate when there are repetitions, else the single run.
class Collector : public benchmark::ConsoleReporter {
public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const double ns = run.GetAdjustedCPUTime() * nanoseconds_per(run.time_unit);
      const std::string& name = run.run_name.function_name;
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") medians_[name] = ns;
      if (run.run_type == Run::RT_Iteration) samples_[name].push_back(ns);
    }
    ConsoleReporter::ReportRuns(runs);
  }

  // Median CPU ns per call, or NaN when the benchmark did not run (filtered out).
  double median(const std::string& name) const {
    if (const auto it = medians_.find(name); it != medians_.end()) return it->second;
    const auto it = samples_.find(name);
    if (it == samples_.end() || it->second.empty()) return std::nan("");
    std::vector<double> v = it->second;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  }

private:
  static double nanoseconds_per(benchmark::TimeUnit unit) {
    switch (unit) {
      case benchmark::kNanosecond: return 1.0;
      case benchmark::kMicrosecond: return 1e3;
      case benchmark::kMillisecond: return 1e6;
      case benchmark::kSecond: return 1e9;
    }
    return 1.0;
  }
  std::map<std::string, double> medians_;
  std::map<std::string, std::vector<double>> samples_;
};

inline std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string one, five, fifteen;
  f >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

inline std::string ratio(double slow, double fast) {
  return std::isnan(slow) || std::isnan(fast) ? "-" : fmt::format("{:.1f}x", slow / fast);
}

inline std::string ns(double v) {
  if (std::isnan(v)) return "-";
  return v < 100 ? fmt::format("{:.1f}", v) : fmt::format("{:.0f}", v);
}

// Registers `call(state, out)` as a benchmark cycling through `states` states (a power of
// two), its outputs kept alive so that no call is dead. The outputs go to kPlacements
// places 256 bytes apart in turn (each after all states), covering every address modulo
// 4096: a CPU delays a load that follows a store to an address with the same low 12 bits
// (4K aliasing), and a kernel's stores to its output against its loads from its stack
// frame moved talos_reduced's calM^-1 by up to 65% from one placement to another
// (docs/performance.md). A figure is the mean over placements, not one placement's luck.
inline constexpr int kPlacements = 16;
template <class Call>
void add_benchmark(const std::string& name, int states, int output_size, Call call) {
  benchmark::RegisterBenchmark(name.c_str(), [states, output_size, call](benchmark::State& state) {
    constexpr std::size_t apart = 256 / sizeof(double);
    std::vector<double> buffer(static_cast<std::size_t>(output_size) + kPlacements * apart + 4096 / sizeof(double));
    const std::size_t aligned = (4096 - reinterpret_cast<std::uintptr_t>(buffer.data()) % 4096) % 4096 / sizeof(double);
    int s = 0, place = 0;
    for (auto _ : state) {
      double* out = buffer.data() + aligned + static_cast<std::size_t>(place) * apart;
      call(s, out);
      benchmark::DoNotOptimize(out);
      benchmark::ClobberMemory();  // the outputs are written: no call is dead
      s = (s + 1) & (states - 1);
      if (s == 0) place = (place + 1) % kPlacements;
    }
  })->Unit(benchmark::kNanosecond);
}

}  // namespace soa::bench
