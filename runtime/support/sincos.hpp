// soa::sincos(x): sin x and cos x together, within 1 ulp, in plain IEEE double arithmetic
// -- the meaning of the ScalarProgram's Sin and Cos operations (compiler/specialise), which
// both back-ends reproduce operation for operation: the C++ back-end prints this function
// into the generated source (soa_sincos), the LLVM back-end builds it as IR in place.
//
// Why not libm: a robot-specialised kernel takes one sine and one cosine per revolute
// joint. As calls into glibc they cost 150-200 instructions a joint (callgrind, x in
// [-1, 1] to [-1000, 1000]), and a call clobbers every vector register, so the kernel's
// live values are spilled around it. Inline, the pair shares one argument reduction, is
// ~75 straight-line instructions (x86-64-v3), and stays in registers.
//
// Contract
// - |x| < 2^20, the fast path: within 1 ulp of sin x and cos x (measured against 113-bit
//   libquadmath over 4M random x up to 2^20, the 6.7M doubles next to a multiple of pi/2
//   and 2M tiny ones: at most 0.80 ulp; 97% of random results and all of those next to a
//   multiple of pi/2 correctly rounded. tests/unit/test_sincos.cpp checks the agreement
//   with glibc). sin(+-0) = +-0, cos(+-0) = 1; tiny and subnormal x give sin x = x exactly.
//   sin is odd and cos even, bit for bit.
// - Otherwise (|x| >= 2^20, +-Inf, NaN): {std::sin(x), std::cos(x)}, libm's own values.
// - Reproducible: IEEE-754 double +, -, * in a fixed order, round to nearest, a conversion
//   of a small integral double to int, sign flips. No FMA: with contraction (g++
//   -march=haswell, say, where -ffp-contract=fast is the default) the result is as
//   accurate (measured: 0.79 ulp) but not this one to the bit. The exact steps stay exact
//   under contraction: their products are exact.
//
// Algorithm
// 1. Reduction (Cody & Waite 1980, "Software Manual for the Elementary Functions"):
//    k = the integer nearest x * 2/pi, by adding and subtracting 1.5 * 2^52 (below 2^51
//    the sum has no fraction bits left, so it is rounded to an integer, ties to even, and
//    the same for -x); then x - k pi/2 = r - e. pi/2 is split into four parts, fdlibm's
//    pio2_1, pio2_2, pio2_3 (31, 32 and 28 significant bits) and pio2_3t (a full double),
//    2^-160 from pi/2 together. For |k| < 2^20, k * pio2_1..3 are exact; x - k pio2_1 is
//    exact (x and k pio2_1 are multiples of 2^-53 when k != 0, the difference below 1);
//    the two further subtractions are Fast2Sum steps (Dekker 1971) whose error terms e1, e2
//    are exact, either because the first operand is the larger or because the difference
//    is (the operands' granularities show it). e = e1 + e2 + k pio2_4 then rounds within
//    2^-104 |r| + 2^-136 of the exact tail: r - e is x - k pi/2 to 2^-75 relative at worst.
//    Why four parts: the doubles below 2^20 come as close as 2^-60.5 to a multiple of
//    pi/2 (x = 0x1.6c6cbc45dc8dep+5 = 45.55, k = 29; exhaustive search over all k), so
//    r - e must be right to about 2^-120 absolutely. Three parts (33 + 33 + 53 bits of pi/2,
//    the classic split) reduce 0x1.93c05c9ed3cbcp+18 1.06 ulp wrong, and its cosine is
//    then wrong by as much; with four, every double next to a multiple of pi/2 comes out
//    correctly rounded.
//    Why 2^20: k < 2^19.4 keeps the products exact, one compare on |x| decides, and 2^20
//    rad (~167,000 turns) is beyond any joint angle, a wheel's turning for hours included.
//    Why (r, e) is not renormalised into a double-double: the polynomials start from r
//    three dependent additions earlier, and the kernels are latency-bound (with this and
//    the Estrin evaluation below, the Panda's generated inverse dynamics ran 14% faster
//    than with fdlibm's Horner evaluation of a renormalised pair). |e| is below an ulp of
//    r unless |r| < 2^-30, where e ~ k pio2_4 is large against ulp(r) but only the terms
//    linear in e matter, and they are those a double-double's tail would get.
// 2. Polynomials on [-pi/4, pi/4]: fdlibm's minimax coefficients (k_sin.c, k_cos.c:
//    approximation errors below 2^-58), evaluated Estrin-style (Estrin 1960) for short
//    dependency chains.
//    With z = r^2, w = z^2:
//      sin(r - e) = r - (((e - e z/2) - r^5 (S2 + S3 z + ... + S6 w^2)) - r^3 S1)
//      cos(r - e) = (1 - z/2) + [exact error of 1 - z/2] + w (C1 + C2 z + ... + C6 z w^2) + r e
//    the large terms last, 1 - z/2 as an exact pair (as in FreeBSD msun's k_cos.c), so that
//    the final rounding dominates. sin ends in r - (...): for x = -0 the parenthesis is +0,
//    and -0 - +0 = -0.
// 3. Quadrant, k mod 4: sin(r + k pi/2) is sin r, cos r, -sin r, -cos r; cos(r + k pi/2)
//    is cos r, -sin r, -cos r, sin r.
#pragma once

#include <cmath>

namespace soa {

struct SinCos {
  double s, c;
};

// The constants of the algorithm, shared with the back-ends that print or build it.
namespace sincos_constants {
inline constexpr double fast_bound = 0x1p20;  // the fast path: |x| < fast_bound
inline constexpr double two_over_pi = 0x1.45f306dc9c883p-1;
inline constexpr double round_shift = 0x1.8p52;   // (y + shift) - shift rounds y to an integer
inline constexpr double pio2_1 = 0x1.921fb544p0;  // pi/2 = pio2_1 + pio2_2 + pio2_3 + pio2_4
inline constexpr double pio2_2 = 0x1.0b4611a6p-34;
inline constexpr double pio2_3 = 0x1.3198a2ep-69;
inline constexpr double pio2_4 = 0x1.b839a252049c1p-104;
// sin r = r + S1 r^3 + S2 r^5 + ... + S6 r^13 (fdlibm k_sin.c)
inline constexpr double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                        S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                        S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
// cos r = 1 - r^2/2 + C1 r^4 + C2 r^6 + ... + C6 r^14 (fdlibm k_cos.c)
inline constexpr double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                        C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                        C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
}  // namespace sincos_constants

inline SinCos sincos(double x) {
  using namespace sincos_constants;
  if (!(std::fabs(x) < fast_bound)) return {std::sin(x), std::cos(x)};
  // x - k pi/2 = r - e: Cody-Waite, the subtractions' error terms kept exactly
  const double k = (x * two_over_pi + round_shift) - round_shift;
  const double a = x - k * pio2_1;
  const double b = k * pio2_2, s1 = a - b, e1 = (s1 - a) + b;
  const double c = k * pio2_3, r = s1 - c, e2 = (r - s1) + c;
  const double e = (e1 + e2) + k * pio2_4;
  // sin and cos of r - e
  const double z = r * r, w = z * z, v = z * r, hz = 0.5 * z, h = 1.0 - hz;
  const double ps = ((S2 + z * S3) + w * (S4 + z * S5)) + (w * w) * S6;
  const double sin_r = r - (((e - hz * e) - (z * v) * ps) - v * S1);
  const double pc = ((C1 + z * C2) + w * (C3 + z * C4)) + (w * w) * (C5 + z * C6);
  const double cos_r = h + (((1.0 - h) - hz) + (w * pc + r * e));
  // the quadrant, k mod 4
  const unsigned n = static_cast<unsigned>(static_cast<int>(k)) & 3u;
  const double s = n & 1u ? cos_r : sin_r, co = n & 1u ? sin_r : cos_r;
  return {n & 2u ? -s : s, (n + 1u) & 2u ? -co : co};
}

}  // namespace soa
