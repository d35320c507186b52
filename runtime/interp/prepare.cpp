#include "interp/interpreter.hpp"

namespace soa::interp {

int Evaluation::rows(ir::Dim d) const {
  switch (d) {
    case ir::Dim::Joint: return N;
    case ir::Dim::Spatial: return 6 * n;
    case ir::Dim::Tip: return 6 * m;
    case ir::Dim::One: return 1;
  }
  return 0;
}

Evaluation prepare(const Robot& robot, const State& state, std::vector<int> tips) {
  Evaluation ev;
  ev.robot = &robot;
  ev.state = state;
  ev.tips = std::move(tips);
  ev.kin = compute_kinematics(robot, ev.state, ev.tips);
  ev.art = compute_articulated(robot, ev.kin);
  ev.N = robot.nv;
  ev.n = robot.size();
  ev.m = static_cast<int>(ev.tips.size());
  return ev;
}

}  // namespace soa::interp
