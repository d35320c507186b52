#include "support/test_support.hpp"

namespace soa::test {

const std::vector<SharedRobot>& shared_robots() {
  static const std::vector<SharedRobot> robots = {
      {"double_pendulum.urdf", false, 2}, {"double_pendulum_simple.urdf", false, 2},
      {"ur5.urdf", false, 6},             {"kinova_j2s6s200.urdf", false, 6},
      {"panda.urdf", false, 9},           {"baxter.urdf", false, 19},
      {"solo12.urdf", true, 12},          {"hyq.urdf", true, 12},
      {"anymal_b.urdf", true, 12},        {"talos_reduced.urdf", true, 32},
      {"talos_full.urdf", true, 44},
  };
  return robots;
}

std::string shared_robot_path(const std::string& file) {
  return std::string(SOA_SHARED_DIR) + "/robots/" + file;
}

std::string source_path(const std::string& relative) {
  return std::string(SOA_SOURCE_DIR) + "/" + relative;
}

std::string soac_path() { return SOA_SOAC_PATH; }

}  // namespace soa::test
