// soa::sincos (runtime/support/sincos.hpp), the meaning of the Sin and Cos operations in
// every back-end: within 1 ulp of libm over the fast path |x| < 2^20 -- on random angles,
// on every double nearest a multiple of pi/2, on tiny and subnormal ones -- with the
// signed zeros and the symmetries right, and libm itself beyond.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "support/sincos.hpp"

namespace {

// The distance in ulps between two finite doubles: how many doubles lie between them,
// across zero too.
std::int64_t ulps(double a, double b) {
  const auto ordered = [](double x) {
    std::int64_t i;
    std::memcpy(&i, &x, sizeof i);
    return i < 0 ? INT64_MIN - i : i;
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Over a set of arguments: the largest distance from libm's sin and cos, and how many
// results are libm's exactly.
struct Agreement {
  std::int64_t worst = 0;
  double worst_x = 0;
  long same = 0, total = 0;

  void add(double x) {
    const soa::SinCos r = soa::sincos(x);
    for (const auto& [ours, libm] : {std::pair{r.s, std::sin(x)}, std::pair{r.c, std::cos(x)}}) {
      const std::int64_t d = ulps(ours, libm);
      if (d > worst) worst = d, worst_x = x;
      same += d == 0;
      ++total;
    }
  }
  double fraction_same() const { return static_cast<double>(same) / static_cast<double>(total); }
};

}  // namespace

TEST_CASE("sin and cos are within 1 ulp of libm on random angles of the fast path", "[sincos]") {
  std::mt19937_64 rng(2024);
  for (const double range : {0.785, 10.0, 1e4, 0x1p20}) {
    INFO("x uniform in [-" << range << ", " << range << "]");
    std::uniform_real_distribution<double> u(-range, range);
    Agreement a;
    for (int i = 0; i < 1'000'000; ++i) a.add(u(rng));
    INFO("worst " << a.worst << " ulp at x = " << a.worst_x << "; " << 100 * a.fraction_same() << "% equal to libm");
    CHECK(a.worst <= 1);
    // Not merely faithful: glibc's sin and cos are almost always correctly rounded, and so
    // are ours (measured: 97%; the rest 1 ulp off, max error 0.80 ulp).
    CHECK(a.fraction_same() > 0.95);
  }
}

TEST_CASE("arguments nearest a multiple of pi/2 lose no accuracy in the reduction", "[sincos]") {
  // Every k with k pi/2 < 2^20: the doubles around k pi/2, whose reduced argument is tiny
  // and would carry the reduction's error at full weight. The nearest of all is 2^-60.5
  // from 29 pi/2 (an exhaustive search over these k).
  Agreement a;
  for (long k = 1; k * M_PI_2 < 0x1p20; ++k) {
    double x = static_cast<double>(k) * M_PI_2;
    x = std::nextafter(std::nextafter(x, 0.0), 0.0);
    for (int step = 0; step < 5; ++step, x = std::nextafter(x, INFINITY))
      if (x < 0x1p20) {
        a.add(x);
        a.add(-x);
      }
  }
  INFO("worst " << a.worst << " ulp at x = " << a.worst_x);
  CHECK(a.worst <= 1);
  CHECK(a.fraction_same() > 0.999);
  // Hard cases, against their correctly rounded values (computed with 113-bit
  // libquadmath): the nearest of all (29 pi/2), one of the nearest with a large k, and the
  // one a three-part split of pi/2 gets 1.06 ulp wrong (sincos.hpp says why four parts).
  const soa::SinCos hardest = soa::sincos(0x1.6c6cbc45dc8dep+5);
  CHECK(same_bits(hardest.s, 1.0));
  CHECK(same_bits(hardest.c, -0x1.6d61b58c99c43p-61));
  const soa::SinCos far = soa::sincos(0x1.39c6fd67805a7p+19);
  CHECK(same_bits(far.s, 0x1.988efe18ff83fp-54));
  CHECK(same_bits(far.c, -1.0));
  const soa::SinCos three_parts = soa::sincos(0x1.93c05c9ed3cbcp+18);
  CHECK(same_bits(three_parts.s, 1.0));
  CHECK(same_bits(three_parts.c, -0x1.065d73720c4f9p-52));
  const soa::SinCos quarter = soa::sincos(M_PI_2);
  CHECK(same_bits(quarter.s, 1.0));
  CHECK(same_bits(quarter.c, 0x1.1a62633145c07p-54));
}

TEST_CASE("signed zeros, tiny and subnormal arguments: sin x = x and cos x = 1 exactly", "[sincos]") {
  const soa::SinCos plus = soa::sincos(0.0), minus = soa::sincos(-0.0);
  CHECK(same_bits(plus.s, 0.0));
  CHECK(same_bits(minus.s, -0.0));  // sin is odd, down to the sign of zero
  CHECK(plus.c == 1.0);
  CHECK(minus.c == 1.0);
  for (const double x : {0x1p-1074, 0x1p-1060, DBL_MIN, 0x1p-600, 1e-20, 0x1p-27}) {
    INFO("x = " << x);
    for (const double signed_x : {x, -x}) {
      const soa::SinCos r = soa::sincos(signed_x);
      CHECK(same_bits(r.s, signed_x));
      CHECK(r.c == 1.0);
    }
  }
  // Tiny to small, every binade: within 1 ulp of libm.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> exponent(-1074.0, -1.0);
  Agreement a;
  for (int i = 0; i < 500'000; ++i) {
    const double x = std::exp2(exponent(rng));
    a.add(x);
    a.add(-x);
  }
  INFO("worst " << a.worst << " ulp at x = " << a.worst_x);
  CHECK(a.worst <= 1);
}

TEST_CASE("sin is odd and cos even, exactly", "[sincos]") {
  // Every step rounds to nearest, which is symmetric, and k = -k for -x (ties go to even
  // on both sides): so the results mirror bit for bit.
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> u(0.0, 0x1p20);
  for (int i = 0; i < 200'000; ++i) {
    const double x = i < 100'000 ? u(rng) / 1e5 : u(rng);
    const soa::SinCos p = soa::sincos(x), m = soa::sincos(-x);
    REQUIRE(same_bits(m.s, -p.s));
    REQUIRE(same_bits(m.c, p.c));
  }
}

TEST_CASE("beyond the fast path, infinities and NaN: libm's sin and cos exactly", "[sincos]") {
  // The fast path ends just below 2^20; from 2^20 on, libm.
  const double below = std::nextafter(0x1p20, 0.0);
  CHECK(ulps(soa::sincos(below).s, std::sin(below)) <= 1);
  CHECK(ulps(soa::sincos(below).c, std::cos(below)) <= 1);
  for (const double x : {0x1p20, -0x1p20, 1.5e6, 1e22, -1e22, 0x1p1000, DBL_MAX, -DBL_MAX}) {
    INFO("x = " << x);
    CHECK(same_bits(soa::sincos(x).s, std::sin(x)));
    CHECK(same_bits(soa::sincos(x).c, std::cos(x)));
  }
  for (const double x : {INFINITY, -INFINITY, NAN, -NAN}) {
    INFO("x = " << x);
    CHECK(std::isnan(soa::sincos(x).s));
    CHECK(std::isnan(soa::sincos(x).c));
  }
}
