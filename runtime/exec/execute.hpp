// The generic runtime: a sweep program (sweep_ir.hpp) executed for a robot given at run time.
//
// Contract
// - execute<S>(program, robot, in, out) runs the program's loops over the robot's bodies with
//   scalar type S. `in` holds the program's inputs concatenated in declared order (q: nq,
//   qd/qdd/T: N, f0: 6m, a spatial input: 6n), `out` the output: a stacked vector, or an
//   operator-valued result stored column-major (Layout below gives the sizes).
// - S = double is the generic runtime; it agrees with interp::eval_dense to 1e-10 relative
//   (tests/unit/test_exec.cpp). compiler/specialise runs the same template with a tracing
//   scalar and the robot's constants as literals to obtain the straight-line program.
// - The executor's own kinematics, Riccati, composite-body and Upsilon recursions follow the
//   conventions of model/kinematics.cpp (reference sections 2 and 3); quaternions are
//   normalised inside the rotation formula (no square root).
// - The model must be valid (D(k) positive definite; load_urdf checks this): the executor
//   does not branch on values, so that every scalar type runs the same arithmetic.
// - An Observer, if given, is told which statement runs at which body before it runs (the
//   specialiser labels its nodes with it).
// - Workspace<S> is the scratch memory a run writes into (Pinocchio's Model/Data split: the
//   program and the robot are the model, the workspace is the data). Made once for a
//   (program, robot) pair, execute(program, robot, in, out, workspace) allocates nothing
//   when no Observer is given. A workspace fits every pair with the shapes it was made for
//   (the same vars and their spaces, inputs, output and columns; the same n, m, nq, nv);
//   given any other pair execute throws UserError naming both and writes nothing. Its
//   contents between runs mean nothing: a run reads only what it wrote, so results equal
//   those of a fresh workspace bit for bit. One workspace serves one run at a time.
// - execute(program, robot, in, out) without a workspace makes one per call (the
//   specialiser traces through it); it is safe to call from several threads at once.
#pragma once

#include <Eigen/Dense>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "exec/constants.hpp"
#include "exec/sweep_ir.hpp"

namespace soa::exec {

struct Observer {
  virtual ~Observer() = default;
  // `column` is the column being computed (-1 outside Columns), `body` the body index.
  virtual void enter(int column, int body, const Stmt& statement) = 0;
};

struct Layout {
  struct Slot {
    int offset = 0, size = 0;
  };
  std::vector<Slot> inputs;  // one per program input, in order
  int input_size = 0;
  int rows = 0, cols = 1;  // output (cols = 1 for a vector)
  int output_size() const { return rows * cols; }
};

int space_size(Space s, int nq, int nv, int n, int m);
Layout layout(const SweepProgram& program, int nq, int nv, int n, int m);
template <class S>
Layout layout(const SweepProgram& program, const RobotConstants<S>& robot) {
  return layout(program, robot.nq, robot.nv, robot.n(), robot.m());
}

namespace detail {
template <class S>
class Executor;
}

template <class S>
class Workspace {
public:
  Workspace(const SweepProgram& program, const RobotConstants<S>& robot);

  // Whether this workspace serves (program, robot): the same shapes (contract above).
  bool fits(const SweepProgram& program, const RobotConstants<S>& robot) const;
  // The UserError execute throws when it does not (one line naming both pairs).
  [[noreturn]] void mismatch(const SweepProgram& program, const RobotConstants<S>& robot) const;
  const Layout& layout() const { return layout_; }

private:
  template <class>
  friend class detail::Executor;
  struct Articulated {
    SMat<S> P, Pplus, D, Dinv, G;
    Ldl<S> Dldl;  // D = L Delta L*: Dinv's factors, which the blocks L_D^-1 and Delta_D^-1 apply
  };
  // What the sizes below were made from (fits() compares them).
  std::string program_, robot_;  // names, for the message
  int n_ = 0, m_ = 0, nq_ = 0, nv_ = 0;
  std::vector<Space> spaces_;  // per var
  std::vector<int> inputs_;
  Space out_rows_ = Space::Joint;
  std::optional<Space> out_cols_;
  int out_var_ = -1;
  std::optional<Columns> columns_shape_;  // without its loops
  Layout layout_;
  // Per body (the model quantities), per var and body or tip, q, and the columns' buffers.
  std::vector<Transform<S>> X_;
  std::vector<SVec<S>> V_, a_, abar_, b_;
  std::vector<Articulated> art_;
  std::vector<Inertia<S>> R_;
  std::vector<SMat<S>> ups_;
  std::vector<std::vector<SVec<S>>> vals_;  // [var][body, or tip for Tip vars]
  std::vector<S> config_;                   // q
  std::vector<S> unit_;                     // e_j
  std::vector<S> A_, WA_;                   // Gram: the columns of A and W A
  int half_rows_ = 0;                       // Gram: the rows of A
  // Solves (sweep_ir.hpp): per solve (unit, result, weighted, rhs, dst), and one set of
  // buffers for the largest: e_j, the columns of A and W A, X and its factors.
  std::vector<std::array<int, 5>> solve_shapes_;
  std::vector<S> solve_unit_, solve_A_, solve_WA_, solve_X_;
  std::vector<int> solve_held_;          // the tip-space rows the solves keep (TipConstants::held)
  std::vector<Transform<S>> solve_rel_;  // per tip: its pose relative to its weld partner
  std::vector<SVec<S>> solve_own_;       // per tip: z in its own held rows
};

// With a workspace made for (program, robot), or one fitting it (contract above).
template <class S>
void execute(const SweepProgram& program, const RobotConstants<S>& robot, const S* in, S* out, Workspace<S>& workspace,
             Observer* observer = nullptr);

// A workspace made for this call.
template <class S>
void execute(const SweepProgram& program, const RobotConstants<S>& robot, const S* in, S* out,
             Observer* observer = nullptr);

extern template class Workspace<double>;
extern template void execute<double>(const SweepProgram&, const RobotConstants<double>&, const double*, double*,
                                     Workspace<double>&, Observer*);
extern template void execute<double>(const SweepProgram&, const RobotConstants<double>&, const double*, double*,
                                     Observer*);

// Convenience for S = double: the output as a (rows x cols) matrix.
Eigen::MatrixXd run(const SweepProgram& program, const RobotConstants<double>& robot, const std::vector<double>& in);

}  // namespace soa::exec
