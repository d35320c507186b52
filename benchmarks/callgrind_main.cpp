// soa_callgrind ROBOT KERNEL [CALLS]: calls one generated kernel CALLS times (default 1000)
// on kStates varied random states, for instruction counting under valgrind (callgrind.sh):
//   valgrind --tool=callgrind --toggle-collect='soa_gen::ROBOT::KERNEL(*' soa_callgrind ...
// counts exactly the kernel's instructions (inclusive of sin/cos) and nothing of this loop.
// The kernels are called through their C++ entry points, not the extern "C" wrappers, so
// that the toggled function is the one holding the code (a wrapper may tail-jump into it).
// The generated code is built with -O2 -march=x86-64-v3; this driver with the project's
// flags, since it shares Eigen objects with soa_model (benchmarks/CMakeLists.txt says why).
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "model/kinematics.hpp"
#include "model/robot.hpp"
#include "panda.hpp"
#include "talos.hpp"

namespace {

constexpr int kStates = 64;

// One kernel of one robot, on the concatenated [q, qd, qdd] input of a state.
using Call = void (*)(const double* in, double* out);

template <class G>
Call kernel(const std::string& name) {
  constexpr int nq = G::nq, nv = G::nv;
  if (name == "inverse_dynamics") return [](const double* in, double* out) { G::id(in, in + nq, in + nq + nv, out); };
  if (name == "mass_matrix") return [](const double* in, double* out) { G::m(in, out); };
  if (name == "forward_dynamics") return [](const double* in, double* out) { G::fd(in, in + nq, in + nq + nv, out); };
  if (name == "mass_matrix_inverse") return [](const double* in, double* out) { G::minv(in, out); };
  return nullptr;
}

#define SOA_GENERATED(stem)                                                                        \
  struct stem##_kernels {                                                                          \
    static constexpr int nq = soa_gen::stem::nq, nv = soa_gen::stem::nv;                           \
    static void id(const double* q, const double* qd, const double* qdd, double* out) {            \
      soa_gen::stem::inverse_dynamics(q, qd, qdd, out);                                            \
    }                                                                                              \
    static void m(const double* q, double* out) { soa_gen::stem::mass_matrix(q, out); }            \
    static void fd(const double* q, const double* qd, const double* T, double* out) {              \
      soa_gen::stem::forward_dynamics(q, qd, T, out);                                              \
    }                                                                                              \
    static void minv(const double* q, double* out) { soa_gen::stem::mass_matrix_inverse(q, out); } \
  };
SOA_GENERATED(panda)
SOA_GENERATED(talos)
#undef SOA_GENERATED

int usage() {
  std::fprintf(stderr,
               "usage: soa_callgrind panda|talos inverse_dynamics|mass_matrix|forward_dynamics|"
               "mass_matrix_inverse [CALLS]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) return usage();
  const std::string robot_name = argv[1], kernel_name = argv[2];
  const long calls = argc == 4 ? std::strtol(argv[3], nullptr, 10) : 1000;
  if (calls <= 0) return usage();
  const bool talos = robot_name == "talos";
  if (!talos && robot_name != "panda") return usage();
  const Call call = talos ? kernel<talos_kernels>(kernel_name) : kernel<panda_kernels>(kernel_name);
  if (!call) return usage();

  const soa::Robot robot = soa::load_urdf(talos ? SOA_BENCH_TALOS : SOA_BENCH_PANDA, soa::LoadOptions{talos});
  const int nq = robot.nq, nv = robot.nv;
  const int stride = nq + 2 * nv;  // FD's T is random too: the code has no data-dependent branches
  std::vector<double> inputs(kStates * stride);
  std::mt19937_64 rng(7);
  for (int s = 0; s < kStates; ++s) {
    const soa::State st = soa::random_state(robot, 0, rng);
    double* in = &inputs[s * stride];
    for (int i = 0; i < nq; ++i) in[i] = st.q[i];
    for (int i = 0; i < nv; ++i) in[nq + i] = st.qd[i];
    for (int i = 0; i < nv; ++i) in[nq + nv + i] = st.qdd[i];
  }
  std::vector<double> out(nv * nv);
  double checksum = 0;
  for (long c = 0; c < calls; ++c) {
    call(&inputs[(c % kStates) * stride], out.data());
    checksum += out[c % nv];
  }
  std::printf("%s %s: %ld calls, checksum %.6g\n", robot_name.c_str(), kernel_name.c_str(), calls, checksum);
  return 0;
}
