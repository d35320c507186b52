// Kernels through the pipeline: rewrite -> lower (robot independent) -> specialise (one
// robot) -> a back-end. This is the single path soac emit, soac jit, the tests and the
// benchmarks take, so that what is measured is what is shipped.
#pragma once

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "specialise/kernel.hpp"
#include "specialise/traced.hpp"
#include "exec/constants.hpp"
#include "exec/derivative.hpp"
#include "exec/execute.hpp"
#include "exec/sweep_ir.hpp"
#include "lower/kernels.hpp"
#include "model/kinematics.hpp"
#include "model/tips.hpp"
#include "pipeline/pipeline.hpp"

namespace soa::pipeline {

// A kernel as declared: a .soa `kernel NAME(INPUTS) = EXPRESSION;`, or a standard one.
struct KernelSpec {
  std::string name;                 // a C identifier
  std::vector<std::string> inputs;  // q, qd, qdd, T, f0 in the declared (layout) order
  ir::Expr expression;              // as written, before rewriting
  std::string output = "out";       // name of the output in generated code
  std::string meaning;              // one line for the generated header
  // The declaration in a .soa file (none for a standard kernel): errors in lowering and
  // specialising it are reported there, naming the kernel.
  std::optional<syntax::Located> where = std::nullopt;
  // A derivative kernel: d(expression)/d(wrt) (lower::KernelDecl::wrt); empty otherwise.
  std::vector<std::string> wrt = {};
  exec::DerivativeForm form = exec::DerivativeForm::Jacobian;  // lower::KernelDecl::form
};

// "calM qdd + C", or "d(calM qdd + C)/d(q, qd)" for a derivative kernel.
std::string kernel_expression(const KernelSpec& spec);

// The kernels every robot gets (lower/kernels.hpp): inverse dynamics, mass matrix, forward
// dynamics, mass-matrix inverse, Jacobian, Lambda, tip-force correction.
std::vector<KernelSpec> standard_kernels();
KernelSpec kernel_spec(const lower::KernelDecl& decl);
std::vector<KernelSpec> kernels_of(const syntax::Module& module);
// A kernel file's `weld FRAME ...;` and `contact FRAME;` in the model's terms
// (model/tips.hpp, hold_frames), each failing as a UserError at its place in the file.
std::vector<Hold> holds_of(const std::vector<syntax::Hold>& declared);
// The kernels a command line names: those of a .soa file, or the standard ones when `path`
// is empty (and the welded ones, lower/kernels.hpp, when `welded`). A file that declares
// none is a UserError.
std::vector<KernelSpec> kernel_set(const std::string& path, bool welded = false, bool derivatives = false,
                                   bool grasped = false);

// How a derivative kernel's straight-line code is made (docs/mathematics.md section 7).
enum class DerivativeRoute {
  // The chain rule on the expression's own straight-line code (specialise/differentiate).
  ForwardMode,
  // d(calM qdd + C)/d(q, qd): the Newton-Euler sensitivity recursion
  // (exec/newton_euler_derivatives.hpp), O(N * depth) small dot products; also the
  // Coriolis matrix (d tau/dqd + calM Z) / 2 and the Christoffel symbols made from it.
  Sensitivity,
  // d(calM^-1 (T - C))/d(q, qd) = -calM^-1 d(calM qdd + C)/d(q, qd) at qdd = calM^-1 (T - C)
  // (differentiating calM qdd + C = T at fixed T): forward dynamics, the sensitivity
  // recursion at its qdd, and calM^-1 times the result.
  ImplicitForward,
};

// Rewritten into the cheapest form the library reaches, then lowered to a sweep program.
// A derivative kernel whose expression derives to inverse dynamics' or forward dynamics'
// form (whatever it was written as), with respect to q and qd only, takes the route made
// for it; any other derivative kernel forward mode.
struct LoweredKernel {
  KernelSpec spec;
  rewrite::Derivation derivation;
  exec::SweepProgram program;
  DerivativeRoute route = DerivativeRoute::ForwardMode;
  std::optional<exec::SweepProgram> inverse_mass;  // ImplicitForward: calM^-1, lowered
  std::optional<exec::SweepProgram> mass_matrix;   // Sensitivity, Coriolis forms: calM, lowered
};
LoweredKernel lower_kernel(const KernelSpec& spec, const Library& library, const rewrite::Options& options = {});

// A derivative kernel's inputs (indices into program.inputs, in wrt's order); empty for a
// plain kernel.
std::vector<int> wrt_inputs(const LoweredKernel& kernel);
// The kernel's calling convention: exec::layout, or exec::derivative_layout.
exec::Layout kernel_layout(const LoweredKernel& kernel, const exec::RobotConstants<double>& robot);
// Runs the kernel through the generic runtime: exec::execute, or exec::differentiate.
void run_generic(const LoweredKernel& kernel, const exec::RobotConstants<double>& robot, const double* in, double* out);

// "derived: FORM" and one "by RULE [citation]" line per step, for banners and listings.
std::string derivation_summary(const rewrite::Derivation& d);
// "algorithm: WAY (IDENTITY [citation]): what the code does", one line per way the lowering
// took, and the directions of its loops.
std::string algorithm_summary(const exec::SweepProgram& p);
// Both, for a kernel's banner.
std::string derivation_summary(const LoweredKernel& k);

// The robot's own straight-line code for a lowered kernel (constants folded, CSE, DCE).
specialise::Kernel specialise_kernel(const LoweredKernel& kernel, const exec::RobotConstants<double>& robot,
                                     const specialise::TraceOptions& options = {});
// A kernel set's code: each kernel specialised, all with or all without the tracer's reversed
// subtraction (TraceOptions::reversed_sub), whichever costs the set fewer operations.
std::vector<specialise::Kernel> specialise_kernels(const std::vector<LoweredKernel>& kernels,
                                                   const exec::RobotConstants<double>& robot);

// A program's inputs in layout order for a state: q, qd, qdd and f0 from `s`, the others
// (T) uniform in [-1, 1] from `rng` (self-checks and trial runs).
std::vector<double> sample_inputs(const exec::SweepProgram& p, const exec::Layout& layout, const State& s,
                                  std::mt19937_64& rng);

// Every kernel of a set for one robot: rewritten (with the serial-chain rules when the robot
// is one), lowered, and specialised with the robot's constants. A kernel with a tip-space
// solve (sweep_ir.hpp Solve) first runs once through the generic runtime on a random state
// (seed 1): straight-line code cannot check its pivots, so redundant constraints are a
// UserError naming the tip frame here, before any code exists.
struct RobotKernels {
  exec::RobotConstants<double> constants;
  std::vector<LoweredKernel> lowered;
  std::vector<specialise::Kernel> code;  // code[i] is lowered[i] specialised
};
RobotKernels compile_for_robot(const std::vector<KernelSpec>& specs, const Library& library, const Robot& robot,
                               const std::vector<int>& tips);

}  // namespace soa::pipeline
