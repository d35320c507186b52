#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "driver/driver.hpp"
#include "pipeline/kernels.hpp"
#include "model/kinematics.hpp"
#include "support/error.hpp"
#include "syntax/diagnostics.hpp"
#include "syntax/syntax.hpp"

namespace soa::driver {

void RobotOptions::add_to(CLI::App& cmd, bool robot_required, bool random) {
  auto* r = cmd.add_option("--robot", path, "URDF file of the robot");
  if (robot_required && !random) r->required();
  if (random)
    cmd.add_option("--random-tree", random_tree,
                   "BODIES[:SEED] instead of --robot: a random tree of that many bodies with mixed joint "
                   "types (seed 1 by default); with --floating on a free-flyer")
        ->excludes(r)
        ->check([](const std::string& text) {
          try {
            parse_random_tree(text);
            return std::string();
          } catch (const UserError& e) {
            const std::string what = e.what();  // CLI11 names the option and the value
            return what.substr(what.find("': ") + 3);
          }
        });
  // One of the two is needed where robot_required: load_robot() says so when neither is given.
  cmd.add_flag("--floating", floating, "add a free-flyer joint above the URDF root link");
  cmd.add_option("--tip", tips,
                 "tip frame (link name) for B, J and f0; default: the end-effectors (each hand "
                 "for its fingers, every other leaf body)")
      ->take_all();
  cmd.add_option("--weld", welds,
                 "FRAME[=OTHER][:DIRS]: weld this frame (link name) to the world, or to frame OTHER of the "
                 "robot (a rigid join), holding DIRS (a comma-separated subset of rx,ry,rz,x,y,z in the "
                 "frame's axes; all six by default). The held frames (--weld, then --contact, then the "
                 "frames welded to) are the tips, and the kernels constrained_forward_dynamics and "
                 "constraint_forces are generated too")
      ->take_all()
      ->excludes("--tip");
  cmd.add_option("--object", object,
                 "URDF of a free body the robot holds (e.g. a box with grasp frames): added with a free-flyer, "
                 "last in q and qd; weld its frames to the robot's with --weld FRAME=OTHER");
  cmd.add_option("--contact", contacts,
                 "FRAME: a point contact with the world at this frame's origin (its translations x,y,z held, "
                 "its rotations free); like --weld FRAME:x,y,z")
      ->take_all()
      ->excludes("--tip");
  cmd.add_option("--grasp", grasps,
                 "FRAME=OTHER:KT,KR,DT,DR: a compliant grasp, a spring and damper between two frames (003's "
                 "non-rigid grasp as a force law): stiffness KT N/m and KR N m/rad, damping DT N s/m and DR "
                 "N m s/rad on their relative pose and twist. Both frames become tips, and the kernels "
                 "compliant_forward_dynamics and grasp_forces are generated too")
      ->take_all()
      ->excludes("--tip");
  // Checked as the command line is read: a bad value is a usage error before any work.
  cmd.add_option("--gravity", gravity, "gravity x,y,z in m/s^2, world axes (default 0,0,-9.81)")
      ->check([](const std::string& text) {
        try {
          parse_gravity(text);
          return std::string();
        } catch (const UserError& e) {
          return std::string(e.what()).substr(std::string_view("--gravity ").size());  // CLI11 names the option
        }
      });
}

Eigen::Vector3d parse_gravity(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return UserError(
        fmt::format("--gravity '{}': {} (expected three finite numbers x,y,z, e.g. 0,0,-9.81)", text, why));
  };
  const auto parts = std::count(text.begin(), text.end(), ',') + 1;
  if (parts != 3) throw bad(fmt::format("{} value{}", parts, parts == 1 ? "" : "s"));
  Eigen::Vector3d g;
  std::size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t end = i < 2 ? text.find(',', at) : text.size();
    const char* first = text.data() + at;
    const char* last = text.data() + end;
    while (first < last && *first == ' ') ++first;
    while (last > first && last[-1] == ' ') --last;
    double x = 0.0;
    const auto [stop, error] = std::from_chars(first, last, x);
    if (first == last || error != std::errc() || stop != last)
      throw bad(fmt::format("'{}' is not a number", std::string(text.data() + at, text.data() + end)));
    if (!std::isfinite(x)) throw bad(fmt::format("'{}' is not finite", std::string(first, last)));
    g[i] = x;
    at = end + 1;
  }
  return g;
}

namespace {

// The frames --weld and --contact hold, then those a kernel file declares (model/tips.hpp),
// each declaration reported at its place in the file.
std::vector<int> hold_frames(Robot& robot, const RobotOptions& o, const std::vector<syntax::Hold>& declared) {
  return soa::hold_frames(robot, HoldOptions{o.welds, o.contacts, pipeline::holds_of(declared), o.grasps});
}

// The tips: the held frames when --weld, --contact or the kernel file names any, else
// --tip's (or the default ones).
std::vector<int> choose_tips(Robot& robot, const RobotOptions& o, const std::vector<syntax::Hold>& declared) {
  if (!declared.empty() && !o.tips.empty())
    syntax::fail(declared.front().where, "--tip names the tips, but this file holds frames, which are the tips");
  return o.constrained() || o.grasped() || !declared.empty() ? hold_frames(robot, o, declared)
                                                             : resolve_tips(robot, o.tips);
}

}  // namespace

std::pair<int, std::uint64_t> parse_random_tree(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return UserError(fmt::format("--random-tree '{}': {} (expected BODIES[:SEED], e.g. 100 or 100:7)", text, why));
  };
  const std::size_t colon = text.find(':');
  const std::string bodies_text = text.substr(0, colon);
  const std::string seed_text = colon == std::string::npos ? "1" : text.substr(colon + 1);
  int bodies = 0;
  std::uint64_t seed = 0;
  const auto [b_end, b_error] = std::from_chars(bodies_text.data(), bodies_text.data() + bodies_text.size(), bodies);
  if (bodies_text.empty() || b_error != std::errc() || b_end != bodies_text.data() + bodies_text.size())
    throw bad(fmt::format("'{}' is not a number of bodies", bodies_text));
  if (bodies < 1 || bodies > 10000) throw bad("the number of bodies must be 1 to 10000");
  const auto [s_end, s_error] = std::from_chars(seed_text.data(), seed_text.data() + seed_text.size(), seed);
  if (seed_text.empty() || s_error != std::errc() || s_end != seed_text.data() + seed_text.size())
    throw bad(fmt::format("'{}' is not a seed", seed_text));
  return {bodies, seed};
}

std::vector<syntax::Hold> declared_holds(const std::string& path) {
  return path.empty() ? std::vector<syntax::Hold>{} : syntax::load_module(path).holds;
}

LoadedRobot load_robot(const RobotOptions& o, const std::vector<syntax::Hold>& declared) {
  if (!o.random_tree.empty()) {
    const auto [bodies, seed] = parse_random_tree(o.random_tree);
    RandomTreeOptions options;
    options.bodies = bodies;
    options.floating = o.floating;
    LoadedRobot r{random_tree(seed, options), {}};
    if (!o.gravity.empty()) r.robot.gravity = parse_gravity(o.gravity);
    if (!o.object.empty()) r.robot = with_object(r.robot, load_urdf(o.object, LoadOptions{true}));
    r.tips = choose_tips(r.robot, o, declared);
    return r;
  }
  if (o.path.empty()) throw UserError("--robot FILE (or --random-tree BODIES) is required");
  LoadedRobot r{load_urdf(o.path, LoadOptions{o.floating}), {}};
  if (!o.gravity.empty()) r.robot.gravity = parse_gravity(o.gravity);
  if (!o.object.empty()) r.robot = with_object(r.robot, load_urdf(o.object, LoadOptions{true}));
  if (const std::string warning = mimic_warning(r.robot); !warning.empty())
    fmt::print(stderr, "soac: warning: {}\n", warning);
  r.tips = choose_tips(r.robot, o, declared);
  return r;
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

}  // namespace soa::driver
