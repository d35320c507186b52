// A robot's constants in the form the executor reads, over any scalar type S.
//
// Contract
// - make_constants(robot, tips) copies a Robot (model/robot.hpp) into plain structure
//   (parents, children, joint kinds, offsets: ints) and numbers (axes, fixed transforms,
//   inertias, gravity, tip frames: doubles). convert<S>() turns every number into an S:
//   S = double is the generic runtime, S = the tracing scalar makes them literals that the
//   specialiser folds into the straight-line code.
// - Fixed rotations are snapped: an entry within 1e-14 of 0, 1 or -1 becomes exactly that
//   (URDF rpy angles of +-pi/2 give cos = 6e-17, which would otherwise survive as a
//   multiplication in specialised code). This moves the model by at most 1e-14, far inside
//   every tolerance the interpreter is checked to. Axes within 1e-14 of a coordinate axis
//   become exactly that axis and are marked (AxisKind) so that the joint rotation is built
//   from one sin and one cos without Rodrigues' (1 - cos) terms.
// - The spatial inertia is kept as (m, h = m p, J about O_k): M = [[J, h~], [-h~, m 1]]
//   (reference 2). The composite-body inertia R has the same form.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "exec/small.hpp"
#include "model/robot.hpp"

namespace soa::exec {

enum class AxisKind : std::uint8_t { X, Y, Z, NegX, NegY, NegZ, General };

template <class S>
struct Inertia {
  S m;
  V3<S> h;  // m p, p the mass centre relative to the frame origin
  M3<S> J;  // rotational inertia about the frame origin
};

// phi = [[R, l~ R], [0, R]] (reference 2); also a tip's B block phi(O_body, tip).
template <class S>
struct Transform {
  M3<S> R;
  V3<S> l;
};

template <class S>
struct BodyConstants {
  std::string name;
  int parent = -1;
  std::vector<int> children;
  std::vector<int> tips;  // indices into RobotConstants::tips
  JointKind joint = JointKind::Revolute;
  AxisKind axis_kind = AxisKind::General;
  int nq = 1, nv = 1, q_offset = 0, v_offset = 0;
  V3<S> axis;
  M3<S> origin_R;
  V3<S> origin_p;
  Inertia<S> M;
};

template <class S>
struct TipConstants {
  std::string name;  // frame name
  int body = -1;
  Transform<S> X;
  // The rows of the tip's 6-vector a tip-space solve keeps (sweep_ir.hpp Solve): the
  // directions its constraint holds (Frame::held), all six for a tip when no tip is held (the
  // tips of J calM^-1 J*), none for a tip that only another's weld names (its partner).
  Directions held = kAllDirections;
  // The tip this one is welded to (Frame::held_to), -1 for the world: the constraint holds
  // the relative twist V(tip) - X(tip, partner) V(partner), docs/mathematics.md section 6.
  int partner = -1;
  // A compliant grasp (Frame::spring): the tip at its other end (-1: none) and the spring's
  // constants kt, kr, dt, dr (model/robot.hpp Spring).
  int spring_to = -1;
  std::array<S, 4> spring{};
};

template <class S>
struct RobotConstants {
  std::string name;
  std::vector<BodyConstants<S>> bodies;
  std::vector<TipConstants<S>> tips;
  V3<S> gravity;
  int nq = 0, nv = 0;
  int n() const { return static_cast<int>(bodies.size()); }
  int m() const { return static_cast<int>(tips.size()); }
};

// Tips are frame indices (Robot::frames), as for interp::prepare. A held tip's partner
// (Frame::held_to) must be among them.
RobotConstants<double> make_constants(const Robot& robot, const std::vector<int>& tip_frames);

// Every number of `c` through make(number) (by default S(number)).
template <class S, class T, class Make>
RobotConstants<S> convert(const RobotConstants<T>& c, Make make) {
  auto v3 = [&](const V3<T>& x) { return V3<S>{make(x[0]), make(x[1]), make(x[2])}; };
  auto m3 = [&](const M3<T>& x) {
    M3<S> y;
    for (int i = 0; i < 9; ++i) y[i] = make(x[i]);
    return y;
  };
  RobotConstants<S> r;
  r.name = c.name;
  r.nq = c.nq;
  r.nv = c.nv;
  r.gravity = v3(c.gravity);
  for (const auto& b : c.bodies) {
    BodyConstants<S> o;
    o.name = b.name;
    o.parent = b.parent;
    o.children = b.children;
    o.tips = b.tips;
    o.joint = b.joint;
    o.axis_kind = b.axis_kind;
    o.nq = b.nq;
    o.nv = b.nv;
    o.q_offset = b.q_offset;
    o.v_offset = b.v_offset;
    o.axis = v3(b.axis);
    o.origin_R = m3(b.origin_R);
    o.origin_p = v3(b.origin_p);
    o.M = Inertia<S>{make(b.M.m), v3(b.M.h), m3(b.M.J)};
    r.bodies.push_back(std::move(o));
  }
  for (const auto& t : c.tips)
    r.tips.push_back({t.name,
                      t.body,
                      Transform<S>{m3(t.X.R), v3(t.X.l)},
                      t.held,
                      t.partner,
                      t.spring_to,
                      {make(t.spring[0]), make(t.spring[1]), make(t.spring[2]), make(t.spring[3])}});
  return r;
}

template <class S, class T>
RobotConstants<S> convert(const RobotConstants<T>& c) {
  return convert<S>(c, [](const T& x) { return S(x); });
}

}  // namespace soa::exec
