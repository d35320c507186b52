// Small utilities of the robot model and the numbering invariant (robot.hpp).
#include "model/robot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "support/error.hpp"

namespace soa {

int nq_of(JointKind k) {
  switch (k) {
    case JointKind::Revolute: return 1;
    case JointKind::Prismatic: return 1;
    case JointKind::Ball: return 4;
    case JointKind::Free: return 7;
  }
  SOA_ASSERT(false, "bad JointKind");
  return 0;
}

int nv_of(JointKind k) {
  switch (k) {
    case JointKind::Revolute: return 1;
    case JointKind::Prismatic: return 1;
    case JointKind::Ball: return 3;
    case JointKind::Free: return 6;
  }
  SOA_ASSERT(false, "bad JointKind");
  return 0;
}

const char* to_string(JointKind k) {
  switch (k) {
    case JointKind::Revolute: return "revolute";
    case JointKind::Prismatic: return "prismatic";
    case JointKind::Ball: return "ball";
    case JointKind::Free: return "free";
  }
  SOA_ASSERT(false, "bad JointKind");
  return "";
}

namespace {
constexpr std::array<std::string_view, 6> kDirectionNames = {"rx", "ry", "rz", "x", "y", "z"};
}

std::string directions_to_string(Directions d) {
  std::string out;
  for (std::size_t r = 0; r < kDirectionNames.size(); ++r)
    if (d & (1u << r)) {
      if (!out.empty()) out += ',';
      out += kDirectionNames[r];
    }
  return out.empty() ? "none" : out;
}

std::optional<Directions> parse_directions(std::string_view text) {
  Directions d = 0;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view name = text.substr(0, comma);
    const auto it = std::find(kDirectionNames.begin(), kDirectionNames.end(), name);
    if (it == kDirectionNames.end()) return std::nullopt;
    const auto bit = static_cast<Directions>(1u << (it - kDirectionNames.begin()));
    if (d & bit) return std::nullopt;
    d |= bit;
    if (comma == std::string_view::npos) return d;
    text.remove_prefix(comma + 1);
  }
}

std::optional<int> Robot::find_frame(const std::string& name) const {
  for (int i = 0; i < static_cast<int>(frames.size()); ++i)
    if (frames[i].name == name) return i;
  return std::nullopt;
}

std::vector<int> Robot::leaf_bodies() const {
  std::vector<int> leaves;
  for (int k = 0; k < size(); ++k)
    if (bodies[k].children.empty()) leaves.push_back(k);
  return leaves;
}

std::vector<int> Robot::leaf_tips() const {
  std::vector<int> tips;
  for (int b : leaf_bodies()) tips.push_back(*find_frame(bodies[b].name));
  return tips;
}

std::vector<int> Robot::default_tips() const {
  const int n = size();
  // Bodies per subtree; children have smaller indices, so they are complete first.
  std::vector<int> count(n, 1);
  for (int k = 0; k < n; ++k)
    if (bodies[k].parent >= 0) count[bodies[k].parent] += count[k];
  auto is_hand = [&](int k) {
    const Body& b = bodies[k];
    if (b.parent < 0 || b.children.size() < 2) return false;  // a base is no end-effector
    return std::all_of(b.children.begin(), b.children.end(), [&](int c) { return count[c] <= kMaxFingerBodies; });
  };

  // Each leaf stands for its highest hand ancestor, or for itself.
  std::vector<int> tip_bodies;
  for (int leaf : leaf_bodies()) {
    int tip = leaf;
    for (int a = bodies[leaf].parent; a >= 0; a = bodies[a].parent)
      if (is_hand(a)) tip = a;
    if (std::find(tip_bodies.begin(), tip_bodies.end(), tip) == tip_bodies.end()) tip_bodies.push_back(tip);
  }
  std::sort(tip_bodies.begin(), tip_bodies.end());

  auto on_body = [&](const std::string& link, int k) {
    const std::optional<int> f = find_frame(link);
    return f && frames[*f].body == k;
  };
  std::vector<int> tips;
  for (int k : tip_bodies) {
    std::string link = bodies[k].name;
    if (!bodies[k].children.empty()) {  // a hand: the link its fingers hang from, if one
      const std::string& from = bodies[bodies[k].children.front()].parent_link;
      const bool common = std::all_of(bodies[k].children.begin(), bodies[k].children.end(),
                                      [&](int c) { return bodies[c].parent_link == from; });
      if (common && on_body(from, k)) link = from;
    }
    // Down the fixed joints while they do not branch (bounded: a model built in code might
    // weld frames in a cycle).
    for (std::size_t step = 0; step < frames.size(); ++step) {
      const Frame* next = nullptr;
      int welded = 0;
      for (const Frame& f : frames)
        if (f.body == k && f.welded_to == link) {
          next = &f;
          ++welded;
        }
      if (welded != 1) break;
      link = next->name;
    }
    tips.push_back(*find_frame(link));
  }
  return tips;
}

bool Robot::is_serial_chain() const {
  int roots = 0;
  for (const Body& b : bodies) {
    if (b.parent < 0) ++roots;
    if (b.children.size() > 1) return false;
  }
  return roots <= 1;
}

std::vector<std::string> Robot::joint_order() const {
  std::vector<int> order(bodies.size());
  for (int k = 0; k < size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](int a, int b) { return bodies[a].v_offset < bodies[b].v_offset; });
  std::vector<std::string> names;
  names.reserve(order.size());
  for (int k : order) names.push_back(bodies[k].joint_name);
  return names;
}

std::vector<int> Robot::roots() const {
  std::vector<int> r;
  for (int k = 0; k < size(); ++k)
    if (bodies[k].parent < 0) r.push_back(k);
  std::sort(r.begin(), r.end(), [&](int a, int b) { return bodies[a].v_offset < bodies[b].v_offset; });
  return r;
}

std::vector<int> subtree_bodies(const Robot& robot, int root) {
  SOA_ASSERT(root >= 0 && root < robot.size(), fmt::format("subtree of missing body {}", root));
  // Parents have larger indices, so one pass from `root` downwards settles every body.
  std::vector<bool> in(root + 1, false);
  in[root] = true;
  for (int k = root - 1; k >= 0; --k) {
    const int p = robot.bodies[k].parent;
    in[k] = p >= 0 && p <= root && in[p];
  }
  std::vector<int> bodies;
  for (int k = 0; k <= root; ++k)
    if (in[k]) bodies.push_back(k);
  return bodies;
}

Robot subtree(const Robot& robot, int root) {
  const std::vector<int> bodies = subtree_bodies(robot, root);
  std::vector<int> index(robot.size(), -1);  // new index, or -1 outside the subtree
  Robot sub;
  sub.source = fmt::format("{}, subtree of '{}'", robot.source, robot.bodies[root].name);
  sub.name = robot.name;
  sub.gravity = robot.gravity;
  sub.world_links = robot.world_links;
  for (int k : bodies) {
    index[k] = sub.size();
    sub.bodies.push_back(robot.bodies[k]);
  }
  for (Body& b : sub.bodies) b.parent = b.parent < 0 ? -1 : index[b.parent];  // the root's: -1
  for (const Frame& f : robot.frames) {
    if (index[f.body] < 0) continue;
    Frame g = f;
    g.body = index[f.body];
    sub.frames.push_back(std::move(g));
  }
  finalize(sub);
  return sub;
}

Robot with_object(const Robot& robot, const Robot& object) {
  if (object.bodies.empty() || object.bodies.back().joint != JointKind::Free)
    throw UserError(fmt::format("{}: a held object needs a free-flyer (load it floating)", object.source));
  for (const Frame& f : object.frames)
    if (robot.find_frame(f.name) ||
        std::find(robot.world_links.begin(), robot.world_links.end(), f.name) != robot.world_links.end())
      throw UserError(fmt::format("{}: object link '{}' has the name of a link of {}: rename one", object.source,
                                  f.name, robot.source));
  // The object's bodies first: finalize() walks the roots from the highest index down, so
  // the robot's come first in joint-space order and the object's last.
  const int shift = object.size();
  Robot r = robot;
  r.source = fmt::format("{} holding {}", robot.source, object.source);
  r.bodies = object.bodies;
  for (Body b : robot.bodies) {
    if (b.parent >= 0) b.parent += shift;
    r.bodies.push_back(std::move(b));
  }
  r.frames = object.frames;
  for (Frame f : robot.frames) {
    f.body += shift;
    if (f.held_to >= 0) f.held_to += static_cast<int>(object.frames.size());
    r.frames.push_back(std::move(f));
  }
  r.mimic_joints.insert(r.mimic_joints.end(), object.mimic_joints.begin(), object.mimic_joints.end());
  finalize(r);
  return r;
}

void finalize(Robot& robot) {
  const int n = robot.size();
  for (int k = 0; k < n; ++k) {
    const int p = robot.bodies[k].parent;
    SOA_ASSERT(
        p == -1 || (p > k && p < n),
        fmt::format("body {} ('{}') has parent {}: the numbering needs parent > child", k, robot.bodies[k].name, p));
  }

  // Children (and roots) in decreasing index order: the loaders number bodies
  // k = n-1-preorder, so this is the order in which the depth-first walk met them (URDF file
  // order), and walking it reproduces that preorder for the joint-space offsets.
  std::vector<int> roots;
  for (Body& b : robot.bodies) b.children.clear();
  for (int k = n - 1; k >= 0; --k) {
    const int p = robot.bodies[k].parent;
    if (p < 0)
      roots.push_back(k);
    else
      robot.bodies[p].children.push_back(k);
  }

  int q = 0;
  int v = 0;
  std::vector<int> stack(roots.rbegin(), roots.rend());
  while (!stack.empty()) {
    const int k = stack.back();
    stack.pop_back();
    Body& b = robot.bodies[k];
    b.q_offset = q;
    b.v_offset = v;
    q += b.nq();
    v += b.nv();
    stack.insert(stack.end(), b.children.rbegin(), b.children.rend());
  }
  robot.nq = q;
  robot.nv = v;

  for (int k = 0; k < n; ++k) {
    const std::string& name = robot.bodies[k].name;
    const std::optional<int> f = robot.find_frame(name);
    if (!f) {
      robot.frames.push_back(Frame{name, k, Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero(), ""});
    } else {
      SOA_ASSERT(robot.frames[*f].body == k, fmt::format("frame '{}' is named after body {} but attached to body {}",
                                                         name, k, robot.frames[*f].body));
    }
  }
  for (const Frame& f : robot.frames)
    SOA_ASSERT(f.body >= 0 && f.body < n, fmt::format("frame '{}' is attached to missing body {}", f.name, f.body));
}

}  // namespace soa
