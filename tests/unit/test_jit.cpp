// The LLVM back-end (compiler/emit-llvm): hand-built ScalarPrograms covering every
// operation run bit for bit as the SSA interpreter does; every standard kernel of the
// shared robots and of random trees, JIT-compiled, equals the SSA interpreter and the
// generic runtime; and bad programs, names and options give clear errors, not crashes.
#include <catch2/catch.hpp>

#ifndef SOA_HAVE_LLVM_JIT

TEST_CASE("LLVM JIT: skipped, soac was configured with -DSOA_WITH_LLVM=OFF", "[jit]") {
  WARN("the LLVM back-end is not built (SOA_WITH_LLVM=OFF): nothing to test");
}

#else

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/SourceMgr.h>

#include "emit-llvm/emit_llvm.hpp"
#include "emit-llvm/jit.hpp"
#include "exec/constants.hpp"
#include "pipeline/jit.hpp"
#include "specialise/specialise.hpp"
#include "support/error.hpp"
#include "support/pipeline.hpp"
#include "support/scalar_builder.hpp"
#include "support/sincos.hpp"

namespace {

using namespace soa;
using specialise::ScalarNode;
using specialise::ScalarOp;
using specialise::ScalarProgram;
using NamedPrograms = std::vector<std::pair<std::string, ScalarProgram> >;

using Builder = test::ScalarBuilder;

// Every operation, an input read twice, literals (negative, tiny, huge) folded with
// inputs, a sin and a cos of one value (one inline soa::sincos) and a sine of a large one
// (libm's), and outputs that are an input and a literal directly.
ScalarProgram every_op() {
  Builder b(3);
  const int x = b.in(0), y = b.in(1), z = b.in(2), x2 = b.in(0);
  const int c1 = b.lit(-1.5), c2 = b.lit(1e-300), c3 = b.lit(3.0e10);
  const int s = b.add(ScalarOp::Add, x, y), d = b.add(ScalarOp::Sub, s, z), m = b.add(ScalarOp::Mul, d, c1);
  const int q = b.add(ScalarOp::Div, m, b.add(ScalarOp::Add, b.add(ScalarOp::Mul, z, z), b.lit(0.25)));
  const int n = b.add(ScalarOp::Neg, q);
  const int r = b.add(ScalarOp::Sqrt, b.add(ScalarOp::Add, b.add(ScalarOp::Mul, x2, x2), c2));
  const int sn = b.add(ScalarOp::Sin, y), cs = b.add(ScalarOp::Cos, y);
  const int big = b.add(ScalarOp::Mul, b.add(ScalarOp::Sin, b.add(ScalarOp::Mul, x, c3)), n);
  const int all = b.add(ScalarOp::Sub, b.add(ScalarOp::Add, b.add(ScalarOp::Mul, sn, cs), r), big);
  b.p.outputs = {s, d, m, q, n, r, sn, cs, big, all, x, c1, all};
  specialise::check(b.p);
  return b.p;
}

// A random DAG over every operation: a property test of the emitter's op mapping.
ScalarProgram random_program(std::mt19937_64& rng, int inputs, int size) {
  Builder b(inputs);
  std::uniform_real_distribution<double> value(-3.0, 3.0);
  for (int i = 0; i < inputs; ++i) b.in(i);
  b.lit(value(rng));
  for (int i = 0; i < size; ++i) {
    const int n = static_cast<int>(b.p.nodes.size());
    std::uniform_int_distribution<int> pick(0, n - 1), kind(0, 10);
    const int a = pick(rng), c = pick(rng);
    switch (kind(rng)) {
      case 0:
      case 1: b.add(ScalarOp::Add, a, c); break;
      case 2:
      case 3: b.add(ScalarOp::Mul, a, c); break;
      case 4: b.add(ScalarOp::Sub, a, c); break;
      case 5: b.add(ScalarOp::Div, a, b.add(ScalarOp::Add, b.add(ScalarOp::Mul, c, c), b.lit(1.0))); break;
      case 6: b.add(ScalarOp::Neg, a); break;
      case 7: b.add(ScalarOp::Sqrt, b.add(ScalarOp::Add, b.add(ScalarOp::Mul, a, a), b.lit(0.5))); break;
      case 8: b.add(ScalarOp::Sin, a); break;
      case 9: b.add(ScalarOp::Cos, a); break;
      default: b.lit(value(rng)); break;
    }
  }
  const int n = static_cast<int>(b.p.nodes.size());
  for (int i = std::max(0, n - 20); i < n; ++i) b.p.outputs.push_back(i);
  specialise::check(b.p);
  return b.p;
}

std::vector<double> random_vector(std::mt19937_64& rng, int n) {
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

// Bit for bit (both NaN counts as equal).
bool identical(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::isnan(a[i]) && std::isnan(b[i])) && std::memcmp(&a[i], &b[i], sizeof(double)) != 0) return false;
  return true;
}

std::vector<double> run(jit::KernelFunction f, const ScalarProgram& p, const std::vector<double>& in) {
  std::vector<double> out(p.outputs.size(), -12345.0);
  f(in.data(), out.data());
  return out;
}

std::vector<double> interpret(const ScalarProgram& p, const std::vector<double>& in) {
  std::vector<double> out(p.outputs.size());
  specialise::evaluate(p, in.data(), out.data());
  return out;
}

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double scale = 1.0, diff = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    scale = std::max({scale, std::abs(a[i]), std::abs(b[i])});
    diff = std::max(diff, std::abs(a[i] - b[i]));
  }
  return diff / scale;
}

// The message of the exception `f` throws, checked to be an E.
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("no exception of the expected kind");
  return {};
}

// Every standard kernel of `robot` through the JIT, against the SSA interpreter (bit for
// bit) and the generic runtime (1e-12) on random states.
// The three ways in: ScalarPrograms, sweep programs and a robot, the pipeline's kernels.
enum class Path { ScalarPrograms, SweepPrograms, PipelineKernels };

// share_min_ops < 0: the default options; otherwise programs of that many operations that
// several kernels compute alike are shared (pipeline::JitOptions::share_min_ops) -- and must be.
void check_robot(const Robot& robot, Path path = Path::ScalarPrograms, int share_min_ops = -1) {
  const std::vector<int> tips = robot.default_tips();
  const auto constants = exec::make_constants(robot, tips);
  std::vector<std::pair<std::string, exec::SweepProgram> > programs;
  std::vector<specialise::Kernel> pipeline_kernels;
  NamedPrograms code;
  for (const auto& k : lower::standard_kernels()) {
    programs.emplace_back(k.name, test::kernel_program(k));
    if (path == Path::PipelineKernels) {
      pipeline_kernels.push_back(test::build_kernel(k, constants));
      code.emplace_back(k.name, pipeline_kernels.back().code);
    } else {
      code.emplace_back(k.name, specialise::specialise(programs.back().second, constants));
    }
  }
  pipeline::JitOptions options;
  if (share_min_ops >= 0) options.share_min_ops = share_min_ops;
  const jit::Kernels kernels = path == Path::SweepPrograms     ? pipeline::jit_compile(programs, constants, options)
                               : path == Path::PipelineKernels ? pipeline::jit_compile(pipeline_kernels, options)
                                                               : pipeline::jit_compile(code, options);
  if (share_min_ops > 0) {
    REQUIRE(!kernels.shared_timings().empty());
    for (const jit::KernelTiming& t : kernels.shared_timings()) CHECK(t.users.size() >= 2);
  }
  CHECK(kernels.timings().size() == programs.size());
  std::mt19937_64 rng(7);
  double worst_ssa = 0.0, worst_generic = 0.0;
  for (std::size_t k = 0; k < programs.size(); ++k) {
    INFO(robot.source << ": " << programs[k].first);
    const exec::SweepProgram& p = programs[k].second;
    const ScalarProgram& sp = code[k].second;
    const exec::Layout l = exec::layout(p, constants);
    REQUIRE(sp.input_count == l.input_size);
    REQUIRE(static_cast<int>(sp.outputs.size()) == l.output_size());
    const jit::KernelFunction f = kernels.lookup(programs[k].first);
    for (int sample = 0; sample < 3; ++sample) {
      const std::vector<double> in = test::random_input(p, robot, static_cast<int>(tips.size()), rng);
      const std::vector<double> jitted = run(f, sp, in), ssa = interpret(sp, in);
      std::vector<double> generic(l.output_size());
      exec::execute(p, constants, in.data(), generic.data());
      worst_ssa = std::max(worst_ssa, relative_difference(jitted, ssa));
      worst_generic = std::max(worst_generic, relative_difference(jitted, generic));
      // Same operations in the same order under IEEE rules: the interpreter's numbers.
      CHECK(identical(jitted, ssa));
      CHECK(relative_difference(jitted, generic) < 1e-12);
      CHECK(relative_difference(ssa, generic) < 1e-12);
    }
  }
  INFO(robot.source << ": worst JIT vs SSA " << worst_ssa << ", JIT vs generic " << worst_generic);
  SUCCEED();
}

}  // namespace

TEST_CASE("every operation runs as the SSA interpreter runs it, bit for bit", "[jit]") {
  const ScalarProgram p = every_op();
  std::mt19937_64 rng(3);
  struct Setting {
    int codegen_level;
    bool fast_isel;
    const char* passes;
    int part_ops;
  };
  // Every code generator level, both instruction selectors, the O2 IR pipeline, and
  // kernels split into parts down to one operation each (every value crosses a part).
  for (const Setting& s :
       {Setting{0, false, "", 0}, Setting{1, true, "", 0}, Setting{2, false, "", 0},
        Setting{3, false, "default<O3>", 0}, Setting{2, true, "default<O2>", 0}, Setting{2, true, "", 1},
        Setting{2, true, "", 2}, Setting{0, false, "", 5}, Setting{2, false, "default<O2>", 3}}) {
    INFO("codegen O" << s.codegen_level << (s.fast_isel ? " FastISel" : "") << ", passes '" << s.passes
                     << "', parts of " << s.part_ops);
    jit::Options o;
    o.codegen_level = s.codegen_level;
    o.fast_isel = s.fast_isel;
    o.passes = s.passes;
    o.part_ops = s.part_ops;
    const jit::Kernels k = jit::compile({{"every_op", p}}, o);
    REQUIRE(k.names() == std::vector<std::string>{"every_op"});
    for (int sample = 0; sample < 50; ++sample) {
      const std::vector<double> in = random_vector(rng, 3);
      CHECK(identical(run(k.lookup("every_op"), p, in), interpret(p, in)));
    }
    // Special values go through unchanged: inf, nan, signed zeros.
    for (const std::vector<double>& in : std::vector<std::vector<double> >{
             {0.0, -0.0, 0.0}, {INFINITY, 1.0, 2.0}, {NAN, -1.0, 0.5}, {-0.0, -0.0, -0.0}, {1e308, 1e308, 1e-308}})
      CHECK(identical(run(k.lookup("every_op"), p, in), interpret(p, in)));
  }
}

TEST_CASE("sin and cos equal the interpreter's on every kind of argument, bit for bit", "[jit]") {
  // A sine and cosine of one input (one soa::sincos), a second sine of it (the same pair
  // again), a cosine alone, a sine alone of a computed value.
  Builder b(2);
  const int x = b.in(0), y = b.in(1);
  const int sx = b.add(ScalarOp::Sin, x), cx = b.add(ScalarOp::Cos, x), cy = b.add(ScalarOp::Cos, y);
  const int sxy = b.add(ScalarOp::Sin, b.add(ScalarOp::Mul, x, y)), sx2 = b.add(ScalarOp::Sin, x);
  b.p.outputs = {sx, cx, cy, sxy, sx2, b.add(ScalarOp::Add, sx, cy)};
  specialise::check(b.p);
  // The fast path (joint angles, the hardest reduction at 29 pi/2, just below 2^20), the
  // libm fallback (2^20 and beyond, infinities, NaN), signed zeros, tiny and subnormal.
  const std::vector<double> values = {0.3,
                                      -2.5,
                                      0x1.6c6cbc45dc8dep+5,
                                      std::nextafter(0x1p20, 0.0),
                                      0x1p20,
                                      -1.5e6,
                                      1e22,
                                      INFINITY,
                                      -INFINITY,
                                      NAN,
                                      0.0,
                                      -0.0,
                                      1e-300,
                                      -0x1p-1074};
  for (int part_ops : {0, 1, 3}) {  // 1: every operation its own part, the pair made again in each
    for (const char* passes : {"", "default<O2>"}) {
      INFO("parts of " << part_ops << ", passes '" << passes << "'");
      jit::Options o;
      o.part_ops = part_ops;
      o.passes = passes;
      const jit::Kernels k = jit::compile({{"trig", b.p}}, o);
      for (double u : values)
        for (double v : values) {
          INFO("x = " << u << ", y = " << v);
          const std::vector<double> out = run(k.lookup("trig"), b.p, {u, v});
          CHECK(identical(out, interpret(b.p, {u, v})));
          CHECK(identical({out[0], out[1]}, {soa::sincos(u).s, soa::sincos(u).c}));
        }
    }
  }
}

TEST_CASE("six angles' sines and cosines, as vector code four at a time, equal the interpreter's bit for bit",
          "[jit]") {
  // sin and cos of each of six inputs: two vectors of four lanes (the second half padded).
  const int n = 6;
  Builder b(n);
  for (int i = 0; i < n; ++i) {
    const int x = b.in(i);
    b.p.outputs.push_back(b.add(ScalarOp::Sin, x));
    b.p.outputs.push_back(b.add(ScalarOp::Cos, x));
  }
  specialise::check(b.p);
  // In the IR: vector code where sincos_lanes asks for it, scalar code otherwise.
  llvm::LLVMContext context;
  emit::LlvmOptions lanes;
  lanes.sincos_lanes = 4;
  const auto printed = [](const llvm::Module& m) {
    std::string text;
    llvm::raw_string_ostream os(text);
    m.print(os, nullptr);
    return os.str();
  };
  CHECK_THAT(printed(*emit::emit_llvm_module(context, "vector", {{"trig", b.p}}, lanes)),
             Catch::Contains("fcmp olt <4 x double>"));
  CHECK_THAT(printed(*emit::emit_llvm_module(context, "scalar", {{"trig", b.p}})), !Catch::Contains("<4 x double>"));
  // Every kind of argument in every lane: the fast path, libm's (2^20 and beyond, inf,
  // NaN), signed zeros, subnormals; whole or in parts, SelectionDAG (vector) or FastISel.
  const std::vector<double> kinds = {
      0.3, -2.5, 0x1.6c6cbc45dc8dep+5, std::nextafter(0x1p20, 0.0), 0x1p20, 1e22, INFINITY, NAN, -0.0, -0x1p-1074};
  std::mt19937_64 rng(8);
  std::uniform_int_distribution<std::size_t> pick(0, kinds.size() - 1);
  for (const int fast_isel_min_ops : {20000, 0}) {
    for (const int part_ops : {0, 5}) {
      INFO("fast_isel_min_ops " << fast_isel_min_ops << ", parts of " << part_ops);
      jit::Options o;
      o.fast_isel_min_ops = fast_isel_min_ops;
      o.part_ops = part_ops;
      const jit::Kernels k = jit::compile({{"trig", b.p}}, o);
      for (int sample = 0; sample < 200; ++sample) {
        std::vector<double> in(n);
        for (double& x : in) x = kinds[pick(rng)];
        CHECK(identical(run(k.lookup("trig"), b.p, in), interpret(b.p, in)));
      }
    }
  }
}

TEST_CASE("random programs over every operation equal the interpreter bit for bit", "[jit]") {
  std::mt19937_64 rng(11);
  NamedPrograms programs;
  for (int i = 0; i < 12; ++i)
    programs.emplace_back("random_" + std::to_string(i), random_program(rng, 1 + i % 5, 30 + 25 * i));
  // Whole, in parts, and in parts sliced over modules that compile concurrently.
  for (const auto& [part_ops, module_ops] :
       std::vector<std::pair<int, int> >{{0, 0}, {1, 0}, {7, 0}, {40, 0}, {1, 3}, {7, 20}, {40, 80}}) {
    INFO("parts of " << part_ops << ", modules of " << module_ops);
    jit::Options o;
    o.part_ops = part_ops;
    o.module_ops = module_ops;
    const jit::Kernels k = jit::compile(programs, o);
    REQUIRE(k.timings().size() == programs.size());
    for (const auto& [name, p] : programs) {
      INFO(name);
      for (int sample = 0; sample < 10; ++sample) {
        const std::vector<double> in = random_vector(rng, p.input_count);
        CHECK(identical(run(k.lookup(name), p, in), interpret(p, in)));
      }
    }
  }
}

TEST_CASE("programs below fast_isel_min_ops operations get SelectionDAG, larger ones FastISel, same bits", "[jit]") {
  std::mt19937_64 rng(5);
  const NamedPrograms programs = {{"small", random_program(rng, 3, 40)}, {"large", random_program(rng, 3, 400)}};
  const auto ops = [&](int i) { return specialise::count_ops(programs[static_cast<std::size_t>(i)].second).total(); };
  REQUIRE(ops(0) < 100);
  REQUIRE(ops(1) >= 100);
  struct Setting {
    bool fast_isel;
    int min_ops, level;
    bool small_fast, large_fast;  // what each program's timing must say
  };
  for (const Setting& s :
       {Setting{true, 100, 2, false, true}, Setting{true, 0, 2, true, true}, Setting{false, 100, 2, false, false},
        Setting{true, 1000000, 2, false, false}, Setting{false, 100, 0, true, true}}) {
    INFO("fast_isel " << s.fast_isel << ", fast_isel_min_ops " << s.min_ops << ", level " << s.level);
    jit::Options o;
    o.fast_isel = s.fast_isel;
    o.fast_isel_min_ops = s.min_ops;
    o.codegen_level = s.level;
    o.part_ops = 30;  // several modules per program: each takes its program's selector
    o.module_ops = 60;
    const jit::Kernels k = jit::compile(programs, o);
    CHECK(k.timings()[0].fast_isel == s.small_fast);
    CHECK(k.timings()[1].fast_isel == s.large_fast);
    for (const auto& [name, p] : programs)
      for (int sample = 0; sample < 10; ++sample) {
        const std::vector<double> in = random_vector(rng, p.input_count);
        CHECK(identical(run(k.lookup(name), p, in), interpret(p, in)));
      }
  }
  jit::Options bad;
  bad.fast_isel_min_ops = -1;
  CHECK_THAT(message_of<UserError>([&] { jit::compile(programs, bad); }), Catch::Contains("FastISel threshold -1"));
}

TEST_CASE("O(N) kernels (no more outputs than inputs) and what they share get SelectionDAG however large", "[jit]") {
  std::mt19937_64 rng(9);
  // Each random program has 20 outputs: with 24 inputs it is a kernel like forward dynamics,
  // with 3 one like the mass matrix (more outputs than inputs).
  const ScalarProgram linear = random_program(rng, 24, 400), pairs = random_program(rng, 3, 400);
  REQUIRE(linear.outputs.size() <= static_cast<std::size_t>(linear.input_count));
  REQUIRE(pairs.outputs.size() > static_cast<std::size_t>(pairs.input_count));
  // A large shared function (20 outputs) and a small body for each kind of caller: its own
  // inputs (24, or 3), then the shared function's outputs.
  const ScalarProgram shared_n = random_program(rng, 24, 400), shared_pairs = random_program(rng, 3, 400);
  const ScalarProgram body_n = random_program(rng, 44, 40), body_pairs = random_program(rng, 23, 40);
  const auto compile = [&](int min_ops, bool caller_linear) {
    const ScalarProgram& shared = caller_linear ? shared_n : shared_pairs;
    const ScalarProgram& body = caller_linear ? body_n : body_pairs;
    const int own = caller_linear ? 24 : 3;
    jit::Code code;
    code.shared.push_back({"soa_shared_0", &shared, {"caller"}});
    code.kernels.push_back({"fd_like", "soa_fd_like", &linear, {}, "", 0});
    code.kernels.push_back({"m_like", "soa_m_like", &pairs, {}, "", 0});
    code.kernels.push_back({"caller", "soa_caller", &body, {{"soa_shared_0", own}}, "soa_caller_body", own});
    jit::Options o;
    o.fast_isel_min_ops = min_ops;
    o.part_ops = 30;
    o.module_ops = 60;
    return jit::compile(code, o);
  };
  {
    const jit::Kernels k = compile(100, true);
    CHECK_FALSE(k.timings()[0].fast_isel);         // fd_like: O(N), above the threshold
    CHECK(k.timings()[1].fast_isel);               // m_like: outputs per pair, above it
    CHECK_FALSE(k.timings()[2].fast_isel);         // caller: 20 outputs, 24 inputs of its own, small
    CHECK_FALSE(k.shared_timings()[0].fast_isel);  // called by an O(N) kernel
  }
  {
    const jit::Kernels k = compile(100, false);  // the caller has 20 outputs and 3 inputs
    CHECK(k.shared_timings()[0].fast_isel);
  }
  {
    const jit::Kernels k = compile(0, true);  // 0: FastISel everywhere
    for (const jit::KernelTiming& t : k.timings()) CHECK(t.fast_isel);
    CHECK(k.shared_timings()[0].fast_isel);
  }
}

TEST_CASE("the target CPU, its tuning and features can be chosen (valgrind: no AVX-512), contraction allowed",
          "[jit]") {
  const ScalarProgram p = every_op();
  std::mt19937_64 rng(5);
  for (const char* cpu : {"x86-64", "x86-64-v3"}) {
    INFO(cpu);
    jit::Options o;
    o.cpu = cpu;
    const jit::Kernels k = jit::compile({{"f", p}}, o);
    CHECK(k.cpu() == cpu);
    const std::vector<double> in = random_vector(rng, 3);
    CHECK(identical(run(k.lookup("f"), p, in), interpret(p, in)));
  }
  jit::Options o;
  o.tune_cpu = "cpu";  // the host's own scheduling model instead of the generic one
  const jit::Kernels tuned = jit::compile({{"f", p}}, o);
  const std::vector<double> in = random_vector(rng, 3);
  CHECK(identical(run(tuned.lookup("f"), p, in), interpret(p, in)));
  o = {};
  o.features = "-avx512f";
  CHECK(jit::compile({{"f", p}}, o).features().find("-avx512f") != std::string::npos);
  // FMA contraction changes rounding, not results beyond it.
  o = {};
  o.cpu = "x86-64-v3";
  o.allow_contraction = true;
  const jit::Kernels k = jit::compile({{"f", p}}, o);
  for (int sample = 0; sample < 20; ++sample) {
    const std::vector<double> in = random_vector(rng, 3);
    CHECK(relative_difference(run(k.lookup("f"), p, in), interpret(p, in)) < 1e-13);
  }
}

TEST_CASE("outputs that are literal zeros are all written: short runs by vector stores and long ones by one memset",
          "[jit]") {
  // Runs of +0.0 of 1, 2, 3, 5, 7 and 40 outputs between computed ones, and a -0.0, which
  // is a literal like any other (not part of a run).
  test::ScalarBuilder b(2);
  const int x = b.in(0), y = b.in(1), sum = b.add(ScalarOp::Add, x, y), zero = b.lit(0.0), minus_zero = b.lit(-0.0);
  for (int run : {1, 2, 3, 5, 7, 40}) {
    b.p.outputs.push_back(sum);
    b.p.outputs.insert(b.p.outputs.end(), run, zero);
  }
  b.p.outputs.push_back(minus_zero);
  b.p.outputs.push_back(b.add(ScalarOp::Mul, sum, x));
  for (int part_ops : {0, 1}) {  // whole, and split (the zeros belong to no part)
    INFO("parts of " << part_ops);
    jit::Options o;
    o.part_ops = part_ops;
    const jit::Kernels k = jit::compile({{"zeros", b.p}}, o);
    const std::vector<double> in = {0.25, -1.5};
    std::vector<double> out(b.p.outputs.size(), std::nan(""));  // every entry must be overwritten
    k.lookup("zeros")(in.data(), out.data());
    CHECK(identical(out, interpret(b.p, in)));
  }
  llvm::LLVMContext context;
  const std::string ir = emit::to_text(*emit::emit_llvm_module(context, "m", {{"zeros", b.p}}));
  std::size_t memsets = 0;
  for (std::size_t at = 0; (at = ir.find("call void @llvm.memset", at + 1)) != std::string::npos;) ++memsets;
  CHECK(memsets == 1);  // the run of 40
  // The vectors of zeros are loaded from a table, not stored as constants: FastISel
  // selects a store of a vector value, but not of a vector constant.
  CHECK(ir.find("@zeros.zeros = private constant [4 x double] zeroinitializer") != std::string::npos);
  CHECK(ir.find("load <4 x double>, ptr @zeros.zeros") != std::string::npos);
  CHECK(ir.find("load <2 x double>, ptr @zeros.zeros") != std::string::npos);
  CHECK(ir.find("zeroinitializer, ptr") == std::string::npos);
  CHECK(ir.find("store double -0.000000e+00") != std::string::npos);
}

TEST_CASE("the emitted IR: one function per kernel with the C++ back-end's signature", "[jit]") {
  llvm::LLVMContext context;
  const auto m = emit::emit_llvm_module(context, "m", {{"every_op", every_op()}, {"second", every_op()}});
  const std::string ir = emit::to_text(*m);
  CHECK(ir.find("define void @every_op(ptr noalias nocapture readonly %in, ptr noalias nocapture writeonly %out)") !=
        std::string::npos);
  CHECK(ir.find("define void @second(") != std::string::npos);
  // sin and cos: soa::sincos inline, once per operand (every_op takes them of two values),
  // libm's sin and cos only in a cold block for arguments beyond the fast path, called
  // through pointers in module constants (FastISel selects neither llvm.sin nor a direct
  // call to a library function it knows).
  const std::string first = ir.substr(0, ir.find("define void @second"));
  std::size_t cold = 0;
  for (std::size_t at = 0; (at = first.find("\nsincos.cold", at + 1)) != std::string::npos;) ++cold;
  CHECK(cold == 2);
  CHECK(ir.find("@soa.sin = private constant ptr @sin") != std::string::npos);
  CHECK(ir.find("@soa.cos = private constant ptr @cos") != std::string::npos);
  CHECK(ir.find("llvm.sin") == std::string::npos);
  const std::size_t libm_sin = first.find("load ptr, ptr @soa.sin");
  REQUIRE(libm_sin != std::string::npos);
  CHECK(libm_sin > first.find("\nsincos.cold"));
  CHECK(first.find("!prof") != std::string::npos);
  CHECK(ir.find("llvm.sqrt.f64") != std::string::npos);
  CHECK(ir.find("fneg double") != std::string::npos);
  CHECK(ir.find("fast") == std::string::npos);      // no fast-math flags
  CHECK(ir.find("contract") == std::string::npos);  // no contraction by default
  // in[0] is read by two Input nodes but loaded once: three loads for three inputs.
  std::size_t loads = 0;
  for (std::size_t at = ir.find("define void @every_op");
       (at = ir.find("load double, ptr %", at + 1)) < ir.find("define void @second");)
    ++loads;
  CHECK(loads == 3);

  // Split into parts: internal noinline functions called in order, values crossing parts
  // kept in a stack array.
  emit::LlvmOptions contract;
  contract.allow_contraction = true;
  const std::string contracted =
      emit::to_text(*emit::emit_llvm_module(context, "c", {{"every_op", every_op()}}, contract));
  CHECK(contracted.find("fmul contract double") != std::string::npos);
  CHECK(contracted.find("fadd contract double") != std::string::npos);

  emit::LlvmOptions in_parts;
  in_parts.part_ops = 4;
  const auto split = emit::emit_llvm_module(context, "split", {{"every_op", every_op()}}, in_parts);
  const std::string parts = emit::to_text(*split);
  CHECK(parts.find("alloca [") != std::string::npos);
  CHECK(parts.find("define internal void @every_op.part0(ptr noalias nocapture readonly %in, ptr noalias nocapture "
                   "writeonly %out, ptr noalias nocapture %scratch)") != std::string::npos);
  CHECK(parts.find("define internal void @every_op.part4(") != std::string::npos);
  CHECK(parts.find("define internal void @every_op.part5(") == std::string::npos);  // 18 operations: 5 parts
  CHECK(parts.find("noinline") != std::string::npos);
  CHECK(emit::part_count(every_op(), 4) == 5);

  // Sliced over modules: the first holds the entry and declares the parts defined elsewhere;
  // the others define theirs as external functions, and no entry.
  emit::LlvmOptions head = in_parts, tail = in_parts;
  head.end_part = 2;
  tail.first_part = 2;
  tail.entry = false;
  const std::string sliced_head =
      emit::to_text(*emit::emit_llvm_module(context, "head", {{"every_op", every_op()}}, head));
  const std::string rest = emit::to_text(*emit::emit_llvm_module(context, "tail", {{"every_op", every_op()}}, tail));
  CHECK(sliced_head.find("define void @every_op(") != std::string::npos);
  CHECK(sliced_head.find("define void @every_op.part1(") != std::string::npos);
  CHECK(sliced_head.find("declare void @every_op.part2(") != std::string::npos);
  CHECK(rest.find("define void @every_op.part2(") != std::string::npos);
  CHECK(rest.find("define void @every_op.part4(") != std::string::npos);
  CHECK(rest.find("@every_op(") == std::string::npos);
  CHECK(rest.find("@every_op.part1(") == std::string::npos);

  // --emit-llvm: one valid module holding every kernel, before or after the pipeline.
  const std::string file = "test_jit_dump.ll";
  for (bool optimised : {false, true}) {
    INFO("optimised " << optimised);
    jit::Options o;
    o.ir_file = file;
    o.ir_optimised = optimised;
    jit::compile({{"every_op", every_op()}, {"second", every_op()}}, o);
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    llvm::LLVMContext c;
    llvm::SMDiagnostic error;
    const auto parsed = llvm::parseAssemblyString(text.str(), error, c);
    REQUIRE(parsed);
    CHECK_NOTHROW(emit::verify(*parsed));
    CHECK(parsed->getFunction("every_op"));
    CHECK(parsed->getFunction("second"));
  }
  std::remove(file.c_str());
}

TEST_CASE("the sin-cos pairs of a part's inputs come first, in input order; a computed value's at its use", "[jit]") {
  // in: x, y, z. sin(x y), cos(z) | sin(x), cos(x y), sum -- with parts of 3: part 0 pairs
  // z (and then x y), part 1 x (and reads x y from the scratch array).
  Builder b(3);
  const int x = b.in(0), y = b.in(1), z = b.in(2);
  const int xy = b.add(ScalarOp::Mul, x, y);
  const int s1 = b.add(ScalarOp::Sin, xy), c1 = b.add(ScalarOp::Cos, z);
  const int s2 = b.add(ScalarOp::Sin, x), c2 = b.add(ScalarOp::Cos, xy);
  b.p.outputs = {s1, c1, s2, c2, b.add(ScalarOp::Add, s1, s2)};
  specialise::check(b.p);
  // Per function, in layout order (the cold blocks skipped): the inputs whose |x| the
  // pairs test, and whether each came before every other operation -- a product of two
  // loads (x y), a load from the scratch array, a pair of a computed value.
  struct Order {
    std::vector<std::uint64_t> inputs;
    bool first = true;
  };
  const auto order = [](const llvm::Function& f) {
    Order o;
    bool other = false;
    const auto load = [](const llvm::Value* v) { return llvm::dyn_cast<llvm::LoadInst>(v); };
    // A load's array ("in", "scratch") and index.
    const auto element = [](const llvm::LoadInst& l) -> std::pair<std::string, std::uint64_t> {
      const llvm::Value* base = l.getPointerOperand();
      std::uint64_t index = 0;
      if (const auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(base)) {
        index = llvm::cast<llvm::ConstantInt>(gep->getOperand(1))->getZExtValue();
        base = gep->getPointerOperand();
      }
      return {base->getName().str(), index};
    };
    for (const llvm::BasicBlock& block : f) {
      if (block.getName().starts_with("sincos.cold")) continue;
      for (const llvm::Instruction& i : block) {
        // |x| of a pair: x's bits and 0x7fff...
        const auto* mask =
            i.getOpcode() == llvm::Instruction::And ? llvm::dyn_cast<llvm::ConstantInt>(i.getOperand(1)) : nullptr;
        const auto* bits = mask && mask->getZExtValue() == 0x7fffffffffffffffULL
                               ? llvm::dyn_cast<llvm::BitCastInst>(i.getOperand(0))
                               : nullptr;
        if (bits) {
          const llvm::LoadInst* l = load(bits->getOperand(0));
          if (!l || element(*l).first != "in") {
            other = true;  // a computed value's pair
            continue;
          }
          o.inputs.push_back(element(*l).second);
          o.first = o.first && !other;
        } else if (i.getOpcode() == llvm::Instruction::FMul && load(i.getOperand(0)) && load(i.getOperand(1))) {
          other = true;  // x y
        } else if (const llvm::LoadInst* l = load(&i); l && element(*l).first == "scratch") {
          other = true;  // an earlier part's value
        }
      }
    }
    return o;
  };
  llvm::LLVMContext context;
  const auto whole = emit::emit_llvm_module(context, "whole", {{"trig", b.p}});
  const Order o = order(*whole->getFunction("trig"));
  CHECK(o.inputs == std::vector<std::uint64_t>{0, 2});
  CHECK(o.first);
  emit::LlvmOptions in_parts;
  in_parts.part_ops = 3;
  const auto split = emit::emit_llvm_module(context, "split", {{"trig", b.p}}, in_parts);
  const Order part0 = order(*split->getFunction("trig.part0")), part1 = order(*split->getFunction("trig.part1"));
  CHECK(part0.inputs == std::vector<std::uint64_t>{2});
  CHECK(part0.first);
  CHECK(part1.inputs == std::vector<std::uint64_t>{0});
  CHECK(part1.first);
  // The values are the interpreter's, whole or split.
  for (int part_ops : {0, 3}) {
    jit::Options opt;
    opt.part_ops = part_ops;
    const jit::Kernels k = jit::compile({{"trig", b.p}}, opt);
    const std::vector<std::vector<double> > inputs = {{0.3, -2.5, 1.25}, {-1e7, 3.0, 0.0}, {2.0, 1e300, -0.0}};
    for (const std::vector<double>& in : inputs) CHECK(identical(run(k.lookup("trig"), b.p, in), interpret(b.p, in)));
  }
}

TEST_CASE("JIT-compiled standard kernels equal the interpreter and the generic runtime (shared robots)", "[jit]") {
  check_robot(load_urdf(test::shared_robot_path("double_pendulum.urdf")), Path::SweepPrograms);
  check_robot(load_urdf(test::shared_robot_path("panda.urdf")));
  check_robot(load_urdf(test::shared_robot_path("solo12.urdf"), LoadOptions{true}), Path::PipelineKernels);
}

TEST_CASE("JIT-compiled standard kernels equal the interpreter and the generic runtime (random trees)", "[jit]") {
  check_robot(random_tree(4, RandomTreeOptions{7, true, true, true, 0.5}));
  check_robot(random_tree(5, RandomTreeOptions{6, false, true, true, 0.5}));
}

TEST_CASE("kernels calling the programs they share equal the interpreter bit for bit", "[jit]") {
  check_robot(load_urdf(test::shared_robot_path("panda.urdf")), Path::ScalarPrograms, 50);
  check_robot(load_urdf(test::shared_robot_path("solo12.urdf"), LoadOptions{true}), Path::PipelineKernels, 200);
  check_robot(random_tree(5, RandomTreeOptions{9, true, true, true, 0.5}), Path::SweepPrograms, 20);
}

TEST_CASE("the back-end compiles the shared functions and the kernels calling them it is given", "[jit]") {
  // A shared function computing in[0] in[1], whose output a caller finds at in[2]; a kernel
  // whose body adds in[0] to it, and one calling nothing.
  Builder product(2);
  product.p.outputs = {product.add(ScalarOp::Mul, product.in(0), product.in(1))};
  Builder body(3);
  body.p.outputs = {body.add(ScalarOp::Add, body.in(0), body.in(2))};
  const ScalarProgram alone = every_op();
  jit::Code code;
  code.shared.push_back({"robot_product", &product.p, {"k"}});
  jit::KernelCode& k = code.kernels.emplace_back();
  k.name = "k";
  k.symbol = "robot_k";
  k.program = &body.p;
  k.calls = {{"robot_product", 2}};
  k.body = "robot_k_body";
  k.own_inputs = 2;
  jit::KernelCode& other = code.kernels.emplace_back();
  other.name = "other";
  other.symbol = "robot_other";
  other.program = &alone;
  const jit::Kernels kernels = jit::compile(code);
  CHECK(kernels.names() == std::vector<std::string>{"k", "other"});
  double out = 0;
  const double in[2] = {1.5, -2.0};
  kernels.lookup("k")(in, &out);
  CHECK(out == 1.5 + 1.5 * -2.0);
  const std::vector<double> x = {0.3, -0.7, 1.1};
  CHECK(identical(run(kernels.lookup("other"), alone, x), interpret(alone, x)));
  REQUIRE(kernels.shared_timings().size() == 1);
  CHECK(kernels.shared_timings()[0].name == "robot_product");
  CHECK(kernels.shared_timings()[0].users == std::vector<std::string>{"k"});
  CHECK(kernels.timings()[0].ops == 1);  // the body's own: the product is the shared function's
  // What the caller must get right: distinct functions, calls of shared functions only.
  jit::Code clash = code;
  clash.kernels[0].body = "robot_product";
  CHECK_THAT(message_of<UserError>([&] { jit::compile(clash); }),
             Catch::Contains("two functions are called 'robot_product'"));
  jit::Code unknown = code;
  unknown.kernels[0].calls = {{"robot_nothing", 2}};
  CHECK_THAT(message_of<UserError>([&] { jit::compile(unknown); }),
             Catch::Contains("kernel 'k' calls 'robot_nothing', which is no shared function"));
}

TEST_CASE("kernels compile on several threads at once", "[jit]") {
  const ScalarProgram p = every_op();
  const std::vector<double> in = {0.3, -0.7, 1.1};
  const std::vector<double> expected = interpret(p, in);
  bool ok[2] = {false, false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      const jit::Kernels k = jit::compile({{"f", p}});
      ok[t] = identical(run(k.lookup("f"), p, in), expected);
    });
  for (auto& t : threads) t.join();
  CHECK(ok[0]);
  CHECK(ok[1]);
}

TEST_CASE("programs violating the contract are reported, not compiled", "[jit]") {
  const auto broken = [](auto&& edit) {
    ScalarProgram p = every_op();
    edit(p);
    return message_of<InternalError>([&] { jit::compile({{"broken", p}}); });
  };
  CHECK_THAT(broken([](ScalarProgram& p) { p.nodes[8].a = 20; }),
             Catch::Contains("kernel 'broken'") &&
                 Catch::Contains("node 8 (sub) has operand a = 20, which is not an earlier node"));
  CHECK_THAT(broken([](ScalarProgram& p) { p.nodes[8].b = -1; }), Catch::Contains("node 8 (sub) has operand b = -1"));
  CHECK_THAT(broken([](ScalarProgram& p) { p.nodes[0].a = 3; }),
             Catch::Contains("reads in[3], but the kernel has 3 inputs"));
  CHECK_THAT(broken([](ScalarProgram& p) { p.outputs[2] = 999; }), Catch::Contains("out[2] is node 999"));
  CHECK_THAT(broken([](ScalarProgram& p) { p.nodes[7].op = static_cast<ScalarOp>(42); }),
             Catch::Contains("unknown op"));
  // The pipeline checks them before sharing reads them.
  ScalarProgram bad = every_op();
  bad.nodes[8].a = 20;
  pipeline::JitOptions share_all;
  share_all.share_min_ops = 1;
  CHECK_THAT(message_of<InternalError>([&] {
               pipeline::jit_compile({{"good", every_op()}, {"broken", bad}}, share_all);
             }),
             Catch::Contains("kernel 'broken'") && Catch::Contains("node 8 (sub) has operand a = 20"));
  // Nothing half-built stays behind in a module when emission refuses.
  llvm::LLVMContext context;
  llvm::Module m("m", context);
  ScalarProgram p = every_op();
  p.nodes.back().a = static_cast<int>(p.nodes.size());
  CHECK_THROWS_AS(emit::emit_llvm_function(m, "f", p), InternalError);
  CHECK(m.empty());
  // A shared entry whose programs' outputs would land outside its array, or on its inputs.
  for (int at : {2, 11})
    CHECK_THAT(message_of<InternalError>([&] {
                 emit::emit_llvm_shared_entry(m, "g", "g_own", 3, 10, {{"shared", at}});
               }),
               Catch::Contains("kernel 'g': outputs of 'shared' at " + std::to_string(at) + " of 10 inputs"));
  CHECK(m.empty());
}

TEST_CASE("a module failing the verifier is an error, not an abort", "[jit]") {
  llvm::LLVMContext context;
  llvm::Module m("hand_broken", context);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), false),
                                   llvm::Function::ExternalLinkage, "f", m);
  llvm::BasicBlock::Create(context, "entry", f);  // a block without a terminator
  CHECK_THAT(message_of<InternalError>([&] { emit::verify(m); }),
             Catch::Contains("'hand_broken' is not valid LLVM IR") && Catch::Contains("terminator"));
}

TEST_CASE("bad names and options are the user's errors", "[jit]") {
  const ScalarProgram p = every_op();
  const auto user = [&](const std::string& name, const jit::Options& o) {
    return message_of<UserError>([&] { jit::compile({{name, p}}, o); });
  };
  CHECK_THAT(user("2fast", {}), Catch::Contains("'2fast' is not a C identifier"));
  CHECK_THAT(user("sin", {}), Catch::Contains("would shadow the C library function"));
  CHECK_THAT(message_of<UserError>([&] {
               jit::compile({{"f", p}, {"f", p}});
             }),
             Catch::Contains("two kernels are called 'f'"));
  jit::Options o;
  o.cpu = "pentium-9000";
  CHECK_THAT(user("f", o), Catch::Contains("unknown CPU 'pentium-9000'") && Catch::Contains("x86-64-v3"));
  o = {};
  o.tune_cpu = "pentium-9000";
  CHECK_THAT(user("f", o), Catch::Contains("unknown CPU 'pentium-9000' to tune for"));
  o = {};
  o.features = "+no-such-feature";
  CHECK_THAT(user("f", o), Catch::Contains("unknown CPU feature 'no-such-feature'"));
  o.features = "avx2";
  CHECK_THAT(user("f", o), Catch::Contains("must start with '+'"));
  o = {};
  o.codegen_level = 7;
  CHECK_THAT(user("f", o), Catch::Contains("code generation level 7"));
  o = {};
  o.passes = "default<O2>,no-such-pass";
  CHECK_THAT(user("f", o),
             Catch::Contains("IR pass pipeline 'default<O2>,no-such-pass'") && Catch::Contains("no-such-pass"));
  o = {};
  o.ir_file = "/nonexistent-directory/x.ll";
  CHECK_THAT(user("f", o), Catch::Contains("/nonexistent-directory/x.ll: cannot write the LLVM IR"));
  const jit::Kernels k = jit::compile({{"f", p}, {"g", p}});
  CHECK(k.find("h") == nullptr);
  CHECK_THAT(message_of<UserError>([&] { k.lookup("h"); }), Catch::Contains("no kernel 'h' (compiled: f, g)"));
  // Kernels is move-only and the functions survive the move.
  jit::Kernels moved = jit::compile({{"f", p}});
  const jit::KernelFunction f = moved.lookup("f");
  const jit::Kernels owner = std::move(moved);
  CHECK(owner.lookup("f") == f);
  const std::vector<double> in = {0.1, 0.2, 0.3};
  CHECK(identical(run(f, p, in), interpret(p, in)));
}

TEST_CASE("LLVM's process-wide options change only when the caller asks, and the code is the same", "[jit]") {
  // The options tune_llvm_process_options() sets and their tuned values (jit.hpp). LLVM
  // declares all three `static cl::opt<bool>` (MachineScheduler.cpp, TargetPassConfig.cpp,
  // X86FixupBWInsts.cpp); they are read here as a host program would.
  const std::vector<std::pair<std::string, bool> > tuned = {
      {"enable-misched", false}, {"disable-copyprop", true}, {"fixup-byte-word-insts", false}};
  const auto option = [](const std::string& name) -> llvm::cl::opt<bool>& {
    auto& registered = llvm::cl::getRegisteredOptions();
    const auto it = registered.find(name);
    REQUIRE(it != registered.end());
    return *static_cast<llvm::cl::opt<bool>*>(it->second);
  };
  const ScalarProgram p = every_op();
  const std::vector<double> in = {0.3, -0.7, 1.1};
  const jit::Kernels plain = jit::compile({{"f", p}});
  CHECK(identical(run(plain.lookup("f"), p, in), interpret(p, in)));
  for (const auto& [name, value] : tuned) {
    INFO(name << ": compiling leaves LLVM's default");
    llvm::cl::opt<bool>& o = option(name);
    CHECK(o.getNumOccurrences() == 0);
    // disable-copyprop has no cl::init: its default is a value-initialised bool.
    const bool llvm_default = o.getDefault().hasValue() ? o.getDefault().getValue() : false;
    CHECK(o.getValue() == llvm_default);
    CHECK(o.getValue() != value);
  }
  jit::tune_llvm_process_options();
  jit::tune_llvm_process_options();  // a second call changes nothing
  for (const auto& [name, value] : tuned) {
    INFO(name << ": tuned");
    CHECK(option(name).getValue() == value);
    CHECK(option(name).getNumOccurrences() == 1);
  }
  const jit::Kernels tuned_kernels = jit::compile({{"f", p}});
  CHECK(identical(run(tuned_kernels.lookup("f"), p, in), interpret(p, in)));
}

// Hidden (run with `test_jit "[jit-timing]"`): the compile time of every standard kernel of
// the Talos (44 joints + free flyer: 50 dofs), split per kernel and phase, as soac jit
// compiles them (pipeline::jit_compile after jit::tune_llvm_process_options()), and the
// JIT's accuracy.
TEST_CASE("JIT compile time of the standard kernels for talos_full", "[.][jit-timing]") {
  const Robot robot = load_urdf(test::shared_robot_path("talos_full.urdf"), LoadOptions{true});
  const std::vector<int> tips = robot.default_tips();
  const auto constants = exec::make_constants(robot, tips);
  NamedPrograms code;
  std::vector<exec::SweepProgram> programs;
  for (const auto& k : lower::standard_kernels()) {
    programs.push_back(test::kernel_program(k));
    code.emplace_back(k.name, specialise::specialise(programs.back(), constants));
  }
  {
    // First with LLVM's own process-wide options (unless this process tuned them already),
    // as a program embedding soac that does not call tune_llvm_process_options(); after a
    // small compile, so that neither figure carries LLVM's first-use costs.
    jit::compile({{"warm_up", every_op()}});
    const jit::Kernels untuned = pipeline::jit_compile(code);
    std::printf(
        "talos_full (nv %d), default options, LLVM's process-wide options untouched: wall clock %.1f ms, "
        "CPU time %.1f ms\n",
        robot.nv, 1e3 * untuned.total_seconds(), 1e3 * untuned.cpu_seconds());
  }
  jit::tune_llvm_process_options();
  const std::clock_t cpu_start = std::clock();
  const jit::Kernels kernels = pipeline::jit_compile(code);
  const double cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  std::printf("talos_full (nv %d), default options, tune_llvm_process_options(), cpu %s:\n", robot.nv,
              kernels.cpu().c_str());
  double emit = 0, optimise = 0, codegen = 0;
  std::vector<jit::KernelTiming> all = kernels.timings();
  all.insert(all.end(), kernels.shared_timings().begin(), kernels.shared_timings().end());
  for (const jit::KernelTiming& t : all) {
    std::printf("  %-22s %7d ops %7d instructions  emit %6.1f ms  passes %6.1f ms  codegen %7.1f ms\n", t.name.c_str(),
                t.ops, t.instructions, 1e3 * t.emit_seconds, 1e3 * t.optimise_seconds, 1e3 * t.codegen_seconds);
    emit += t.emit_seconds;
    optimise += t.optimise_seconds;
    codegen += t.codegen_seconds;
  }
  std::printf(
      "  sum: emit %.1f ms, passes %.1f ms, codegen %.1f ms; jit_compile() wall clock %.1f ms, CPU time %.1f ms\n",
      1e3 * emit, 1e3 * optimise, 1e3 * codegen, 1e3 * kernels.total_seconds(), 1e3 * cpu_seconds);
  std::mt19937_64 rng(1);
  double worst_ssa = 0, worst_generic = 0;
  for (std::size_t k = 0; k < code.size(); ++k) {
    const exec::Layout l = exec::layout(programs[k], constants);
    const std::vector<double> in = test::random_input(programs[k], robot, static_cast<int>(tips.size()), rng);
    std::vector<double> generic(l.output_size());
    exec::execute(programs[k], constants, in.data(), generic.data());
    const std::vector<double> jitted = run(kernels.lookup(code[k].first), code[k].second, in);
    CHECK(identical(jitted, interpret(code[k].second, in)));
    worst_ssa = std::max(worst_ssa, relative_difference(jitted, interpret(code[k].second, in)));
    worst_generic = std::max(worst_generic, relative_difference(jitted, generic));
  }
  std::printf("  worst relative difference: JIT vs SSA interpreter %.3g, JIT vs generic runtime %.3g\n", worst_ssa,
              worst_generic);
  CHECK(worst_generic < 1e-12);
}

#endif  // SOA_HAVE_LLVM_JIT
