// soac model: how soac sees a robot (SOA numbering, joints, joint-space order, frames).
#include <fmt/format.h>

#include <algorithm>
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
  // Arm i of the operator language (psi1, J2, ...) is the i-th root subtree in joint-space
  // order (compiler/interp/interpreter.hpp).
  const std::vector<int> roots = robot.roots();
  if (roots.size() > 1) {
    fmt::print("\narms (root subtrees in joint-space order; psi1, J2, ... name them):\n");
    for (std::size_t i = 0; i < roots.size(); ++i) {
      const std::vector<int> bodies = subtree_bodies(robot, roots[i]);
      int nv = 0;
      for (int k : bodies) nv += robot.bodies[k].nv();
      std::string tips;
      for (int t : r.tips)
        if (std::binary_search(bodies.begin(), bodies.end(), robot.frames[t].body))
          tips += (tips.empty() ? "" : ", ") + robot.frames[t].name;
      fmt::print("  {}  {} ({} bod{}, N{} = {}, tips: {})\n", i + 1, robot.bodies[roots[i]].name, bodies.size(),
                 bodies.size() == 1 ? "y" : "ies", i + 1, nv, tips.empty() ? "none" : tips);
    }
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
  opts->add_to(*cmd, true, true);
  cmd->callback([opts, &run] { run = [opts] { return run_model(*opts); }; });
}

}  // namespace soa::driver
