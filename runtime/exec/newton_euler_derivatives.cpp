#include "exec/newton_euler_derivatives.hpp"

namespace soa::exec {

void newton_euler_derivatives(const RobotConstants<double>& r, const double* q, const double* qd, const double* qdd,
                              double* out) {
  newton_euler_derivatives(r, q, qd, qdd, out, [](int, const char*) {});
}

}  // namespace soa::exec
