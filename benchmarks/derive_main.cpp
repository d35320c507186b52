// soa_bench_derive: the rewriter's time (rewrite::derive, what `soac derive` and every
// `soac emit` run first), measured as the rest of the suite is, with Google Benchmark and
// repetitions.
//
// Per expression of tests/golden/derive.list's kind: parsed once, outside the timed region;
// each iteration is one derive() with the built-in identity library and the default
// options. The counter `steps` is the derivation's length. Each iteration checks that the
// derivation lowered the cost, so a rewriter that returns its input cannot post a time.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "pipeline/pipeline.hpp"
#include "rewrite/rewrite.hpp"
#include "syntax/syntax.hpp"

namespace {

using namespace soa;

struct Case {
  std::string name, expression;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"calM^-1", "calM^-1"},
      {"forward_dynamics", "calM^-1 (T - C)"},
      {"lambda", "(J calM^-1 J*)^-1"},
      {"welded_fd", "calM^-1 (T - C - J* (J calM^-1 J*)^-1 (J calM^-1 (T - C) + B* phi* abar))"},
      {"d_calM", "d(calM)/dq_i"},
      {"d_calM^-1", "d(calM^-1)/dq_i"},
  };
  return c;
}

void derive_case(benchmark::State& state, const pipeline::Library& lib, const Case& c) {
  auto source = std::make_shared<syntax::Source>(syntax::Source{"<benchmark>", c.expression});
  const ir::Expr input = syntax::parse_expression(source, &lib.module);
  rewrite::Options options;
  options.definitions = &lib.algebra.definitions;
  std::size_t steps = 0;
  for (auto _ : state) {
    const rewrite::Derivation d = rewrite::derive(input, lib.rules, options);
    if (!(d.cost < d.input_cost)) {
      state.SkipWithError(("no cheaper form of " + c.expression).c_str());
      return;
    }
    steps = d.steps.size();
    benchmark::DoNotOptimize(d.final.get());
  }
  state.counters["steps"] = static_cast<double>(steps);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static const pipeline::Library lib = pipeline::load_library();
  for (const Case& c : cases())
    benchmark::RegisterBenchmark(("derive/" + c.name).c_str(), [&c](benchmark::State& s) {
      derive_case(s, lib, c);
    })->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
