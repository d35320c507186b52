// What soa_bench and soa_bench_constraints share: a reporter that keeps, per benchmark, the
// median CPU time per call, and the formatting of the tables they print.
#pragma once

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
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
      if (const auto it = run.counters.find(kRatioCounter); it != run.counters.end()) {
        if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") ratio_medians_[name] = it->second;
        if (run.run_type == Run::RT_Iteration) ratio_samples_[name].push_back(it->second);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  // Median CPU ns per call, or NaN when the benchmark did not run (filtered out).
  double median(const std::string& name) const { return median_of(medians_, samples_, name); }

  // A paired benchmark's ratio (add_paired_benchmark): the median over repetitions of each
  // repetition's median batch ratio, or NaN when it did not run.
  double ratio(const std::string& name) const { return median_of(ratio_medians_, ratio_samples_, name); }

  static constexpr const char* kRatioCounter = "b_over_a";

private:
  static double median_of(const std::map<std::string, double>& medians,
                          const std::map<std::string, std::vector<double>>& samples, const std::string& name) {
    if (const auto it = medians.find(name); it != medians.end()) return it->second;
    const auto it = samples.find(name);
    if (it == samples.end() || it->second.empty()) return std::nan("");
    std::vector<double> v = it->second;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  }
  static double nanoseconds_per(benchmark::TimeUnit unit) {
    switch (unit) {
      case benchmark::kNanosecond: return 1.0;
      case benchmark::kMicrosecond: return 1e3;
      case benchmark::kMillisecond: return 1e6;
      case benchmark::kSecond: return 1e9;
    }
    return 1.0;
  }
  std::map<std::string, double> medians_, ratio_medians_;
  std::map<std::string, std::vector<double>> samples_, ratio_samples_;
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

// The kPlacements output places, 256 bytes apart from a 4096-byte boundary.
class OutputPlaces {
public:
  explicit OutputPlaces(int output_size)
      : buffer_(static_cast<std::size_t>(output_size) + kPlacements * kApart + 4096 / sizeof(double)),
        first_((4096 - reinterpret_cast<std::uintptr_t>(buffer_.data()) % 4096) % 4096 / sizeof(double)) {}
  double* at(int place) { return buffer_.data() + first_ + static_cast<std::size_t>(place) * kApart; }

private:
  static constexpr std::size_t kApart = 256 / sizeof(double);
  std::vector<double> buffer_;
  std::size_t first_;
};

template <class Call>
void add_benchmark(const std::string& name, int states, int output_size, Call call) {
  benchmark::RegisterBenchmark(name.c_str(), [states, output_size, call](benchmark::State& state) {
    OutputPlaces places(output_size);
    int s = 0, place = 0;
    for (auto _ : state) {
      double* out = places.at(place);
      call(s, out);
      benchmark::DoNotOptimize(out);
      benchmark::ClobberMemory();  // the outputs are written: no call is dead
      s = (s + 1) & (states - 1);
      if (s == 0) place = (place + 1) % kPlacements;
    }
  })->Unit(benchmark::kNanosecond);
}

// Registers a paired benchmark: one iteration runs `a` on every state in turn, then `b` on
// every state, each pass timed on the steady clock, and keeps the ratio of b's time to a's.
// Its counter kRatioCounter is the median of those ratios (Collector::ratio). Two separate
// benchmarks compare times taken seconds or minutes apart, on a VM whose virtual CPUs change
// clock with their host (docs/performance.md, "A/B"); passes a fraction of a millisecond
// apart run at the same clock, so what moves the ratio is the two codes' own times. The
// outputs go where add_benchmark puts them, placement after placement.
template <class CallA, class CallB>
void add_paired_benchmark(const std::string& name, int states, int output_size, CallA a, CallB b) {
  benchmark::RegisterBenchmark(name.c_str(), [states, output_size, a, b](benchmark::State& state) {
    OutputPlaces places(output_size);
    std::vector<double> ratios;
    int place = 0;
    // Seconds for one pass of `call` over every state.
    const auto pass = [states](const auto& call, double* out) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int s = 0; s < states; ++s) {
        call(s, out);
        benchmark::DoNotOptimize(out);
        benchmark::ClobberMemory();
      }
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    for (auto _ : state) {
      double* out = places.at(place);
      const double ta = pass(a, out);
      ratios.push_back(pass(b, out) / ta);
      place = (place + 1) % kPlacements;
    }
    if (ratios.empty()) return;
    std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2), ratios.end());
    state.counters[Collector::kRatioCounter] = ratios[ratios.size() / 2];
  })->Unit(benchmark::kMicrosecond);
}

}  // namespace soa::bench
