// Helpers shared by the unit tests: where the shared robots live, and which of them are
// meant to fly (examples/robots/README.md, column "base").
#pragma once

#include <string>
#include <vector>

namespace soa::test {

struct SharedRobot {
  std::string file;  // file name in examples/robots, or an absolute path (SOA_EXTRA_ROBOT_DIRS)
  bool free_flyer;   // examples/robots/README.md says "free-flyer"
  int dof;           // revolute + continuous + prismatic joints; -1 when not known
};

const std::vector<SharedRobot>& shared_robots();
std::string shared_robot_path(const std::string& file);
std::string source_path(const std::string& relative);  // inside this repository
std::string soac_path();

}  // namespace soa::test
