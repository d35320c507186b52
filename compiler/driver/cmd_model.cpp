// soac model: how soac sees a robot (SOA numbering, joints, joint-space order, frames).
#include <fmt/format.h>

#include <memory>

#include "driver/driver.hpp"

namespace soa::driver {
namespace {

int run_model(const RobotOptions& o) {
  const LoadedRobot r = load_robot(o);
  const Robot& robot = r.robot;
  fmt::print("{}\nnq = {}, N = nv = {}, n = {} bodies\n\n", r.describe(), robot.nq, robot.nv, robot.size());
  fmt::print("{:>3}  {:<28} {:<28} {:<9} {:>6} {:>5} {:>5}  {}\n", "k", "link", "joint", "type", "parent", "q", "v",
             "children");
  for (int k = 0; k < robot.size(); ++k) {
    const Body& b = robot.bodies[k];
    std::string children;
    for (int c : b.children) children += fmt::format("{} ", c);
    fmt::print("{:>3}  {:<28} {:<28} {:<9} {:>6} {:>5} {:>5}  {}\n", k, b.name, b.joint_name, to_string(b.joint),
               b.parent < 0 ? std::string("world") : std::to_string(b.parent), b.q_offset, b.v_offset, children);
  }
  fmt::print("\nframes (tips may name any of them):\n");
  for (const Frame& f : robot.frames)
    if (f.name != robot.bodies[f.body].name) fmt::print("  {} on {}\n", f.name, robot.bodies[f.body].name);
  if (!robot.world_links.empty()) {
    std::string w;
    for (const auto& l : robot.world_links) w += (w.empty() ? "" : ", ") + l;
    fmt::print("welded to the world: {}\n", w);
  }
  return kOk;
}

}  // namespace

void add_model(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<RobotOptions>();
  CLI::App* cmd = app.add_subcommand("model", "print the robot as soac numbers it (bodies, joints, frames)");
  opts->add_to(*cmd, true);
  cmd->callback([opts, &run] { run = [opts] { return run_model(*opts); }; });
}

}  // namespace soa::driver
