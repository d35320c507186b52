// The C++ back-end (compiler/emit-cpp): the standard kernels for the double pendulum, the
// Panda and a random tree with ball joints are emitted, compiled at test time with the
// system compiler (-Wall -Wextra -Werror -O2) into shared objects, loaded with dlopen and
// compared with the generic runtime on 100 random states each, and with the SSA
// interpreter bit for bit; the inline sin/cos (soa_sincos) is soa::sincos to the bit and
// appears only where a kernel needs it, the joint angles' pairs first in each kernel;
// kernel names the generated namespace holds already are refused.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include <fmt/format.h>

#include "support/error.hpp"
#include "support/pipeline.hpp"
#include "support/sincos.hpp"

namespace {

using namespace soa;
namespace fs = std::filesystem;

using KernelFn = void (*)(const double*, double*);

struct Generated {
  std::vector<exec::SweepProgram> programs;  // in standard_kernels() order
  std::vector<emit::Kernel> kernels;
  emit::Target target;
  emit::Emitted files;
};

Generated generate(const Robot& robot, const std::vector<int>& tips, const std::string& id) {
  Generated g;
  const auto constants = exec::make_constants(robot, tips);
  for (const auto& k : lower::standard_kernels()) {
    g.programs.push_back(test::kernel_program(k));
    g.kernels.push_back(test::build_kernel(k, constants));
  }
  g.target = emit::make_target(robot, tips);
  g.target.robot = id;
  g.target.file_stem = id + "_kernels";
  g.files = emit::emit_cpp(g.kernels, g.target);
  return g;
}

// One hand-written kernel, emitted as the code of robot `id`.
Generated generate(const emit::Kernel& k, const std::string& id) {
  Generated g;
  g.kernels = {k};
  g.target.robot = id;
  g.target.file_stem = id + "_kernels";
  g.files = emit::emit_cpp(g.kernels, g.target);
  return g;
}

// Writes, compiles and loads the generated code; closes it when done.
class Compiled {
public:
  explicit Compiled(const Generated& g) {
    dir_ = fs::temp_directory_path() / ("soa_emit_cpp_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / g.files.header_name) << g.files.header;
    std::ofstream(dir_ / g.files.source_name) << g.files.source;
    const emit::Toolchain tc = emit::build_toolchain();
    const fs::path so = dir_ / (g.target.robot + ".so");
    const std::string command = "'" + tc.cxx + "' -std=c++17 -O2 -Wall -Wextra -Werror -shared -fPIC -isystem '" +
                                tc.eigen_include + "' '" + (dir_ / g.files.source_name).string() + "' -o '" +
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

void check_against_runtime(const Robot& robot, const std::vector<int>& tips, const std::string& id) {
  const Generated g = generate(robot, tips, id);
  const Compiled lib(g);
  const auto constants = exec::make_constants(robot, tips);
  std::mt19937_64 rng(99);
  for (std::size_t i = 0; i < g.kernels.size(); ++i) {
    const emit::Kernel& k = g.kernels[i];
    INFO(id << ": " << k.name);
    const KernelFn fn = lib.get(id + "_" + k.name);
    REQUIRE(fn != nullptr);
    const exec::Layout l = exec::layout(g.programs[i], constants);
    double worst = 0.0;
    for (int sample = 0; sample < 100; ++sample) {
      const State s = random_state(robot, static_cast<int>(tips.size()), rng);
      std::vector<double> in;
      for (const emit::Port& p : k.inputs) {
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

TEST_CASE("generated code carries its provenance and is deterministic", "[emit-cpp]") {
  const Robot robot = load_urdf(test::shared_robot_path("double_pendulum.urdf"));
  const std::vector<int> tips = robot.default_tips();
  const Generated a = generate(robot, tips, "double_pendulum");
  const Generated b = generate(robot, tips, "double_pendulum");
  CHECK(a.files.header == b.files.header);
  CHECK(a.files.source == b.files.source);
  for (const std::string* text : {&a.files.header, &a.files.source}) {
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
  CHECK_THAT(a.files.source, Catch::Contains("// link2: kinematics"));
}

TEST_CASE("the generated soa_sincos is soa::sincos, bit for bit, one call per angle", "[emit-cpp]") {
  // A kernel taking the sine and cosine of each of its inputs, one output each.
  const int n = 16;
  emit::Kernel k;
  k.name = "trig";
  k.expression = k.derivation = k.meaning = "sin and cos of x";
  k.inputs = {{"x", n}};
  k.output = "out";
  k.rows = 2 * n;
  k.code.input_count = n;
  for (int i = 0; i < n; ++i) {
    k.code.nodes.push_back({specialise::ScalarOp::Input, i});
    const int x = static_cast<int>(k.code.nodes.size()) - 1;
    k.code.nodes.push_back({specialise::ScalarOp::Sin, x});
    k.code.nodes.push_back({specialise::ScalarOp::Cos, x});
    k.code.outputs.push_back(x + 1);
    k.code.outputs.push_back(x + 2);
  }
  specialise::check(k.code);
  const Generated g = generate(k, "trig");
  // Defined once; one call per input, shared by its sine and cosine.
  const std::string& source = g.files.source;
  std::size_t calls = 0;
  for (std::size_t at = 0; (at = source.find("= soa_sincos(x[", at + 1)) != std::string::npos;) ++calls;
  CHECK(calls == n);
  CHECK(source.find("static inline soa_sincos_pair soa_sincos(double x)") ==
        source.rfind("static inline soa_sincos_pair soa_sincos(double x)"));
  // All at the top, in input order; then the nodes read them.
  CHECK_THAT(source, Catch::Contains("const soa_sincos_pair sc0 = soa_sincos(x[0]);\n  const soa_sincos_pair sc1 = soa_sincos(x[1]);"));
  CHECK_THAT(source, Catch::Contains("const soa_sincos_pair sc15 = soa_sincos(x[15]);\n\n  const double v0 = sc0.s;\n"
                                     "  const double v1 = sc0.c;"));

  const Compiled lib(g);
  const KernelFn fn = lib.get("trig_trig");
  REQUIRE(fn != nullptr);
  std::vector<double> x = {0.0, -0.0, 0.7853981633974483, -2.5, 0x1.6c6cbc45dc8dep+5, std::nextafter(0x1p20, 0.0), 0x1p20,
                           -1e22, INFINITY, NAN, 1e-300, 0x1p-1074};
  std::mt19937_64 rng(4);
  for (const double range : {1.0, 10.0, 1e4, 0x1p20}) {
    std::uniform_real_distribution<double> u(-range, range);
    for (int i = 0; i < 5000; ++i) x.push_back(u(rng));
  }
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
  CHECK_THAT(g.files.source, !Catch::Contains("sincos") && !Catch::Contains("all at once"));
  CHECK_THAT(g.files.source, !Catch::Contains("std::sin") && !Catch::Contains("std::cos"));
  check_against_runtime(gantry, gantry.default_tips(), "gantry");  // and it compiles warning-free
  // The Panda's do: the function once, a call per joint angle.
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  const std::string panda_source = generate(panda, panda.default_tips(), "panda").files.source;
  CHECK_THAT(panda_source, Catch::Contains("static inline soa_sincos_pair soa_sincos(double x)"));
  CHECK_THAT(panda_source, Catch::Contains("const soa_sincos_pair sc0 = soa_sincos(q[1]);"));
}

TEST_CASE("the sin-cos pairs of the inputs open each kernel, in input order, and only those used", "[emit-cpp]") {
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  const Generated g = generate(panda, panda.default_tips(), "panda");
  const std::string& source = g.files.source;
  for (const emit::Kernel& k : g.kernels) {
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
    // Pair i is the i-th angle, in order, all before the first arithmetic statement.
    const std::size_t first_op = body.find("  const double v");
    REQUIRE(first_op != std::string::npos);
    CHECK(body.find("// sin and cos of the joint angles, all at once") < first_op);
    int i = 0;
    for (int angle : angles) {
      const std::size_t at = body.find(fmt::format("  const soa_sincos_pair sc{} = soa_sincos(q[{}]);\n", i++, angle));
      CHECK(at < first_op);
    }
    // And no other pair: the Panda's sines and cosines are all of joint angles.
    std::size_t pairs = 0;
    for (std::size_t at = 0; (at = body.find("= soa_sincos(", at + 1)) != std::string::npos;) ++pairs;
    CHECK(pairs == angles.size());
  }
}

TEST_CASE("sin-cos pairs of computed values stay at their first use; unused inputs get none", "[emit-cpp]") {
  // x[0], x[1], x[2]: sin(x[0] x[1]), cos(x[2]), sin(x[0]), cos(x[0] x[1]) and a sum; x[1]
  // has no sine or cosine.
  using specialise::ScalarOp;
  emit::Kernel k;
  k.name = "mixed";
  k.expression = k.derivation = k.meaning = "sin and cos of inputs and of a product";
  k.inputs = {{"x", 3}};
  k.output = "out";
  k.rows = 5;
  k.code.input_count = 3;
  k.code.nodes = {{ScalarOp::Input, 0}, {ScalarOp::Input, 1}, {ScalarOp::Input, 2}, {ScalarOp::Mul, 0, 1},
                  {ScalarOp::Sin, 3},   {ScalarOp::Cos, 2},   {ScalarOp::Sin, 0},   {ScalarOp::Cos, 3},
                  {ScalarOp::Add, 4, 6}};
  k.code.outputs = {4, 5, 6, 7, 8};
  specialise::check(k.code);
  const Generated g = generate(k, "mixed");
  CHECK_THAT(g.files.source, Catch::Contains("  // sin and cos of the joint angles, all at once: independent, they overlap\n"
                                             "  const soa_sincos_pair sc0 = soa_sincos(x[0]);\n"
                                             "  const soa_sincos_pair sc1 = soa_sincos(x[2]);\n\n"
                                             "  const double v0 = x[0] * x[1];\n"
                                             "  const soa_sincos_pair sc2 = soa_sincos(v0);\n"
                                             "  const double v1 = sc2.s;\n"
                                             "  const double v2 = sc1.c;\n"
                                             "  const double v3 = sc0.s;\n"
                                             "  const double v4 = sc2.c;\n"));
  CHECK_THAT(g.files.source, !Catch::Contains("soa_sincos(x[1])"));
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
    std::vector<emit::Kernel> kernels = g.kernels;
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
}

TEST_CASE("identifiers and literals are valid C++", "[emit-cpp]") {
  CHECK(emit::identifier("panda") == "panda");
  CHECK(emit::identifier("random tree (seed 3)") == "random_tree_seed_3");
  CHECK(emit::identifier("7dof-arm") == "robot_7dof_arm");
}
