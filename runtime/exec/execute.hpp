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
#pragma once

#include <Eigen/Dense>

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
  int rows = 0, cols = 1;    // output (cols = 1 for a vector)
  int output_size() const { return rows * cols; }
};

int space_size(Space s, int nq, int nv, int n, int m);
Layout layout(const SweepProgram& program, int nq, int nv, int n, int m);
template <class S> Layout layout(const SweepProgram& program, const RobotConstants<S>& robot) {
  return layout(program, robot.nq, robot.nv, robot.n(), robot.m());
}

template <class S>
void execute(const SweepProgram& program, const RobotConstants<S>& robot, const S* in, S* out,
             Observer* observer = nullptr);

extern template void execute<double>(const SweepProgram&, const RobotConstants<double>&,
                                     const double*, double*, Observer*);

// Convenience for S = double: the output as a (rows x cols) matrix.
Eigen::MatrixXd run(const SweepProgram& program, const RobotConstants<double>& robot,
                    const std::vector<double>& in);

}  // namespace soa::exec
