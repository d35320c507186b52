// Spatial algebra over any scalar: the per-body blocks of reference section 2 applied
// through their structure, never as dense 6x6 products. phi is a rotation plus a cross
// product; H* picks columns; M and R are rigid-body inertias (m, h, J). The tracer records
// exactly this arithmetic, so its cost is the cost of the specialised code.
#pragma once

#include <cmath>

#include "exec/constants.hpp"
#include "exec/small.hpp"
#include "support/error.hpp"

namespace soa::exec {

// Rotation by angle (c = cos, s = sin) about a joint axis.
template <class S>
M3<S> axis_rotation(AxisKind kind, const V3<S>& a, const S& c, const S& s) {
  const S o(0.0), one(1.0);
  switch (kind) {
    case AxisKind::X: return {one, o, o, o, c, -s, o, s, c};
    case AxisKind::Y: return {c, o, s, o, one, o, -s, o, c};
    case AxisKind::Z: return {c, -s, o, s, c, o, o, o, one};
    case AxisKind::NegX: return {one, o, o, o, c, s, o, -s, c};
    case AxisKind::NegY: return {c, o, -s, o, one, o, s, o, c};
    case AxisKind::NegZ: return {c, s, o, -s, c, o, o, o, one};
    case AxisKind::General: break;
  }
  // Rodrigues: c 1 + s a~ + (1 - c) a a^T.
  const S t = one - c;
  M3<S> R;
  const M3<S> ax{o, -a[2], a[1], a[2], o, -a[0], -a[1], a[0], o};
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) R[3 * r + k] = t * a[r] * a[k] + s * ax[3 * r + k] + (r == k ? c : o);
  return R;
}

// phi(p(k), k) from the joint's coordinates q (nq(k) numbers): the fixed origin, then the
// joint's own motion (a rotation about or a shift along its axis, a quaternion, a
// free-flyer's position and quaternion) expressed in the origin frame.
template <class S>
Transform<S> joint_transform(const BodyConstants<S>& b, const S* q) {
  using std::cos;
  using std::sin;
  switch (b.joint) {
    case JointKind::Revolute:
      return {mul(b.origin_R, axis_rotation<S>(b.axis_kind, b.axis, S(cos(q[0])), S(sin(q[0])))), b.origin_p};
    case JointKind::Prismatic: return {b.origin_R, b.origin_p + mul(b.origin_R, scale(q[0], b.axis))};
    case JointKind::Ball: return {mul(b.origin_R, quaternion_rotation(q)), b.origin_p};
    case JointKind::Free:
      return {mul(b.origin_R, quaternion_rotation(q + 3)), b.origin_p + mul(b.origin_R, V3<S>{q[0], q[1], q[2]})};
  }
  throw InternalError("joint_transform: unknown joint kind");
}

// H*(k) u: the joint's motion subspace in its child frame (reference 2), u its nv(k) rates.
template <class S>
SVec<S> hstar_apply(const BodyConstants<S>& b, const SVec<S>& u) {
  const V3<S> z = v3_zero<S>();
  switch (b.joint) {
    case JointKind::Revolute: return spatial(scale(u[0], b.axis), z);
    case JointKind::Prismatic: return spatial(z, scale(u[0], b.axis));
    case JointKind::Ball: return spatial(V3<S>{u[0], u[1], u[2]}, z);
    case JointKind::Free: return u;
  }
  throw InternalError("hstar_apply: unknown joint kind");
}

// phi f = [R n + l x (R f); R f] for f = [n; f] (force transform, inward).
template <class S>
SVec<S> phi_apply(const Transform<S>& X, const SVec<S>& f) {
  const V3<S> F = mul(X.R, bottom(f));
  return spatial(mul(X.R, top(f)) + cross(X.l, F), F);
}

// phi* x = [R^T w; R^T (v - l x w)] for x = [w; v] (motion transform, outward).
template <class S>
SVec<S> phi_t_apply(const Transform<S>& X, const SVec<S>& x) {
  const V3<S> w = top(x);
  return spatial(mul_t(X.R, w), mul_t(X.R, bottom(x) - cross(X.l, w)));
}

// M x = [J w + h x v; m v - h x w] (reference 2 with h = m p).
template <class S>
SVec<S> inertia_apply(const Inertia<S>& I, const SVec<S>& x) {
  const V3<S> w = top(x), v = bottom(x);
  return spatial(mul(I.J, w) + cross(I.h, v), scale(I.m, v) - cross(I.h, w));
}

template <class S>
Inertia<S> operator+(const Inertia<S>& a, const Inertia<S>& b) {
  return {a.m + b.m, a.h + b.h, a.J + b.J};
}

// phi I phi* for a rigid-body inertia: rotate (J' = R J R^T, h' = R h), then shift the
// reference point by l: h'' = h' + m l, J'' = J' + (l.(h' + h'')) 1 - h'' l^T - l h'^T
// (from -l~h'~ - h'~l~ - m l~l~ and a~b~ = b a^T - (a.b) 1).
template <class S>
Inertia<S> inertia_congruence(const Transform<S>& X, const Inertia<S>& I) {
  const V3<S> h1 = mul(X.R, I.h);
  const V3<S> h2 = h1 + scale(I.m, X.l);
  const M3<S> J1 = congruence(X.R, I.J, true);
  const S s = dot(X.l, h1 + h2);
  M3<S> J2;
  for (int r = 0; r < 3; ++r)
    for (int c = r; c < 3; ++c) {
      S v = J1[3 * r + c] - h2[r] * X.l[c] - X.l[r] * h1[c];
      if (r == c) v = v + s;
      J2[3 * r + c] = v;
      J2[3 * c + r] = v;
    }
  return {I.m, h2, J2};
}

template <class S>
SMat<S> inertia_matrix(const Inertia<S>& I) {
  SMat<S> M = smat_zero<S>(6, 6);
  const S zero(0.0);
  const V3<S>& h = I.h;
  const M3<S> hx{zero, -h[2], h[1], h[2], zero, -h[0], -h[1], h[0], zero};  // h~
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      M(r, c) = I.J[3 * r + c];
      M(r, c + 3) = hx[3 * r + c];
      M(r + 3, c) = -hx[3 * r + c];
    }
  for (int i = 3; i < 6; ++i) M(i, i) = I.m;
  return M;
}

namespace detail {
template <class S>
M3<S> block(const SMat<S>& P, int r0, int c0) {
  M3<S> B;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) B[3 * r + c] = P(r0 + r, c0 + c);
  return B;
}
// Assemble [[TL, TR], [TR^T, BR]] from the upper triangles of TL and BR.
template <class S>
SMat<S> assemble_symmetric(const M3<S>& TL, const M3<S>& TR, const M3<S>& BR) {
  SMat<S> Y;
  Y.rows = Y.cols = 6;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      Y(r, c + 3) = TR[3 * r + c];
      Y(c + 3, r) = TR[3 * r + c];
      if (c < r) continue;
      Y(r, c) = Y(c, r) = TL[3 * r + c];
      Y(r + 3, c + 3) = Y(c + 3, r + 3) = BR[3 * r + c];
    }
  return Y;
}
}  // namespace detail

// phi P phi* for symmetric P = [[A, B], [B^T, C]]: rotate the blocks, then with
// T = [[1, l~], [0, 1]]: T X T^T = [[A' + l~B'^T - Y l~, Y], [Y^T, C']], Y = B' + l~C'.
template <class S>
SMat<S> congruence6(const Transform<S>& X, const SMat<S>& P) {
  const M3<S> A = congruence(X.R, detail::block(P, 0, 0), true);
  const M3<S> B = congruence(X.R, detail::block(P, 0, 3), false);
  const M3<S> C = congruence(X.R, detail::block(P, 3, 3), true);
  const M3<S> Y = B + cross_left(X.l, C);
  const M3<S> lBt = cross_left(X.l, transpose(B)), Yl = cross_right(Y, X.l);
  M3<S> TL;  // only the upper triangle is read by assemble_symmetric
  for (int i = 0; i < 9; ++i) TL[i] = A[i] + lBt[i] - Yl[i];
  return detail::assemble_symmetric(TL, Y, C);
}

// phi* P phi for symmetric P: with T = [[1, l~], [0, 1]], T^T P T = [[A, Z], [Z^T, C - l~B +
// Z^T l~]], Z = A l~ + B, then every block rotated by R^T (.) R.
template <class S>
SMat<S> congruence6_t(const Transform<S>& X, const SMat<S>& P) {
  const M3<S> A = detail::block(P, 0, 0), B = detail::block(P, 0, 3), C = detail::block(P, 3, 3);
  const M3<S> Z = cross_right(A, X.l) + B;
  const M3<S> lB = cross_left(X.l, B), Zl = cross_right(transpose(Z), X.l);
  M3<S> W;
  for (int i = 0; i < 9; ++i) W[i] = C[i] - lB[i] + Zl[i];
  const M3<S> Rt = transpose(X.R);
  return detail::assemble_symmetric(congruence(Rt, A, true), congruence(Rt, Z, false), congruence(Rt, W, true));
}

}  // namespace soa::exec
