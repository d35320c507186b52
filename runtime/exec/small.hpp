// Fixed-size linear algebra over any scalar type S (double, or the tracing scalar of
// compiler/specialise). Written out by hand rather than with Eigen so that every operation
// is exactly the arithmetic the specialised code should contain: the tracer records what
// these functions do, folds the robot's constants into it, and CSE keeps each product once.
//
// Requirements on S: construction from double, + - * / and unary -. Symmetric results are
// computed once per (i <= j) pair and mirrored, so traced code never holds both halves.
#pragma once

#include <array>
#include <cassert>

namespace soa::exec {

template <class S>
using V3 = std::array<S, 3>;
template <class S>
using M3 = std::array<S, 9>;  // row-major

// A vector of up to 6 entries: a spatial vector (n = 6) or a joint's nv(k) coordinates.
template <class S>
struct SVec {
  std::array<S, 6> v;
  int n = 0;
  S& operator[](int i) { return v[i]; }
  const S& operator[](int i) const { return v[i]; }
};

// A matrix of up to 6 x 6 entries, row-major: a 6x6 spatial block, G (6 x nv), D (nv x nv).
template <class S>
struct SMat {
  std::array<S, 36> a;
  int rows = 0, cols = 0;
  S& operator()(int r, int c) { return a[r * cols + c]; }
  const S& operator()(int r, int c) const { return a[r * cols + c]; }
};

template <class S>
SVec<S> svec_zero(int n) {
  SVec<S> x;
  x.n = n;
  for (int i = 0; i < n; ++i) x[i] = S(0.0);
  return x;
}

template <class S>
SMat<S> smat_zero(int rows, int cols) {
  SMat<S> m;
  m.rows = rows;
  m.cols = cols;
  for (int i = 0; i < rows * cols; ++i) m.a[i] = S(0.0);
  return m;
}

template <class S>
V3<S> v3_zero() {
  return {S(0.0), S(0.0), S(0.0)};
}
template <class S>
M3<S> m3_identity() {
  return {S(1.0), S(0.0), S(0.0), S(0.0), S(1.0), S(0.0), S(0.0), S(0.0), S(1.0)};
}

template <class S>
V3<S> top(const SVec<S>& x) {
  return {x[0], x[1], x[2]};
}
template <class S>
V3<S> bottom(const SVec<S>& x) {
  return {x[3], x[4], x[5]};
}
template <class S>
SVec<S> spatial(const V3<S>& t, const V3<S>& b) {
  SVec<S> x;
  x.n = 6;
  for (int i = 0; i < 3; ++i) {
    x[i] = t[i];
    x[i + 3] = b[i];
  }
  return x;
}

template <class S>
V3<S> operator+(const V3<S>& a, const V3<S>& b) {
  return {a[0] + b[0], a[1] + b[1], a[2] + b[2]};
}
template <class S>
V3<S> operator-(const V3<S>& a, const V3<S>& b) {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
template <class S>
V3<S> operator-(const V3<S>& a) {
  return {-a[0], -a[1], -a[2]};
}
template <class S>
V3<S> scale(const S& s, const V3<S>& a) {
  return {s * a[0], s * a[1], s * a[2]};
}
template <class S>
S dot(const V3<S>& a, const V3<S>& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
template <class S>
V3<S> cross(const V3<S>& a, const V3<S>& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

// A x and A^T x.
template <class S>
V3<S> mul(const M3<S>& A, const V3<S>& x) {
  return {A[0] * x[0] + A[1] * x[1] + A[2] * x[2], A[3] * x[0] + A[4] * x[1] + A[5] * x[2],
          A[6] * x[0] + A[7] * x[1] + A[8] * x[2]};
}
template <class S>
V3<S> mul_t(const M3<S>& A, const V3<S>& x) {
  return {A[0] * x[0] + A[3] * x[1] + A[6] * x[2], A[1] * x[0] + A[4] * x[1] + A[7] * x[2],
          A[2] * x[0] + A[5] * x[1] + A[8] * x[2]};
}
template <class S>
M3<S> mul(const M3<S>& A, const M3<S>& B) {
  M3<S> C;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) C[3 * r + c] = A[3 * r] * B[c] + A[3 * r + 1] * B[3 + c] + A[3 * r + 2] * B[6 + c];
  return C;
}
template <class S>
M3<S> transpose(const M3<S>& A) {
  return {A[0], A[3], A[6], A[1], A[4], A[7], A[2], A[5], A[8]};
}
template <class S>
M3<S> operator+(const M3<S>& A, const M3<S>& B) {
  M3<S> C;
  for (int i = 0; i < 9; ++i) C[i] = A[i] + B[i];
  return C;
}

// Q A Q^T. `symmetric` says A is symmetric: then only the upper triangle is computed.
template <class S>
M3<S> congruence(const M3<S>& Q, const M3<S>& A, bool symmetric) {
  const M3<S> QA = mul(Q, A);
  M3<S> C;
  for (int r = 0; r < 3; ++r)
    for (int c = symmetric ? r : 0; c < 3; ++c) {
      const int i = 3 * r, j = 3 * c;
      C[3 * r + c] = QA[i] * Q[j] + QA[i + 1] * Q[j + 1] + QA[i + 2] * Q[j + 2];
      if (symmetric) C[3 * c + r] = C[3 * r + c];
    }
  return C;
}

// l~ A: the cross product of l with every column of A.
template <class S>
M3<S> cross_left(const V3<S>& l, const M3<S>& A) {
  M3<S> C;
  for (int c = 0; c < 3; ++c) {
    const V3<S> col{A[c], A[3 + c], A[6 + c]};
    const V3<S> x = cross(l, col);
    for (int r = 0; r < 3; ++r) C[3 * r + c] = x[r];
  }
  return C;
}
// A l~: row r is (l~^T a_r)^T = -(l x a_r) = a_r x l.
template <class S>
M3<S> cross_right(const M3<S>& A, const V3<S>& l) {
  M3<S> C;
  for (int r = 0; r < 3; ++r) {
    const V3<S> row{A[3 * r], A[3 * r + 1], A[3 * r + 2]};
    const V3<S> x = cross(row, l);
    for (int c = 0; c < 3; ++c) C[3 * r + c] = x[c];
  }
  return C;
}

// ---- small matrices --------------------------------------------------------------------

template <class S>
SVec<S> mul(const SMat<S>& A, const SVec<S>& x) {
  assert(A.cols == x.n);
  SVec<S> y;
  y.n = A.rows;
  for (int r = 0; r < A.rows; ++r) {
    S acc = A(r, 0) * x[0];
    for (int c = 1; c < A.cols; ++c) acc = acc + A(r, c) * x[c];
    y[r] = acc;
  }
  return y;
}
template <class S>
SVec<S> mul_t(const SMat<S>& A, const SVec<S>& x) {
  assert(A.rows == x.n);
  SVec<S> y;
  y.n = A.cols;
  for (int c = 0; c < A.cols; ++c) {
    S acc = A(0, c) * x[0];
    for (int r = 1; r < A.rows; ++r) acc = acc + A(r, c) * x[r];
    y[c] = acc;
  }
  return y;
}
template <class S>
SMat<S> mul(const SMat<S>& A, const SMat<S>& B) {
  assert(A.cols == B.rows);
  SMat<S> C;
  C.rows = A.rows;
  C.cols = B.cols;
  for (int r = 0; r < A.rows; ++r)
    for (int c = 0; c < B.cols; ++c) {
      S acc = A(r, 0) * B(0, c);
      for (int i = 1; i < A.cols; ++i) acc = acc + A(r, i) * B(i, c);
      C(r, c) = acc;
    }
  return C;
}
// A^T B, only the upper triangle when the result is known to be symmetric.
template <class S>
SMat<S> mul_tn(const SMat<S>& A, const SMat<S>& B, bool symmetric) {
  assert(A.rows == B.rows);
  SMat<S> C;
  C.rows = A.cols;
  C.cols = B.cols;
  for (int r = 0; r < A.cols; ++r)
    for (int c = symmetric ? r : 0; c < B.cols; ++c) {
      S acc = A(0, r) * B(0, c);
      for (int i = 1; i < A.rows; ++i) acc = acc + A(i, r) * B(i, c);
      C(r, c) = acc;
      if (symmetric) C(c, r) = acc;
    }
  return C;
}
template <class S>
SVec<S> operator+(const SVec<S>& a, const SVec<S>& b) {
  assert(a.n == b.n);
  SVec<S> y;
  y.n = a.n;
  for (int i = 0; i < a.n; ++i) y[i] = a[i] + b[i];
  return y;
}
template <class S>
SVec<S> operator-(const SVec<S>& a, const SVec<S>& b) {
  assert(a.n == b.n);
  SVec<S> y;
  y.n = a.n;
  for (int i = 0; i < a.n; ++i) y[i] = a[i] - b[i];
  return y;
}

// A symmetric positive definite matrix (n <= 6) as L Delta L^T, L unit lower triangular,
// without pivoting: D(k) and M(k) are positive definite for physical bodies. Kept with the
// pivots' reciprocals, which is what its uses multiply by.
template <class S>
struct Ldl {
  SMat<S> L;                 // unit lower triangular; the strict upper part is 0
  std::array<S, 6> d, dinv;  // Delta's pivots and their reciprocals
};

template <class S>
Ldl<S> ldl_spd(const SMat<S>& A) {
  const int n = A.rows;
  Ldl<S> f;
  f.L = smat_zero<S>(n, n);
  for (int j = 0; j < n; ++j) {
    S djj = A(j, j);
    for (int k = 0; k < j; ++k) djj = djj - f.L(j, k) * f.L(j, k) * f.d[k];
    f.d[j] = djj;
    f.dinv[j] = S(1.0) / djj;
    f.L(j, j) = S(1.0);
    for (int i = j + 1; i < n; ++i) {
      S lij = A(i, j);
      for (int k = 0; k < j; ++k) lij = lij - f.L(i, k) * f.L(j, k) * f.d[k];
      f.L(i, j) = lij * f.dinv[j];
    }
  }
  return f;
}

// L^-1 x for L unit lower triangular (forward substitution).
template <class S>
SVec<S> unit_lower_solve(const SMat<S>& L, const SVec<S>& x) {
  SVec<S> y = x;
  for (int i = 1; i < x.n; ++i)
    for (int k = 0; k < i; ++k) y[i] = y[i] - L(i, k) * y[k];
  return y;
}

// Delta^-1 x: x scaled by the pivots' reciprocals.
template <class S>
SVec<S> delta_solve(const Ldl<S>& f, const SVec<S>& x) {
  SVec<S> y = x;
  for (int i = 0; i < y.n; ++i) y[i] = y[i] * f.dinv[i];
  return y;
}

// A^-1 x = L^-T Delta^-1 L^-1 x from A's factors: as many operations as the product with
// A^-1, without forming A^-1 (which a root body's D, with no G to make, then never needs).
template <class S>
SVec<S> ldl_solve(const Ldl<S>& f, const SVec<S>& x) {
  SVec<S> y = delta_solve(f, unit_lower_solve(f.L, x));
  for (int i = y.n - 2; i >= 0; --i)
    for (int k = i + 1; k < y.n; ++k) y[i] = y[i] - f.L(k, i) * y[k];
  return y;
}

// A^-1 = L^-T Delta^-1 L^-1 from A's factors, column c solving for e_c; mirrored so that
// it is exactly symmetric.
template <class S>
SMat<S> ldl_inverse(const Ldl<S>& f) {
  const int n = f.L.rows;
  SMat<S> inv = smat_zero<S>(n, n);
  for (int c = 0; c < n; ++c) {
    SVec<S> e = svec_zero<S>(n);
    e[c] = S(1.0);
    const SVec<S> x = ldl_solve(f, e);
    for (int i = 0; i < n; ++i) inv(i, c) = x[i];
  }
  for (int r = 0; r < n; ++r)
    for (int c = r + 1; c < n; ++c) inv(c, r) = inv(r, c);
  return inv;
}

// Inverse of a symmetric positive definite matrix (n <= 6) by its L Delta L^T factors.
template <class S>
SMat<S> inverse_spd(const SMat<S>& A) {
  return ldl_inverse(ldl_spd(A));
}

// Rotation of the quaternion [x y z w] (robot.hpp order), normalised by s = 2 / |q|^2.
template <class S>
M3<S> quaternion_rotation(const S* q) {
  const S &x = q[0], &y = q[1], &z = q[2], &w = q[3];
  const S s = S(2.0) / (x * x + y * y + z * z + w * w);
  const S one(1.0);
  return {one - s * (y * y + z * z), s * (x * y - z * w),       s * (x * z + y * w),
          s * (x * y + z * w),       one - s * (x * x + z * z), s * (y * z - x * w),
          s * (x * z - y * w),       s * (y * z + x * w),       one - s * (x * x + y * y)};
}

}  // namespace soa::exec
