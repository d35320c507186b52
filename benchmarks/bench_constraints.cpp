// soa_bench_constraints: constrained forward dynamics (000 eqs. 5.6-5.11) against the
// unconstrained forward dynamics of the same robot, all in one run, then markdown tables:
// - talos_reduced (free-flyer, 38 dof) standing on both soles (soac emit --weld
//   left_sole_link right_sole_link): generated code, the generic runtime, the dense
//   reference (the saddle-point system [[calM, Jc*], [Jc, 0]] of Lagrange multipliers,
//   formed and solved by the reference interpreter) and MuJoCo's mj_forward with the same
//   two welds as equality constraints;
// - solo12 (free-flyer, 18 dof) on four point contacts (soac emit --contact ...): generated
//   code, runtime, dense reference;
// - baxter (19 dof) with its grippers welded to each other (--weld left_gripper=right_gripper,
//   a loop; MuJoCo with the same weld between the two bodies), and baxter carrying a bar
//   (--object bar.urdf, its grasp frames welded to the grippers: 25 dof), and by compliant
//   grasps instead (--grasp: springs and dampers, compliant_forward_dynamics, checked
//   against calM^-1 (T - C - J* fg) formed densely);
// - random trees of 50 to 400 bodies on a free-flyer with 4 leaves welded: the LLVM
//   back-end's code of both kernels (soac jit; as fast as the generated C++, soa_bench's JIT
//   column), to show how the time grows with the bodies.
//
// What is timed: each kernel on kStates random states cycled (as soa_bench), the runtime
// with a workspace made once, the dense reference from the state (its operators formed by
// interp::prepare and eval_dense, solved by Eigen's LU), MuJoCo's mj_forward from a state
// set once. Before timing, every implementation is checked against the runtime and (but
// for the largest trees) the dense reference; MuJoCo's soft welds against ours at a state
// where its welds hold (see mujoco_state()).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <mujoco/mujoco.h>

#include <Eigen/Dense>
#include <algorithm>
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
#include "baxter_bar.hpp"
#include "baxter_loop.hpp"
#include "baxter_springs.hpp"
#include "solo_contacts.hpp"
#include "support/error.hpp"
#include "support/mujoco_oracle.hpp"
#include "syntax/syntax.hpp"
#include "talos_welded.hpp"
#ifdef SOA_HAVE_LLVM_JIT
#include "emit-llvm/jit.hpp"
#include "pipeline/jit.hpp"
#endif

namespace {

using namespace soa;
using KernelFn = void (*)(const double*, double*);

constexpr int kStates = 64;

struct Case {
  std::string key;    // benchmark names: <key>/FD/generated, ...
  std::string label;  // the table's
  Robot robot;
  std::vector<int> tips;
  exec::RobotConstants<double> constants;
  exec::SweepProgram program;               // constrained_forward_dynamics
  std::vector<std::vector<double>> inputs;  // [q, qd, T] per state
  std::vector<State> states;
  KernelFn fd = nullptr, cfd = nullptr;  // generated C++, or the JIT's code
  bool dense = true;                     // check against (and time) the dense reference
  bool compliant = false;                // cfd is compliant_forward_dynamics (grasps, no welds)
  std::unique_ptr<test::MujocoOracle> mujoco;
#ifdef SOA_HAVE_LLVM_JIT
  std::unique_ptr<jit::Kernels> jit;  // owns fd and cfd of the random trees
#endif
};

ir::Expr parse(const std::string& text) {
  return syntax::parse_expression(std::make_shared<syntax::Source>(syntax::Source{"<bench>", text}));
}

const pipeline::Library& library() {
  static const pipeline::Library l = pipeline::load_library();
  return l;
}

exec::SweepProgram lower(const std::vector<lower::KernelDecl>& set, const std::string& name) {
  for (const lower::KernelDecl& k : set)
    if (k.name == name) return pipeline::lower_kernel(pipeline::kernel_spec(k), library()).program;
  throw InternalError("no kernel " + name);
}

// The dense reference: qdd of [[calM, Jc*], [Jc, 0]] [qdd; fc] = [T - C; -Jc_dot qd], Jdot qd
// the tips' twist rates at qdd = 0 without gravity (B* phi* abar, formed densely).
// With compliant grasps: calM^-1 (T - C - J* fg), every operator and fg formed densely.
Eigen::VectorXd dense_reference(const Case& c, int s) {
  interp::Evaluation ev = interp::prepare(c.robot, c.states[s], c.tips, library().algebra.definitions);
  const Eigen::Map<const VecX> T(c.inputs[s].data() + c.robot.nq + c.robot.nv, c.robot.nv);
  if (c.compliant) {
    ev.kin.T = T;
    return interp::eval_dense(ev, parse("calM^-1 (T - C - J* fg)")).col(0);
  }
  return interp::saddle_point(ev, T, interp::eval_dense(ev, parse("B* phi* abar")).col(0)).qdd;
}

// `robot` with `held` frames (name, directions; "a=b" welds a to b): the tips (the held
// frames, then their partners), the program, kStates states.
std::unique_ptr<Case> make_case(std::string key, std::string label, Robot robot,
                                const std::vector<std::pair<std::string, Directions>>& held) {
  auto c = std::make_unique<Case>();
  c->key = std::move(key);
  c->label = std::move(label);
  c->robot = std::move(robot);
  std::vector<int> partners;
  for (const auto& [frame, directions] : held) {
    const std::size_t equals = frame.find('=');
    c->tips.push_back(c->robot.find_frame(frame.substr(0, equals)).value());
    Frame& f = c->robot.frames[static_cast<std::size_t>(c->tips.back())];
    f.held = directions;
    if (equals != std::string::npos)
      partners.push_back(f.held_to = c->robot.find_frame(frame.substr(equals + 1)).value());
  }
  for (int p : partners)
    if (std::find(c->tips.begin(), c->tips.end(), p) == c->tips.end()) c->tips.push_back(p);
  c->constants = exec::make_constants(c->robot, c->tips);
  c->program = lower(lower::welded_kernels(), "constrained_forward_dynamics");
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

// `robot` with compliant grasps ("FRAME=OTHER:KT,KR,DT,DR", soac's --grasp): its tips, the
// compliant forward dynamics, kStates states.
std::unique_ptr<Case> make_compliant_case(std::string key, std::string label, Robot robot,
                                          const std::vector<std::string>& grasps) {
  HoldOptions holds;
  holds.grasps = grasps;
  auto c = make_case(std::move(key), std::move(label), robot, {});
  c->robot = std::move(robot);
  c->tips = hold_frames(c->robot, holds);
  c->constants = exec::make_constants(c->robot, c->tips);
  c->program = lower(lower::grasped_kernels(false), "compliant_forward_dynamics");
  c->compliant = true;
  for (State& st : c->states) st.f0 = VecX::Zero(6 * static_cast<int>(c->tips.size()));
  return c;
}

// A random tree of `bodies` bodies on a free-flyer with up to four of its deepest leaves
// welded, leaving out a leaf whose weld would repeat the others' directions (the runtime's
// solve refuses it); its two kernels compiled by the LLVM back-end.
std::unique_ptr<Case> random_tree_case(int bodies) {
  RandomTreeOptions o;
  o.bodies = bodies;
  o.floating = true;
  const Robot tree = random_tree(7, o);
  std::vector<std::pair<int, int>> leaves;  // (-depth, body)
  for (int leaf : tree.leaf_bodies()) {
    int depth = 0;
    for (int b = leaf; b >= 0; b = tree.bodies[b].parent) ++depth;
    leaves.emplace_back(-depth, leaf);
  }
  std::sort(leaves.begin(), leaves.end());
  std::vector<std::pair<std::string, Directions>> held;
  for (const auto& [depth, leaf] : leaves) {
    if (held.size() == 4) break;
    held.emplace_back(tree.bodies[leaf].name, kAllDirections);
    const std::unique_ptr<Case> trial = make_case("", "", tree, held);
    try {
      exec::run(trial->program, trial->constants, trial->inputs[0]);
    } catch (const UserError&) {
      held.pop_back();
    }
  }
  auto c = make_case(fmt::format("tree{}", bodies),
                     fmt::format("random tree, {} bodies (N = {}), {} leaves welded", bodies, tree.nv, held.size()),
                     tree, held);
  c->dense = bodies <= 100;
#ifdef SOA_HAVE_LLVM_JIT
  const std::vector<std::pair<std::string, exec::SweepProgram>> programs = {
      {"forward_dynamics", lower(lower::standard_kernels(), "forward_dynamics")},
      {"constrained_forward_dynamics", c->program}};
  c->jit = std::make_unique<jit::Kernels>(pipeline::jit_compile(programs, c->constants));
  c->fd = c->jit->lookup("forward_dynamics");
  c->cfd = c->jit->lookup("constrained_forward_dynamics");
#endif
  return c;
}

// MuJoCo's welds hold the links' poses at qpos0, our neutral configuration: its state for
// the comparison is that configuration, at rest, with state 0's forces.
State mujoco_state(const Case& c) {
  return {neutral_configuration(c.robot), VecX::Zero(c.robot.nv), VecX::Zero(c.robot.nv),
          VecX::Zero(6 * static_cast<int>(c.tips.size()))};
}
VecX forces(const Case& c, int s) {
  return Eigen::Map<const VecX>(c.inputs[s].data() + c.robot.nq + c.robot.nv, c.robot.nv);
}

// Generated (or JIT) code against the runtime and the dense reference on every state; MuJoCo
// against ours where its welds hold. Returns MuJoCo's relative difference (NaN: none).
double check(const Case& c) {
  double vs_runtime = 0.0, vs_dense = 0.0;
  std::vector<double> gen(c.robot.nv), rt(c.robot.nv);
  for (int s = 0; s < kStates; ++s) {
    c.cfd(c.inputs[s].data(), gen.data());
    exec::execute<double>(c.program, c.constants, c.inputs[s].data(), rt.data());
    const Eigen::Map<const VecX> g(gen.data(), c.robot.nv), r(rt.data(), c.robot.nv);
    const double scale = std::max(1.0, r.cwiseAbs().maxCoeff());
    vs_runtime = std::max(vs_runtime, (g - r).cwiseAbs().maxCoeff() / scale);
    if (c.dense && s < 8) vs_dense = std::max(vs_dense, (g - dense_reference(c, s)).cwiseAbs().maxCoeff() / scale);
  }
  std::printf("check %s, %d states: generated vs runtime %.1e, vs dense %s %s\n", c.label.c_str(), kStates, vs_runtime,
              c.compliant ? "calM^-1 (T - C - J* fg)" : "saddle point",
              c.dense ? fmt::format("{:.1e} (8 states)", vs_dense).c_str() : "(not formed)");
  if (!(vs_runtime < 1e-9 && vs_dense < 1e-9)) throw std::runtime_error(c.label + ": constrained dynamics disagree");
  if (!c.mujoco) return std::nan("");
  const State st = mujoco_state(c);
  std::vector<double> in(st.q.data(), st.q.data() + st.q.size());
  in.insert(in.end(), st.qd.data(), st.qd.data() + st.qd.size());
  const VecX T = forces(c, 0);
  in.insert(in.end(), T.data(), T.data() + T.size());
  c.cfd(in.data(), gen.data());
  const Eigen::Map<const VecX> ours(gen.data(), c.robot.nv);
  const VecX theirs = c.mujoco->constrained_forward_dynamics(st.q, st.qd, T);
  const double difference = (theirs - ours).norm() / ours.norm();
  std::printf("check %s: MuJoCo's soft welds (solimp 0.9999) vs ours at the neutral pose at rest: %.1e relative\n",
              c.label.c_str(), difference);
  return difference;
}

template <class Call>
void add(const std::string& name, int outputs, Call call) {
  bench::add_benchmark(name, kStates, outputs, call);
}

void add_benchmarks(const Case& c) {
  const int N = c.robot.nv;
  add(c.key + "/FD/generated", N, [&c](int s, double* out) { c.fd(c.inputs[s].data(), out); });
  add(c.key + "/CFD/generated", N, [&c](int s, double* out) { c.cfd(c.inputs[s].data(), out); });
  if (c.key.starts_with("tree")) return;
  add(c.key + "/CFD/runtime", N,
      [&c, ws = std::make_shared<exec::Workspace<double>>(c.program, c.constants)](int s, double* out) {
        exec::execute<double>(c.program, c.constants, c.inputs[s].data(), out, *ws);
      });
  add(c.key + "/CFD/dense", N, [&c](int s, double* out) {
    const VecX qdd = dense_reference(c, s);
    std::copy(qdd.data(), qdd.data() + qdd.size(), out);
  });
  if (c.mujoco) {
    const State st = mujoco_state(c);
    c.mujoco->set_state(st.q, st.qd, forces(c, 0));
    const auto mujoco = [&c](int, double* out) {
      mj_forward(c.mujoco->model(), c.mujoco->data());
      out[0] = c.mujoco->data()->qacc[0];
    };
    add(c.key + "/CFD/mujoco", N, mujoco);
    bench::add_paired_benchmark(
        c.key + "/CFD/mujoco_over_generated", kStates, N, [&c](int s, double* out) { c.cfd(c.inputs[s].data(), out); },
        mujoco);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int repetitions = 1;
  for (int i = 1; i < argc; ++i) std::sscanf(argv[i], "--benchmark_repetitions=%d", &repetitions);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::vector<std::unique_ptr<Case>> cases;
  std::vector<double> mujoco_difference;
  try {
    cases.push_back(make_case("talos", "talos_reduced, free-flyer, both soles welded",
                              load_urdf(SOA_BENCH_TALOS, LoadOptions{true}),
                              {{"left_sole_link", kAllDirections}, {"right_sole_link", kAllDirections}}));
    cases.back()->fd = talos_welded_forward_dynamics;
    cases.back()->cfd = talos_welded_constrained_forward_dynamics;
    cases.back()->mujoco = std::make_unique<test::MujocoOracle>(
        cases.back()->robot, SOA_BENCH_TALOS, std::vector<std::string>{"left_sole_link", "right_sole_link"});
    cases.push_back(make_case("solo", "solo12, free-flyer, four point contacts",
                              load_urdf(SOA_BENCH_SOLO, LoadOptions{true}),
                              {{"FL_FOOT", kTranslations},
                               {"FR_FOOT", kTranslations},
                               {"HL_FOOT", kTranslations},
                               {"HR_FOOT", kTranslations}}));
    cases.back()->fd = solo_contacts_forward_dynamics;
    cases.back()->cfd = solo_contacts_constrained_forward_dynamics;
    cases.push_back(make_case("loop", "baxter, grippers welded to each other", load_urdf(SOA_BENCH_BAXTER),
                              {{"left_gripper=right_gripper", kAllDirections}}));
    cases.back()->fd = baxter_loop_forward_dynamics;
    cases.back()->cfd = baxter_loop_constrained_forward_dynamics;
    cases.back()->mujoco = std::make_unique<test::MujocoOracle>(cases.back()->robot, SOA_BENCH_BAXTER,
                                                                std::vector<std::string>{"left_gripper=right_gripper"});
    cases.push_back(
        make_case("bar", "baxter carrying a bar (held object, 25 dof)",
                  with_object(load_urdf(SOA_BENCH_BAXTER), load_urdf(SOA_BENCH_BAR, LoadOptions{true})),
                  {{"bar_left=left_gripper", kAllDirections}, {"bar_right=right_gripper", kAllDirections}}));
    cases.back()->fd = baxter_bar_forward_dynamics;
    cases.back()->cfd = baxter_bar_constrained_forward_dynamics;
    cases.push_back(
        make_compliant_case("springs", "baxter holding the bar by springs and dampers (compliant FD, 25 dof)",
                            with_object(load_urdf(SOA_BENCH_BAXTER), load_urdf(SOA_BENCH_BAR, LoadOptions{true})),
                            {"bar_left=left_gripper:2e4,50,200,1", "bar_right=right_gripper:2e4,50,200,1"}));
    cases.back()->fd = baxter_springs_forward_dynamics;
    cases.back()->cfd = baxter_springs_compliant_forward_dynamics;
#ifdef SOA_HAVE_LLVM_JIT
    jit::tune_llvm_process_options();
    for (int bodies : {50, 100, 200, 400}) cases.push_back(random_tree_case(bodies));
#endif
    for (const auto& c : cases) mujoco_difference.push_back(check(*c));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soa_bench_constraints: %s\n", e.what());
    return 1;
  }
  for (const auto& c : cases) add_benchmarks(*c);
  const std::string load_before = bench::load_average();
  bench::Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  std::printf("\n<!-- soa_bench_constraints table -->\n");
  std::printf(
      "Median CPU time per call over %d repetition(s), %d random states cycled; load average before %s, after %s.\n\n",
      repetitions, kStates, load_before.c_str(), bench::load_average().c_str());
  std::printf(
      "| robot, constraints | unconstrained FD (ns) | constrained FD (ns) | / unconstrained | runtime (ns) | dense "
      "reference (ns) | dense / generated | MuJoCo mj_forward (ns) | MuJoCo / generated | MuJoCo / generated, "
      "paired |\n");
  std::printf("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (const auto& c : cases) {
    if (c->key.starts_with("tree")) continue;
    const auto t = [&](const std::string& impl) { return collector.median(c->key + "/" + impl); };
    const double paired = collector.ratio(c->key + "/CFD/mujoco_over_generated");
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c->label.c_str(),
                bench::ns(t("FD/generated")).c_str(), bench::ns(t("CFD/generated")).c_str(),
                bench::ratio(t("CFD/generated"), t("FD/generated")).c_str(), bench::ns(t("CFD/runtime")).c_str(),
                bench::ns(t("CFD/dense")).c_str(), bench::ratio(t("CFD/dense"), t("CFD/generated")).c_str(),
                bench::ns(t("CFD/mujoco")).c_str(), bench::ratio(t("CFD/mujoco"), t("CFD/generated")).c_str(),
                std::isnan(paired) ? "-" : fmt::format("{:.2f}x", paired).c_str());
  }
  std::printf(
      "\nTargets: constrained <= 1.6x unconstrained (talos); >= 10x faster than the dense reference; "
      ">= 5x faster than MuJoCo's mj_forward with the same welds (the paired column: each repetition's median over "
      "alternated passes, %d states each, of MuJoCo's time over ours; its median over repetitions).\n",
      kStates);
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (!std::isnan(mujoco_difference[i]))
      std::printf(
          "MuJoCo's welds are soft: for %s, at the neutral pose at rest (where they hold), its joint accelerations "
          "differ from ours by %.1e relative with solimp 0.9999 (its stiffest).\n",
          cases[i]->label.c_str(), mujoco_difference[i]);
#ifdef SOA_HAVE_LLVM_JIT
  std::printf(
      "\nRandom trees on a free-flyer with 4 leaves welded (the deepest that do not repeat each other's "
      "directions), both kernels compiled by soac's LLVM back-end:\n\n");
  std::printf(
      "| bodies | N | unconstrained FD (ns) | constrained FD (ns) | / unconstrained | constrained ns / body |\n");
  std::printf("|--:|--:|--:|--:|--:|--:|\n");
  for (const auto& c : cases) {
    if (!c->key.starts_with("tree")) continue;
    const double fd = collector.median(c->key + "/FD/generated"), cfd = collector.median(c->key + "/CFD/generated");
    std::printf("| %d | %d | %s | %s | %s | %.1f |\n", c->robot.size(), c->robot.nv, bench::ns(fd).c_str(),
                bench::ns(cfd).c_str(), bench::ratio(cfd, fd).c_str(), cfd / c->robot.size());
  }
#endif
  benchmark::Shutdown();
  return 0;
}
