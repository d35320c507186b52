// soa_bench_constraints: constrained forward dynamics of talos_reduced (free-flyer, 38 dof)
// standing on both soles (soac emit --weld left_sole_link right_sole_link), against the
// unconstrained forward dynamics of the same generated code, the generic runtime, and the
// dense reference (the saddle-point system [[calM, J*], [J, 0]] of Lagrange multipliers,
// formed and solved by the reference interpreter), all in one run; then a markdown table.
//
// What is timed: the extern "C" entry points on kStates random states cycled (as soa_bench),
// the runtime with a workspace made once, the dense reference from the state (its operators
// formed by interp::prepare and eval_dense, solved by Eigen's LU). Before timing, the
// generated constrained dynamics is checked against the runtime and the dense reference.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <Eigen/Dense>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_report.hpp"
#include "exec/execute.hpp"
#include "interp/interpreter.hpp"
#include "model/kinematics.hpp"
#include "model/robot.hpp"
#include "pipeline/kernels.hpp"
#include "syntax/syntax.hpp"
#include "talos_welded.hpp"

namespace {

using namespace soa;

constexpr int kStates = 64;

struct Case {
  Robot robot;
  std::vector<int> tips;
  exec::RobotConstants<double> constants;
  exec::SweepProgram program;               // constrained_forward_dynamics
  std::vector<std::vector<double>> inputs;  // [q, qd, T] per state
  std::vector<State> states;
  pipeline::Library library;
};

ir::Expr parse(const std::string& text) {
  return syntax::parse_expression(std::make_shared<syntax::Source>(syntax::Source{"<bench>", text}));
}

// The dense reference: qdd of [[calM, J*], [J, 0]] [qdd; f] = [T - C; -Jdot qd], Jdot qd the
// tips' twist rates at qdd = 0 without gravity (B* phi* abar, formed densely).
Eigen::VectorXd dense_reference(const Case& c, int s) {
  const interp::Evaluation ev = interp::prepare(c.robot, c.states[s], c.tips, c.library.algebra.definitions);
  const Eigen::Map<const VecX> T(c.inputs[s].data() + c.robot.nq + c.robot.nv, c.robot.nv);
  return interp::saddle_point(ev, T, interp::eval_dense(ev, parse("B* phi* abar")).col(0)).qdd;
}

std::unique_ptr<Case> make_case() {
  auto c = std::make_unique<Case>();
  c->robot = load_urdf(SOA_BENCH_TALOS, LoadOptions{true});
  for (const char* frame : {"left_sole_link", "right_sole_link"}) c->tips.push_back(*c->robot.find_frame(frame));
  c->constants = exec::make_constants(c->robot, c->tips);
  c->library = pipeline::load_library();
  for (const lower::KernelDecl& k : lower::welded_kernels())
    if (k.name == "constrained_forward_dynamics")
      c->program = pipeline::lower_kernel(pipeline::kernel_spec(k), c->library).program;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-10.0, 10.0);
  for (int s = 0; s < kStates; ++s) {
    State st = random_state(c->robot, static_cast<int>(c->tips.size()), rng);
    std::vector<double> in(st.q.data(), st.q.data() + st.q.size());
    in.insert(in.end(), st.qd.data(), st.qd.data() + st.qd.size());
    for (int j = 0; j < c->robot.nv; ++j) in.push_back(u(rng));
    c->states.push_back(std::move(st));
    c->inputs.push_back(std::move(in));
  }
  return c;
}

// Generated against the runtime and the dense reference on every state.
void check(const Case& c) {
  double vs_runtime = 0.0, vs_dense = 0.0;
  std::vector<double> gen(c.robot.nv), rt(c.robot.nv);
  for (int s = 0; s < kStates; ++s) {
    talos_welded_constrained_forward_dynamics(c.inputs[s].data(), gen.data());
    exec::execute<double>(c.program, c.constants, c.inputs[s].data(), rt.data());
    const Eigen::Map<const VecX> g(gen.data(), c.robot.nv), r(rt.data(), c.robot.nv);
    const VecX d = dense_reference(c, s);
    const double scale = std::max(1.0, d.cwiseAbs().maxCoeff());
    vs_runtime = std::max(vs_runtime, (g - r).cwiseAbs().maxCoeff() / scale);
    vs_dense = std::max(vs_dense, (g - d).cwiseAbs().maxCoeff() / scale);
  }
  std::printf("check talos on both soles, %d states: generated vs runtime %.1e, vs dense saddle point %.1e\n", kStates,
              vs_runtime, vs_dense);
  if (!(vs_runtime < 1e-9 && vs_dense < 1e-9)) throw std::runtime_error("constrained dynamics disagree");
}

template <class Call>
void add(const std::string& name, int outputs, Call call) {
  bench::add_benchmark(name, kStates, outputs, call);
}

}  // namespace

int main(int argc, char** argv) {
  int repetitions = 1;
  for (int i = 1; i < argc; ++i) std::sscanf(argv[i], "--benchmark_repetitions=%d", &repetitions);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::unique_ptr<Case> c;
  try {
    c = make_case();
    check(*c);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soa_bench_constraints: %s\n", e.what());
    return 1;
  }
  const Case& k = *c;
  const int N = k.robot.nv;
  add("welded/FD/generated", N, [&k](int s, double* out) { talos_welded_forward_dynamics(k.inputs[s].data(), out); });
  add("welded/CFD/generated", N,
      [&k](int s, double* out) { talos_welded_constrained_forward_dynamics(k.inputs[s].data(), out); });
  add("welded/CFD/runtime", N,
      [&k, ws = std::make_shared<exec::Workspace<double>>(k.program, k.constants)](int s, double* out) {
        exec::execute<double>(k.program, k.constants, k.inputs[s].data(), out, *ws);
      });
  add("welded/CFD/dense", N, [&k](int s, double* out) {
    const VecX qdd = dense_reference(k, s);
    std::copy(qdd.data(), qdd.data() + qdd.size(), out);
  });
  const std::string load_before = bench::load_average();
  bench::Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  const double fd = collector.median("welded/FD/generated"), cfd = collector.median("welded/CFD/generated");
  const double rt = collector.median("welded/CFD/runtime"), dense = collector.median("welded/CFD/dense");
  std::printf("\n<!-- soa_bench_constraints table -->\n");
  std::printf(
      "Median CPU time per call over %d repetition(s), %d random states cycled; load average before %s, after %s.\n\n",
      repetitions, kStates, load_before.c_str(), bench::load_average().c_str());
  std::printf("| talos_reduced, free-flyer, both soles welded | ns | / unconstrained FD | dense reference / this |\n");
  std::printf("|---|--:|--:|--:|\n");
  std::printf("| forward dynamics, unconstrained (generated) | %s | 1.0x | - |\n", bench::ns(fd).c_str());
  std::printf("| constrained forward dynamics (generated) | %s | %s | %s |\n", bench::ns(cfd).c_str(),
              bench::ratio(cfd, fd).c_str(), bench::ratio(dense, cfd).c_str());
  std::printf("| constrained forward dynamics (runtime) | %s | %s | %s |\n", bench::ns(rt).c_str(),
              bench::ratio(rt, fd).c_str(), bench::ratio(dense, rt).c_str());
  std::printf("| dense saddle-point reference (interpreter) | %s | %s | 1.0x |\n", bench::ns(dense).c_str(),
              bench::ratio(dense, fd).c_str());
  std::printf("\nTargets: constrained <= 1.6x unconstrained; >= 10x faster than the dense reference.\n");
  benchmark::Shutdown();
  return 0;
}
