#include <fmt/format.h>
#include <unistd.h>

#include "driver/driver.hpp"
#include "model/kinematics.hpp"
#include "support/error.hpp"

namespace soa::driver {

void RobotOptions::add_to(CLI::App& cmd, bool robot_required) {
  auto* r = cmd.add_option("--robot", path, "URDF file of the robot");
  if (robot_required) r->required();
  cmd.add_flag("--floating", floating, "add a free-flyer joint above the URDF root link");
  cmd.add_option("--tip", tips, "tip frame (link name) for B, J and f0; default: every leaf body")
      ->take_all();
}

std::vector<int> resolve_tips(const Robot& robot, const std::vector<std::string>& names) {
  if (names.empty()) return robot.default_tips();
  std::vector<int> tips;
  for (const auto& name : names) {
    if (auto f = robot.find_frame(name)) {
      tips.push_back(*f);
      continue;
    }
    for (const auto& w : robot.world_links)
      if (w == name)
        throw UserError(fmt::format("{}: --tip '{}': that link is welded to the world and never "
                                    "moves; name a link behind a joint (or use --floating)",
                                    robot.source, name));
    throw UserError(fmt::format("{}: --tip '{}': no link or frame of that name", robot.source, name));
  }
  return tips;
}

LoadedRobot random_robot(std::uint64_t seed, int arms, const RandomTreeOptions& options) {
  if (arms <= 0) {
    LoadedRobot r{random_tree(seed, options), {}};
    r.tips = resolve_tips(r.robot, {});
    return r;
  }
  LoadedRobot r{random_arms(seed, arms, options), {}};
  for (int root : r.robot.roots())
    r.tips.push_back(
        *r.robot.find_frame(r.robot.bodies[subtree_bodies(r.robot, root).front()].name));
  return r;
}

LoadedRobot load_robot(const RobotOptions& o) {
  LoadedRobot r{load_urdf(o.path, LoadOptions{o.floating}), {}};
  r.tips = resolve_tips(r.robot, o.tips);
  return r;
}

std::string LoadedRobot::describe() const {
  std::string tip_names;
  for (int t : tips) tip_names += (tip_names.empty() ? "" : ", ") + robot.frames[t].name;
  const bool floating = !robot.bodies.empty() && robot.bodies.back().joint == JointKind::Free;
  return fmt::format("{} ({}, {} bodies, N = {}, tips: {})", robot.source,
                     floating ? "free-flyer" : "fixed base", robot.size(), robot.nv,
                     tip_names.empty() ? "none" : tip_names);
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

}  // namespace soa::driver
