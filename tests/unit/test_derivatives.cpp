// Derivatives (docs/mathematics.md, "Derivatives"). Two routes that share no code reach the
// same numbers:
// - the generic runtime differentiated by a dual number (exec::differentiate) against
//   central finite differences of the dense interpreter, whose configuration steps are
//   exact exponentials (Eigen's quaternions), not the tangent rates the runtime seeds: to
//   1e-6 relative, on every shared robot (fixed and free base) and on random trees with
//   ball, prismatic and free joints;
// - the robot's specialised derivative kernels (specialise::differentiate: forward mode on
//   the straight-line code) against the runtime's, to rounding (1e-11 relative), on 1000
//   random states per robot (100 for talos_reduced, 10 for talos_full: their dual-number
//   reference costs 10-40x more per state) and per random tree;
// and the physics they describe holds: calM_dot - 2 Cor is skew, Cor qd is the bias without
// gravity, and for a fixed base the Christoffel symbols are those of 004 section 5.
#include <catch2/catch.hpp>

#include <Eigen/Geometry>

#include <random>
#include <tuple>

#include "exec/derivative.hpp"
#include "exec/newton_euler_derivatives.hpp"
#include "support/pipeline.hpp"
#include "support/test_support.hpp"

namespace {

using namespace soa;

// A random tree with ball, prismatic and (as its root) free joints, half its bodies branching.
Robot mixed_tree(std::uint64_t seed, int bodies, bool floating) {
  RandomTreeOptions o;
  o.bodies = bodies;
  o.floating = floating;
  o.branching = 0.5;
  return random_tree(seed, o);
}

// The dense interpreter's value of `e` at a state, T held at `T` (not the state's RNEA).
MatX dense(const Robot& robot, const std::vector<int>& tips, const State& s, const VecX& T, const ir::Expr& e) {
  interp::Evaluation ev = interp::prepare(robot, s, tips, test::definitions());
  ev.kin.T = T;
  return interp::eval_dense(ev, e);
}

// d(e)/d(inputs `wrt`) by central differences, blocks in exec::differentiate's layout.
MatX finite_differences(const Robot& robot, const std::vector<int>& tips, const State& s, const VecX& T,
                        const ir::Expr& e, const std::vector<std::string>& wrt) {
  const MatX base = dense(robot, tips, s, T, e);
  std::vector<MatX> blocks;
  for (const std::string& w : wrt) {
    const int dirs = w == "f0" ? static_cast<int>(s.f0.size()) : robot.nv;
    for (int d = 0; d < dirs; ++d) {
      const double h = 1e-5;
      State plus = s, minus = s;
      VecX Tp = T, Tm = T;
      if (w == "q") {
        plus.q = moved_configuration(robot, s.q, d, h);
        minus.q = moved_configuration(robot, s.q, d, -h);
      } else {
        VecX& p = w == "qd" ? plus.qd : w == "qdd" ? plus.qdd : w == "T" ? Tp : plus.f0;
        VecX& m = w == "qd" ? minus.qd : w == "qdd" ? minus.qdd : w == "T" ? Tm : minus.f0;
        p[d] += h;
        m[d] -= h;
      }
      blocks.push_back((dense(robot, tips, plus, Tp, e) - dense(robot, tips, minus, Tm, e)) / (2 * h));
    }
  }
  MatX out(base.rows(), base.cols() * static_cast<Eigen::Index>(blocks.size()));
  for (std::size_t i = 0; i < blocks.size(); ++i)
    out.middleCols(static_cast<Eigen::Index>(i) * base.cols(), base.cols()) = blocks[i];
  return out;
}

// The runtime's derivative of `e` with respect to `wrt` (names of the program's inputs).
MatX runtime_derivative(const exec::SweepProgram& p, const exec::RobotConstants<double>& c,
                        const std::vector<double>& in, const std::vector<std::string>& wrt) {
  std::vector<int> at;
  for (const std::string& w : wrt)
    for (std::size_t i = 0; i < p.inputs.size(); ++i)
      if (p.vars[p.inputs[i]].name == w) at.push_back(static_cast<int>(i));
  REQUIRE(at.size() == wrt.size());
  const exec::Layout l = exec::derivative_layout(p, at, c.nq, c.nv, c.n(), c.m());
  MatX out(l.rows, l.cols);
  exec::differentiate(p, c, in.data(), at, out.data());
  return out;
}

struct Case {
  std::string expression;
  std::vector<std::string> wrt;
};

// Inverse and forward dynamics, the mass matrix, the Jacobian, the bias, a tip-force map.
const std::vector<Case> kCases = {
    {"calM qdd + C", {"q", "qd", "qdd"}},
    {"(I - H psi K)* D^-1 (I - H psi K) (T - C)", {"q", "qd", "T"}},
    {"calM", {"q"}},
    {"J", {"q"}},
    {"C", {"q", "qd"}},
    {"J* f0", {"q", "f0"}},
};

void check_runtime_route(const Robot& robot, std::uint64_t seed) {
  const std::vector<int> tips = robot.default_tips();
  std::mt19937_64 rng(seed);
  const State s = random_state(robot, static_cast<int>(tips.size()), rng);
  const interp::Evaluation ev = interp::prepare(robot, s, tips, test::definitions());
  const exec::RobotConstants<double> constants = exec::make_constants(robot, tips);
  for (const Case& c : kCases) {
    INFO(robot.source << ": d(" << c.expression << ")");
    const ir::Expr e = test::parse(c.expression);
    const exec::SweepProgram p = lower::lower(e, test::algebra());
    const MatX got = runtime_derivative(p, constants, test::program_inputs(p, ev), c.wrt);
    const MatX want = finite_differences(robot, tips, s, ev.kin.T, e, c.wrt);
    CHECK(test::relative_difference(got, want) < 1e-6);
  }
}

TEST_CASE("the runtime's dual-number derivatives are the dense interpreter's finite differences", "[derivatives]") {
  for (const auto& r : test::shared_robots()) {
    for (bool floating : {false, true}) {
      if (floating && !r.free_flyer) continue;
      check_runtime_route(load_urdf(test::shared_robot_path(r.file), LoadOptions{floating}), 3);
    }
  }
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    check_runtime_route(mixed_tree(seed, 3 + static_cast<int>(seed % 6), seed % 2 == 0), seed);
  }
}

// The sensitivity recursion (exec/newton_euler_derivatives.hpp), a route of its own through
// world-frame composites, against the dual numbers of the executor running inverse dynamics.
void check_sensitivity_recursion(const Robot& robot, int states, std::uint64_t seed) {
  const exec::RobotConstants<double> constants = exec::make_constants(robot, {});
  const exec::SweepProgram p = lower::lower(test::parse("calM qdd + C"), test::algebra());
  std::mt19937_64 rng(seed);
  double worst = 0.0;
  for (int i = 0; i < states; ++i) {
    const State s = random_state(robot, 0, rng);
    std::vector<double> in(s.q.data(), s.q.data() + s.q.size());
    in.insert(in.end(), s.qd.data(), s.qd.data() + s.qd.size());
    in.insert(in.end(), s.qdd.data(), s.qdd.data() + s.qdd.size());
    const MatX want = runtime_derivative(p, constants, in, {"q", "qd"});
    MatX got(robot.nv, 2 * robot.nv);
    exec::newton_euler_derivatives(constants, s.q.data(), s.qd.data(), s.qdd.data(), got.data());
    worst = std::max(worst, test::relative_difference(got, want));
  }
  INFO(robot.source);
  CHECK(worst < 1e-12);
}

TEST_CASE("the sensitivity recursion's d tau/dq and d tau/dqd are the dual numbers'", "[derivatives]") {
  for (const auto& r : test::shared_robots())
    for (bool floating : {false, true})
      if (!floating || r.free_flyer)
        check_sensitivity_recursion(load_urdf(test::shared_robot_path(r.file), LoadOptions{floating}), 20, 11);
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    check_sensitivity_recursion(mixed_tree(seed, 3 + static_cast<int>(seed % 9), seed % 2 == 0), 20, seed);
  }
}

// ---- the specialised kernels ---------------------------------------------------------------

TEST_CASE(
    "the specialised sensitivity recursion computes each symmetric inertia entry once, on a fixed base in the root's "
    "frame",
    "[derivatives]") {
  // The inertia rates' 3 x 3 blocks are symmetric: their entries below the diagonal are the
  // ones above, the same nodes, so they cost nothing and the composites add them once (63
  // operations of the Panda's d tau/d(q, qd): two subtractions per entry above the diagonal,
  // and the composites' sums of both copies). And on a fixed base the recursion works in the
  // root body's frame (exec/newton_euler_derivatives.hpp): the Panda's first joint turns
  // about gravity, so its angle drops out -- 5483 operations (6455 in the world frame). On a
  // free-flyer it stays in the world frame: talos_reduced's take 39,404.
  for (const auto& [file, floating, most] :
       {std::tuple{"panda.urdf", false, 5483}, std::tuple{"talos_reduced.urdf", true, 39404}}) {
    const Robot robot = load_urdf(test::shared_robot_path(file), LoadOptions{floating});
    const exec::RobotConstants<double> constants = exec::make_constants(robot, robot.default_tips());
    for (const lower::KernelDecl& decl : lower::derivative_kernels()) {
      if (decl.name != "inverse_dynamics_derivatives") continue;
      const specialise::Kernel code = pipeline::specialise_kernel(test::lowered(decl), constants);
      INFO(file);
      CHECK(specialise::count_ops(code.code).total() <= most);
    }
  }
}

// Every derivative kernel for one robot through the pipeline (rewrite, lower, specialise,
// differentiate) against the runtime's dual numbers on `states` random states.
void check_kernels(const Robot& robot, int states, std::uint64_t seed) {
  const std::vector<int> tips = robot.default_tips();
  const exec::RobotConstants<double> constants = exec::make_constants(robot, tips);
  std::mt19937_64 rng(seed);
  for (const lower::KernelDecl& decl : lower::derivative_kernels()) {
    INFO(robot.source << ": " << decl.name);
    const pipeline::LoweredKernel& k = test::lowered(decl);
    const specialise::Kernel code = pipeline::specialise_kernel(k, constants);
    const exec::Layout l = pipeline::kernel_layout(k, constants);
    REQUIRE(code.rows * code.cols == l.output_size());
    double worst = 0.0;
    for (int i = 0; i < states; ++i) {
      const std::vector<double> in = test::random_input(k.program, robot, static_cast<int>(tips.size()), rng);
      MatX want(l.rows, l.cols), got(l.rows, l.cols);
      pipeline::run_generic(k, constants, in.data(), want.data());
      specialise::evaluate(code.code, in.data(), got.data());
      worst = std::max(worst, test::relative_difference(got, want));
    }
    CHECK(worst < 1e-11);
  }
}

// 1000 states per robot up to 20 dofs; the humanoids, whose dual-number reference costs
// 10-40x more per state, fewer (talos_full in a test case of its own, run beside the others).
TEST_CASE("the specialised derivative kernels are the runtime's to rounding", "[derivatives]") {
  for (const auto& r : test::shared_robots()) {
    if (r.dof > 32) continue;  // talos_full: below
    for (bool floating : {false, true}) {
      if (floating && !r.free_flyer) continue;
      check_kernels(load_urdf(test::shared_robot_path(r.file), LoadOptions{floating}), r.dof <= 20 ? 1000 : 100, 5);
    }
  }
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    check_kernels(mixed_tree(seed, 4 + static_cast<int>(seed % 5), seed % 2 == 1), 1000, seed);
  }
}

TEST_CASE("the specialised derivative kernels of talos_full are the runtime's to rounding", "[derivatives]") {
  for (const auto& r : test::shared_robots())
    if (r.dof > 32)
      for (bool floating : {false, true})
        if (!floating || r.free_flyer)
          check_kernels(load_urdf(test::shared_robot_path(r.file), LoadOptions{floating}), 10, 7);
}

// A derivative of inverse or forward dynamics with respect to q and qd takes the route made
// for it (pipeline::DerivativeRoute) however it is spelled: the expression is compared after
// rewriting, the inputs are found by name and the directions follow wrt's order.
TEST_CASE("derivatives of inverse and forward dynamics take the sensitivity recursion, whatever their spelling",
          "[derivatives]") {
  using pipeline::DerivativeRoute;
  const struct {
    lower::KernelDecl decl;
    DerivativeRoute route;
  } cases[] = {
      {{"a", {"qd", "qdd", "q"}, "calM qdd + C", "out", "", {"qd", "q"}}, DerivativeRoute::Sensitivity},
      {{"b", {"q", "qd", "qdd"}, "H phi (M alpha + b)", "out", "", {"q"}}, DerivativeRoute::Sensitivity},
      {{"c", {"T", "q", "qd"}, "(I - H psi K)* D^-1 (I - H psi K) (T - C)", "out", "", {"qd"}},
       DerivativeRoute::ImplicitForward},
      {{"d", {"q", "qd", "qdd"}, "calM qdd + C", "out", "", {"q", "qdd"}}, DerivativeRoute::ForwardMode},
      {{"e", {"q", "qd"}, "C", "out", "", {"q", "qd"}}, DerivativeRoute::ForwardMode},
  };
  const Robot robot = mixed_tree(5, 7, true);
  const exec::RobotConstants<double> constants = exec::make_constants(robot, {});
  std::mt19937_64 rng(3);
  for (const auto& c : cases) {
    INFO(c.decl.expression << " wrt " << c.decl.wrt.front());
    const pipeline::LoweredKernel k = pipeline::lower_kernel(pipeline::kernel_spec(c.decl), test::library());
    CHECK(k.route == c.route);
    const specialise::Kernel code = pipeline::specialise_kernel(k, constants);
    const exec::Layout l = pipeline::kernel_layout(k, constants);
    double worst = 0.0;
    for (int i = 0; i < 50; ++i) {
      const std::vector<double> in = test::random_input(k.program, robot, 0, rng);
      MatX want(l.rows, l.cols), got(l.rows, l.cols);
      pipeline::run_generic(k, constants, in.data(), want.data());
      specialise::evaluate(code.code, in.data(), got.data());
      worst = std::max(worst, test::relative_difference(got, want));
    }
    CHECK(worst < 1e-11);
  }
}

TEST_CASE("a derivative kernel's layout: the output once per direction, q's directions nv", "[derivatives]") {
  const Robot robot = load_urdf(test::shared_robot_path("solo12.urdf"), LoadOptions{true});  // nq 19, nv 18
  const exec::RobotConstants<double> c = exec::make_constants(robot, robot.default_tips());
  for (const lower::KernelDecl& decl : lower::derivative_kernels()) {
    const exec::Layout l = pipeline::kernel_layout(test::lowered(decl), c);
    INFO(decl.name);
    const bool of_q = decl.name == "mass_matrix_derivative" || decl.name == "christoffel";
    CHECK(l.input_size == (of_q ? 19 : decl.name == "coriolis_matrix" ? 19 + 18 : 19 + 18 + 18));
    CHECK(l.rows == 18);
    CHECK(l.cols == (of_q ? 18 * 18 : decl.name == "coriolis_matrix" ? 18 : 2 * 18));
  }
}

// ---- physics --------------------------------------------------------------------------------

// The Coriolis matrix Cor(q, qd) = (d tau / dqd + calM Z) / 2, Z the joints' own
// cross-product blocks (zero for 1-dof joints; docs/mathematics.md, "Derivatives"), formed
// here from the inverse-dynamics and mass-matrix kernels, is the coriolis_matrix kernel; with
// calM_dot = sum_k d calM / dq_k qd_k, calM_dot - 2 Cor is skew and Cor qd is the bias of
// inverse dynamics without gravity. The christoffel kernel's blocks Gamma_..k contract with
// qd to Cor, and for a fixed base of 1-dof joints they are 004's Christoffel symbols of the
// first kind, entry by entry, from d calM / dq.
void check_physics(const Robot& robot, std::uint64_t seed) {
  const std::vector<int> tips = robot.default_tips();
  const exec::RobotConstants<double> c = exec::make_constants(robot, tips);
  Robot weightless = robot;
  weightless.gravity.setZero();
  const exec::RobotConstants<double> c0 = exec::make_constants(weightless, tips);
  const int N = robot.nv;
  std::mt19937_64 rng(seed);
  const State s = random_state(robot, static_cast<int>(tips.size()), rng);
  auto run = [&](const lower::KernelDecl& decl, const exec::RobotConstants<double>& constants,
                 const std::vector<VecX>& inputs) {
    const pipeline::LoweredKernel& k = test::lowered(decl);
    std::vector<double> in;
    for (const VecX& x : inputs) in.insert(in.end(), x.data(), x.data() + x.size());
    const exec::Layout l = pipeline::kernel_layout(k, constants);
    MatX out(l.rows, l.cols);
    pipeline::run_generic(k, constants, in.data(), out.data());
    return out;
  };
  const auto& standard = lower::standard_kernels();
  const auto& derivatives = lower::derivative_kernels();
  const VecX zero = VecX::Zero(N);
  const MatX M = run(standard[1], c, {s.q});
  const MatX dtau = run(derivatives[0], c, {s.q, s.qd, s.qdd});
  const MatX dM = run(derivatives[2], c, {s.q});
  const VecX bias = run(standard[0], c0, {s.q, s.qd, zero});
  MatX Mdot = MatX::Zero(N, N);
  for (int k = 0; k < N; ++k) Mdot += dM.middleCols(k * N, N) * s.qd[k];
  MatX Z = MatX::Zero(N, N);
  for (const Body& b : robot.bodies) {
    const VecX w = s.qd.segment(b.v_offset, b.nv());
    auto cross = [&](int at, const Eigen::Vector3d& x) { Z.block<3, 3>(at, at) = skew(x); };
    if (b.joint == JointKind::Ball) cross(b.v_offset, w.head<3>());
    if (b.joint == JointKind::Free) {  // crm([omega; v]) = [[omega~, 0], [v~, omega~]]
      cross(b.v_offset, w.head<3>());
      cross(b.v_offset + 3, w.head<3>());
      Z.block<3, 3>(b.v_offset + 3, b.v_offset) = skew(w.tail<3>());
    }
  }
  const MatX Cor = (dtau.rightCols(N) + M * Z) / 2;
  const double cor_scale = std::max(1.0, Cor.cwiseAbs().maxCoeff());
  CHECK((run(derivatives[3], c, {s.q, s.qd}) - Cor).cwiseAbs().maxCoeff() / cor_scale < 1e-12);
  const MatX Gamma = run(derivatives[4], c, {s.q});
  MatX contracted = MatX::Zero(N, N);
  for (int k = 0; k < N; ++k) contracted += Gamma.middleCols(k * N, N) * s.qd[k];
  CHECK((contracted - Cor).cwiseAbs().maxCoeff() / cor_scale < 1e-10);
  const MatX skewness = Mdot - 2 * Cor;
  const double scale = std::max(1.0, Mdot.cwiseAbs().maxCoeff());
  CHECK((skewness + skewness.transpose()).cwiseAbs().maxCoeff() / scale < 1e-10);
  CHECK((Cor * s.qd - bias).cwiseAbs().maxCoeff() / std::max(1.0, bias.cwiseAbs().maxCoeff()) < 1e-10);
  bool one_dof_fixed = true;
  for (const Body& b : robot.bodies) one_dof_fixed &= b.nv() == 1;
  if (!one_dof_fixed) return;
  MatX fromM(N, N * N);  // 004 section 5: Gamma_ijk = (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) / 2
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < N; ++k) fromM(i, k * N + j) = 0.5 * (dM(i, k * N + j) + dM(i, j * N + k) - dM(j, i * N + k));
  CHECK((fromM - Gamma).cwiseAbs().maxCoeff() / std::max(1.0, Gamma.cwiseAbs().maxCoeff()) < 1e-10);
}

TEST_CASE("calM_dot - 2 Cor is skew, Cor qd is the bias, Christoffel symbols for a fixed base", "[derivatives]") {
  for (const auto& r : test::shared_robots())
    for (bool floating : {false, true}) {
      if (floating && !r.free_flyer) continue;
      INFO(r.file << (floating ? " (free-flyer)" : ""));
      check_physics(load_urdf(test::shared_robot_path(r.file), LoadOptions{floating}), 9);
    }
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    RandomTreeOptions o;
    o.bodies = 3 + static_cast<int>(seed % 6);
    o.floating = seed % 2 == 0;
    o.allow_ball = seed % 4 != 1;  // some trees of 1-dof joints only: the Christoffel check
    o.branching = 0.5;
    INFO("random tree " << seed);
    check_physics(random_tree(seed, o), seed);
  }
}

}  // namespace
