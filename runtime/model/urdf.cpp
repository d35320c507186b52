// URDF loader: reads links and joints with tinyxml2, merges fixed joints away and numbers
// the movable bodies in the SOA order (robot.hpp).
//
// Deliberately ignored: <limit>, <dynamics>, <safety_controller>, <calibration>, <visual>,
// <collision>, <transmission>, <gazebo>, and <mimic>'s coupling: a mimic joint stays an
// independent degree of freedom, as in MuJoCo and in Pinocchio's default URDF parser, so that
// the model is a plain tree (a coupling constraint would change the operators' shapes). The
// movable mimic joints are listed in Robot::mimic_joints so that the commands can say so.
#include <tinyxml2.h>

#include <fmt/format.h>

#include <Eigen/Eigenvalues>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "model/kinematics.hpp"
#include "model/robot.hpp"
#include "support/error.hpp"

namespace soa {
namespace {

using tinyxml2::XMLElement;

struct Pose {
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  Eigen::Vector3d p = Eigen::Vector3d::Zero();
};

Pose compose(const Pose& a, const Pose& b) { return Pose{a.R * b.R, a.R * b.p + a.p}; }

// URDF rpy are fixed-axis roll, pitch, yaw: R = Rz(yaw) Ry(pitch) Rx(roll).
Eigen::Matrix3d rpy_matrix(const Eigen::Vector3d& rpy) {
  using Eigen::AngleAxisd;
  return (AngleAxisd(rpy.z(), Eigen::Vector3d::UnitZ()) * AngleAxisd(rpy.y(), Eigen::Vector3d::UnitY()) *
          AngleAxisd(rpy.x(), Eigen::Vector3d::UnitX()))
      .toRotationMatrix();
}

struct Link {
  std::string name;
  int line = 0;
  double mass = 0.0;
  Eigen::Vector3d com = Eigen::Vector3d::Zero();      // link frame
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Zero();  // about the com, link frame axes
  int parent_joint = -1;
  std::vector<int> child_joints;  // file order
};

enum class UrdfJointType { Revolute, Prismatic, Fixed };

struct Joint {
  std::string name;
  int line = 0;
  UrdfJointType type = UrdfJointType::Fixed;
  int parent = -1;
  int child = -1;
  Pose origin;
  Eigen::Vector3d axis = Eigen::Vector3d::UnitX();
  std::string mimicked;  // <mimic joint=...>, empty without one
};

class Parser {
public:
  explicit Parser(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(int line, const std::string& message) const {
    if (line > 0) throw UserError(fmt::format("{}:{}: {}", source_, line, message));
    throw UserError(fmt::format("{}: {}", source_, message));
  }

  // Exactly `count` finite numbers separated by white space.
  std::vector<double> numbers(const XMLElement* e, const char* attribute, std::size_t count,
                              const std::string& what) const {
    const char* text = e->Attribute(attribute);
    if (!text) fail(e->GetLineNum(), fmt::format("{}: missing attribute '{}'", what, attribute));
    std::vector<double> values;
    std::istringstream tokens{std::string(text)};
    std::string token;
    while (tokens >> token) {
      const char* first = token.data();
      const char* last = token.data() + token.size();
      if (first != last && *first == '+') ++first;  // from_chars rejects an explicit '+'
      double value = 0.0;
      const auto [end, ec] = std::from_chars(first, last, value);
      if (ec != std::errc() || end != last)
        fail(e->GetLineNum(), fmt::format("{}: '{}' is not a number in {}=\"{}\"", what, token, attribute, text));
      if (!std::isfinite(value))
        fail(e->GetLineNum(), fmt::format("{}: non-finite number '{}' in {}=\"{}\"", what, token, attribute, text));
      values.push_back(value);
    }
    if (values.size() != count)
      fail(e->GetLineNum(),
           fmt::format("{}: {}=\"{}\" needs {} number{}", what, attribute, text, count, count == 1 ? "" : "s"));
    return values;
  }

  double number(const XMLElement* e, const char* attribute, const std::string& what) const {
    return numbers(e, attribute, 1, what)[0];
  }

  Eigen::Vector3d vec3(const XMLElement* e, const char* attribute, const Eigen::Vector3d& fallback,
                       const std::string& what) const {
    if (!e->Attribute(attribute)) return fallback;
    const std::vector<double> v = numbers(e, attribute, 3, what);
    return Eigen::Vector3d(v[0], v[1], v[2]);
  }

  // The <origin> child of `e` (identity when absent).
  Pose origin(const XMLElement* e, const std::string& what) const {
    Pose pose;
    if (const XMLElement* o = e->FirstChildElement("origin")) {
      pose.p = vec3(o, "xyz", Eigen::Vector3d::Zero(), what);
      pose.R = rpy_matrix(vec3(o, "rpy", Eigen::Vector3d::Zero(), what));
    }
    return pose;
  }

  std::string name_of(const XMLElement* e, const char* kind) const {
    const char* name = e->Attribute("name");
    if (!name || !*name) fail(e->GetLineNum(), fmt::format("<{}> without a name", kind));
    return name;
  }

  Link link(const XMLElement* e) const {
    Link link;
    link.name = name_of(e, "link");
    link.line = e->GetLineNum();
    const XMLElement* inertial = e->FirstChildElement("inertial");
    if (!inertial) return link;  // no <inertial>: a massless frame
    const std::string what = fmt::format("link '{}'", link.name);
    const XMLElement* mass = inertial->FirstChildElement("mass");
    if (!mass) fail(inertial->GetLineNum(), what + ": <inertial> without <mass>");
    link.mass = number(mass, "value", what);
    if (link.mass < 0.0) fail(mass->GetLineNum(), fmt::format("{}: negative mass {}", what, link.mass));
    const XMLElement* in = inertial->FirstChildElement("inertia");
    if (!in) fail(inertial->GetLineNum(), what + ": <inertial> without <inertia>");
    const double ixx = number(in, "ixx", what), ixy = number(in, "ixy", what), ixz = number(in, "ixz", what),
                 iyy = number(in, "iyy", what), iyz = number(in, "iyz", what), izz = number(in, "izz", what);
    Eigen::Matrix3d I;
    I << ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz;
    // Only positive semi-definiteness is required: the shared robots carry singular dummy
    // tensors (hyq, anymal_b) and triangle-inequality violations (talos_reduced) that other
    // tools load, and a singular movable subtree is caught later by check_articulated.
    const Eigen::Vector3d eig = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(I).eigenvalues();
    const double scale = eig.cwiseAbs().maxCoeff();
    if (eig.minCoeff() < -1e-12 * scale)
      fail(in->GetLineNum(), fmt::format("{}: inertia is not positive semi-definite (eigenvalues {:.6g}, {:.6g}, "
                                         "{:.6g})",
                                         what, eig[0], eig[1], eig[2]));
    const Pose frame = origin(inertial, what);
    link.com = frame.p;
    link.inertia = frame.R * I * frame.R.transpose();
    return link;
  }

  Joint joint(const XMLElement* e, const std::map<std::string, int>& link_index) const {
    Joint joint;
    joint.name = name_of(e, "joint");
    joint.line = e->GetLineNum();
    const std::string what = fmt::format("joint '{}'", joint.name);
    const char* type = e->Attribute("type");
    if (!type) fail(joint.line, what + ": missing attribute 'type'");
    const std::string t = type;
    if (t == "revolute" || t == "continuous") {
      joint.type = UrdfJointType::Revolute;
    } else if (t == "prismatic") {
      joint.type = UrdfJointType::Prismatic;
    } else if (t == "fixed") {
      joint.type = UrdfJointType::Fixed;
    } else {
      fail(joint.line, fmt::format("{}: unknown joint type '{}' (supported: revolute, continuous, prismatic, "
                                   "fixed{})",
                                   what, t, t == "floating" ? "; a free-flyer root comes from --floating" : ""));
    }
    auto end_link = [&](const char* tag) {
      const XMLElement* x = e->FirstChildElement(tag);
      if (!x) fail(joint.line, fmt::format("{}: missing <{}>", what, tag));
      const char* name = x->Attribute("link");
      if (!name) fail(x->GetLineNum(), fmt::format("{}: <{}> without a link", what, tag));
      const auto it = link_index.find(name);
      if (it == link_index.end())
        fail(x->GetLineNum(), fmt::format("{}: {} link '{}' does not exist", what, tag, name));
      return it->second;
    };
    joint.parent = end_link("parent");
    joint.child = end_link("child");
    joint.origin = origin(e, what);
    if (const XMLElement* m = e->FirstChildElement("mimic")) {
      const char* of = m->Attribute("joint");
      if (!of || !*of) fail(m->GetLineNum(), what + ": <mimic> without a joint");
      joint.mimicked = of;
    }
    if (joint.type != UrdfJointType::Fixed) {
      if (const XMLElement* a = e->FirstChildElement("axis")) {
        const Eigen::Vector3d axis = vec3(a, "xyz", Eigen::Vector3d::UnitX(), what);
        if (axis.norm() < 1e-12) fail(a->GetLineNum(), what + ": zero axis");
        joint.axis = axis.normalized();
      }
    }
    return joint;
  }

private:
  const std::string& source_;
};

std::string xml_error(const tinyxml2::XMLDocument& doc) {
  // "XML_ERROR_MISMATCHED_ELEMENT" -> "mismatched element", plus tinyxml2's detail.
  std::string name = doc.ErrorName();
  if (name.rfind("XML_ERROR_", 0) == 0) name = name.substr(10);
  for (char& c : name) c = c == '_' ? ' ' : static_cast<char>(std::tolower(c));
  const std::string text = doc.ErrorStr();
  const std::size_t at = text.find("Line number=");
  const std::size_t colon = at == std::string::npos ? at : text.find(": ", at);
  if (colon != std::string::npos) name += " (" + text.substr(colon + 2) + ")";
  return name;
}

// The <link> and <joint> elements, each link the child of at most one joint.
struct UrdfTree {
  std::string name;
  std::vector<Link> links;
  std::vector<Joint> joints;
  int root = -1;  // the one link without a parent joint
};

UrdfTree read_tree(const XMLElement* robot, const Parser& parser) {
  UrdfTree tree;
  if (const char* name = robot->Attribute("name")) tree.name = name;
  std::vector<Link>& links = tree.links;
  std::vector<Joint>& joints = tree.joints;
  std::map<std::string, int> link_index;
  for (const XMLElement* e = robot->FirstChildElement("link"); e; e = e->NextSiblingElement("link")) {
    Link link = parser.link(e);
    if (!link_index.emplace(link.name, static_cast<int>(links.size())).second)
      parser.fail(link.line, fmt::format("link '{}' is defined twice (first on line {})", link.name,
                                         links[link_index[link.name]].line));
    links.push_back(std::move(link));
  }
  if (links.empty()) parser.fail(robot->GetLineNum(), "<robot> has no <link>");

  std::map<std::string, int> joint_index;
  for (const XMLElement* e = robot->FirstChildElement("joint"); e; e = e->NextSiblingElement("joint")) {
    Joint joint = parser.joint(e, link_index);
    const int j = static_cast<int>(joints.size());
    if (!joint_index.emplace(joint.name, j).second)
      parser.fail(joint.line, fmt::format("joint '{}' is defined twice (first on line {})", joint.name,
                                          joints[joint_index[joint.name]].line));
    Link& child = links[joint.child];
    if (child.parent_joint >= 0)
      parser.fail(joint.line, fmt::format("link '{}' is the child of two joints, '{}' (line {}) "
                                          "and '{}'",
                                          child.name, joints[child.parent_joint].name, joints[child.parent_joint].line,
                                          joint.name));
    child.parent_joint = j;
    links[joint.parent].child_joints.push_back(j);
    joints.push_back(std::move(joint));
  }

  // Exactly one link without a parent joint, and every other link below it.
  std::vector<int> roots;
  for (int i = 0; i < static_cast<int>(links.size()); ++i)
    if (links[i].parent_joint < 0) roots.push_back(i);
  if (roots.size() > 1) {
    std::string names;
    for (int r : roots) names += (names.empty() ? "'" : ", '") + links[r].name + "'";
    parser.fail(links[roots[1]].line, fmt::format("several root links (links without a parent joint): {}; a URDF must "
                                                  "be one connected tree",
                                                  names));
  }
  std::vector<bool> reached(links.size(), false);
  if (!roots.empty()) {
    tree.root = roots[0];
    std::vector<int> todo = {tree.root};
    while (!todo.empty()) {
      const int l = todo.back();
      todo.pop_back();
      reached[l] = true;
      for (int j : links[l].child_joints) todo.push_back(joints[j].child);
    }
  }
  for (int start = 0; start < static_cast<int>(links.size()); ++start) {
    if (reached[start]) continue;
    // Every unreached link has a parent joint, so walking up from it must revisit a link.
    std::vector<bool> seen(links.size(), false);
    int l = start;
    while (!seen[l]) {
      seen[l] = true;
      l = joints[links[l].parent_joint].parent;
    }
    const Joint& j = joints[links[l].parent_joint];
    parser.fail(j.line, fmt::format("the joints form a cycle through link '{}' (joint '{}')", links[l].name, j.name));
  }
  return tree;
}

// Bodies from the tree: a movable joint starts a body, a fixed joint welds its child link to
// the parent's body (or to the world), and the welded links' inertias are merged.
Robot assemble(const UrdfTree& tree, const std::string& source, const LoadOptions& options) {
  const std::vector<Link>& links = tree.links;
  const std::vector<Joint>& joints = tree.joints;
  Robot robot;
  robot.source = source;
  robot.name = tree.name;

  // Depth-first walk over the links, children in joint file order (the MuJoCo and Pinocchio
  // joint order). Each link is placed on the body it ends up in (-1 = the world) with its pose
  // in that body's frame; bodies are numbered here in preorder.
  struct Placement {
    int body = -1;
    Pose pose;
  };
  std::vector<Placement> place(links.size());
  std::vector<Body> pre;  // bodies in preorder; parents are preorder indices for now
  std::vector<int> visit_order;
  if (options.floating) {
    Body base;
    base.name = links[tree.root].name;
    base.joint_name = "root_joint";
    base.joint = JointKind::Free;
    pre.push_back(base);
    place[tree.root].body = 0;
  }
  std::vector<int> stack;  // joints still to walk down
  auto visit = [&](int l) {
    visit_order.push_back(l);
    if (place[l].body < 0) robot.world_links.push_back(links[l].name);
    stack.insert(stack.end(), links[l].child_joints.rbegin(), links[l].child_joints.rend());
  };
  visit(tree.root);
  while (!stack.empty()) {
    const Joint& j = joints[stack.back()];
    stack.pop_back();
    const Placement& from = place[j.parent];
    const Pose X = compose(from.pose, j.origin);
    if (j.type == UrdfJointType::Fixed) {
      place[j.child] = Placement{from.body, X};
    } else {
      Body b;
      b.name = links[j.child].name;
      b.joint_name = j.name;
      b.parent = from.body;
      b.joint = j.type == UrdfJointType::Revolute ? JointKind::Revolute : JointKind::Prismatic;
      b.axis = j.axis;
      b.origin_R = X.R;
      b.origin_p = X.p;
      b.parent_link = links[j.parent].name;
      place[j.child] = Placement{static_cast<int>(pre.size()), Pose{}};
      pre.push_back(std::move(b));
    }
    visit(j.child);
  }

  // Merge the links of each body: mass-weighted com, then the parallel-axis theorem about it.
  const int n = static_cast<int>(pre.size());
  std::vector<Eigen::Vector3d> moment(n, Eigen::Vector3d::Zero());
  for (int l : visit_order) {
    const Placement& at = place[l];
    if (at.body < 0) continue;
    pre[at.body].mass += links[l].mass;
    moment[at.body] += links[l].mass * (at.pose.R * links[l].com + at.pose.p);
  }
  for (int b = 0; b < n; ++b)
    if (pre[b].mass > 0.0) pre[b].com = moment[b] / pre[b].mass;
  for (int l : visit_order) {
    const Placement& at = place[l];
    if (at.body < 0) continue;
    Body& b = pre[at.body];
    const Eigen::Vector3d d = at.pose.R * links[l].com + at.pose.p - b.com;
    b.inertia += at.pose.R * links[l].inertia * at.pose.R.transpose() +
                 links[l].mass * (d.squaredNorm() * Eigen::Matrix3d::Identity() - d * d.transpose());
  }

  // SOA numbering: k = n-1-preorder, so that every parent has a larger index.
  auto index = [n](int preorder) { return preorder < 0 ? -1 : n - 1 - preorder; };
  robot.bodies.resize(n);
  for (int i = 0; i < n; ++i) {
    pre[i].parent = index(pre[i].parent);
    robot.bodies[index(i)] = std::move(pre[i]);
  }
  for (int l : visit_order) {
    if (place[l].body < 0) continue;
    // A link reached by a fixed joint is merged; one that starts a body (or the free-flyer's
    // root link) is that body's own frame.
    const int pj = links[l].parent_joint;
    const bool merged = pj >= 0 && joints[pj].type == UrdfJointType::Fixed;
    robot.frames.push_back(Frame{links[l].name, index(place[l].body), place[l].pose.R, place[l].pose.p,
                                 merged ? links[joints[pj].parent].name : ""});
  }
  for (const Joint& j : joints)
    if (j.type != UrdfJointType::Fixed && !j.mimicked.empty())
      robot.mimic_joints.push_back(MimicJoint{j.name, j.mimicked});
  return robot;
}

}  // namespace

Robot parse_urdf(const std::string& xml_text, const std::string& source_name, const LoadOptions& options) {
  const Parser parser(source_name);
  tinyxml2::XMLDocument doc;
  if (doc.Parse(xml_text.data(), xml_text.size()) != tinyxml2::XML_SUCCESS)
    parser.fail(doc.ErrorLineNum(), "XML syntax error: " + xml_error(doc));
  const XMLElement* root = doc.RootElement();
  if (!root || std::strcmp(root->Name(), "robot") != 0)
    parser.fail(root ? root->GetLineNum() : 0,
                root ? fmt::format("no <robot> element (the document is a <{}>)", root->Name())
                     : std::string("no <robot> element"));
  Robot robot = assemble(read_tree(root, parser), source_name, options);
  finalize(robot);
  check_articulated(robot);
  return robot;
}

Robot load_urdf(const std::string& path, const LoadOptions& options) {
  if (std::filesystem::is_directory(path))
    throw UserError(fmt::format("{}: cannot read file (it is a directory)", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("{}: cannot read file ({})", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UserError(fmt::format("{}: cannot read file", path));
  return parse_urdf(text.str(), path, options);
}

}  // namespace soa
