// The generic runtime (runtime/exec/execute.hpp): a lowered sweep program executed for a
// robot loaded at run time agrees with the dense interpreter (the ground truth) to 1e-10,
// on every shared robot (fixed, and free-flying where the robots' README says so) and on
// random trees with ball, prismatic and free joints. With a workspace made once, a run
// allocates nothing and gives the per-call result bit for bit; a workspace of another
// program or robot is a clear error.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>

#include "pipeline/dynamics.hpp"
#include "support/error.hpp"
#include "support/pipeline.hpp"

// Every heap allocation of this test process goes through here and is counted while
// `counting` is set (the zero-allocation tests below).
namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void* allocate(std::size_t size, std::size_t alignment) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (size == 0) size = 1;
  void* p = alignment <= alignof(std::max_align_t)
                ? std::malloc(size)
                : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

// The array and nothrow forms call these (libstdc++).
void* operator new(std::size_t size) { return allocate(size, 0); }
void* operator new(std::size_t size, std::align_val_t a) { return allocate(size, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

using namespace soa;

// Vector- and operator-valued expressions covering every factor kind the lowering knows:
// every vocabulary operator, adjoints, inverses (memoryless, phi/psi, substitution loops),
// pick-offs, and the standard kernels in their rewritten forms.
const std::vector<std::string> kExpressions = {
    "calM qdd + C", "C + H phi M phi* H* qdd", "(I - H psi K)* D^-1 (I - H psi K) (T - C)",
    "(I - H psi K)* D^-1 H psi B f0", "calM", "(I - H psi K)* D^-1 (I - H psi K)", "J", "B* psi* H* D^-1 H psi B",
    "J qd", "phi* H* qd", "alpha", "V", "C", "H phi (M phi* a + b)", "E_phi", "phi", "phitilde", "H", "M", "B", "P",
    "D", "G", "K", "tau", "taubar", "E_psi", "psi", "psitilde", "R", "Upsilon", "Omega", "phi*", "psi*", "K*", "H*",
    "B*", "J*", "E_phi*", "E_psi*", "phitilde*", "psitilde*", "tau*", "taubar*", "phi^-1", "psi^-1", "phi*^-1",
    "psi*^-1", "D^-1", "M^-1", "(I - E_phi)^-1", "(I - E_psi)^-1", "(I + H phi K)^-1", "(I + H phi K)*^-1",
    "(2 I + H phitilde K)^-1", "(I - K H)^-1", "(I + phitilde* H* G*)^-1", "B* Omega B", "psitilde* Upsilon psitilde a",
    "K* (I - E_psi*)^-1 a", "2 T - 0.5 calM qdd", "qd - qd",
    // A scalar factor keeps its operand's way (composite-body, Gram: lower.hpp).
    "2 calM", "-0.5 calM", "3 B* psi* H* D^-1 H psi B", "-2 (I - H psi K)* D^-1 (I - H psi K)", "H psi M psi* H*",
    "phi* H* D^-1 H phi",  // Gram forms with an outward half, spatial columns
};

void check_robot(const Robot& robot, std::uint64_t seed) {
  const std::vector<int> tips = robot.default_tips();
  std::mt19937_64 rng(seed);
  const interp::Evaluation ev =
      interp::prepare(robot, random_state(robot, static_cast<int>(tips.size()), rng), tips, test::definitions());
  const exec::RobotConstants<double> constants = exec::make_constants(robot, tips);
  for (const std::string& text : kExpressions) {
    INFO(robot.source << ": " << text);
    const ir::Expr e = test::parse(text);
    const exec::SweepProgram p = lower::lower(e, test::algebra());
    const MatX got = exec::run(p, constants, test::program_inputs(p, ev));
    CHECK(test::relative_difference(got, interp::eval_dense(ev, e)) < 1e-10);
  }
}

}  // namespace

TEST_CASE("the generic runtime agrees with the dense interpreter on every shared robot", "[exec]") {
  for (const auto& r : test::shared_robots()) {
    for (bool floating : {false, true}) {
      if (floating && !r.free_flyer) continue;
      check_robot(load_urdf(test::shared_robot_path(r.file), LoadOptions{floating}), 11);
    }
  }
}

TEST_CASE("the generic runtime agrees with the dense interpreter on random trees", "[exec]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    RandomTreeOptions o;
    o.bodies = 2 + static_cast<int>(seed % 8);
    o.floating = seed % 3 == 0;
    o.allow_ball = true;
    o.branching = 0.5;
    check_robot(random_tree(seed, o), seed);
  }
}

TEST_CASE("forward dynamics inverts inverse dynamics through the generic runtime", "[exec]") {
  const Robot robot = random_tree(77, RandomTreeOptions{9, true, true, true, 0.5});
  const std::vector<int> tips = robot.default_tips();
  const auto constants = exec::make_constants(robot, tips);
  const exec::SweepProgram id = lower::lower(test::parse("calM qdd + C"), test::algebra());
  const exec::SweepProgram fd = lower::lower(test::parse("(I - H psi K)* D^-1 (I - H psi K) (T - C)"), test::algebra());
  std::mt19937_64 rng(1);
  const State s = random_state(robot, static_cast<int>(tips.size()), rng);
  std::vector<double> in(s.q.data(), s.q.data() + s.q.size());
  in.insert(in.end(), s.qd.data(), s.qd.data() + s.qd.size());
  std::vector<double> in_fd = in;
  in.insert(in.end(), s.qdd.data(), s.qdd.data() + s.qdd.size());
  const MatX tau = exec::run(id, constants, in);
  in_fd.insert(in_fd.end(), tau.data(), tau.data() + tau.size());
  CHECK(test::relative_difference(exec::run(fd, constants, in_fd), s.qdd) < 1e-10);
}

TEST_CASE("input and output layouts follow the declared order", "[exec]") {
  const Robot robot = random_tree(5, RandomTreeOptions{4, true, true, true, 0.5});
  const exec::SweepProgram p =
      lower::lower(test::parse("(I - H psi K)* D^-1 H psi B f0"), test::algebra(), {"tipf", "dqdd", {"q", "f0"}});
  const exec::Layout l = exec::layout(p, exec::make_constants(robot, robot.leaf_tips()));
  REQUIRE(l.inputs.size() == 2);
  CHECK(l.inputs[0].offset == 0);
  CHECK(l.inputs[0].size == robot.nq);
  CHECK(l.inputs[1].offset == robot.nq);
  CHECK(l.inputs[1].size == 6 * static_cast<int>(robot.leaf_tips().size()));
  CHECK(l.rows == robot.nv);
  CHECK(l.cols == 1);
}

namespace {

// Heap allocations made by f().
template <class F>
long allocations_of(F&& f) {
  allocations = 0;
  counting = true;
  f();
  counting = false;
  return allocations.load();
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

const Robot& panda() {
  static const Robot r = load_urdf(test::shared_robot_path("panda.urdf"), LoadOptions{false});
  return r;
}

const Robot& floating_tree() {  // free-flyer, ball and prismatic joints, branches
  static const Robot r = random_tree(23, RandomTreeOptions{8, true, true, true, 0.5});
  return r;
}

}  // namespace

TEST_CASE("with a workspace, every standard kernel runs without allocating, bit for bit as per call",
          "[exec][workspace]") {
  for (const Robot* robot : {&panda(), &floating_tree()}) {
    const std::vector<int> tips = robot->default_tips();
    const auto constants = exec::make_constants(*robot, tips);
    std::mt19937_64 rng(5);
    for (const lower::KernelDecl& k : lower::standard_kernels()) {
      INFO(robot->source << ": " << k.name);
      const exec::SweepProgram& p = test::kernel_program(k);
      exec::Workspace<double> workspace(p, constants);
      const exec::Layout& l = workspace.layout();
      // Several inputs through one workspace: what a run leaves behind never reaches the next.
      for (int sample = 0; sample < 3; ++sample) {
        const std::vector<double> in = test::random_input(p, *robot, static_cast<int>(tips.size()), rng);
        REQUIRE(static_cast<int>(in.size()) == l.input_size);
        std::vector<double> per_call(l.output_size()), reused(l.output_size());
        // The counter sees the per-call path's workspace (the test can fail).
        CHECK(allocations_of([&] { exec::execute(p, constants, in.data(), per_call.data()); }) > 0);
        CHECK(allocations_of([&] { exec::execute(p, constants, in.data(), reused.data(), workspace); }) == 0);
        CHECK(same_bits(reused, per_call));
      }
    }
  }
}

TEST_CASE("Dynamics runs every standard kernel with its Data without allocating, as run() per call",
          "[exec][workspace][dynamics]") {
  for (const Robot* robot : {&panda(), &floating_tree()}) {
    const std::vector<int> tips = robot->default_tips();
    const auto dynamics = pipeline::Dynamics::create(*robot, tips, pipeline::Backend::Runtime);
    pipeline::Dynamics::Data data = dynamics.data();
    std::mt19937_64 rng(6);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    for (int sample = 0; sample < 2; ++sample)
      for (const std::string& name : dynamics.names()) {
        INFO(robot->source << ": " << name);
        const exec::Layout& l = dynamics.layout(name);
        std::vector<double> in(l.input_size), per_call(l.output_size()), with_data(l.output_size());
        for (double& x : in) x = unit(rng);  // quaternions need not be unit: both normalise alike
        dynamics.run(name, in.data(), per_call.data());
        CHECK(allocations_of([&] { dynamics.run(name, in.data(), with_data.data(), data); }) == 0);
        CHECK(same_bits(with_data, per_call));
      }
  }
}

TEST_CASE("a workspace made for another program or robot is a user error, and nothing is written",
          "[exec][workspace]") {
  const auto panda_constants = exec::make_constants(panda(), panda().default_tips());
  const auto tree_constants = exec::make_constants(floating_tree(), floating_tree().default_tips());
  const exec::SweepProgram& fd = test::kernel_program(lower::standard_kernels()[2]);
  const exec::SweepProgram& H = test::kernel_program(lower::standard_kernels()[1]);
  REQUIRE(fd.name == "forward_dynamics");
  REQUIRE(H.name == "mass_matrix");
  exec::Workspace<double> workspace(fd, panda_constants);
  CHECK(workspace.fits(fd, panda_constants));
  CHECK_FALSE(workspace.fits(fd, tree_constants));
  CHECK_FALSE(workspace.fits(H, panda_constants));

  std::vector<double> in(static_cast<std::size_t>(exec::layout(fd, tree_constants).input_size), 0.5);
  std::vector<double> out(static_cast<std::size_t>(exec::layout(fd, tree_constants).output_size()), 42.0);
  REQUIRE_THROWS_MATCHES(
      exec::execute(fd, tree_constants, in.data(), out.data(), workspace), UserError,
      Catch::Matchers::Message(
          "execute: the workspace was made for program 'forward_dynamics' (" + std::to_string(fd.vars.size()) +
          " vars) on robot 'panda' (9 bodies, 1 tips, nq 9, nv 9), not for program 'forward_dynamics' (" +
          std::to_string(fd.vars.size()) + " vars) on robot '" + tree_constants.name + "' (" +
          std::to_string(tree_constants.n()) + " bodies, " + std::to_string(tree_constants.m()) + " tips, nq " +
          std::to_string(tree_constants.nq) + ", nv " + std::to_string(tree_constants.nv) + ")"));
  CHECK(out == std::vector<double>(out.size(), 42.0));

  in.assign(static_cast<std::size_t>(exec::layout(H, panda_constants).input_size), 0.5);
  out.assign(static_cast<std::size_t>(exec::layout(H, panda_constants).output_size()), 42.0);
  REQUIRE_THROWS_WITH(exec::execute(H, panda_constants, in.data(), out.data(), workspace),
                      Catch::Matchers::Contains("the workspace was made for program 'forward_dynamics'") &&
                          Catch::Matchers::Contains("not for program 'mass_matrix'"));
  CHECK(out == std::vector<double>(out.size(), 42.0));
}

TEST_CASE("a workspace fits a copy of its program and robot", "[exec][workspace]") {
  const exec::SweepProgram fd = test::kernel_program(lower::standard_kernels()[2]);
  const auto constants = exec::make_constants(panda(), panda().default_tips());
  const exec::Workspace<double> workspace(fd, constants);
  const exec::SweepProgram fd_copy = fd;
  const auto constants_copy = constants;
  CHECK(workspace.fits(fd_copy, constants_copy));
}

TEST_CASE("Dynamics::Data belongs to the Dynamics that made it", "[exec][workspace][dynamics]") {
  auto a = pipeline::Dynamics::create(panda(), panda().default_tips(), pipeline::Backend::Runtime);
  const auto b = pipeline::Dynamics::create(panda(), panda().default_tips(), pipeline::Backend::Runtime);
  pipeline::Dynamics::Data data = a.data();
  const exec::Layout& l = a.layout("inverse_dynamics");
  std::vector<double> in(l.input_size, 0.1), out(l.output_size(), 42.0);
  REQUIRE_THROWS_MATCHES(b.run("inverse_dynamics", in.data(), out.data(), data), UserError,
                         Catch::Matchers::Message("Dynamics::run 'inverse_dynamics': the Data was made by another "
                                                  "Dynamics (use this one's data())"));
  CHECK(out == std::vector<double>(out.size(), 42.0));
  // Moving the Dynamics keeps its Data valid.
  const auto moved = std::move(a);
  moved.run("inverse_dynamics", in.data(), out.data(), data);
  CHECK(out != std::vector<double>(out.size(), 42.0));
}
