// State files for soac eval: one line per vector, `name: v1 v2 ...` (or `name = ...`),
// names q, qd, qdd, f0; `#` starts a comment. Missing q is the neutral configuration,
// missing qd, qdd, f0 are zero.
#pragma once

#include <string>

#include "model/kinematics.hpp"

namespace soa::driver {

State read_state_file(const std::string& path, const Robot& robot, int tips);

}  // namespace soa::driver
