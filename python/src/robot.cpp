// soac.Robot: a URDF or a random tree, numbered as soac numbers it (what `soac model` prints).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "convert.hpp"
#include "support/error.hpp"

namespace soa::python {
namespace {

using namespace pybind11::literals;

// One body in soac's numbering (Robot.bodies[k]), as a row of `soac model`.
struct BodyRow {
  int index = 0;
  std::string link, joint, type;
  int parent = -1;  // -1: the world
  int q = 0, v = 0, nq = 0, nv = 0;
  std::vector<int> children;
  std::string parent_link;
};

struct FrameRow {
  std::string name;
  int index = 0, body = 0;
  std::string body_link, welded_to;
  Eigen::Matrix3d R;
  Eigen::Vector3d p;
};

Eigen::Vector3d gravity_arg(const py::handle& g) {
  const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(g);
  if (!a || a.ndim() != 1 || a.shape(0) != 3)
    throw UserError("gravity: expected three finite numbers x, y, z (m/s^2, world axes), e.g. (0, 0, -9.81)");
  Eigen::Vector3d v(a.at(0), a.at(1), a.at(2));
  if (!v.allFinite()) throw UserError(fmt::format("gravity: ({}, {}, {}) is not finite", v[0], v[1], v[2]));
  return v;
}

// The robot as soac's load_robot makes it: gravity, then the tips; mimic joints named in a
// warning.
// welds and contacts (soac's --weld, --contact; model/tips.hpp) make the held frames the tips.
// `object` (soac's --object): a free body the robot holds, added before the welds name its frames.
// grasps (soac's --grasp): compliant grasps, springs and dampers between frames.
RobotPtr finish(std::shared_ptr<RobotHandle> r, const std::optional<std::vector<std::string>>& tips,
                const py::object& gravity, const std::vector<std::string>& welds = {},
                const std::vector<std::string>& contacts = {},
                const std::optional<std::filesystem::path>& object = std::nullopt,
                const std::vector<std::string>& grasps = {}) {
  if (!gravity.is_none()) r->robot.gravity = gravity_arg(gravity);
  if (object) r->robot = with_object(r->robot, load_urdf(object->string(), LoadOptions{true}));
  if (tips) r->tip_names = *tips;
  r->held = !welds.empty() || !contacts.empty();
  r->grasped = !grasps.empty();
  if ((r->held || r->grasped) && tips)
    throw UserError("tips names the tips, but welds, contacts and grasps hold frames, which are the tips");
  r->tips = r->held || r->grasped
                ? hold_frames(r->robot,
                              HoldOptions{welds, contacts, {}, grasps, "welds", "contacts", "floating=True", "grasps"})
                : resolve_tips(r->robot, r->tip_names, "tips", "floating=True");
  if (const std::string warning = mimic_warning(r->robot); !warning.empty()) warn(warning);
  return r;
}

RobotPtr from_urdf(const std::filesystem::path& path, bool floating,
                   const std::optional<std::vector<std::string>>& tips, const py::object& gravity,
                   const std::vector<std::string>& welds, const std::vector<std::string>& contacts,
                   const std::optional<std::filesystem::path>& object, const std::vector<std::string>& grasps) {
  auto r = std::make_shared<RobotHandle>();
  r->robot = load_urdf(path.string(), LoadOptions{floating});
  r->path = path.string();
  r->floating = floating;
  return finish(std::move(r), tips, gravity, welds, contacts, object, grasps);
}

RobotPtr make_random_tree(int bodies, std::uint64_t seed, bool floating,
                          const std::optional<std::vector<std::string>>& tips, const py::object& gravity) {
  if (bodies < 1 || bodies > 10000)
    throw UserError(fmt::format("random_tree: {} bodies: the number of bodies must be 1 to 10000", bodies));
  auto r = std::make_shared<RobotHandle>();
  RandomTreeOptions options;
  options.bodies = bodies;
  options.floating = floating;
  r->robot = random_tree(seed, options);
  r->floating = floating;
  return finish(std::move(r), tips, gravity);
}

std::vector<BodyRow> body_rows(const Robot& robot) {
  std::vector<BodyRow> rows;
  for (int k = 0; k < robot.size(); ++k) {
    const Body& b = robot.bodies[k];
    rows.push_back({k, b.name, b.joint_name, to_string(b.joint), b.parent, b.q_offset, b.v_offset, b.nq(), b.nv(),
                    b.children, b.parent_link});
  }
  return rows;
}

std::vector<FrameRow> frame_rows(const Robot& robot) {
  std::vector<FrameRow> rows;
  for (std::size_t i = 0; i < robot.frames.size(); ++i) {
    const Frame& f = robot.frames[i];
    rows.push_back({f.name, static_cast<int>(i), f.body, robot.bodies[static_cast<std::size_t>(f.body)].name,
                    f.welded_to, f.R, f.p});
  }
  return rows;
}

}  // namespace

RobotPtr load_robot(const std::filesystem::path& path) {
  return from_urdf(path, false, std::nullopt, py::none(), {}, {}, std::nullopt, {});
}

void init_robot(py::module_& m) {
  py::class_<BodyRow>(m, "Body", "One body in soac's numbering: a row of `soac model`.")
      .def_readonly("index", &BodyRow::index, "k: tip to base, every body's parent has a larger index")
      .def_readonly("link", &BodyRow::link, "the URDF link")
      .def_readonly("joint", &BodyRow::joint, "the URDF joint to the parent (root_joint: the added free-flyer)")
      .def_readonly("type", &BodyRow::type, "revolute, prismatic, ball or free")
      .def_readonly("parent", &BodyRow::parent, "the parent's index; -1: the world")
      .def_readonly("q", &BodyRow::q, "its first index in q")
      .def_readonly("v", &BodyRow::v, "its first index in qd, qdd and T")
      .def_readonly("nq", &BodyRow::nq)
      .def_readonly("nv", &BodyRow::nv)
      .def_readonly("children", &BodyRow::children)
      .def_readonly("parent_link", &BodyRow::parent_link, "the URDF link the joint hangs from ('' when none)")
      .def("__repr__", [](const BodyRow& b) {
        return fmt::format("<soac.Body {} {} ({} {}, parent {}, q {}, v {})>", b.index, b.link, b.type, b.joint,
                           b.parent < 0 ? std::string("world") : std::to_string(b.parent), b.q, b.v);
      });
  py::class_<FrameRow>(m, "Frame", "A named frame on a body: the body's own, or a URDF link merged into it.")
      .def_readonly("name", &FrameRow::name)
      .def_readonly("index", &FrameRow::index)
      .def_readonly("body", &FrameRow::body, "the index of the body it is on")
      .def_readonly("body_link", &FrameRow::body_link, "that body's link")
      .def_readonly("welded_to", &FrameRow::welded_to, "for a merged link, the link its fixed joint welds it to")
      .def_property_readonly(
          "R", [](const FrameRow& f) { return to_numpy(f.R); }, "rotation frame -> body frame")
      .def_property_readonly(
          "p", [](const FrameRow& f) { return to_numpy(f.p); }, "origin in the body frame")
      .def("__repr__", [](const FrameRow& f) { return fmt::format("<soac.Frame {} on {}>", f.name, f.body_link); });

  const char* load_doc =
      "A URDF robot, as `soac model --robot PATH [--floating] [--tip LINK ...] [--gravity x,y,z]` loads it.\n\n"
      "floating: a free-flyer above the URDF root link (q starts [x y z qx qy qz qw], qd [omega; v] in the\n"
      "  root's body frame). tips: frame names for B, J, Lambda and f0 (default: the end-effectors).\n"
      "gravity: (x, y, z) in m/s^2, world axes (default (0, 0, -9.81)).\n"
      "welds: frames welded to the world, 'FRAME' (all six directions), 'FRAME:x,y,z,rz' (those named) or\n"
      "  'FRAME=OTHER[:DIRS]' (two frames of the robot welded to each other); contacts: frames whose point\n"
      "  is held (x, y, z). The held frames are the tips, and compile() and emit() add the kernels\n"
      "  constrained_forward_dynamics and constraint_forces (as soac's --weld and --contact).\n"
      "object: a URDF of a free body the robot holds (soac's --object), last in q and qd; welds name its\n"
      "  frames ('bar_left=left_gripper').\n"
      "grasps: compliant grasps (soac's --grasp), 'FRAME=OTHER:KT,KR,DT,DR': a spring and damper between two\n"
      "  frames, stiffness KT N/m and KR N m/rad, damping DT N s/m and DR N m s/rad; both frames are tips, and\n"
      "  compile() and emit() add the kernels grasp_forces and compliant_forward_dynamics.\n"
      "Raises soac.Error with soac's message for a bad URDF or an unknown tip; mimic joints (kept\n"
      "independent) are named in a UserWarning.";
  py::class_<RobotHandle, RobotPtr>(
      m, "Robot",
      "A robot in soac's numbering (README, Conventions): bodies tip to base (every parent has a larger index),\n"
      "joint-space vectors (q, qd, qdd, T) depth-first from the base, children in URDF order; spatial vectors\n"
      "[angular; linear]. str(robot) is what `soac model` prints. Immutable.")
      .def(py::init(&from_urdf), "path"_a, "floating"_a = false, "tips"_a = py::none(), "gravity"_a = py::none(),
           "welds"_a = std::vector<std::string>{}, "contacts"_a = std::vector<std::string>{}, "object"_a = py::none(),
           "grasps"_a = std::vector<std::string>{}, load_doc)
      .def_static("from_urdf", &from_urdf, "path"_a, "floating"_a = false, "tips"_a = py::none(),
                  "gravity"_a = py::none(), "welds"_a = std::vector<std::string>{},
                  "contacts"_a = std::vector<std::string>{}, "object"_a = py::none(),
                  "grasps"_a = std::vector<std::string>{}, load_doc)
      .def_static("random_tree", &make_random_tree, "bodies"_a = 8, "seed"_a = 1, "floating"_a = false,
                  "tips"_a = py::none(), "gravity"_a = py::none(),
                  "A random tree of `bodies` bodies with mixed joint types, arbitrary axes and valid inertias\n"
                  "(soac's --random-tree BODIES:SEED); the same seed gives the same robot.")
      .def_property_readonly(
          "name", [](const RobotHandle& r) { return r.robot.name; }, "the URDF robot name")
      .def_property_readonly(
          "source", [](const RobotHandle& r) { return r.robot.source; }, "the file, or how the robot was made")
      .def_property_readonly(
          "path", [](const RobotHandle& r) { return r.path.empty() ? py::object(py::none()) : py::str(r.path); },
          "the URDF path as given; None for a random tree")
      .def_property_readonly("floating", [](const RobotHandle& r) { return r.floating; })
      .def_property_readonly(
          "nq", [](const RobotHandle& r) { return r.robot.nq; }, "size of q")
      .def_property_readonly(
          "nv", [](const RobotHandle& r) { return r.robot.nv; }, "N: size of qd, qdd and T")
      .def_property_readonly(
          "n", [](const RobotHandle& r) { return r.robot.size(); }, "number of bodies")
      .def_property_readonly(
          "bodies", [](const RobotHandle& r) { return body_rows(r.robot); }, "soac.Body per index k")
      .def_property_readonly("frames", [](const RobotHandle& r) { return frame_rows(r.robot); })
      .def_property_readonly(
          "joints", [](const RobotHandle& r) { return r.robot.joint_order(); }, "joint names in joint-space order")
      .def_property_readonly(
          "tips",
          [](const RobotHandle& r) {
            std::vector<std::string> names;
            for (int t : r.tips) names.push_back(r.robot.frames[static_cast<std::size_t>(t)].name);
            return names;
          },
          "the tip frames, in the order of f0's and J's blocks (6 rows each)")
      .def_property_readonly("gravity", [](const RobotHandle& r) { return to_numpy(r.robot.gravity); })
      .def_property_readonly(
          "world_links", [](const RobotHandle& r) { return r.robot.world_links; },
          "links welded to the world (fixed base)")
      .def_property_readonly(
          "mimic_joints",
          [](const RobotHandle& r) {
            std::vector<std::pair<std::string, std::string>> out;
            for (const MimicJoint& mj : r.robot.mimic_joints) out.emplace_back(mj.joint, mj.mimicked);
            return out;
          },
          "(joint, mimicked) pairs, treated as independent joints")
      .def_property_readonly("is_serial_chain", [](const RobotHandle& r) { return r.robot.is_serial_chain(); })
      .def(
          "neutral_configuration", [](const RobotHandle& r) { return to_numpy(neutral_configuration(r.robot)); },
          "q with zero angles and identity quaternions")
      .def(
          "random_state",
          [](const RobotHandle& r, std::uint64_t seed) {
            std::mt19937_64 rng(seed);
            const State s = random_state(r.robot, static_cast<int>(r.tips.size()), rng);
            py::dict d;
            d["q"] = to_numpy(s.q);
            d["qd"] = to_numpy(s.qd);
            d["qdd"] = to_numpy(s.qdd);
            d["f0"] = to_numpy(s.f0);
            return d;
          },
          "seed"_a = 1,
          "A random state as soac draws it (soac eval --seed S): dict of q, qd, qdd, f0 arrays; angles\n"
          "uniform in [-pi, pi], random unit quaternions, velocities, accelerations and tip forces in [-1, 1].")
      .def(
          "describe", [](const RobotHandle& r) { return r.describe(); }, "the one-line description soac prints")
      .def("__repr__", [](const RobotHandle& r) { return "<soac.Robot " + r.describe() + ">"; })
      .def("__str__", [](const RobotHandle& r) { return model_text(r); });
}

}  // namespace soa::python
