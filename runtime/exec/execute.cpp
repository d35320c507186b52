#include "exec/execute_impl.hpp"

namespace soa::exec {

int space_size(Space s, int nq, int nv, int n, int m) {
  switch (s) {
    case Space::Config: return nq;
    case Space::Joint: return nv;
    case Space::Spatial: return 6 * n;
    case Space::Tip: return 6 * m;
  }
  return 0;
}

Layout layout(const SweepProgram& program, int nq, int nv, int n, int m) {
  Layout l;
  for (int v : program.inputs) {
    const int size = space_size(program.vars[v].space, nq, nv, n, m);
    l.inputs.push_back({l.input_size, size});
    l.input_size += size;
  }
  l.rows = space_size(program.output.rows, nq, nv, n, m);
  l.cols = program.output.cols ? space_size(*program.output.cols, nq, nv, n, m) : 1;
  return l;
}

template class Workspace<double>;
template void execute<double>(const SweepProgram&, const RobotConstants<double>&, const double*, double*,
                              Workspace<double>&, Observer*);
template void execute<double>(const SweepProgram&, const RobotConstants<double>&, const double*, double*, Observer*);

Eigen::MatrixXd run(const SweepProgram& program, const RobotConstants<double>& robot, const std::vector<double>& in) {
  const Layout l = layout(program, robot);
  SOA_ASSERT(static_cast<int>(in.size()) == l.input_size, "run: input has the wrong size");
  Eigen::MatrixXd out(l.rows, l.cols);
  execute(program, robot, in.data(), out.data());
  return out;
}

}  // namespace soa::exec
