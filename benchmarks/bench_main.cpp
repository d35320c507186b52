// soa_bench: nanoseconds per call of the generated dynamics (soac_generate, standard kernels)
// against the generic runtime (exec::execute<double> on the same sweep programs) and MuJoCo
// (the equivalent full calls), for the Panda (fixed base, 9 dof) and TALOS (free-flyer,
// 38 dof), all in one run; then a markdown table of the medians and their ratios.
//
// What is timed
// - Every implementation cycles through the same kStates random states (random_state():
//   angles in [-pi, pi], unit quaternions, rates in [-1, 1]), so no call sees the inputs
//   of the previous one and nothing can be hoisted out of the loop.
// - Generated: the extern "C" entry points, whose input layout is the sweep program's.
// - Runtime: exec::execute<double>(program, constants, in, out) on the program soac emit
//   lowers (same identity library, same rewrite options), i.e. the generated code's source.
// - MuJoCo 2.2.2, from qpos/qvel/qacc/qfrc in MuJoCo's own coordinates (copying them into
//   mjData is part of the call, as an application has to do it):
//     ID   = mj_kinematics, mj_comPos, mj_comVel, mj_rne(flg_acc = 1)
//     M    = mj_kinematics, mj_comPos, mj_crb, mj_fullM (dense, as ours)
//     FD   = mj_kinematics, mj_comPos, mj_comVel, mj_crb, mj_factorM, mj_rne(flg_acc = 0),
//            qfrc - bias, mj_solveM
//     M^-1 = mj_kinematics, mj_comPos, mj_crb, mj_factorM, mj_solveM on the nv identity columns
//   FD is the smallest sequence that computes M^-1 (T - C), not mj_forward: mj_forward
//   also runs collision, constraints, actuation and sensors, which would flatter us.
// - Before timing, every implementation is checked on every state: generated against the
//   runtime and against MuJoCo (through MujocoOracle, which maps coordinates), and the timed
//   MuJoCo sequences against MuJoCo's own ID; a mismatch aborts, since timing a wrong
//   computation means nothing.
// - The table reports the median over --benchmark_repetitions of CPU time per call (CPU,
//   not wall-clock, time: the machine is shared, and time spent descheduled is not ours).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "exec/execute.hpp"
#include "model/kinematics.hpp"
#include "model/robot.hpp"
#include "panda.hpp"
#include "panda_whole.hpp"
#include "pipeline/kernels.hpp"
#ifdef SOA_HAVE_LLVM_JIT
#include "emit-llvm/jit.hpp"
#include "pipeline/jit.hpp"
#endif
#include "bench_report.hpp"
#include "support/mujoco_oracle.hpp"
#include "talos.hpp"
#include "talos_whole.hpp"

namespace {

using namespace soa;
using bench::Collector;
using bench::load_average;
using bench::ns;
using bench::ratio;

constexpr int kStates = 64;  // a power of two: the state index wraps with a mask
constexpr double kTolerance = 1e-8;

enum Kernel { kID, kM, kFD, kMinv, kKernels };
constexpr std::array<const char*, kKernels> kKernelName = {"inverse_dynamics", "mass_matrix", "forward_dynamics",
                                                           "mass_matrix_inverse"};
constexpr std::array<const char*, kKernels> kKernelLabel = {"ID", "M", "FD", "Minv"};

enum Impl { kGenerated, kRuntime, kMujoco, kJit, kWhole, kImpls };
constexpr std::array<const char*, kImpls> kImplName = {"generated", "runtime", "mujoco", "jit", "one-function"};

using KernelFn = void (*)(const double*, double*);

struct RobotCase {
  std::string name;
  Robot robot;
  exec::RobotConstants<double> constants;
  std::array<KernelFn, kKernels> generated{};
  // The same kernels as one straight-line function each (soac emit --sources 1 --part-ops,
  // --share-min-ops and --dot-min-terms off): the form before parts, sharing and dot tables.
  std::array<KernelFn, kKernels> whole{};
  std::array<KernelFn, kKernels> jitted{};  // LLVM ORC, the same scalar programs (soac jit)
#ifdef SOA_HAVE_LLVM_JIT
  std::unique_ptr<jit::Kernels> jit_kernels;  // owns jitted
#endif
  std::array<exec::SweepProgram, kKernels> programs;
  std::array<int, kKernels> input_size{}, output_size{};
  std::array<std::vector<double>, kKernels> inputs;  // kStates x input_size, program layout

  std::unique_ptr<test::MujocoOracle> oracle;
  mjModel* m = nullptr;
  mjData* d = nullptr;
  std::vector<double> qpos, qvel, qacc, qfrc;  // kStates x nq / nv, MuJoCo's coordinates
  std::vector<double> identity, scratch;       // nv x nv, nv

  const double* input(Kernel k, int s) const { return inputs[k].data() + s * input_size[k]; }
};

// ---- MuJoCo's equivalent full calls (see the header comment) ----------------------------

void mj_set_qpos(const RobotCase& r, int s) { mju_copy(r.d->qpos, &r.qpos[s * r.m->nq], r.m->nq); }
void mj_set_qvel(const RobotCase& r, int s) { mju_copy(r.d->qvel, &r.qvel[s * r.m->nv], r.m->nv); }

void mujoco_call(Kernel k, RobotCase& r, int s, double* out) {
  mjModel* m = r.m;
  mjData* d = r.d;
  const int nv = m->nv;
  switch (k) {
    case kID:
      mj_set_qpos(r, s);
      mj_set_qvel(r, s);
      mju_copy(d->qacc, &r.qacc[s * nv], nv);
      mj_kinematics(m, d);
      mj_comPos(m, d);
      mj_comVel(m, d);
      mj_rne(m, d, 1, out);
      break;
    case kM:
      mj_set_qpos(r, s);
      mj_kinematics(m, d);
      mj_comPos(m, d);
      mj_crb(m, d);
      mj_fullM(m, out, d->qM);
      break;
    case kFD:
      mj_set_qpos(r, s);
      mj_set_qvel(r, s);
      mj_kinematics(m, d);
      mj_comPos(m, d);
      mj_comVel(m, d);
      mj_crb(m, d);
      mj_factorM(m, d);
      mj_rne(m, d, 0, r.scratch.data());
      mju_sub(r.scratch.data(), &r.qfrc[s * nv], r.scratch.data(), nv);
      mj_solveM(m, d, out, r.scratch.data(), 1);
      break;
    case kMinv:
      mj_set_qpos(r, s);
      mj_kinematics(m, d);
      mj_comPos(m, d);
      mj_crb(m, d);
      mj_factorM(m, d);
      mj_solveM(m, d, out, r.identity.data(), nv);
      break;
    case kKernels: break;
  }
}

// ---- set-up and checks -------------------------------------------------------------------

double relative_error(const Eigen::MatrixXd& got, const Eigen::MatrixXd& want) {
  return (got - want).cwiseAbs().maxCoeff() / std::max(1.0, want.cwiseAbs().maxCoeff());
}

void check(double error, const std::string& what) {
  if (!(error <= kTolerance))
    throw std::runtime_error(fmt::format("{}: relative error {:.3g} > {:g}", what, error, kTolerance));
}

std::unique_ptr<RobotCase> make_case(const std::string& name, const std::string& urdf, bool floating,
                                     const std::array<KernelFn, kKernels>& generated,
                                     const std::array<KernelFn, kKernels>& whole, const pipeline::Library& library) {
  auto r = std::make_unique<RobotCase>();
  r->name = name;
  r->robot = load_urdf(urdf, LoadOptions{floating});
  r->generated = generated;
  r->whole = whole;
  // soac emit's default tips, the end-effectors (the four kernels here do not use tips,
  // but the constants are the ones the generated code was specialised with).
  std::vector<int> tips = r->robot.default_tips();
  r->constants = exec::make_constants(r->robot, tips);
  rewrite::Options options;
  options.serial_chain = r->robot.is_serial_chain();
  for (const pipeline::KernelSpec& spec : pipeline::standard_kernels()) {
    const auto it = std::find(kKernelName.begin(), kKernelName.end(), spec.name);
    if (it == kKernelName.end()) continue;
    const auto k = static_cast<Kernel>(it - kKernelName.begin());
    r->programs[k] = pipeline::lower_kernel(spec, library, options).program;
    const exec::Layout layout = exec::layout(r->programs[k], r->constants);
    r->input_size[k] = layout.input_size;
    r->output_size[k] = layout.output_size();
  }

#ifdef SOA_HAVE_LLVM_JIT
  std::vector<std::pair<std::string, exec::SweepProgram>> named;
  for (int k = 0; k < kKernels; ++k) named.emplace_back(kKernelName[k], r->programs[k]);
  r->jit_kernels = std::make_unique<jit::Kernels>(pipeline::jit_compile(named, r->constants));
  for (int k = 0; k < kKernels; ++k) r->jitted[k] = r->jit_kernels->lookup(kKernelName[k]);
#endif

  const int nq = r->robot.nq, nv = r->robot.nv;
  r->oracle = std::make_unique<test::MujocoOracle>(r->robot, urdf);
  r->m = r->oracle->model();
  r->d = r->oracle->data();
  r->qpos.resize(kStates * nq);
  r->qvel.resize(kStates * nv);
  r->qacc.resize(kStates * nv);
  r->qfrc.resize(kStates * nv);
  r->identity.assign(nv * nv, 0.0);
  for (int i = 0; i < nv; ++i) r->identity[i * nv + i] = 1.0;
  r->scratch.resize(nv);

  std::mt19937_64 rng(20240611);
  for (int s = 0; s < kStates; ++s) {
    const State st = random_state(r->robot, static_cast<int>(tips.size()), rng);
    // FD gets the torques that produce qdd, so every implementation solves a problem whose
    // answer is known.
    Eigen::VectorXd tau(nv);
    {
      std::vector<double> in(nq + 2 * nv);
      std::copy(st.q.begin(), st.q.end(), in.begin());
      std::copy(st.qd.begin(), st.qd.end(), in.begin() + nq);
      std::copy(st.qdd.begin(), st.qdd.end(), in.begin() + nq + nv);
      r->generated[kID](in.data(), tau.data());
    }
    const std::array<const Eigen::VectorXd*, 4> named = {&st.q, &st.qd, &st.qdd, &tau};
    for (int k = 0; k < kKernels; ++k) {
      const exec::SweepProgram& p = r->programs[k];
      std::vector<double> in;
      for (const int var : p.inputs) {
        const std::string& n = p.vars[var].name;
        const Eigen::VectorXd* v = n == "q"     ? named[0]
                                   : n == "qd"  ? named[1]
                                   : n == "qdd" ? named[2]
                                   : n == "T"   ? named[3]
                                                : nullptr;
        if (!v) throw std::runtime_error(fmt::format("{}: unexpected kernel input '{}'", kKernelName[k], n));
        in.insert(in.end(), v->begin(), v->end());
      }
      if (static_cast<int>(in.size()) != r->input_size[k])
        throw std::runtime_error(
            fmt::format("{}: input size {} != layout {}", kKernelName[k], in.size(), r->input_size[k]));
      r->inputs[k].insert(r->inputs[k].end(), in.begin(), in.end());
    }
    // MuJoCo's coordinates for this state: the oracle leaves qpos, qvel, qacc in mjData.
    r->oracle->inverse_dynamics(st.q, st.qd, st.qdd);
    std::copy_n(r->d->qpos, nq, &r->qpos[s * nq]);
    std::copy_n(r->d->qvel, nv, &r->qvel[s * nv]);
    std::copy_n(r->d->qacc, nv, &r->qacc[s * nv]);
    mj_rne(r->m, r->d, 1, &r->qfrc[s * nv]);  // MuJoCo's forces for that motion: FD's input
  }
  return r;
}

// Every implementation on every state: generated = runtime = MuJoCo (mapped), and the timed
// MuJoCo sequences agree with MuJoCo's own ID (ID gives qfrc, M qacc = qfrc - bias, FD
// gives qacc, M^-1 M = 1).
void check_case(RobotCase& r) {
  const int nq = r.robot.nq, nv = r.robot.nv;
  std::array<double, kKernels> vs_runtime{}, vs_mujoco{}, mujoco_self{};
  for (int s = 0; s < kStates; ++s) {
    const Eigen::Map<const Eigen::VectorXd> q(r.input(kID, s), nq), qd(r.input(kID, s) + nq, nv),
        qdd(r.input(kID, s) + nq + nv, nv), tau(r.input(kFD, s) + nq + nv, nv);
    Eigen::MatrixXd M_mj;
    for (int k = 0; k < kKernels; ++k) {
      const int cols = k == kID || k == kFD ? 1 : nv;
      Eigen::MatrixXd gen(nv, cols), run(nv, cols), mj(nv, cols);
      r.generated[k](r.input(static_cast<Kernel>(k), s), gen.data());
      if (r.whole[k]) {  // the same operations in the same order: the same bits, unless the
                         // compiler contracts to FMA (e.g. -march=native), each form its own way
        Eigen::MatrixXd one(nv, cols);
        r.whole[k](r.input(static_cast<Kernel>(k), s), one.data());
#ifdef __FP_FAST_FMA
        if (!(relative_error(one, gen) <= 1e-12))
#else
        if (std::memcmp(one.data(), gen.data(), sizeof(double) * one.size()) != 0)
#endif
          throw std::runtime_error(r.name + " " + kKernelName[k] +
                                   ": the generated code differs from its one-function form");
      }
      exec::execute<double>(r.programs[k], r.constants, r.input(static_cast<Kernel>(k), s), run.data());
      vs_runtime[k] = std::max(vs_runtime[k], relative_error(gen, run));
      if (r.jitted[k]) {  // the JIT runs the same scalar program: it must agree as closely
        Eigen::MatrixXd jit(nv, cols);
        r.jitted[k](r.input(static_cast<Kernel>(k), s), jit.data());
        vs_runtime[k] = std::max(vs_runtime[k], relative_error(jit, run));
      }
      Eigen::MatrixXd want;
      switch (k) {
        case kID: want = r.oracle->inverse_dynamics(q, qd, qdd); break;
        case kM: want = r.oracle->mass_matrix(q); break;
        case kFD: want = r.oracle->forward_dynamics(q, qd, tau); break;
        case kMinv: want = r.oracle->mass_matrix(q).inverse(); break;
      }
      vs_mujoco[k] = std::max(vs_mujoco[k], relative_error(gen, want));
      // MuJoCo's own coordinates: mj is row-major for M (mj_fullM) and for M^-1 (solveM
      // writes column j of the inverse as row j, and the inverse is symmetric).
      mujoco_call(static_cast<Kernel>(k), r, s, mj.data());
      const Eigen::Map<const Eigen::VectorXd> qfrc(&r.qfrc[s * nv], nv), qacc(&r.qacc[s * nv], nv);
      switch (k) {
        case kID: mujoco_self[k] = std::max(mujoco_self[k], relative_error(mj, qfrc)); break;
        case kM: M_mj = mj; break;
        case kFD: {
          mujoco_self[k] = std::max(mujoco_self[k], relative_error(mj, qacc));
          // The FD sequence leaves qfrc - bias in scratch: that is M qacc.
          const Eigen::Map<const Eigen::VectorXd> rhs(r.scratch.data(), nv);
          mujoco_self[kM] = std::max(mujoco_self[kM], relative_error(M_mj * qacc, rhs));
          break;
        }
        case kMinv:
          mujoco_self[k] = std::max(mujoco_self[k], relative_error(mj * M_mj, Eigen::MatrixXd::Identity(nv, nv)));
          break;
      }
    }
  }
  for (int k = 0; k < kKernels; ++k) {
    std::printf("check %-5s %-4s on %d states: generated vs runtime %.1e, vs MuJoCo %.1e; MuJoCo sequence %.1e\n",
                r.name.c_str(), kKernelLabel[k], kStates, vs_runtime[k], vs_mujoco[k], mujoco_self[k]);
    check(vs_runtime[k], r.name + " " + kKernelName[k] + ": generated vs runtime");
    check(vs_mujoco[k], r.name + " " + kKernelName[k] + ": generated vs MuJoCo");
    check(mujoco_self[k], r.name + " " + kKernelName[k] + ": timed MuJoCo sequence");
  }
}

// ---- the benchmarks ----------------------------------------------------------------------

// The timing loop shared by all implementations: `call(state, out)` on the next state.
template <class Call>
void add_benchmark(const std::string& name, int output_size, Call call) {
  bench::add_benchmark(name, kStates, output_size, call);
}

void register_case(RobotCase& r) {
  for (int k = 0; k < kKernels; ++k) {
    const auto kernel = static_cast<Kernel>(k);
    const auto name = [&](Impl i) { return fmt::format("{}/{}/{}", r.name, kKernelLabel[k], kImplName[i]); };
    const KernelFn generated = r.generated[k];
    add_benchmark(name(kGenerated), r.output_size[k],
                  [&r, kernel, generated](int s, double* out) { generated(r.input(kernel, s), out); });
    if (const KernelFn whole = r.whole[k])
      add_benchmark(name(kWhole), r.output_size[k],
                    [&r, kernel, whole](int s, double* out) { whole(r.input(kernel, s), out); });
    // The generic runtime as it is meant to run: its workspace made once (exec::Workspace,
    // Dynamics::Data); beside it, on one robot, the convenience call that makes one per call.
    add_benchmark(name(kRuntime), r.output_size[k],
                  [&r, kernel, ws = std::make_shared<exec::Workspace<double>>(r.programs[kernel], r.constants)](
                      int s, double* out) {
                    exec::execute<double>(r.programs[kernel], r.constants, r.input(kernel, s), out, *ws);
                  });
    if (r.name == "panda")
      add_benchmark(fmt::format("{}/{}/runtime-per-call", r.name, kKernelLabel[k]), r.output_size[k],
                    [&r, kernel](int s, double* out) {
                      exec::execute<double>(r.programs[kernel], r.constants, r.input(kernel, s), out);
                    });
    add_benchmark(name(kMujoco), r.output_size[k],
                  [&r, kernel](int s, double* out) { mujoco_call(kernel, r, s, out); });
    if (const KernelFn jitted = r.jitted[k])
      add_benchmark(name(kJit), r.output_size[k],
                    [&r, kernel, jitted](int s, double* out) { jitted(r.input(kernel, s), out); });
  }
}

void print_table(const std::vector<std::unique_ptr<RobotCase>>& cases, const Collector& c,
                 const std::string& load_before, int repetitions) {
  std::printf("\n<!-- soa_bench table -->\n");
  std::printf(
      "Median CPU time per call over %d repetition(s), %d random states cycled; load average "
      "before %s, after %s (2 vCPU).\n\n",
      repetitions, kStates, load_before.c_str(), load_average().c_str());
  std::printf(
      "| robot | kernel | generated (ns) | one function (ns) | runtime (ns) | MuJoCo (ns) | JIT (ns) | one function / "
      "generated | MuJoCo / generated | runtime / generated | JIT / generated | targets (>= 5x, >= 10x) |\n");
  std::printf("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
  for (const auto& r : cases) {
    for (int k = 0; k < kKernels; ++k) {
      std::array<double, kImpls> t{};
      for (int i = 0; i < kImpls; ++i) t[i] = c.median(fmt::format("{}/{}/{}", r->name, kKernelLabel[k], kImplName[i]));
      if (std::all_of(t.begin(), t.end(), [](double v) { return std::isnan(v); })) continue;  // filtered out
      std::string verdict;
      if (std::isnan(t[kGenerated])) {
        verdict = "-";
      } else {
        const double vs_mj = t[kMujoco] / t[kGenerated], vs_rt = t[kRuntime] / t[kGenerated];
        // A miss says how much faster the generated code would have to be.
        if (!std::isnan(vs_mj) && vs_mj < 5)
          verdict += fmt::format("MuJoCo {:.2f}x < 5x (needs {:.0f}% less time); ", vs_mj, 100 * (1 - vs_mj / 5));
        if (!std::isnan(vs_rt) && vs_rt < 10)
          verdict += fmt::format("runtime {:.2f}x < 10x (needs {:.0f}% less time); ", vs_rt, 100 * (1 - vs_rt / 10));
        verdict = verdict.empty() ? "met" : verdict.substr(0, verdict.size() - 2);
      }
      std::printf("| %s (%d dof) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->name.c_str(),
                  r->robot.nv, kKernelLabel[k], ns(t[kGenerated]).c_str(), ns(t[kWhole]).c_str(),
                  ns(t[kRuntime]).c_str(), ns(t[kMujoco]).c_str(), ns(t[kJit]).c_str(),
                  ratio(t[kWhole], t[kGenerated]).c_str(), ratio(t[kMujoco], t[kGenerated]).c_str(),
                  ratio(t[kRuntime], t[kGenerated]).c_str(), ratio(t[kJit], t[kGenerated]).c_str(), verdict.c_str());
    }
  }
  std::printf(
      "\nMuJoCo %s calls: ID = kinematics + comPos + comVel + rne(acc); M = kinematics + comPos + crb + "
      "fullM; FD = kinematics + comPos + comVel + crb + factorM + rne(bias) + solveM; Minv = kinematics + "
      "comPos + crb + factorM + solveM(identity).\n",
      mj_versionString());
#ifdef SOA_HAVE_LLVM_JIT
  std::printf("JIT: soa::pipeline::jit_compile's defaults (host CPU, -O2 code generation, no FMA contraction)%s.\n",
#ifdef __FMA__
              "; g++ contracts the generated code of this build into FMAs (-ffp-contract=fast)"
#else
              ", as the generated code of this build"
#endif
  );
#endif
}

}  // namespace

int main(int argc, char** argv) {
  // For the table's caption; read before Initialize() consumes the benchmark flags.
  int repetitions = 1;
  for (int i = 1; i < argc; ++i) std::sscanf(argv[i], "--benchmark_repetitions=%d", &repetitions);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
#ifdef SOA_HAVE_LLVM_JIT
  jit::tune_llvm_process_options();  // the JIT column is soac jit's code
#endif

  std::vector<std::unique_ptr<RobotCase>> cases;
  try {
    const pipeline::Library library = pipeline::load_library();
    cases.push_back(
        make_case("panda", SOA_BENCH_PANDA, false,
                  {panda_inverse_dynamics, panda_mass_matrix, panda_forward_dynamics, panda_mass_matrix_inverse},
                  {panda_whole_inverse_dynamics, panda_whole_mass_matrix, panda_whole_forward_dynamics,
                   panda_whole_mass_matrix_inverse},
                  library));
    cases.push_back(
        make_case("talos", SOA_BENCH_TALOS, true,
                  {talos_inverse_dynamics, talos_mass_matrix, talos_forward_dynamics, talos_mass_matrix_inverse},
                  {talos_whole_inverse_dynamics, talos_whole_mass_matrix, talos_whole_forward_dynamics,
                   talos_whole_mass_matrix_inverse},
                  library));
    for (auto& r : cases) check_case(*r);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soa_bench: %s\n", e.what());
    return 1;
  }
  for (auto& r : cases) register_case(*r);

  const std::string load_before = load_average();
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  print_table(cases, collector, load_before, repetitions);
  benchmark::Shutdown();
  return 0;
}
