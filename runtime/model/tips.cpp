#include "model/tips.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <string_view>

#include "support/error.hpp"

namespace soa {

std::string LoadedRobot::describe() const {
  std::string tip_names;
  for (int t : tips) {
    const Frame& f = robot.frames[static_cast<std::size_t>(t)];
    tip_names += (tip_names.empty() ? "" : ", ") + f.name;
    if (f.held && f.held_to >= 0)
      tip_names += fmt::format(" (welded to {}, holding {})", robot.frames[static_cast<std::size_t>(f.held_to)].name,
                               directions_to_string(f.held));
    else if (f.held)
      tip_names += fmt::format(" (holding {})", directions_to_string(f.held));
    if (f.spring.to >= 0)
      tip_names += fmt::format(" (grasping {}: stiffness {} N/m, {} N m/rad; damping {} N s/m, {} N m s/rad)",
                               robot.frames[static_cast<std::size_t>(f.spring.to)].name, f.spring.kt, f.spring.kr,
                               f.spring.dt, f.spring.dr);
  }
  const bool floating = !robot.bodies.empty() && robot.bodies.back().joint == JointKind::Free;
  return fmt::format("{} ({}, {} bodies, N = {}, tips: {})", robot.source, floating ? "free-flyer" : "fixed base",
                     robot.size(), robot.nv, tip_names.empty() ? "none" : tip_names);
}

std::vector<int> resolve_tips(const Robot& robot, const std::vector<std::string>& names, const std::string& option,
                              const std::string& floating) {
  if (names.empty()) return robot.default_tips();
  std::vector<int> tips;
  for (const auto& name : names) {
    if (auto f = robot.find_frame(name)) {
      if (std::find(tips.begin(), tips.end(), *f) != tips.end())
        throw UserError(fmt::format("{}: {} '{}': given twice", robot.source, option, name));
      tips.push_back(*f);
      continue;
    }
    for (const auto& w : robot.world_links)
      if (w == name)
        throw UserError(
            fmt::format("{}: {} '{}': that link is welded to the world and never "
                        "moves; name a link behind a joint (or use {})",
                        robot.source, option, name, floating));
    throw UserError(fmt::format("{}: {} '{}': no link or frame of that name", robot.source, option, name));
  }
  return tips;
}

LoadedRobot random_robot(std::uint64_t seed, int arms, const RandomTreeOptions& options) {
  if (arms <= 0) {
    LoadedRobot r{random_tree(seed, options), {}};
    r.tips = r.robot.leaf_tips();
    return r;
  }
  LoadedRobot r{random_arms(seed, arms, options), {}};
  for (int root : r.robot.roots())
    r.tips.push_back(*r.robot.find_frame(r.robot.bodies[subtree_bodies(r.robot, root).front()].name));
  return r;
}

std::vector<int> hold_frames(Robot& robot, const HoldOptions& o) {
  std::vector<int> tips;
  // `fail(message)` reports at the declaration: the option or the file's place. `option`
  // (non-empty for an option) reports an unknown frame as --tip would.
  const auto find = [&](const auto& fail, const std::string& option, const std::string& name) {
    const std::optional<int> f = robot.find_frame(name);
    if (!f) {
      if (!option.empty()) resolve_tips(robot, {name}, option, o.floating_option);  // its message
      fail(fmt::format("{} has no link or frame of that name", robot.source));
    }
    return f;
  };
  const auto hold = [&](const auto& fail, const std::string& option, const std::string& name, const std::string& to,
                        Directions held) {
    const std::optional<int> f = find(fail, option, name);
    if (!f) return;
    if (std::find(tips.begin(), tips.end(), *f) != tips.end())
      fail(fmt::format("frame '{}' is held twice (one weld or contact per frame)", name));
    Frame& frame = robot.frames[static_cast<std::size_t>(*f)];
    frame.held = held;
    frame.held_to = -1;
    tips.push_back(*f);
    if (to.empty()) return;
    const std::optional<int> g = robot.find_frame(to);
    if (!g) {
      fail(fmt::format("no link or frame '{}' to weld '{}' to", to, name));
      return;
    }
    if (*g == *f) fail(fmt::format("frame '{}' cannot be welded to itself", name));
    const Frame& other = robot.frames[static_cast<std::size_t>(*g)];
    if (other.body == frame.body)
      fail(fmt::format("frames '{}' and '{}' are on one body ('{}'), rigidly joined already: the weld is redundant",
                       name, to, robot.bodies[static_cast<std::size_t>(frame.body)].name));
    if (other.held && other.held_to == *f)
      fail(fmt::format("frame '{}' is welded to '{}' already: the weld is redundant", to, name));
    frame.held_to = *g;
  };
  for (const std::string& w : o.welds) {
    const auto fail = [&](const std::string& why) -> void {
      throw UserError(fmt::format("{}: {} '{}': {}", robot.source, o.weld_option, w, why));
    };
    const std::size_t colon = w.find(':');
    Directions held = kAllDirections;
    if (colon != std::string::npos) {
      const std::optional<Directions> d = parse_directions(std::string_view(w).substr(colon + 1));
      if (!d)
        fail(
            fmt::format("'{}' is not a set of directions (a comma-separated subset of rx,ry,rz,x,y,z, each once, "
                        "e.g. x,y,z)",
                        w.substr(colon + 1)));
      held = *d;
    }
    const std::string frames = w.substr(0, colon);
    const std::size_t equals = frames.find('=');
    hold(fail, o.weld_option, frames.substr(0, equals), equals == std::string::npos ? "" : frames.substr(equals + 1),
         held);
  }
  for (const std::string& c : o.contacts) {
    const auto fail = [&](const std::string& why) -> void {
      throw UserError(fmt::format("{}: {} '{}': {}", robot.source, o.contact_option, c, why));
    };
    hold(fail, o.contact_option, c, "", kTranslations);
  }
  for (const Hold& h : o.declared)
    if (!h.spring) hold(h.fail, "", h.frame, h.to, h.held);
  const std::size_t held = tips.size();
  for (std::size_t i = 0; i < held; ++i) {
    const int to = robot.frames[static_cast<std::size_t>(tips[i])].held_to;
    if (to >= 0 && std::find(tips.begin(), tips.end(), to) == tips.end()) tips.push_back(to);
  }
  // Compliant grasps: a force law between two frames, no constraint rows (Frame::spring).
  std::vector<int> grasped;
  const auto grasp = [&](const auto& fail, const std::string& option, const std::string& name, const std::string& to,
                         Spring spring) {
    const std::optional<int> f = find(fail, option, name);
    if (!f) return;
    const std::optional<int> g = robot.find_frame(to);
    if (!g) {
      fail(fmt::format("no link or frame '{}' to grasp", to));
      return;
    }
    Frame& frame = robot.frames[static_cast<std::size_t>(*f)];
    const Frame& other = robot.frames[static_cast<std::size_t>(*g)];
    if (*g == *f) fail(fmt::format("frame '{}' cannot grasp itself", name));
    if (other.body == frame.body)
      fail(fmt::format("frames '{}' and '{}' are on one body ('{}'): a spring between them never stretches", name, to,
                       robot.bodies[static_cast<std::size_t>(frame.body)].name));
    if (frame.held) fail(fmt::format("frame '{}' is held by a weld or contact already", name));
    if (std::find(grasped.begin(), grasped.end(), *f) != grasped.end())
      fail(fmt::format("frame '{}' is grasped twice (one grasp per frame)", name));
    if (other.spring.to == *f) fail(fmt::format("frame '{}' grasps '{}' already", to, name));
    for (const double c : {spring.kt, spring.kr, spring.dt, spring.dr})
      if (!std::isfinite(c) || c < 0)
        fail("stiffness and damping are finite and not negative (KT N/m, KR N m/rad, DT N s/m, DR N m s/rad)");
    if (spring.kt == 0 && spring.kr == 0 && spring.dt == 0 && spring.dr == 0)
      fail("a grasp with no stiffness and no damping holds nothing");
    spring.to = *g;
    frame.spring = spring;
    grasped.push_back(*f);
  };
  for (const std::string& w : o.grasps) {
    const auto fail = [&](const std::string& why) -> void {
      throw UserError(fmt::format("{}: {} '{}': {}", robot.source, o.grasp_option, w, why));
    };
    const std::size_t colon = w.find(':'), equals = w.find('=');
    if (equals == std::string::npos || colon == std::string::npos || equals > colon)
      fail("expected FRAME=OTHER:KT,KR,DT,DR (stiffness N/m and N m/rad, damping N s/m and N m s/rad)");
    std::vector<double> c;
    for (std::string_view rest = std::string_view(w).substr(colon + 1);;) {
      const std::size_t comma = rest.find(',');
      const std::string item(rest.substr(0, comma));
      std::size_t used = 0;
      double x = 0;
      try {
        x = std::stod(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (item.empty() || used != item.size()) fail(fmt::format("'{}' is not a number", item));
      c.push_back(x);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    if (c.size() != 4) fail(fmt::format("expected 4 numbers KT,KR,DT,DR after ':', got {}", c.size()));
    grasp(fail, o.grasp_option, w.substr(0, equals), w.substr(equals + 1, colon - equals - 1),
          Spring{-1, c[0], c[1], c[2], c[3]});
  }
  for (const Hold& h : o.declared)
    if (h.spring) grasp(h.fail, "", h.frame, h.to, *h.spring);
  for (const int f : grasped)
    for (const int t : {f, robot.frames[static_cast<std::size_t>(f)].spring.to})
      if (std::find(tips.begin(), tips.end(), t) == tips.end()) tips.push_back(t);
  return tips;
}

std::string model_text(const LoadedRobot& r) {
  const Robot& robot = r.robot;
  std::string out =
      fmt::format("{}\nnq = {}, N = nv = {}, n = {} bodies\n\n", r.describe(), robot.nq, robot.nv, robot.size());
  out += fmt::format("{:>3}  {:<28} {:<28} {:<9} {:>6} {:>5} {:>5}  {}\n", "k", "link", "joint", "type", "parent", "q",
                     "v", "children");
  for (int k = 0; k < robot.size(); ++k) {
    const Body& b = robot.bodies[k];
    std::string children;
    for (int c : b.children) children += fmt::format("{} ", c);
    out +=
        fmt::format("{:>3}  {:<28} {:<28} {:<9} {:>6} {:>5} {:>5}  {}\n", k, b.name, b.joint_name, to_string(b.joint),
                    b.parent < 0 ? std::string("world") : std::to_string(b.parent), b.q_offset, b.v_offset, children);
  }
  // Arm i of the operator language (psi1, J2, ...) is the i-th root subtree in joint-space
  // order (compiler/interp/interpreter.hpp).
  const std::vector<int> roots = robot.roots();
  if (roots.size() > 1) {
    out += "\narms (root subtrees in joint-space order; psi1, J2, ... name them):\n";
    for (std::size_t i = 0; i < roots.size(); ++i) {
      const std::vector<int> bodies = subtree_bodies(robot, roots[i]);
      int nv = 0;
      for (int k : bodies) nv += robot.bodies[k].nv();
      std::string tips;
      for (int t : r.tips)
        if (std::binary_search(bodies.begin(), bodies.end(), robot.frames[t].body))
          tips += (tips.empty() ? "" : ", ") + robot.frames[t].name;
      out += fmt::format("  {}  {} ({} bod{}, N{} = {}, tips: {})\n", i + 1, robot.bodies[roots[i]].name, bodies.size(),
                         bodies.size() == 1 ? "y" : "ies", i + 1, nv, tips.empty() ? "none" : tips);
    }
  }
  out += "\nframes (tips may name any of them):\n";
  for (const Frame& f : robot.frames)
    if (f.name != robot.bodies[f.body].name) out += fmt::format("  {} on {}\n", f.name, robot.bodies[f.body].name);
  if (!robot.world_links.empty()) {
    std::string w;
    for (const auto& l : robot.world_links) w += (w.empty() ? "" : ", ") + l;
    out += fmt::format("welded to the world: {}\n", w);
  }
  return out;
}

std::string mimic_warning(const Robot& robot) {
  if (robot.mimic_joints.empty()) return "";
  std::string names;
  for (const MimicJoint& m : robot.mimic_joints)
    names += fmt::format("{}{} (mimics {})", names.empty() ? "" : ", ", m.joint, m.mimicked);
  return fmt::format("{}: mimic joints treated as independent: {}", robot.source, names);
}

}  // namespace soa
