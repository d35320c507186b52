// The C++ back-end (compiler/emit-cpp): the standard kernels for the double pendulum, the
// Panda and a random tree with ball joints are emitted, compiled at test time with the
// system compiler (-Wall -Wextra -Werror -O2) into shared objects, loaded with dlopen and
// compared with the generic runtime on 100 random states each, and with the SSA
// interpreter bit for bit; the inline sin/cos (soa_sincos) is soa::sincos to the bit and
// appears only where a kernel needs it, the joint angles' pairs first in each kernel;
// kernel names the generated namespace holds already are refused. A name (--name) sets the
// namespace and the C prefix, so two variants of one robot link into one program; names
// that cannot be C++ are refused; hostile robot files stay inside comments; the header
// states the conventions (the Jacobian's frame checked numerically) and the gravity the
// code was made for.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "emit-cpp/emit_cpp.hpp"
#include "support/error.hpp"
#include "specialise/lanes.hpp"
#include "support/lane_programs.hpp"
#include "support/pipeline.hpp"
#include "support/sincos.hpp"

namespace {

using namespace soa;
namespace fs = std::filesystem;

using KernelFn = void (*)(const double*, double*);

struct Generated {
  std::vector<exec::SweepProgram> programs;  // in standard_kernels() order
  std::vector<specialise::Kernel> kernels;
  emit::Target target;
  emit::Emitted files;
};

// Small parts, low sharing, dot-table and step-loop thresholds and three sources: every way
// the generated code is cut up (functions of parts, shared programs, dot tables, step loops,
// declarations across sources) is exercised by the tests below that compile and run it.
constexpr emit::CppOptions kCutUp{3, 300, 0, 500, 50, 200};
// Each kernel one function of its own: for tests of what a kernel's body looks like.
constexpr emit::CppOptions kWhole{1, 1 << 30, 0, 0, 0, 0};

Generated generate(const Robot& robot, const std::vector<int>& tips, const std::string& id,
                   const emit::CppOptions& options = kCutUp) {
  Generated g;
  const auto constants = exec::make_constants(robot, tips);
  for (const auto& k : lower::standard_kernels()) {
    g.programs.push_back(test::kernel_program(k));
    g.kernels.push_back(test::build_kernel(k, constants));
  }
  g.target = emit::make_target(robot, tips);
  g.target.robot = id;
  g.target.file_stem = id + "_kernels";
  g.files = emit::emit_cpp(g.kernels, g.target, options);
  return g;
}

// A hand-written kernel's frame: its name, what it computes (its expression, derivation and
// meaning), one input port x of `inputs` entries, the output out of rows x cols; its code
// is the caller's.
specialise::Kernel hand_written(const std::string& name, const std::string& meaning, int inputs, int rows,
                                int cols = 1) {
  specialise::Kernel k;
  k.name = name;
  k.expression = k.derivation = k.meaning = meaning;
  k.inputs = {{"x", inputs, {}}};
  k.output = "out";
  k.rows = rows;
  k.cols = cols;
  k.code.input_count = inputs;
  return k;
}

// One hand-written kernel, emitted as the code of robot `id`.
Generated generate(const specialise::Kernel& k, const std::string& id, const emit::CppOptions& options = {}) {
  Generated g;
  g.kernels = {k};
  g.target.robot = id;
  g.target.file_stem = id + "_kernels";
  g.files = emit::emit_cpp(g.kernels, g.target, options);
  return g;
}

// Writes, compiles and loads the generated code (with the build's compiler unless `cxx` names
// another); closes it when done.
class Compiled {
public:
  explicit Compiled(const Generated& g, const std::string& extra_flags = "", const std::string& cxx = "") {
    dir_ = fs::temp_directory_path() / ("soa_emit_cpp_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / g.files.header_name) << g.files.header;
    std::string sources;
    for (const emit::SourceFile& f : g.files.sources) {
      std::ofstream(dir_ / f.name) << f.text;
      sources += " '" + (dir_ / f.name).string() + "'";
    }
    const emit::Toolchain tc = emit::build_toolchain();
    const fs::path so = dir_ / (g.target.robot + ".so");
    const std::string command = "'" + (cxx.empty() ? tc.cxx : cxx) + "' -std=c++17 -O2 -Wall -Wextra -Werror " +
                                extra_flags + " -shared -fPIC -isystem '" + tc.eigen_include + "'" + sources + " -o '" +
                                so.string() + "' 2>&1";
    INFO(command);
    REQUIRE(std::system(command.c_str()) == 0);
    handle_ = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    INFO(::dlerror());
    REQUIRE(handle_ != nullptr);
  }
  ~Compiled() {
    if (handle_) ::dlclose(handle_);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  KernelFn get(const std::string& symbol) const { return reinterpret_cast<KernelFn>(::dlsym(handle_, symbol.c_str())); }

private:
  fs::path dir_;
  void* handle_ = nullptr;
};

void check_against_runtime(const Robot& robot, const std::vector<int>& tips, const std::string& id,
                           const emit::CppOptions& options = kCutUp, const std::string& flags = "",
                           const std::string& cxx = "") {
  const Generated g = generate(robot, tips, id, options);
  // The cut-up form is what is compiled: parts, a shared program, dot tables (where a
  // Gram kernel has 50 products or more), several sources, step loops or packs.
  const std::string all = g.files.all_sources();
  CHECK(g.files.sources.size() == 3);
  if (robot.nv >= 6)
    CHECK_THAT(all, Catch::Contains("_part1(") && Catch::Contains("detail::shared0(") &&
                        Catch::Contains(options.lane_min_ops > 1 ? "detail::mass_matrix_inverse_dots(g, calMinv);"
                                                                 : "detail::mass_matrix_inverse_lanes0(g, calMinv);") &&
                        Catch::Contains(options.loop_min_ops > 0 ? "for (const auto& soa_row : soa_table)"
                                                                 : "const soa_p4 p"));
  const Compiled lib(g, flags, cxx);
  const auto constants = exec::make_constants(robot, tips);
  std::mt19937_64 rng(99);
  for (std::size_t i = 0; i < g.kernels.size(); ++i) {
    const specialise::Kernel& k = g.kernels[i];
    INFO(id << ": " << k.name);
    const KernelFn fn = lib.get(id + "_" + k.name);
    REQUIRE(fn != nullptr);
    const exec::Layout l = exec::layout(g.programs[i], constants);
    double worst = 0.0;
    for (int sample = 0; sample < 100; ++sample) {
      const State s = random_state(robot, static_cast<int>(tips.size()), rng);
      std::vector<double> in;
      for (const specialise::Port& p : k.inputs) {
        const VecX& x = p.name == "q" ? s.q : p.name == "qd" ? s.qd : p.name == "f0" ? s.f0 : s.qdd;
        in.insert(in.end(), x.data(), x.data() + x.size());
      }
      REQUIRE(static_cast<int>(in.size()) == l.input_size);
      MatX generated(l.rows, l.cols), generic(l.rows, l.cols), interpreted(l.rows, l.cols);
      fn(in.data(), generated.data());
      exec::execute(g.programs[i], constants, in.data(), generic.data());
      worst = std::max(worst, test::relative_difference(generated, generic));
      // The same operations in the same order, soa_sincos included: the SSA interpreter's
      // numbers to the bit.
      specialise::evaluate(k.code, in.data(), interpreted.data());
      CHECK(std::memcmp(generated.data(), interpreted.data(), sizeof(double) * generated.size()) == 0);
    }
    CHECK(worst < 1e-11);
  }
}

}  // namespace

TEST_CASE("generated C++ compiles warning-free and equals the generic runtime", "[emit-cpp]") {
  const Robot pendulum = load_urdf(test::shared_robot_path("double_pendulum.urdf"));
  check_against_runtime(pendulum, pendulum.default_tips(), "double_pendulum");
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  check_against_runtime(panda, panda.default_tips(), "panda");
  const Robot tree = random_tree(4, RandomTreeOptions{6, false, true, true, 0.5});
  check_against_runtime(tree, tree.default_tips(), "tree4");
}

namespace {

// In the generated sources, the most values one `type`{...} (soa_p4 or soa_p2) puts
// together in the packs of `steps` steps ("N steps alike, side by side" up to the next
// blank line); 0 when none does.
std::size_t widest_put_together(const std::string& sources, int steps, const std::string& type = "soa_p4") {
  const std::string head = fmt::format(": {} steps alike, side by side\n", steps);
  const std::string put = type + "{";
  std::size_t widest = 0;
  for (std::size_t at = sources.find(head); at != std::string::npos; at = sources.find(head, at + 1)) {
    const std::size_t end = std::min(sources.find("\n\n", at), sources.size());
    for (std::size_t v = sources.find(put, at); v < end; v = sources.find(put, v + 1)) {
      const std::size_t close = sources.find('}', v);
      widest = std::max<std::size_t>(widest, 1 + std::count(sources.begin() + v, sources.begin() + close, ','));
    }
  }
  return widest;
}

}  // namespace

TEST_CASE(
    "packs: the columns' steps four at a time compile warning-free, with AVX and without, with g++ and clang++, to the "
    "same bits",
    "[emit-cpp]") {
  // Packs wherever there are no step loops (loop_min_ops 0); for the tree, lane groups from
  // one operation on (their factors side by side in g where packs compute them), for the
  // Panda a dot table.
  emit::CppOptions o = kCutUp;
  o.loop_min_ops = 0;
  emit::CppOptions lanes = o;
  lanes.lane_min_ops = 1;
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  const Robot tree = random_tree(6, RandomTreeOptions{14, true, true, true, 0.4});
  for (const auto& [robot, id, options] :
       {std::tuple{&panda, "panda_packs", o}, std::tuple{&tree, "tree6_packs", lanes}}) {
    const std::string all = generate(*robot, robot->default_tips(), id, options).files.all_sources();
    // Both forms in the sources, the compiler takes one: packs of four with AVX, of two
    // (SSE2's vectors) without.
    CHECK_THAT(all, Catch::Contains("#if defined(__AVX__)\n") && Catch::Contains("#if !defined(__AVX__)\n") &&
                        Catch::Contains("soa_store(w + ") && Catch::Contains("soa_load(w + ") &&
                        Catch::Contains("soa_shuffle<") && Catch::Contains("const soa_p4 p") &&
                        Catch::Contains("const soa_p2 p"));
    if (options.lane_min_ops == 1) CHECK_THAT(all, Catch::Contains("soa_store(g + "));
    // The shared programs' outputs laid out for the packs (the tree's shared sweep computes
    // bodies side by side): a pack's lanes stored with one store, read by a pack with one load.
    if (robot == &tree) CHECK_THAT(all, Catch::Contains("soa_store(s + ") && Catch::Contains("soa_load(s + "));
    // A pack of N steps puts at most N values together: the lanes past them stay zero (two
    // values are two instructions; with the last repeated into the upper half, five).
    CHECK(widest_put_together(all, 2) == 2);
    CHECK(widest_put_together(all, 3) <= 3);
    CHECK(widest_put_together(all, 2, "soa_p2") == 2);
    CHECK(widest_put_together(all, 3, "soa_p2") == 0);  // no pack of two holds three steps
    check_against_runtime(*robot, robot->default_tips(), id, options);
    if (__builtin_cpu_supports("avx")) {
      check_against_runtime(*robot, robot->default_tips(), id, options, "-mavx");  // no FMA: the same bits
      // clang++ too: w's slots are 8-byte aligned, and a vector access that assumes more
      // faults there (it did, through a reference to an aligned(8) vector typedef).
      INFO("clang++");
      check_against_runtime(*robot, robot->default_tips(), id, options, "-mavx -ffp-contract=off", SOA_CLANGXX_PATH);
    } else {
      WARN("this CPU has no AVX: the packs' vector form is compiled, not run");
    }
  }
  // Packs of four only (--step-lanes-without-avx 1): the form without AVX is scalar.
  emit::CppOptions four_only = o;
  four_only.step_lanes_without_avx = 1;
  CHECK_THAT(generate(panda, panda.default_tips(), "panda_four_only", four_only).files.all_sources(),
             Catch::Contains("const soa_p4 p") && Catch::Contains("#if !defined(__AVX__)\n") &&
                 !Catch::Contains("const soa_p2 p"));
  // Packs of fewer steps (--step-lanes 2 or 3) are written in each form's own vector type,
  // the only one its preprocessor branch defines: soa_p4 with AVX, soa_p2 without.
  for (const int lanes : {2, 3}) {
    emit::CppOptions fewer = o;
    fewer.step_lanes = lanes;
    CHECK_THAT(generate(panda, panda.default_tips(), "panda_fewer", fewer).files.all_sources(),
               Catch::Contains("const soa_p4 p") && Catch::Contains("const soa_p2 p") && !Catch::Contains("soa_p3"));
  }
  // Without packs (--step-lanes 1): no vector form, nothing conditional.
  o.step_lanes = 1;
  CHECK_THAT(generate(panda, panda.default_tips(), "panda_no_packs", o).files.all_sources(),
             !Catch::Contains("soa_p4") && !Catch::Contains("soa_p2") && !Catch::Contains("defined(__AVX__)"));
}

TEST_CASE("the size report counts the lines a build compiles: one form of each kernel with packs", "[emit-cpp]") {
  emit::Emitted files;
  files.sources.push_back({"a.cpp",
                           "int a;\n"
                           "#if defined(__AVX__)\n"
                           "int packed;\n"
                           "#if defined(__AVX512F__)\n"
                           "int wide;\n"
                           "#endif\n"
                           "#endif\n"
                           "#if !defined(__AVX__)\n"
                           "int plain;\n"
                           "#endif\n"});
  CHECK(emit::source_lines(files) == 10);
  CHECK(emit::compiled_lines(files) == 4);  // int a, and the scalar form with its #if and #endif
  CHECK(emit::size_warning(4, 4).empty());
  CHECK_THAT(emit::size_warning(5, 4), Catch::StartsWith("the generated sources have 5 lines (more than 4)"));
  // The Panda's standard kernels: packs, so two forms of several kernels.
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  const emit::Emitted panda_files = generate(panda, panda.default_tips(), "panda_size").files;
  CHECK(emit::compiled_lines(panda_files) < emit::source_lines(panda_files));
}

TEST_CASE("a large kernel set runs per-body loops, their constants from tables, and computes the same bits",
          "[emit-cpp]") {
  // Large from one operation on: the sweeps' steps alike up to their bodies' constants are
  // loops too (a chain of revolute joints: one step per body, each reading its child's).
  emit::CppOptions o = kCutUp;
  o.large_set_ops = 1;
  const Robot chain = random_tree(8, RandomTreeOptions{10, true, false, false, 0.0});
  const Robot tree = random_tree(9, RandomTreeOptions{12, true, true, true, 0.4});
  for (const auto& [robot, id] : {std::pair{&chain, "chain8"}, std::pair{&tree, "tree9"}}) {
    const std::string all = generate(*robot, robot->default_tips(), id, o).files.all_sources();
    CHECK_THAT(all, Catch::Contains("static constexpr double soa_literals[") &&
                        Catch::Contains("const double* soa_lit = soa_literals[soa_i];"));
    // g++'s time is the limit there: the form built without AVX has no packs of two.
    CHECK_THAT(all, !Catch::Contains("const soa_p2 p"));
    // Not below large_set_ops: the same code as before, no literal tables.
    CHECK_THAT(generate(*robot, robot->default_tips(), id).files.all_sources(), !Catch::Contains("soa_literals"));
    check_against_runtime(*robot, robot->default_tips(), id, o);
  }
}

namespace {

// Kernels cut up as above: warning-free, the SSA interpreter's bits, the runtime's numbers
// (for derivative kernels, its dual numbers) to rounding.
void check_kernels(const Robot& robot, const std::vector<int>& tips, const std::vector<lower::KernelDecl>& decls,
                   const std::string& id, const emit::CppOptions& options = kCutUp, const std::string& expect = "",
                   const std::string& flags = "") {
  const auto constants = exec::make_constants(robot, tips);
  Generated g;
  for (const auto& k : decls) g.kernels.push_back(test::build_kernel(k, constants));
  g.target = emit::make_target(robot, tips);
  g.target.robot = id;
  g.target.file_stem = id + "_kernels";
  g.files = emit::emit_cpp(g.kernels, g.target, options);
  if (!expect.empty()) CHECK_THAT(g.files.all_sources(), Catch::Contains(expect));
  const Compiled lib(g, flags);
  std::mt19937_64 rng(5);
  for (std::size_t i = 0; i < g.kernels.size(); ++i) {
    const lower::KernelDecl& decl = decls[i];
    INFO(id << ": " << decl.name);
    const KernelFn fn = lib.get(id + "_" + decl.name);
    REQUIRE(fn != nullptr);
    const pipeline::LoweredKernel& k = test::lowered(decl);
    const exec::Layout l = pipeline::kernel_layout(k, constants);
    double worst = 0.0;
    for (int sample = 0; sample < 20; ++sample) {
      const std::vector<double> in = test::random_input(k.program, robot, static_cast<int>(tips.size()), rng);
      MatX generated(l.rows, l.cols), generic(l.rows, l.cols), interpreted(l.rows, l.cols);
      fn(in.data(), generated.data());
      pipeline::run_generic(k, constants, in.data(), generic.data());
      specialise::evaluate(g.kernels[i].code, in.data(), interpreted.data());
      CHECK(std::memcmp(generated.data(), interpreted.data(), sizeof(double) * generated.size()) == 0);
      worst = std::max(worst, test::relative_difference(generated, generic));
    }
    CHECK(worst < 1e-11);
  }
}

}  // namespace

TEST_CASE("generated derivative kernels compile warning-free and equal the runtime's dual numbers", "[emit-cpp]") {
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  check_kernels(panda, panda.default_tips(), lower::derivative_kernels(), "panda_d");
  const Robot tree = random_tree(3, RandomTreeOptions{6, true, true, true, 0.5});  // ball, prismatic, free
  check_kernels(tree, tree.default_tips(), lower::derivative_kernels(), "tree3_d");
  // Forward dynamics' derivatives with -calM^-1 d tau as column loops (lane groups from one
  // operation on, columns from 8 rows): the same bits, the runtime's numbers.
  emit::CppOptions columns = kCutUp;
  columns.lane_min_ops = 1;
  columns.column_min_rows = 8;
  const Robot chain = random_tree(7, RandomTreeOptions{10, false, false, true, 0.5});
  REQUIRE(chain.nv >= 8);
  for (const lower::KernelDecl& k : lower::derivative_kernels())
    if (k.name == "forward_dynamics_derivatives")
      check_kernels(chain, chain.default_tips(), {k}, "tree7_d", columns,
                    "detail::forward_dynamics_derivatives_columns(g, ");
}

TEST_CASE("kernels whose step loops would run a few columns each are written out, with packs of bodies", "[emit-cpp]") {
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  // Loops from 200 operations on (kCutUp) where they run at least loop_min_instances
  // columns each on average: all of them at 1, none at 1000 (written out, with packs).
  emit::CppOptions few = kCutUp, many = kCutUp;
  few.loop_min_instances = 1;
  many.loop_min_instances = 1000;
  CHECK_THAT(generate(panda, panda.default_tips(), "panda_l1", few).files.all_sources(),
             Catch::Contains("for (const auto& soa_row : soa_table)"));
  CHECK_THAT(generate(panda, panda.default_tips(), "panda_l1000", many).files.all_sources(),
             !Catch::Contains("soa_table") && Catch::Contains("const soa_p4 p"));
  // Inverse dynamics' derivatives: no step repeats column after column, so written out;
  // the bodies' alike steps of the sensitivity recursion (the same operations on each
  // body's world-frame values, their literals differing; on a free-flyer, whose rotation
  // makes them dense) go side by side, to the same bits with AVX and without.
  std::vector<lower::KernelDecl> decls;
  for (const lower::KernelDecl& k : lower::derivative_kernels())
    if (k.name == "inverse_dynamics_derivatives") decls.push_back(k);
  REQUIRE(decls.size() == 1);
  const Robot tree = random_tree(1, RandomTreeOptions{8, true});
  const std::string packs = "world-frame inertia: 4 steps alike, side by side";
  check_kernels(tree, tree.default_tips(), decls, "tree1_w", kCutUp, packs);
  if (__builtin_cpu_supports("avx"))
    check_kernels(tree, tree.default_tips(), decls, "tree1_wv", kCutUp, packs, "-mavx");  // no FMA: the same bits
  else
    WARN("this CPU has no AVX: the packs' vector form is compiled, not run");
  // On the Panda's fixed base the same step at two bodies differs in its additions' signs
  // (their frames differ by signed permutations, whose signs the tracer folds into the
  // sums): side by side as signed sums, a vector of +1 and -1 per operand whose sign
  // differs lane by lane, to the same bits.
  const std::string signs = " * soa_p4{1.0, -1.0";
  check_kernels(panda, panda.default_tips(), decls, "panda_w", kCutUp, signs);
  if (__builtin_cpu_supports("avx"))
    check_kernels(panda, panda.default_tips(), decls, "panda_wv", kCutUp, signs, "-mavx");
}

TEST_CASE("generated kernels of compliant grasps and stabilised welds compile warning-free and equal the runtime",
          "[emit-cpp]") {
  // Baxter holding the bar by a weld and a spring: fg, the constrained kernels with fg
  // applied, and Baumgarte's terms with ex (the weld's pose error).
  Robot baxter = with_object(load_urdf(test::shared_robot_path("baxter.urdf")),
                             load_urdf(test::shared_robot_path("bar.urdf"), LoadOptions{true}));
  HoldOptions holds;
  holds.welds = {"bar_left=left_gripper"};
  holds.grasps = {"bar_right=right_gripper:2e4,50,200,1"};
  const std::vector<int> tips = hold_frames(baxter, holds);
  std::vector<lower::KernelDecl> decls;
  for (lower::KernelDecl k : lower::grasped_kernels(true)) {
    k.name = "g_" + k.name;  // test::lowered() caches by name: not the welded kernels' own
    decls.push_back(std::move(k));
  }
  decls.push_back({"weld_errors", {"q"}, "ex", "ex", "the welds' pose errors"});
  decls.push_back({"stabilised_forward_dynamics",
                   {"q", "qd", "T"},
                   "calM^-1 (T - C - J* fg - J* (J calM^-1 J*)^-1 (J calM^-1 (T - C - J* fg) + B* phi* abar + 20 J qd "
                   "+ 100 ex))",
                   "qdd",
                   "stabilised"});
  check_kernels(baxter, tips, decls, "baxter_g");
}

TEST_CASE("kernels of at most whole_ops operations stay one function; longer ones are cut into parts", "[emit-cpp]") {
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  // The Panda's inverse dynamics has about 1000 operations: whole by default, in parts of
  // 300 when whole_ops does not protect it.
  const auto parts_of_id = [&](const emit::CppOptions& o) {
    const std::string all = generate(panda, panda.default_tips(), "panda", o).files.all_sources();
    int parts = 0;
    for (std::size_t at = all.find("void inverse_dynamics_part"); at != std::string::npos;
         at = all.find("void inverse_dynamics_part", at + 1))
      ++parts;
    return parts;
  };
  CHECK(parts_of_id(emit::CppOptions{1, 300, 3000, 500, 0}) == 0);
  CHECK(parts_of_id(emit::CppOptions{1, 300, 0, 500, 0}) >= 2);
  CHECK(emit::CppOptions{}.whole_ops >= 1500);  // the Panda's kernels, as measured, whole
}

TEST_CASE("parts receive the kernel's own arrays as restrict pointers with AVX, the caller's as plain ones",
          "[emit-cpp]") {
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  emit::CppOptions o{1, 300, 0, 500, 0};  // inverse dynamics in parts, sharing its sines with the others
  o.large_set_ops = 1000;
  o.large_share_min_ops = 10;
  const std::string all = generate(panda, panda.default_tips(), "panda", o).files.all_sources();
  // s and w are the kernel's stack arrays: nothing else points into them, so the compiler may
  // keep what it read from them across stores (built with AVX; plain x86-64 keeps plain
  // pointers, where it measured slower).
  CHECK_THAT(all, Catch::Contains("#if defined(__AVX__)\ntypedef double* __restrict soa_own;\n"
                                  "typedef const double* __restrict soa_own_in;\n#else\n"
                                  "typedef double* soa_own;\ntypedef const double* soa_own_in;\n#endif\n"));
  CHECK_THAT(all, Catch::Contains("void inverse_dynamics_part0(const double* q, const double* qd, const double* qdd, "
                                  "soa_own_in s, double* tau, soa_own w)"));
  CHECK_THAT(all, Catch::Contains("void shared0(const double* in, soa_own s, soa_own w)"));
  // The caller's arrays may be anywhere, even overlapping one another: never restrict.
  CHECK(all.find("__restrict q") == std::string::npos);
  CHECK(all.find("__restrict tau") == std::string::npos);
}

TEST_CASE("a large kernel set shares from large_share_min_ops; others from share_min_ops", "[emit-cpp]") {
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  const auto shared = [&](long large_set_ops) {
    emit::CppOptions o{1, 1 << 30, 0, 1 << 30, 0, 0};
    o.large_set_ops = large_set_ops;
    o.large_share_min_ops = 200;
    return generate(panda, panda.default_tips(), "panda", o).files.all_sources().find("detail::shared0(") !=
           std::string::npos;
  };
  CHECK_FALSE(shared(1L << 40));                     // the Panda's 9,000 operations: not a large set
  CHECK(shared(1000));                               // counted large: its sines and cosines are shared
  CHECK(emit::CppOptions{}.large_set_ops > 200000);  // talos_full's 70,000 operations are not large
}

TEST_CASE("generated code carries its provenance and is deterministic", "[emit-cpp]") {
  const Robot robot = load_urdf(test::shared_robot_path("double_pendulum.urdf"));
  const std::vector<int> tips = robot.default_tips();
  const Generated a = generate(robot, tips, "double_pendulum");
  const Generated b = generate(robot, tips, "double_pendulum");
  CHECK(a.files.header == b.files.header);
  CHECK(a.files.all_sources() == b.files.all_sources());
  const std::string a_sources = a.files.all_sources();
  for (const std::string* text : {&a.files.header, &a_sources}) {
    CHECK_THAT(*text, Catch::Contains(std::string("generated by soac ") + emit::soac_version()));
    CHECK_THAT(*text, Catch::Contains("double_pendulum.urdf (file fnv1a64:"));
    CHECK_THAT(*text, Catch::Contains("forward_dynamics = calM^-1 (T - C)"));
    CHECK_THAT(*text, Catch::Contains("MINV [001 Identity 6"));
  }
  CHECK_THAT(a.files.header, Catch::Contains("namespace soa_gen::double_pendulum"));
  CHECK_THAT(a.files.header, Catch::Contains("void double_pendulum_forward_dynamics(const double* in, double* out);"));
  CHECK_THAT(a.files.header, Catch::Contains("in = [q (2), qd (2), T (2)] (6 doubles); out = qdd (2)"));
  CHECK_THAT(a.files.header, Catch::Contains("out = calM (2 x 2, column-major)"));
  // One commented block per body and factor.
  CHECK_THAT(a.files.all_sources(), Catch::Contains("// link2: kinematics"));
}

namespace {

// A kernel taking the sine and cosine of each of its n inputs, one output each.
specialise::Kernel trig_kernel(int n) {
  specialise::Kernel k = hand_written("trig", "sin and cos of x", n, 2 * n);
  for (int i = 0; i < n; ++i) {
    k.code.nodes.push_back({specialise::ScalarOp::Input, i});
    const int x = static_cast<int>(k.code.nodes.size()) - 1;
    k.code.nodes.push_back({specialise::ScalarOp::Sin, x});
    k.code.nodes.push_back({specialise::ScalarOp::Cos, x});
    k.code.outputs.push_back(x + 1);
    k.code.outputs.push_back(x + 2);
  }
  specialise::check(k.code);
  return k;
}

}  // namespace

namespace {

// A hand-written kernel's generated function against the SSA interpreter, to the bit:
// finite values; some special ones among them; then signed zeros mostly, so that whole
// entries are sums of zeros, whose sign depends on every term's.
void check_bits(KernelFn fn, const specialise::Kernel& k, std::mt19937_64& rng, const std::string& what) {
  const std::vector<double> special = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-310, -1e300};
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(special.size()) - 1), percent(0, 99);
  std::vector<double> in(k.code.input_count), generated(k.rows * k.cols), interpreted(k.rows * k.cols);
  for (int sample = 0; sample < 300; ++sample) {
    for (double& x : in)
      x = sample < 100                         ? u(rng)
          : sample < 200 && percent(rng) < 15  ? special[pick(rng)]
          : sample >= 200 && percent(rng) < 90 ? (percent(rng) < 50 ? 0.0 : -0.0)
                                               : u(rng);
    fn(in.data(), generated.data());
    specialise::evaluate(k.code, in.data(), interpreted.data());
    for (std::size_t i = 0; i < generated.size(); ++i) {
      INFO(what << ", sample " << sample << ", out[" << i << "]: " << generated[i] << " against " << interpreted[i]);
      if (std::isnan(interpreted[i]))
        CHECK(std::isnan(generated[i]));
      else
        CHECK(std::memcmp(&generated[i], &interpreted[i], sizeof(double)) == 0);
    }
  }
}

}  // namespace

TEST_CASE("sums of products sharing a factor per term run four entries at a time, to the bit", "[emit-cpp]") {
  // Gram-like entries (absent, literal, unit and subtracted terms) and negated products
  // -(X S), as lane groups (specialise/lanes.hpp) in a function of vector code: each lane
  // its entry's own operations in their order, whatever the values (signed zeros, which
  // a lane starting at its first term keeps, infinities and NaNs beside finite lanes).
  emit::CppOptions o;
  o.lane_min_ops = 1;
  o.column_min_rows = 0;  // lane groups written out, not columns (below)
  o.part_ops = 20;        // functions of about 20 steps: several per kernel
  std::mt19937_64 rng(21);
  int vector_code = 0;
  for (int trial = 0; trial < 6; ++trial) {
    const specialise::ScalarProgram code = trial % 3 == 1   ? test::negated_product(rng, 9, 6, 5)
                                           : trial % 3 == 2 ? test::swapped_pairs(rng, 9, 6, 5)
                                                            : test::gram_like(rng, 9, 7);
    specialise::Kernel k =
        hand_written("gram", "sums of products", code.input_count, static_cast<int>(code.outputs.size()));
    k.code = code;
    const std::string id = fmt::format("lanes{}", trial);
    const Generated g = generate(k, id, o);
    const std::string source = g.files.all_sources();
    // Lane groups when their vectors are mostly full (2 of 3 lanes a step); else scalar.
    const specialise::LanePlan plan = specialise::plan_lanes(k.code, 4, false);
    const bool full = 3 * plan.terms >= 2 * 4 * plan.steps;
    INFO("trial " << trial << ": " << plan.terms << " terms in " << plan.steps << " steps");
    CHECK((source.find("soa_v4") != std::string::npos) == full);
    if (trial % 3 == 2) {  // lanes starting at a subtracted term are among those compiled below
      int negated_first = 0;
      for (const specialise::LaneGroup& group : plan.groups)
        for (const specialise::LaneStep& step : group.steps)
          for (int l = 0; l < group.width; ++l) negated_first += step.lane[l].first && step.lane[l].sub;
      CHECK(negated_first > 0);
      CHECK(full);
    }
    if (!full) continue;
    ++vector_code;
    CHECK_THAT(source, Catch::Contains("detail::gram_lanes0(g, out);\n  detail::gram_lanes1(g, out);") &&
                           Catch::Contains("typedef double soa_v4 __attribute__((vector_size(4 * sizeof(double))));"));
    // Below lane_min_ops, or with lanes < 2: scalar code.
    CHECK_THAT(generate(k, id).files.all_sources(), !Catch::Contains("soa_v4"));
    o.lanes = 1;
    CHECK_THAT(generate(k, id, o).files.all_sources(), !Catch::Contains("soa_v4"));
    o.lanes = 4;
    const Compiled lib(g);
    const KernelFn fn = lib.get(id + "_gram");
    REQUIRE(fn != nullptr);
    check_bits(fn, k, rng, fmt::format("trial {}", trial));
  }
  CHECK(vector_code >= 3);
  {
    // A matrix's groups go row block by row block, so that a function's tuple table is one
    // block's: -(X S) with 8 rows has two blocks, tuples X(r..r+3, j) in every column.
    o.part_ops = 1000;  // one function
    const specialise::ScalarProgram code = test::negated_product(rng, 8, 6, 7);
    specialise::Kernel k = hand_written("product", "-(X S)", code.input_count, 8, 7);
    k.code = code;
    const std::string source = generate(k, "lanes_blocks", o).files.all_sources();
    std::vector<int> blocks;  // the groups' first rows, in the order of the source
    for (std::size_t at = 0; (at = source.find("  // out[", at)) != std::string::npos; ++at)
      blocks.push_back(std::stoi(source.substr(at + 9)) % 8);
    const std::size_t groups = specialise::plan_lanes(k.code, 4, false).groups.size();
    CHECK(groups >= 10);  // of at most 14: two blocks in each of 7 columns
    CHECK(blocks.size() == groups);
    CHECK(std::is_sorted(blocks.begin(), blocks.end()));
  }
  // A robot's Gram kernels (calM^-1, Lambda) so, cut up as above, their factors stored by
  // straight-line parts and by step loops: every kernel the interpreter's bits. Lane groups
  // come before dot tables (kCutUp's would take 50 products and more).
  emit::CppOptions cut = kCutUp;
  cut.lane_min_ops = 1;
  const Robot tree = random_tree(5, RandomTreeOptions{8, true, true, true, 0.5});
  check_against_runtime(tree, tree.default_tips(), "tree5_lanes", cut);
}

TEST_CASE(
    "a product's columns run as one loop over their terms, with AVX-512, AVX and without, g++ and clang++, to the bit",
    "[emit-cpp]") {
  // -calM^-1 d tau's shape (rows with signs of their own, negated roots): each column one
  // loop over its terms, all rows' accumulators side by side; every form the interpreter's
  // bits, whatever the values (signed zeros, infinities, NaNs).
  emit::CppOptions o;
  o.lane_min_ops = 1;
  o.column_min_rows = 8;
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 2; ++trial) {
    const specialise::ScalarProgram code =
        trial == 0 ? test::signed_product(rng, 13, 7, 6) : test::negated_product(rng, 12, 6, 5);
    specialise::Kernel k = hand_written("gram", "a product", code.input_count, static_cast<int>(code.outputs.size()));
    k.code = code;
    const std::string id = fmt::format("columns{}", trial);
    const Generated g = generate(k, id, o);
    const std::string source = g.files.all_sources();
    CHECK_THAT(source, Catch::Contains("detail::gram_columns(g, out);") &&
                           Catch::Contains("#if defined(__AVX512F__)") && Catch::Contains("#elif defined(__AVX__)"));
    // Negated columns (-(X S)) end multiplied by -1.0; where none is, there is no such step.
    CHECK((source.find("soa_negate") != std::string::npos) == (trial == 1));
    o.column_min_rows = 0;  // written out instead
    CHECK_THAT(generate(k, id, o).files.all_sources(), !Catch::Contains("_columns("));
    o.column_min_rows = 8;
    std::vector<std::string> flags = {""};
    if (__builtin_cpu_supports("avx")) flags.push_back("-mavx");          // no FMA: the same bits
    if (__builtin_cpu_supports("avx512f")) flags.push_back("-mavx512f");  // FMA: contraction off below
    if (flags.size() < 3) WARN("this CPU lacks AVX or AVX-512: those forms are compiled, not run");
    for (const std::string& cxx : {std::string(), std::string(SOA_CLANGXX_PATH)})
      for (const std::string& flag : flags) {
        const Compiled lib(g, flag + " -ffp-contract=off", cxx);
        const KernelFn fn = lib.get(id + "_gram");
        REQUIRE(fn != nullptr);
        check_bits(fn, k, rng, fmt::format("trial {} ({} {})", trial, cxx.empty() ? "g++" : cxx, flag));
      }
  }
}

TEST_CASE("the generated soa_sincos and soa_sincos_n are soa::sincos, bit for bit", "[emit-cpp]") {
  // Three angles: a soa_sincos call each. Five and sixteen: one soa_sincos_n call for all, a
  // loop g++ vectorises, whatever the lanes hold (fast path, libm's, inf, nan), over the
  // angles padded with zeros to a multiple of 8 (whole vectors, no remainder loop).
  for (const int n : {3, 5, 16}) {
    INFO(n << " angles");
    const Generated g = generate(trig_kernel(n), fmt::format("trig{}", n));
    const std::string source = g.files.all_sources();
    CHECK(source.find("static inline soa_sincos_pair soa_sincos(double x)") ==
          source.rfind("static inline soa_sincos_pair soa_sincos(double x)"));
    std::size_t calls = 0;
    for (std::size_t at = 0; (at = source.find("= soa_sincos(x[", at + 1)) != std::string::npos;) ++calls;
    if (n == 3) {
      // One call per input, shared by its sine and cosine, all at the top in input order;
      // then the nodes read them.
      CHECK(calls == 3);
      CHECK_THAT(source, Catch::Contains("const soa_sincos_pair sc0 = soa_sincos(x[0]);\n  const soa_sincos_pair sc1 = "
                                         "soa_sincos(x[1]);"));
      CHECK_THAT(source, Catch::Contains("const soa_sincos_pair sc2 = soa_sincos(x[2]);\n\n  const double v0 = sc0.s;\n"
                                         "  const double v1 = sc0.c;"));
    } else {
      CHECK(calls == 0);
      std::vector<std::string> xs;
      for (int i = 0; i < n; ++i) xs.push_back(fmt::format("x[{}]", i));
      while (xs.size() % 8 != 0) xs.push_back("0.0");
      CHECK_THAT(source, Catch::Contains(fmt::format("const double soa_angle[{0}] = {{{1}}};\n"
                                                     "  double soa_sin[{0}], soa_cos[{0}];\n"
                                                     "  soa_sincos_n(soa_angle, soa_sin, soa_cos, {0});\n\n"
                                                     "  const double v0 = soa_sin[0];\n  const double v1 = soa_cos[0];",
                                                     xs.size(), fmt::join(xs, ", "))));
    }
    const Compiled lib(g);
    const KernelFn fn = lib.get(fmt::format("trig{}_trig", n));
    REQUIRE(fn != nullptr);
    std::vector<double> x = {0.0,
                             -0.0,
                             0.7853981633974483,
                             -2.5,
                             0x1.6c6cbc45dc8dep+5,
                             std::nextafter(0x1p20, 0.0),
                             0x1p20,
                             -1e22,
                             INFINITY,
                             NAN,
                             1e-300,
                             0x1p-1074};
    std::mt19937_64 rng(4);
    for (const double range : {1.0, 10.0, 1e4, 0x1p20}) {
      std::uniform_real_distribution<double> u(-range, range);
      for (int i = 0; i < 5000; ++i) x.push_back(u(rng));
    }
    std::shuffle(x.begin(), x.end(), rng);  // lanes of every kind side by side
    while (x.size() % n != 0) x.push_back(0.5);
    std::vector<double> out(2 * n);
    for (std::size_t at = 0; at < x.size(); at += n) {
      fn(x.data() + at, out.data());
      for (int i = 0; i < n; ++i) {
        const double xi = x[at + i];
        INFO("x = " << xi);
        const soa::SinCos expected = soa::sincos(xi);
        if (std::isnan(expected.s)) {
          CHECK(std::isnan(out[2 * i]));
          CHECK(std::isnan(out[2 * i + 1]));
          continue;
        }
        CHECK(std::memcmp(&out[2 * i], &expected.s, sizeof(double)) == 0);
        CHECK(std::memcmp(&out[2 * i + 1], &expected.c, sizeof(double)) == 0);
      }
    }
  }
}

TEST_CASE("kernels without sin or cos carry no soa_sincos", "[emit-cpp]") {
  // A gantry: two prismatic joints, so no angle anywhere in its kernels.
  const Robot gantry = parse_urdf(R"(<robot name="gantry">
  <link name="base"/>
  <link name="carriage"><inertial><mass value="2"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="head"><inertial><mass value="1"/><inertia ixx="0.05" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.05"/></inertial></link>
  <joint name="x" type="prismatic"><parent link="base"/><child link="carriage"/><axis xyz="1 0 0"/></joint>
  <joint name="z" type="prismatic"><origin xyz="0 0.1 0"/><parent link="carriage"/><child link="head"/><axis xyz="0 0 1"/></joint>
</robot>)",
                                  "gantry.urdf");
  const Generated g = generate(gantry, gantry.default_tips(), "gantry");
  CHECK_THAT(g.files.all_sources(), !Catch::Contains("sincos") && !Catch::Contains("all at once"));
  CHECK_THAT(g.files.all_sources(), !Catch::Contains("std::sin") && !Catch::Contains("std::cos"));
  check_against_runtime(gantry, gantry.default_tips(), "gantry");  // and it compiles warning-free
  // The Panda's do: the functions once, a call for the joint angles of each kernel.
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  const std::string panda_source = generate(panda, panda.default_tips(), "panda", kWhole).files.all_sources();
  CHECK_THAT(panda_source, Catch::Contains("static inline soa_sincos_pair soa_sincos(double x)"));
  CHECK_THAT(panda_source, Catch::Contains("  soa_sincos_n(soa_angle, soa_sin, soa_cos, "));
}

TEST_CASE("the sines and cosines of the inputs open each kernel, in input order, and only those used", "[emit-cpp]") {
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  const Generated g = generate(panda, panda.default_tips(), "panda", kWhole);
  const std::string source = g.files.all_sources();
  for (const specialise::Kernel& k : g.kernels) {
    INFO(k.name);
    // The inputs some Sin or Cos reads: q's offsets (q comes first in every kernel).
    std::set<int> angles;
    for (const specialise::ScalarNode& n : k.code.nodes)
      if ((n.op == specialise::ScalarOp::Sin || n.op == specialise::ScalarOp::Cos) &&
          k.code.nodes[n.a].op == specialise::ScalarOp::Input)
        angles.insert(k.code.nodes[n.a].a);
    REQUIRE(!angles.empty());
    REQUIRE(*angles.rbegin() < panda.nq);
    const std::size_t begin = source.find("\nvoid " + k.name + "(");
    REQUIRE(begin != std::string::npos);
    const std::string body = source.substr(begin, source.find("\n}\n", begin) - begin);
    // Lane i is the i-th angle, in order, all before the first arithmetic statement.
    const std::size_t first_op = body.find("  const double v");
    REQUIRE(first_op != std::string::npos);
    CHECK(body.find("// sin and cos of the joint angles, all at once") < first_op);
    std::vector<std::string> qs;
    for (int angle : angles) qs.push_back(fmt::format("q[{}]", angle));
    while (qs.size() % 8 != 0) qs.push_back("0.0");  // whole vectors of angles
    const std::string call = fmt::format(
        "  const double soa_angle[{0}] = {{{1}}};\n  double soa_sin[{0}], soa_cos[{0}];\n"
        "  soa_sincos_n(soa_angle, soa_sin, soa_cos, {0});\n",
        qs.size(), fmt::join(qs, ", "));
    CHECK(body.find(call) < first_op);
    // And no pair besides: the Panda's sines and cosines are all of joint angles.
    CHECK(body.find("= soa_sincos(") == std::string::npos);
  }
}

TEST_CASE("sin-cos pairs of computed values stay at their first use; unused inputs get none", "[emit-cpp]") {
  // x[0], x[1], x[2]: sin(x[0] x[1]), cos(x[2]), sin(x[0]), cos(x[0] x[1]) and a sum; x[1]
  // has no sine or cosine.
  using specialise::ScalarOp;
  specialise::Kernel k = hand_written("mixed", "sin and cos of inputs and of a product", 3, 5);
  k.code.nodes = {{ScalarOp::Input, 0},  {ScalarOp::Input, 1}, {ScalarOp::Input, 2},
                  {ScalarOp::Mul, 0, 1}, {ScalarOp::Sin, 3},   {ScalarOp::Cos, 2},
                  {ScalarOp::Sin, 0},    {ScalarOp::Cos, 3},   {ScalarOp::Add, 4, 6}};
  k.code.outputs = {4, 5, 6, 7, 8};
  specialise::check(k.code);
  const Generated g = generate(k, "mixed");
  CHECK_THAT(g.files.all_sources(),
             Catch::Contains("  // sin and cos of the joint angles, all at once: independent, they overlap\n"
                             "  const soa_sincos_pair sc0 = soa_sincos(x[0]);\n"
                             "  const soa_sincos_pair sc1 = soa_sincos(x[2]);\n\n"
                             "  const double v0 = x[0] * x[1];\n"
                             "  const soa_sincos_pair sc2 = soa_sincos(v0);\n"
                             "  const double v1 = sc2.s;\n"
                             "  const double v2 = sc1.c;\n"
                             "  const double v3 = sc0.s;\n"
                             "  const double v4 = sc2.c;\n"));
  CHECK_THAT(g.files.all_sources(), !Catch::Contains("soa_sincos(x[1])"));
  // Compiles warning-free and is the interpreter to the bit.
  const Compiled lib(g);
  const KernelFn fn = lib.get("mixed_mixed");
  REQUIRE(fn != nullptr);
  const std::vector<std::vector<double>> inputs = {{0.3, -2.5, 1.25}, {-1e7, 3.0, 0.0}, {2.0, 1e300, -0.0}};
  for (const std::vector<double>& x : inputs) {
    double out[5], expected[5];
    fn(x.data(), out);
    specialise::evaluate(k.code, x.data(), expected);
    CHECK(std::memcmp(out, expected, sizeof out) == 0);
  }
}

TEST_CASE("kernel names the generated namespace already holds are refused", "[emit-cpp]") {
  const Robot robot = load_urdf(test::shared_robot_path("double_pendulum.urdf"));
  Generated g = generate(robot, robot.default_tips(), "double_pendulum");
  for (const char* taken : {"soa_sincos", "soa_sincos_pair", "soa_sincos_libm", "nq", "nv", "tips"}) {
    std::vector<specialise::Kernel> kernels = g.kernels;
    kernels.back().name = taken;
    try {
      emit::emit_cpp(kernels, g.target);
      FAIL("no error for a kernel named " << taken);
    } catch (const UserError& e) {
      CHECK_THAT(e.what(), Catch::Contains(fmt::format("kernel name '{}' is taken", taken)) &&
                               Catch::Contains("soa_gen::double_pendulum"));
    }
  }
  // Names that merely contain them are fine.
  g.kernels.back().name = "soa_sincos_table";
  CHECK_NOTHROW(emit::emit_cpp(g.kernels, g.target));
  // Ports named as the generated functions' own parameters or locals (soa_*) are refused.
  for (const char* taken : {"g", "w", "soa_a3", "soa_acc"}) {
    std::vector<specialise::Kernel> kernels = g.kernels;
    kernels.back().output = taken;
    CHECK_THROWS_WITH(emit::emit_cpp(kernels, g.target),
                      Catch::Contains(fmt::format("'{}' is taken", taken)) && Catch::Contains("soa_*"));
  }
}

TEST_CASE("identifiers and literals are valid C++", "[emit-cpp]") {
  CHECK(specialise::identifier("panda") == "panda");
  CHECK(specialise::identifier("random tree (seed 3)") == "random_tree_seed_3");
  CHECK(specialise::identifier("7dof-arm") == "robot_7dof_arm");
}

namespace {

// Standard kernels for `robot` under `name` (the namespace, the C prefix and the file stem),
// as soac emit --name makes them.
Generated generate_named(const Robot& robot, const std::vector<int>& tips, const std::string& name) {
  Generated g;
  const auto constants = exec::make_constants(robot, tips);
  for (const auto& k : lower::standard_kernels()) {
    g.programs.push_back(test::kernel_program(k));
    g.kernels.push_back(test::build_kernel(k, constants));
  }
  g.target = emit::make_target(robot, tips, name);
  g.files = emit::emit_cpp(g.kernels, g.target);
  return g;
}

std::vector<int> frames_named(const Robot& robot, const std::vector<std::string>& names) {
  std::vector<int> tips;
  for (const std::string& n : names) tips.push_back(*robot.find_frame(n));
  return tips;
}

// A temporary directory, removed at the end.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& what)
      : path(fs::temp_directory_path() / (what + "_" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string run_and_read(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  REQUIRE(::pclose(pipe) == 0);
  return out;
}

// A line of generated code (not a comment) holding `what`, or "".
std::string code_line_with(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t first = line.find_first_not_of(' ');
    if (line.find(what) != std::string::npos && line.compare(first == std::string::npos ? 0 : first, 2, "//") != 0)
      return line;
  }
  return "";
}

}  // namespace

TEST_CASE("the option --name sets namespace and C prefix: two variants of one robot link into one program",
          "[emit-cpp]") {
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  const std::vector<int> tips_a = frames_named(panda, {"panda_hand"});
  const std::vector<int> tips_b = frames_named(panda, {"panda_leftfinger", "panda_rightfinger"});
  const Generated a = generate_named(panda, tips_a, "panda_a");
  const Generated b = generate_named(panda, tips_b, "panda_b");
  CHECK(a.files.header_name == "panda_a.hpp");
  CHECK_THAT(a.files.header, Catch::Contains("namespace soa_gen::panda_a {") &&
                                 Catch::Contains("void panda_a_jacobian(const double* in, double* out);"));
  CHECK_THAT(b.files.all_sources(),
             Catch::Contains("#include \"panda_b.hpp\"") &&
                 Catch::Contains("extern \"C\" void panda_b_jacobian(const double* in, double* out) "
                                 "{ soa_gen::panda_b::jacobian(in, out); }"));

  // One program: both headers, both sources; each Jacobian called through its namespace
  // and through its extern "C" symbol.
  const TempDir dir("soa_emit_two_variants");
  for (const Generated* g : {&a, &b}) {
    std::ofstream(dir.path / g->files.header_name) << g->files.header;
    for (const emit::SourceFile& f : g->files.sources) std::ofstream(dir.path / f.name) << f.text;
  }
  std::mt19937_64 rng(7);
  const State s = random_state(panda, 1, rng);
  std::string q;
  for (int i = 0; i < panda.nq; ++i) q += fmt::format("{}{:.17g}", i ? ", " : "", s.q[i]);
  std::ofstream(dir.path / "main.cpp") << "#include <cstdio>\n#include \"panda_a.hpp\"\n#include \"panda_b.hpp\"\n"
                                       << "static void print(const double* x, int n) {\n"
                                       << "  for (int i = 0; i < n; ++i) std::printf(\"%.17g\\n\", x[i]);\n}\n"
                                       << "int main() {\n  const double q[" << panda.nq << "] = {" << q << "};\n"
                                       << "  constexpr int na = 6 * soa_gen::panda_a::tips * soa_gen::panda_a::nv;\n"
                                       << "  constexpr int nb = 6 * soa_gen::panda_b::tips * soa_gen::panda_b::nv;\n"
                                       << "  double a[na], b[nb], ca[na], cb[nb];\n"
                                       << "  soa_gen::panda_a::jacobian(q, a);\n  soa_gen::panda_b::jacobian(q, b);\n"
                                       << "  panda_a_jacobian(q, ca);\n  panda_b_jacobian(q, cb);\n"
                                       << "  print(a, na);\n  print(b, nb);\n  print(ca, na);\n  print(cb, nb);\n}\n";
  const emit::Toolchain tc = emit::build_toolchain();
  const std::string program = (dir.path / "two_variants").string();
  const std::string command =
      fmt::format("'{}' -std=c++17 -O2 -Wall -Wextra -Werror -isystem '{}' '{}' '{}' '{}' -o '{}' 2>&1", tc.cxx,
                  tc.eigen_include, (dir.path / "main.cpp").string(), (dir.path / "panda_a.cpp").string(),
                  (dir.path / "panda_b.cpp").string(), program);
  INFO(command);
  REQUIRE(std::system(command.c_str()) == 0);
  std::istringstream out(run_and_read("'" + program + "'"));
  const auto read = [&](int rows, int cols) {
    MatX m(rows, cols);
    for (int i = 0; i < rows * cols; ++i) REQUIRE(out >> m.data()[i]);
    return m;
  };
  const MatX ja = read(6, panda.nv), jb = read(12, panda.nv), ca = read(6, panda.nv), cb = read(12, panda.nv);
  // Each is its own tip set's Jacobian (the generic runtime's), whichever way it is called.
  const lower::KernelDecl& decl = lower::standard_kernels()[4];
  REQUIRE(decl.name == "jacobian");
  const std::vector<double> in(s.q.data(), s.q.data() + panda.nq);
  const MatX expected_a = exec::run(test::kernel_program(decl), exec::make_constants(panda, tips_a), in);
  const MatX expected_b = exec::run(test::kernel_program(decl), exec::make_constants(panda, tips_b), in);
  CHECK(test::relative_difference(ja, expected_a) < 1e-12);
  CHECK(test::relative_difference(jb, expected_b) < 1e-12);
  CHECK(ja == ca);
  CHECK(jb == cb);
  // And the two differ: the hand is not the left finger.
  CHECK((ja - jb.topRows(6)).cwiseAbs().maxCoeff() > 1e-3);
}

TEST_CASE("names that cannot be a C++ namespace, function or C symbol are refused", "[emit-cpp]") {
  for (const char* bad : {"int", "delete", "class", "and", "restrict", "main", "__x", "a__b", "_Panda", "_panda",
                          "7dof", "a-b", "", "x y", "caf\xc3\xa9"}) {
    INFO("'" << bad << "'");
    CHECK(!specialise::name_problem(bad, true).empty());
    CHECK(!specialise::name_problem(bad, false).empty());
  }
  CHECK_THAT(specialise::name_problem("int"), Catch::Equals("is a C or C++ keyword"));
  CHECK_THAT(specialise::name_problem("__x"), Catch::Contains("double underscore"));
  // The prefix also names the namespace and comes before '_' in every symbol.
  for (const char* prefix_only : {"std", "Eigen", "soa_gen", "panda_"}) {
    CHECK(!specialise::name_problem(prefix_only, true).empty());
    CHECK(specialise::name_problem(prefix_only, false).empty());
  }
  for (const char* good : {"panda", "panda_a", "Panda7", "forward_dynamics", "x"})
    CHECK(specialise::name_problem(good, true).empty());

  const Robot robot = load_urdf(test::shared_robot_path("double_pendulum.urdf"));
  try {
    emit::make_target(robot, robot.default_tips(), "delete");
    FAIL("no error for the name 'delete'");
  } catch (const UserError& e) {
    CHECK_THAT(e.what(), Catch::Equals("emit-cpp: name 'delete' is a C or C++ keyword"));
  }
  Generated g = generate(robot, robot.default_tips(), "double_pendulum");
  g.kernels.back().name = "class";
  CHECK_THROWS_WITH(emit::emit_cpp(g.kernels, g.target), "emit-cpp: kernel name 'class' is a C or C++ keyword");
  // A default name from the robot's is always usable.
  CHECK(specialise::identifier("int") == "robot_int");
  CHECK(specialise::identifier("std") == "robot_std");
  CHECK(specialise::identifier("__init__") == "init");
  CHECK(specialise::identifier("") == "robot");
}

TEST_CASE("comment_safe: no text ends a // comment line, continues it or hides in it", "[emit-cpp]") {
  CHECK(specialise::comment_safe("panda_link7: kinematics") == "panda_link7: kinematics");
  CHECK(specialise::comment_safe("a\nint x = 1;\r\n//") == "a\\x0aint x = 1;\\x0d\\x0a//");
  CHECK(specialise::comment_safe("end\\") == "end\\x5c");
  CHECK(specialise::comment_safe("trigraph ?\?/") == "trigraph ?\\x3f/");
  CHECK(specialise::comment_safe("*/ x /*") == "*\\x2f x /*");
  CHECK(specialise::comment_safe("tab\there") == "tab\\x09here");
  CHECK(specialise::comment_safe("\"q\" 'q'") == "\"q\" 'q'");
  // UTF-8 text stays readable; direction overrides, line separators, C1 controls and
  // malformed bytes do not.
  CHECK(specialise::comment_safe("caf\xc3\xa9 \xcf\x88") == "caf\xc3\xa9 \xcf\x88");
  CHECK(specialise::comment_safe("a\xe2\x80\xae"
                                 "b") ==
        "a\\xe2\\x80\\xae"
        "b");
  CHECK(specialise::comment_safe("a\xe2\x80\xa8"
                                 "b") ==
        "a\\xe2\\x80\\xa8"
        "b");
  CHECK(specialise::comment_safe("a\xc2\x85"
                                 "b") ==
        "a\\xc2\\x85"
        "b");
  CHECK(specialise::comment_safe("a\xff\xc3") == "a\\xff\\xc3");
  CHECK(specialise::comment_safe("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  // Property: for any bytes, one line, not ending in a backslash, no */ and no ??.
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; ++i) {
    std::string text(rng() % 12, ' ');
    for (char& c : text)
      c = "\n\r\\?*/\x7f\xe2\x80\xae\xc3\xa9"
          "a"[rng() % 13];
    const std::string safe = specialise::comment_safe(text);
    INFO(safe);
    CHECK(safe.find_first_of("\n\r") == std::string::npos);
    CHECK((safe.empty() || safe.back() != '\\'));
    CHECK(safe.find("*/") == std::string::npos);
    CHECK(safe.find("??") == std::string::npos);
  }
}

TEST_CASE("hostile names in a robot file stay inside comments of code that compiles", "[emit-cpp]") {
  for (const char* file : {"hostile-newline.urdf", "hostile-chars.urdf"}) {
    INFO(file);
    const Robot robot = load_urdf(test::source_path(std::string("tests/data/urdf/") + file));
    // Every frame a tip, so that every link name lands in the header as a tip too.
    std::vector<int> tips;
    for (std::size_t f = 0; f < robot.frames.size(); ++f) tips.push_back(static_cast<int>(f));
    Generated g = generate_named(robot, tips, "hostile");
    g.target.kernel_source = "kernels\n int x = 1; ?\?/\\";
    g.files = emit::emit_cpp(g.kernels, g.target);
    const std::string g_sources = g.files.all_sources();
    for (const std::string* text : {static_cast<const std::string*>(&g.files.header), &g_sources}) {
      CHECK(code_line_with(*text, "int x") == "");
      CHECK(code_line_with(*text, "evil") == "");
      CHECK(text->find("\\\n") == std::string::npos);  // no line splice
      CHECK(text->find("?\?/") == std::string::npos);  // no trigraph
      CHECK(text->find('\r') == std::string::npos);
    }
    // The names are there, escaped, in the banner, the conventions and the labels.
    CHECK_THAT(g.files.header, Catch::Contains("int x = 1;"));
    CHECK_THAT(g.files.all_sources(), Catch::Contains("int x = 1;"));
    // -trigraphs: ??/ would be a backslash; -Werror: a splice would warn (-Wcomment).
    const Compiled lib(g, "-trigraphs");
    CHECK(lib.get("hostile_inverse_dynamics") != nullptr);
  }
  const Robot robot = load_urdf(test::source_path("tests/data/urdf/hostile-newline.urdf"));
  const std::string header = generate_named(robot, robot.default_tips(), "hostile").files.header;
  CHECK_THAT(header, Catch::Contains("wrist_3_link\\x0aint x = 1;\\x0a//"));
}

namespace {

// World pose of every tip frame, from the kinematics' phi(p(k), k) = [[R, l~ R], [0, R]].
std::vector<std::pair<Eigen::Matrix3d, Eigen::Vector3d>> tip_poses(const Robot& robot, const VecX& q,
                                                                   const std::vector<int>& tips) {
  State s;
  s.q = q;
  s.qd = s.qdd = VecX::Zero(robot.nv);
  s.f0 = VecX::Zero(6 * static_cast<long>(tips.size()));
  const Kinematics kin = compute_kinematics(robot, s, tips);
  std::vector<Eigen::Matrix3d> R(robot.size());
  std::vector<Eigen::Vector3d> p(robot.size());
  for (int k = robot.size() - 1; k >= 0; --k) {  // parents first
    const Mat6& phi = kin.body[k].phi;
    const Eigen::Matrix3d Rk = phi.bottomRightCorner<3, 3>();
    const Eigen::Matrix3d lx = phi.topRightCorner<3, 3>() * Rk.transpose();
    const Eigen::Vector3d l(lx(2, 1), lx(0, 2), lx(1, 0));
    const int parent = robot.bodies[k].parent;
    R[k] = parent < 0 ? Rk : R[parent] * Rk;
    p[k] = parent < 0 ? l : Eigen::Vector3d(p[parent] + R[parent] * l);
  }
  std::vector<std::pair<Eigen::Matrix3d, Eigen::Vector3d>> poses;
  for (int t : tips) {
    const Frame& f = robot.frames[t];
    poses.emplace_back(R[f.body] * f.R, p[f.body] + R[f.body] * f.p);
  }
  return poses;
}

}  // namespace

TEST_CASE("runs of zeros among the outputs are inline stores of up to eight; only long runs are loops", "[emit-cpp]") {
  // A loop of zeros is `rep stos` or a memset call to g++, whose start-up a kernel's dozens
  // of short runs (a mass matrix's structural zeros) would pay dozens of times.
  const std::vector<int> runs = {1, 3, 8, 13, 255, 256, 300};
  specialise::Kernel k = hand_written("zeros", "runs of zeros between x^2", 1, 1);
  k.code.nodes = {{specialise::ScalarOp::Input, 0}, {specialise::ScalarOp::Mul, 0, 0}, {}};  // x, x^2, 0
  k.code.outputs = {1};
  for (int n : runs) {
    k.code.outputs.insert(k.code.outputs.end(), static_cast<std::size_t>(n), 2);
    k.code.outputs.push_back(1);
  }
  k.rows = static_cast<int>(k.code.outputs.size());
  specialise::check(k.code);
  const Generated g = generate(k, "zeros");
  const std::string all = g.files.all_sources();
  CHECK_THAT(all, Catch::Contains("  out[1] = 0.0;\n") && Catch::Contains("  soa_zeros<3>(out + 3);\n") &&
                      Catch::Contains("  soa_zeros<8>(out + 7);\n") && Catch::Contains("  soa_zeros<8>(out + 16);\n") &&
                      Catch::Contains("  soa_zeros<5>(out + 24);\n") &&
                      Catch::Contains("  for (int i = 286; i < 542; ++i) out[i] = 0.0;\n") &&
                      Catch::Contains("  for (int i = 543; i < 843; ++i) out[i] = 0.0;\n"));
  CHECK(all.find("for (int i = 30;") == std::string::npos);  // 255 zeros from out[30]: inline
  CHECK(code_line_with(all, "memset(out") == "");
  const Compiled lib(g);
  const KernelFn fn = lib.get("zeros_zeros");
  REQUIRE(fn != nullptr);
  std::vector<double> out(static_cast<std::size_t>(k.rows), NAN);
  const double x = 1.5;
  fn(&x, out.data());
  for (std::size_t i = 0; i < out.size(); ++i) {
    INFO("out[" << i << "]");
    CHECK(out[i] == (k.code.outputs[i] == 1 ? 2.25 : 0.0));
  }
}

TEST_CASE("the header's Eigen overloads compile for outputs beyond Eigen's fixed-size bound", "[emit-cpp]") {
  // A humanoid's Christoffel symbols are N x N^2 (talos_reduced: 38 x 1444, 439 KB): as a
  // fixed-size Eigen matrix a static assertion fails (128 KB). Beyond that, a dynamic one.
  specialise::Kernel k = hand_written("big", "x and x^2, 10,000 times each", 1, 100, 200);
  k.code.nodes = {{specialise::ScalarOp::Input, 0}, {specialise::ScalarOp::Mul, 0, 0}};
  for (int i = 0; i < k.rows * k.cols; ++i) k.code.outputs.push_back(i % 2);
  specialise::check(k.code);
  Generated g = generate(k, "big");
  CHECK_THAT(g.files.header, Catch::Contains("inline Eigen::MatrixXd big(const Eigen::Matrix<double, 1, 1>& x) {\n"
                                             "  Eigen::MatrixXd out(100, 200);"));
  // A caller including the header with Eigen, as users do.
  g.files.sources.push_back({"caller.cpp",
                             "#include \"big_kernels.hpp\"\n"
                             "extern \"C\" void big_by_eigen(const double* in, double* out) {\n"
                             "  const Eigen::MatrixXd m = soa_gen::big::big(Eigen::Matrix<double, 1, 1>(in[0]));\n"
                             "  for (Eigen::Index i = 0; i < m.size(); ++i) out[i] = m.data()[i];\n"
                             "}\n"});
  const Compiled lib(g);
  const KernelFn fn = lib.get("big_by_eigen");
  REQUIRE(fn != nullptr);
  std::vector<double> out(k.rows * k.cols);
  const double x = 1.5;
  fn(&x, out.data());
  for (int i = 0; i < k.rows * k.cols; ++i) CHECK(out[i] == (i % 2 ? 2.25 : 1.5));
}

TEST_CASE("the header states the conventions, and the Jacobian's frame is the one stated", "[emit-cpp]") {
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  const std::vector<int> tips = frames_named(panda, {"panda_hand", "panda_leftfinger"});
  const Generated g = generate_named(panda, tips, "panda");
  const std::string& h = g.files.header;
  CHECK_THAT(h, Catch::Contains("//     q[0]       qd[0]      panda_joint1 (revolute, link panda_link1)\n"
                                "//     q[1]       qd[1]      panda_joint2 (revolute, link panda_link2)\n"));
  CHECK_THAT(h, Catch::Contains("panda_finger_joint1 (prismatic, link panda_leftfinger)"));
  CHECK_THAT(h, Catch::Contains("Spatial vectors are [angular; linear]"));
  CHECK_THAT(h, Catch::Contains("[angular; linear] at the tip frame's origin in the tip frame's own axes"));
  CHECK_THAT(h, Catch::Contains("//     [0..5]     panda_hand (on body panda_link7)\n"
                                "//     [6..11]    panda_leftfinger (on body panda_leftfinger)\n"));
  CHECK_THAT(h, Catch::Contains("//   q: configuration order; J: rows 6 per tip, each in its own frame, columns "
                                "joint-space order\nvoid jacobian(const double* q, double* J);"));
  CHECK_THAT(h, Catch::Contains("Lambda: rows and columns 6 per tip, each in its own frame"));
  CHECK_THAT(h, Catch::Contains("//   q: configuration order; qd, qdd, tau: joint-space order\n"));
  CHECK_THAT(h, Catch::Contains("Gravity (0, 0, -9.81) m/s^2 in world axes"));
  CHECK_THAT(h, !Catch::Contains("free-flyer:"));

  // What the header says of J: J qd is [omega; v] of each tip frame's origin in that frame's
  // own axes. Against central differences of the tips' world poses along qd.
  const lower::KernelDecl& decl = lower::standard_kernels()[4];
  REQUIRE(decl.name == "jacobian");
  const auto constants = exec::make_constants(panda, tips);
  std::mt19937_64 rng(11);
  for (int sample = 0; sample < 5; ++sample) {
    const State s = random_state(panda, 2, rng);
    const MatX J =
        exec::run(test::kernel_program(decl), constants, std::vector<double>(s.q.data(), s.q.data() + panda.nq));
    const double h_step = 1e-6;
    const auto plus = tip_poses(panda, s.q + h_step * s.qd, tips), minus = tip_poses(panda, s.q - h_step * s.qd, tips);
    const auto at = tip_poses(panda, s.q, tips);
    const VecX V = J * s.qd;
    for (std::size_t t = 0; t < tips.size(); ++t) {
      const Eigen::Matrix3d& R = at[t].first;
      const Eigen::Matrix3d Rdot = (plus[t].first - minus[t].first) / (2 * h_step);
      const Eigen::Matrix3d w = R.transpose() * Rdot;  // omega~ in the tip's axes
      const Eigen::Vector3d omega(w(2, 1), w(0, 2), w(1, 0));
      const Eigen::Vector3d v = R.transpose() * (plus[t].second - minus[t].second) / (2 * h_step);
      INFO("tip " << t);
      CHECK((V.segment<3>(6 * t) - omega).norm() < 1e-6);
      CHECK((V.segment<3>(6 * t + 3) - v).norm() < 1e-6);
    }
  }

  // A free-flyer's layout is stated where its joint is listed.
  const Robot floating = load_urdf(test::shared_robot_path("panda.urdf"), LoadOptions{true});
  const std::string fh = generate_named(floating, frames_named(floating, {"panda_hand"}), "panda_ff").files.header;
  CHECK_THAT(fh, Catch::Contains("//     q[0..6]    qd[0..5]   root_joint (free, link"));
  CHECK_THAT(fh, Catch::Contains("free-flyer: q = [x y z qx qy qz qw], the root frame's origin in the world"));
  CHECK_THAT(fh, Catch::Contains("qd = [omega; v] in the root body's axes"));
  CHECK_THAT(fh, Catch::Contains("//     q[7]       qd[6]      panda_joint1 (revolute"));
}

TEST_CASE("gravity is a generation option, stated in the banner", "[emit-cpp]") {
  Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  const std::vector<int> tips = panda.default_tips();
  const Generated with = generate_named(panda, tips, "panda_g");
  panda.gravity = Eigen::Vector3d::Zero();
  const Generated without = generate_named(panda, tips, "panda_0");
  CHECK_THAT(with.files.header, Catch::Contains("//   gravity (0, 0, -9.81) m/s^2 in world axes\n"));
  CHECK_THAT(without.files.header, Catch::Contains("//   gravity (0, 0, 0) m/s^2 in world axes\n"));
  CHECK_THAT(without.files.all_sources(), Catch::Contains("//   gravity (0, 0, 0) m/s^2 in world axes\n"));
  const Compiled lib_with(with), lib_without(without);
  const KernelFn id_with = lib_with.get("panda_g_inverse_dynamics"),
                 id_without = lib_without.get("panda_0_inverse_dynamics");
  REQUIRE(id_with != nullptr);
  REQUIRE(id_without != nullptr);
  // Without gravity = with gravity minus the gravity torque (inverse dynamics at rest).
  std::mt19937_64 rng(5);
  for (int sample = 0; sample < 20; ++sample) {
    const State s = random_state(panda, static_cast<int>(tips.size()), rng);
    std::vector<double> in(s.q.data(), s.q.data() + panda.nq), rest = in;
    in.insert(in.end(), s.qd.data(), s.qd.data() + panda.nv);
    in.insert(in.end(), s.qdd.data(), s.qdd.data() + panda.nv);
    rest.resize(in.size(), 0.0);
    VecX tau_with(panda.nv), tau_without(panda.nv), tau_gravity(panda.nv);
    id_with(in.data(), tau_with.data());
    id_without(in.data(), tau_without.data());
    id_with(rest.data(), tau_gravity.data());
    CHECK(tau_gravity.norm() > 1.0);
    CHECK((tau_without - (tau_with - tau_gravity)).norm() < 1e-9 * (1.0 + tau_with.norm()));
  }
}
