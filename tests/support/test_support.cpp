#include "support/test_support.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace soa::test {

namespace {

// URDF files in the folders of the CMake option SOA_EXTRA_ROBOT_DIRS (';'-separated),
// checked like the shipped robots with a fixed base; their joint counts are not known here.
std::vector<SharedRobot> extra_robots() {
  std::vector<SharedRobot> extra;
  std::stringstream dirs(SOA_EXTRA_ROBOT_DIRS);
  std::string dir;
  while (std::getline(dirs, dir, ';')) {
    if (dir.empty() || !std::filesystem::is_directory(dir)) continue;
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".urdf") files.push_back(std::filesystem::absolute(entry.path()).string());
    std::sort(files.begin(), files.end());
    for (auto& f : files) extra.push_back({std::move(f), false, -1});
  }
  return extra;
}

}  // namespace

const std::vector<SharedRobot>& shared_robots() {
  static const std::vector<SharedRobot> robots = [] {
    std::vector<SharedRobot> r = {
        {"double_pendulum.urdf", false, 2},
        {"double_pendulum_simple.urdf", false, 2},
        {"fourbar.urdf", false, 4},
        {"ur5.urdf", false, 6},
        {"kinova_j2s6s200.urdf", false, 6},
        {"panda.urdf", false, 9},
        {"baxter.urdf", false, 19},
        {"solo12.urdf", true, 12},
        {"hyq.urdf", true, 12},
        {"anymal_b.urdf", true, 12},
        {"talos_reduced.urdf", true, 32},
        {"talos_full.urdf", true, 44},
    };
    for (auto& e : extra_robots()) r.push_back(std::move(e));
    return r;
  }();
  return robots;
}

std::string shared_robot_path(const std::string& file) {
  if (std::filesystem::path(file).is_absolute()) return file;
  return std::string(SOA_ROBOTS_DIR) + "/" + file;
}

std::string source_path(const std::string& relative) { return std::string(SOA_SOURCE_DIR) + "/" + relative; }

std::string soac_path() { return SOA_SOAC_PATH; }

}  // namespace soa::test
