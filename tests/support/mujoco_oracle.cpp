#include "support/mujoco_oracle.hpp"

#include <mujoco/mujoco.h>
#include <tinyxml2.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string_view>
#include <stdexcept>

namespace soa::test {
namespace {

namespace fs = std::filesystem;
using tinyxml2::XMLDocument;
using tinyxml2::XMLElement;

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("MujocoOracle: " + what); }

// A private scratch directory: mj_saveLastXML can only write to a file, and loading from
// files keeps the code free of MuJoCo's fixed-size VFS structure.
class TempDir {
public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "soa-mujoco-XXXXXX").string();
    if (!mkdtemp(pattern.data())) fail("cannot create a temporary directory");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  fs::path file(const std::string& name) const { return path_ / name; }

private:
  fs::path path_;
};

std::vector<double> numbers(const XMLElement* e, const char* attribute, std::size_t count,
                            std::vector<double> fallback) {
  const char* text = e ? e->Attribute(attribute) : nullptr;
  if (!text) return fallback;
  std::vector<double> values;
  std::istringstream tokens{std::string(text)};
  std::string token;
  while (tokens >> token) {
    const char* first = token.data() + (token[0] == '+' ? 1 : 0);
    double v = 0.0;
    const auto [end, ec] = std::from_chars(first, token.data() + token.size(), v);
    if (ec != std::errc() || end != token.data() + token.size())
      fail(std::string("bad number '") + token + "' in " + attribute);
    values.push_back(v);
  }
  if (values.size() != count) fail(std::string("wrong count of numbers in ") + attribute);
  return values;
}

// One URDF link's own inertia: mass, centre of mass and rotational inertia about it, both
// in the link frame (the <inertial><origin> rotation applied).
struct LinkInertia {
  double mass = 0.0;
  Eigen::Vector3d com = Eigen::Vector3d::Zero();
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Zero();
};

LinkInertia link_inertia(const XMLElement* link) {
  LinkInertia li;
  const XMLElement* inertial = link->FirstChildElement("inertial");
  if (!inertial) return li;  // a massless frame
  li.mass = numbers(inertial->FirstChildElement("mass"), "value", 1, {0.0})[0];
  const XMLElement* origin = inertial->FirstChildElement("origin");
  const std::vector<double> xyz = numbers(origin, "xyz", 3, {0, 0, 0});
  const std::vector<double> rpy = numbers(origin, "rpy", 3, {0, 0, 0});
  li.com = Eigen::Vector3d(xyz[0], xyz[1], xyz[2]);
  // URDF rpy: fixed axes x, y, z, i.e. R = Rz(yaw) Ry(pitch) Rx(roll).
  const Eigen::Matrix3d R =
      (Eigen::AngleAxisd(rpy[2], Eigen::Vector3d::UnitZ()) * Eigen::AngleAxisd(rpy[1], Eigen::Vector3d::UnitY()) *
       Eigen::AngleAxisd(rpy[0], Eigen::Vector3d::UnitX()))
          .toRotationMatrix();
  const XMLElement* in = inertial->FirstChildElement("inertia");
  auto get = [&](const char* a) { return numbers(in, a, 1, {0.0})[0]; };
  Eigen::Matrix3d I;
  I << get("ixx"), get("ixy"), get("ixz"), get("ixy"), get("iyy"), get("iyz"), get("ixz"), get("iyz"), get("izz");
  li.inertia = R * I * R.transpose();
  return li;
}

// Writes the URDF without geometry and with the compiler settings MuJoCo needs to `out`;
// returns the per-link inertias by link name.
std::map<std::string, LinkInertia> prepare_urdf(const std::string& path, const fs::path& out) {
  std::map<std::string, LinkInertia> inertias;
  XMLDocument doc;
  if (doc.LoadFile(path.c_str()) != tinyxml2::XML_SUCCESS) fail(path + ": cannot read the URDF: " + doc.ErrorStr());
  XMLElement* robot = doc.RootElement();
  if (!robot || std::string(robot->Name()) != "robot") fail(path + ": no <robot> element");
  for (XMLElement* link = robot->FirstChildElement("link"); link; link = link->NextSiblingElement("link")) {
    for (const char* tag : {"visual", "collision"})
      while (XMLElement* e = link->FirstChildElement(tag)) link->DeleteChild(e);
    inertias[link->Attribute("name") ? link->Attribute("name") : ""] = link_inertia(link);
  }
  // fusestatic="false": the root link (and every link welded by a fixed joint) stays a body,
  // so a free-flyer keeps its base mass and the per-link inertias can be written back.
  XMLElement* mujoco = doc.NewElement("mujoco");
  XMLElement* compiler = doc.NewElement("compiler");
  compiler->SetAttribute("fusestatic", "false");
  compiler->SetAttribute("balanceinertia", "true");
  compiler->SetAttribute("discardvisual", "true");
  mujoco->InsertEndChild(compiler);
  robot->InsertFirstChild(mujoco);
  if (doc.SaveFile(out.c_str()) != tinyxml2::XML_SUCCESS) fail("cannot write " + out.string());
  return inertias;
}

mjModel* load(const fs::path& path, const std::string& what) {
  char error[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  if (!m) fail(what + ": MuJoCo refused the model: " + error);
  return m;
}

// The first model saved and reloaded with additions: a free joint in the (single) root body
// when `floating`, an equality weld to the world (or to another body, "a=b") for each of
// `welds` and a connect (the body
// origin held) for each of `points` (MuJoCo bodies, which are the URDF links: fusestatic is
// off).
// The last model MuJoCo loaded (mj_saveLastXML saves the last one parsed, whatever `m`), saved
// as MJCF to `file`.
void save_last(const mjModel* m, const fs::path& file, const std::string& what) {
  char error[1000] = "";
  if (!mj_saveLastXML(file.c_str(), m, error, sizeof error)) fail(what + ": mj_saveLastXML failed: " + error);
}

// A saved MJCF read back as XML, with its worldbody.
struct SavedXml {
  XMLDocument doc;
  XMLElement* world = nullptr;
};
void read_xml(const fs::path& file, SavedXml& out, const std::string& what) {
  if (out.doc.LoadFile(file.c_str()) != tinyxml2::XML_SUCCESS) fail(what + ": cannot read the saved XML");
  out.world = out.doc.RootElement() ? out.doc.RootElement()->FirstChildElement("worldbody") : nullptr;
  if (!out.world) fail(what + ": the saved XML has no worldbody");
}

// `m` must be the last model loaded; `object`, a held object's model, saved before as
// `object_xml`.
mjModel* reload_with(const mjModel* m, const TempDir& dir, bool floating, const std::vector<std::string>& welds,
                     const std::vector<std::string>& points, double impedance, const std::string& what,
                     const mjModel* object = nullptr, const fs::path& object_xml = {}) {
  SavedXml saved;
  save_last(m, dir.file("saved.xml"), what);
  read_xml(dir.file("saved.xml"), saved, what);
  XMLDocument& doc = saved.doc;
  XMLElement* world = saved.world;
  if (object) {
    // The object's body tree, with a free joint named as with_object names it.
    SavedXml o;
    read_xml(object_xml, o, what);
    XMLElement* root = o.world->FirstChildElement("body");
    if (!root || root->NextSiblingElement("body")) fail(what + ": expected exactly one object root body");
    tinyxml2::XMLNode* copy = root->DeepClone(&doc);
    XMLElement* free = doc.NewElement("freejoint");
    free->SetAttribute("name", "root_joint");
    copy->InsertFirstChild(free);
    world->InsertEndChild(copy);
  }
  if (floating) {
    XMLElement* root = world->FirstChildElement("body");
    if (!root || (root->NextSiblingElement("body") && !object)) fail(what + ": expected exactly one root body");
    XMLElement* free = doc.NewElement("freejoint");
    free->SetAttribute("name", "root_joint");
    root->InsertFirstChild(free);
  }
  if (!welds.empty() || !points.empty()) {
    XMLElement* equality = doc.NewElement("equality");
    const std::string solimp = std::to_string(impedance) + " " + std::to_string(impedance) + " 0.001";
    const auto hold = [&](const std::string& held, const char* kind) {
      const std::size_t equals = held.find('=');
      const std::string link = held.substr(0, equals);
      const std::string to = equals == std::string::npos ? "" : held.substr(equals + 1);
      for (const std::string& body : {link, to})
        if (!body.empty() && mj_name2id(m, mjOBJ_BODY, body.c_str()) < 0 &&
            !(object && mj_name2id(object, mjOBJ_BODY, body.c_str()) >= 0))
          fail(what + ": MuJoCo has no body '" + body + "' to hold");
      XMLElement* e = doc.NewElement(kind);
      e->SetAttribute("body1", link.c_str());
      if (!to.empty()) e->SetAttribute("body2", to.c_str());
      if (std::string_view(kind) == "connect") e->SetAttribute("anchor", "0 0 0");
      e->SetAttribute("solimp", solimp.c_str());
      equality->InsertEndChild(e);
    };
    for (const std::string& link : welds) hold(link, "weld");
    for (const std::string& link : points) hold(link, "connect");
    doc.RootElement()->InsertEndChild(equality);
  }
  const fs::path reloaded = dir.file("reloaded.xml");
  if (doc.SaveFile(reloaded.c_str()) != tinyxml2::XML_SUCCESS) fail(what + ": cannot write XML");
  return load(reloaded, what);
}

// The saved XML rounds numbers to about 6 digits: copy the exact geometry back by name, from
// `from` or (a held object's bodies) `also`.
void copy_geometry(const mjModel* from, mjModel* to, const std::string& what, const mjModel* also = nullptr) {
  for (int b = 1; b < to->nbody; ++b) {
    const char* name = mj_id2name(to, mjOBJ_BODY, b);
    if (also && mj_name2id(from, mjOBJ_BODY, name) < 0 && mj_name2id(also, mjOBJ_BODY, name) >= 0) {
      const int src = mj_name2id(also, mjOBJ_BODY, name);
      for (int i = 0; i < 3; ++i) to->body_pos[3 * b + i] = also->body_pos[3 * src + i];
      for (int i = 0; i < 4; ++i) to->body_quat[4 * b + i] = also->body_quat[4 * src + i];
      continue;
    }
    const int src = mj_name2id(from, mjOBJ_BODY, name);
    if (src < 0) fail(what + ": body lost in the reload");
    for (int i = 0; i < 3; ++i) to->body_pos[3 * b + i] = from->body_pos[3 * src + i];
    for (int i = 0; i < 4; ++i) to->body_quat[4 * b + i] = from->body_quat[4 * src + i];
  }
  for (int j = 0; j < to->njnt; ++j) {
    if (to->jnt_type[j] == mjJNT_FREE) continue;
    const mjModel* source = from;
    int src = mj_name2id(from, mjOBJ_JOINT, mj_id2name(to, mjOBJ_JOINT, j));
    if (src < 0 && also) src = mj_name2id(source = also, mjOBJ_JOINT, mj_id2name(to, mjOBJ_JOINT, j));
    if (src < 0 || source->jnt_type[src] != to->jnt_type[j]) fail(what + ": joint lost in the reload");
    for (int i = 0; i < 3; ++i) {
      to->jnt_pos[3 * j + i] = source->jnt_pos[3 * src + i];
      to->jnt_axis[3 * j + i] = source->jnt_axis[3 * src + i];
    }
    to->qpos0[to->jnt_qposadr[j]] = source->qpos0[source->jnt_qposadr[src]];
  }
}

// Every body gets its URDF link's exact inertia, and nothing passive remains.
void write_exact_inertias(mjModel* m, const std::map<std::string, LinkInertia>& inertias, const std::string& what) {
  for (int b = 1; b < m->nbody; ++b) {
    const char* name = mj_id2name(m, mjOBJ_BODY, b);
    const auto it = inertias.find(name ? name : "");
    if (it == inertias.end()) fail(what + ": MuJoCo body '" + (name ? name : "") + "' is no URDF link");
    const LinkInertia& li = it->second;
    // An accurate symmetric eigen-decomposition (Eigen's iterative QL, converged to machine
    // precision) instead of MuJoCo's early-stopping one: I = V diag(lambda) V^T.
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(li.inertia);
    Eigen::Matrix3d V = eig.eigenvectors();
    if (V.determinant() < 0) V.col(2) = -V.col(2);  // a rotation, so that it has a quaternion
    const Eigen::Quaterniond quat(V);
    m->body_mass[b] = li.mass;
    for (int i = 0; i < 3; ++i) {
      m->body_ipos[3 * b + i] = li.com[i];
      m->body_inertia[3 * b + i] = eig.eigenvalues()[i];
    }
    m->body_iquat[4 * b + 0] = quat.w();
    m->body_iquat[4 * b + 1] = quat.x();
    m->body_iquat[4 * b + 2] = quat.y();
    m->body_iquat[4 * b + 3] = quat.z();
    // These flags were derived from the compiled inertial frames, which have just changed:
    // "inertial frame == body frame" and "diagonal mass matrix" shortcuts must not be taken.
    m->body_sameframe[b] = 0;
    m->body_simple[b] = 0;
  }
  // mj_comPos divides by the subtree masses: recompute them from the new masses (MuJoCo
  // numbers every parent before its children).
  for (int b = 0; b < m->nbody; ++b) m->body_subtreemass[b] = m->body_mass[b];
  for (int b = m->nbody - 1; b > 0; --b) m->body_subtreemass[m->body_parentid[b]] += m->body_subtreemass[b];
  for (int i = 0; i < m->nv; ++i) {
    m->dof_simplenum[i] = 0;
    m->dof_damping[i] = 0.0;
    m->dof_frictionloss[i] = 0.0;
    m->dof_armature[i] = 0.0;
  }
  for (int j = 0; j < m->njnt; ++j) m->jnt_stiffness[j] = 0.0;
  m->opt.gravity[0] = 0.0;
  m->opt.gravity[1] = 0.0;
  m->opt.gravity[2] = -9.81;
}

Eigen::Matrix3d rotation_of_body(const mjData* d, int body) {
  // xmat is row-major: frame body -> world.
  Eigen::Matrix3d R;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) R(r, c) = d->xmat[9 * body + 3 * r + c];
  return R;
}

}  // namespace

void MujocoOracle::FreeModel::operator()(mjModel* m) const { mj_deleteModel(m); }
void MujocoOracle::FreeData::operator()(mjData* d) const { mj_deleteData(d); }

MujocoOracle::MujocoOracle(const Robot& robot, const std::string& urdf_path, const std::vector<std::string>& welds,
                           const std::vector<std::string>& points, double impedance, const std::string& object_path) {
  // With a held object, the robot's own free joint would be a second 'root_joint'.
  const int free_joints = static_cast<int>(std::count_if(robot.bodies.begin(), robot.bodies.end(),
                                                         [](const Body& b) { return b.joint == JointKind::Free; }));
  if (!object_path.empty() && free_joints != 1) fail(urdf_path + ": a held object needs a fixed-base robot here");
  const bool floating = free_joints > 0 && object_path.empty();
  const TempDir dir;
  std::map<std::string, LinkInertia> inertias;
  // The object first: saving a model's XML needs it to be the last loaded.
  std::unique_ptr<mjModel, FreeModel> object;
  if (!object_path.empty()) {
    const fs::path object_stripped = dir.file("object.urdf");
    inertias = prepare_urdf(object_path, object_stripped);
    object.reset(load(object_stripped, object_path));
    save_last(object.get(), dir.file("object.xml"), object_path);
  }
  const fs::path stripped = dir.file("robot.urdf");
  inertias.merge(prepare_urdf(urdf_path, stripped));
  model_.reset(load(stripped, urdf_path));
  if (floating || object || !welds.empty() || !points.empty()) {
    std::unique_ptr<mjModel, FreeModel> first = std::move(model_);
    model_.reset(reload_with(first.get(), dir, floating, welds, points, impedance, urdf_path, object.get(),
                             dir.file("object.xml")));
    copy_geometry(first.get(), model_.get(), urdf_path, object.get());
  }
  m_ = model_.get();
  write_exact_inertias(m_, inertias, urdf_path);
  nq_ = robot.nq;
  nv_ = robot.nv;
  if (m_->nq != nq_ || m_->nv != nv_)
    fail(urdf_path + ": MuJoCo has nq " + std::to_string(m_->nq) + ", nv " + std::to_string(m_->nv) + "; soac has " +
         std::to_string(nq_) + ", " + std::to_string(nv_));
  for (const Body& b : robot.bodies) {
    const int j = mj_name2id(m_, mjOBJ_JOINT, b.joint_name.c_str());
    if (j < 0) fail(urdf_path + ": MuJoCo has no joint '" + b.joint_name + "'");
    const int expected = b.joint == JointKind::Free        ? mjJNT_FREE
                         : b.joint == JointKind::Revolute  ? mjJNT_HINGE
                         : b.joint == JointKind::Prismatic ? mjJNT_SLIDE
                                                           : -1;  // ball: URDF has none
    if (m_->jnt_type[j] != expected) fail(urdf_path + ": joint '" + b.joint_name + "' has another type in MuJoCo");
    if (b.name != mj_id2name(m_, mjOBJ_BODY, m_->jnt_bodyid[j]))
      fail(urdf_path + ": joint '" + b.joint_name + "' moves another body in MuJoCo");
    joints_.push_back(
        JointMap{b.joint, b.q_offset, b.v_offset, m_->jnt_qposadr[j], m_->jnt_dofadr[j], m_->jnt_bodyid[j]});
  }
  data_.reset(mj_makeData(m_));
  d_ = data_.get();
}

void MujocoOracle::set_positions(const VecX& q) {
  if (q.size() != nq_) fail("q has the wrong size");
  S_ = MatX::Zero(nv_, nv_);
  for (const JointMap& j : joints_) {
    if (j.kind == JointKind::Free) {
      // Ours [x y z qx qy qz qw], MuJoCo's [x y z qw qx qy qz].
      for (int i = 0; i < 3; ++i) d_->qpos[j.qposadr + i] = q[j.q_offset + i];
      d_->qpos[j.qposadr + 3] = q[j.q_offset + 6];
      for (int i = 0; i < 3; ++i) d_->qpos[j.qposadr + 4 + i] = q[j.q_offset + 3 + i];
    } else {
      d_->qpos[j.qposadr] = q[j.q_offset] + m_->qpos0[j.qposadr];
    }
  }
  mj_kinematics(m_, d_);
  mj_comPos(m_, d_);
  for (const JointMap& j : joints_) {
    if (j.kind == JointKind::Free) {
      // qvel = [R v; omega] from qd = [omega; v]; R is the rotation MuJoCo itself uses.
      S_.block<3, 3>(j.dofadr, j.v_offset + 3) = rotation_of_body(d_, j.body);
      S_.block<3, 3>(j.dofadr + 3, j.v_offset) = Eigen::Matrix3d::Identity();
    } else {
      S_(j.dofadr, j.v_offset) = 1.0;
    }
  }
}

void MujocoOracle::set_velocities(const VecX& qd) {
  if (qd.size() != nv_) fail("qd has the wrong size");
  const VecX qvel = S_ * qd;
  for (int i = 0; i < nv_; ++i) d_->qvel[i] = qvel[i];
  mj_comVel(m_, d_);
  sdot_ = VecX::Zero(nv_);
  for (const JointMap& j : joints_) {
    if (j.kind != JointKind::Free) continue;
    // d/dt (R v) = R (vdot + omega x v): our qdd = 0 still moves MuJoCo's linear qacc.
    const Eigen::Vector3d omega = qd.segment<3>(j.v_offset), v = qd.segment<3>(j.v_offset + 3);
    sdot_.segment<3>(j.dofadr) = S_.block<3, 3>(j.dofadr, j.v_offset + 3) * omega.cross(v);
  }
}

VecX MujocoOracle::inverse_dynamics(const VecX& q, const VecX& qd, const VecX& qdd) {
  if (qdd.size() != nv_) fail("qdd has the wrong size");
  set_positions(q);
  set_velocities(qd);
  const VecX qacc = S_ * qdd + sdot_;
  for (int i = 0; i < nv_; ++i) d_->qacc[i] = qacc[i];
  VecX out(nv_);
  mj_rne(m_, d_, 1, out.data());
  return S_.transpose() * out;
}

VecX MujocoOracle::bias(const VecX& q, const VecX& qd) { return inverse_dynamics(q, qd, VecX::Zero(nv_)); }

MatX MujocoOracle::mass_matrix(const VecX& q) {
  set_positions(q);
  mj_crb(m_, d_);
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> M(nv_, nv_);
  mj_fullM(m_, M.data(), d_->qM);
  return S_.transpose() * M * S_;
}

VecX MujocoOracle::forward_dynamics(const VecX& q, const VecX& qd, const VecX& tau) {
  if (tau.size() != nv_) fail("tau has the wrong size");
  set_positions(q);
  mj_crb(m_, d_);
  mj_factorM(m_, d_);
  set_velocities(qd);
  VecX bias(nv_);
  mj_rne(m_, d_, 0, bias.data());  // MuJoCo's qfrc_bias: its qacc = 0
  // S is orthogonal, so S^-T = S carries our forces to MuJoCo's.
  const VecX rhs = S_ * tau - bias;
  VecX qacc(nv_);
  mj_solveM(m_, d_, qacc.data(), rhs.data(), 1);
  return S_.transpose() * (qacc - sdot_);
}

void MujocoOracle::set_state(const VecX& q, const VecX& qd, const VecX& tau) {
  if (tau.size() != nv_) fail("tau has the wrong size");
  set_positions(q);
  set_velocities(qd);
  const VecX applied = S_ * tau;  // S is orthogonal: S^-T = S carries our forces to MuJoCo's
  for (int i = 0; i < nv_; ++i) d_->qfrc_applied[i] = applied[i];
}

VecX MujocoOracle::constrained_forward_dynamics(const VecX& q, const VecX& qd, const VecX& tau) {
  set_state(q, qd, tau);
  mj_forward(m_, d_);
  const Eigen::Map<const VecX> qacc(d_->qacc, nv_);
  return S_.transpose() * (qacc - sdot_);
}

}  // namespace soa::test
