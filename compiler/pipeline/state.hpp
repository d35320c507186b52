// A state given from outside (soac eval --state FILE, soac.evaluate(state=...)) made whole
// for evaluation, one implementation for both.
//
// Contract: qdd and T are tied by the equations of motion, T = calM qdd + C + J* f0 (001
// eq. 23). Given T without qdd, qdd follows from it (evaluated densely, the ground truth);
// T, when given, is used as given, not as recomputed from qdd. Without T the evaluation is
// interp::prepare's.
#pragma once

#include <optional>
#include <vector>

#include "algebra/definitions.hpp"
#include "interp/interpreter.hpp"
#include "model/kinematics.hpp"
#include "model/robot.hpp"

namespace soa::pipeline {

interp::Evaluation prepare_state(const Robot& robot, State state, const std::vector<int>& tips,
                                 const ir::Definitions& definitions, const std::optional<VecX>& T, bool qdd_given);

}  // namespace soa::pipeline
