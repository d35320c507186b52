// The C++ back-end: ScalarPrograms (compiler/specialise) -> one header and one source file
// per robot and kernel set.
//
// Contract
// - Both files start with a provenance banner: the soac version, the robot (name, file and
//   its hash), and per kernel its source expression, the derivation summary the caller
//   passes in (the rewritten form and the identities used) and its operation count.
// - The header declares, in `namespace soa_gen::<robot>`: the robot's sizes (nq, nv, tips),
//   one function per kernel on plain arrays, `void NAME(const double* q, ..., double* out)`,
//   and (unless SOA_GEN_NO_EIGEN is defined) overloads on fixed-size Eigen vectors and
//   matrices; and one `extern "C" void <robot>_<kernel>(const double* in, double* out)`
//   per kernel whose comment documents the layout: inputs concatenated in declared order,
//   operator-valued outputs column-major (exec::Layout).
// - The source is straight-line code: one `const double` per operation, in the program's
//   order (but for the sin-cos pairs below), with a comment line wherever the body or operator factor changes; literals are
//   printed to round-trip exactly; no dead code (the program has none); unused array
//   parameters are marked (void). It compiles warning-free with -std=c++17 -Wall -Wextra
//   -O2 and includes only <cmath>, its header and (there) <Eigen/Core>.
// - Sin and Cos: when a kernel of the set takes one, the source defines `struct
//   soa_sincos_pair { double s, c; }` and `static inline soa_sincos_pair soa_sincos(double)`
//   once -- soa::sincos (support/sincos.hpp) printed, an inline sine-cosine pair instead
//   of two libm calls, [[gnu::always_inline]] (else g++ outlines its fast path from a
//   kernel this long: a call per joint), libm's fallback in a cold soa_sincos_libm -- and each value whose sine or cosine is taken gets one
//   `const soa_sincos_pair scN = soa_sincos(x);`, its Sin and Cos nodes reading scN.s and
//   scN.c. Those of inputs (the joint angles) open the kernel's body, in input order, under
//   one comment, before any other statement: independent of everything else, they
//   overlap. Those of computed values come at the first Sin or Cos of the value. Only
//   values some Sin or Cos reads get a pair; kernels without either carry none of it.
// - Names: the generated namespace soa_gen::<robot> holds nq, nv, tips, soa_sincos and
//   soa_sincos_pair, soa_sincos_libm besides the kernels; a kernel of one of these names is a UserError.
// - Values: compiled as documented (-O2, no -march: no FMA contraction), every kernel
//   computes specialise::evaluate's values bit for bit (the LLVM back-end's too).
// - Emission is deterministic: the same inputs give the same text.
#pragma once

#include <string>
#include <vector>

#include "exec/execute.hpp"
#include "model/robot.hpp"
#include "specialise/scalar_program.hpp"

namespace soa::emit {

struct Port {
  std::string name;  // q, qd, tau, ...
  int size = 0;
};

struct Kernel {
  std::string name;        // C identifier: inverse_dynamics
  std::string expression;  // as the user wrote it: calM qdd + C
  std::string derivation;  // one or more lines: the form lowered, the identities used
  std::string meaning;     // one line for the header
  std::vector<Port> inputs;
  std::string output;
  int rows = 0, cols = 1;  // output shape; cols = 1 for a vector
  specialise::ScalarProgram code;
};

// A kernel from its lowered program and specialised code; ports from the program's layout.
Kernel make_kernel(std::string name, std::string expression, std::string derivation, std::string meaning,
                   const exec::SweepProgram& program, const exec::Layout& layout, specialise::ScalarProgram code);

struct Target {
  std::string robot;           // C identifier for the namespace and extern "C" prefix
  std::string robot_source;    // where the model came from (URDF path, or a description)
  std::string robot_hash;      // robot_fingerprint()
  std::string robot_summary;   // "9 bodies, nq 9, N 9, tips: ..." (robot_summary())
  int nq = 0, nv = 0, tips = 0;
  std::string file_stem;       // header <stem>.hpp, source <stem>.cpp
};

// The robot part of a Target, from the model and its tip frames.
Target make_target(const Robot& robot, const std::vector<int>& tip_frames, std::string file_stem = {});

struct Emitted {
  std::string header_name, header;
  std::string source_name, source;
};

Emitted emit_cpp(const std::vector<Kernel>& kernels, const Target& target);

// "panda" -> "panda", "random tree (seed 3)" -> "random_tree_seed_3".
std::string identifier(std::string_view text);

// FNV-1a 64 of the robot's URDF file when it can be read ("file fnv1a64:..."), else of the
// model's numbers and structure ("model fnv1a64:...").
std::string robot_fingerprint(const Robot& robot);

// The version string the banner carries.
const char* soac_version();

// The toolchain soac was built with, for compiling generated code on this machine: the C++
// compiler and Eigen's include directory (the header's Eigen overloads need it).
struct Toolchain {
  std::string cxx;
  std::string eigen_include;
};
Toolchain build_toolchain();

}  // namespace soa::emit
