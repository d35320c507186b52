// The C++ back-end (compiler/emit-cpp): the standard kernels for the double pendulum, the
// Panda and a random tree with ball joints are emitted, compiled at test time with the
// system compiler (-Wall -Wextra -Werror -O2) into shared objects, loaded with dlopen and
// compared with the generic runtime on 100 random states each.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "support/pipeline.hpp"

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
      MatX generated(l.rows, l.cols), generic(l.rows, l.cols);
      fn(in.data(), generated.data());
      exec::execute(g.programs[i], constants, in.data(), generic.data());
      worst = std::max(worst, test::relative_difference(generated, generic));
    }
    CHECK(worst < 1e-11);
  }
}

}  // namespace

TEST_CASE("generated C++ compiles warning-free and equals the generic runtime", "[emit-cpp]") {
  const Robot pendulum = load_urdf(test::shared_robot_path("double_pendulum.urdf"));
  check_against_runtime(pendulum, test::default_tips(pendulum), "double_pendulum");
  const Robot panda = load_urdf(test::shared_robot_path("panda.urdf"));
  check_against_runtime(panda, test::default_tips(panda), "panda");
  const Robot tree = random_tree(4, RandomTreeOptions{6, false, true, true, 0.5});
  check_against_runtime(tree, test::default_tips(tree), "tree4");
}

TEST_CASE("generated code carries its provenance and is deterministic", "[emit-cpp]") {
  const Robot robot = load_urdf(test::shared_robot_path("double_pendulum.urdf"));
  const std::vector<int> tips = test::default_tips(robot);
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

TEST_CASE("identifiers and literals are valid C++", "[emit-cpp]") {
  CHECK(emit::identifier("panda") == "panda");
  CHECK(emit::identifier("random tree (seed 3)") == "random_tree_seed_3");
  CHECK(emit::identifier("7dof-arm") == "robot_7dof_arm");
}
