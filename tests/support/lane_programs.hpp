// Programs of the shape lane groups take (specialise/lanes.hpp), for the planner's tests
// and for both back-ends' (test_lanes, test_emit_cpp).
#pragma once

#include <random>
#include <vector>

#include "scalar_builder.hpp"
#include "specialise/scalar_program.hpp"

namespace soa::test {

// What the row factor a_i[k] of a Gram-like program is.
enum class Factor { Input, Absent, Literal, One };

// out(i,j) = sum_k a_i[k] w_j[k] for i <= j, mirrored (column-major, n x n), as the
// tracer leaves a Gram matrix: absent terms (a zero factor), literal and unit factors,
// subtracted terms, a literal term at the end, operands in either order.
inline specialise::ScalarProgram gram_like(std::mt19937_64& rng, int n, int depth) {
  ScalarBuilder b(2 * n * depth);
  std::uniform_int_distribution<int> percent(0, 99);
  std::uniform_real_distribution<double> value(-2.0, 2.0);
  std::vector<std::vector<int>> a(n, std::vector<int>(depth)), w(n, std::vector<int>(depth));
  std::vector<std::vector<Factor>> kind(n, std::vector<Factor>(depth));
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < depth; ++k) {
      const int r = percent(rng);
      kind[i][k] = r < 70 ? Factor::Input : r < 80 ? Factor::Absent : r < 90 ? Factor::Literal : Factor::One;
      a[i][k] = kind[i][k] == Factor::Input     ? b.in(i * depth + k)
                : kind[i][k] == Factor::Literal ? b.lit(value(rng))
                                                : -1;
      // w: computed values (as W A e_j is), so that they are read from scratch
      w[i][k] = b.add(specialise::ScalarOp::Mul, b.in(n * depth + i * depth + k), b.lit(1.5));
    }
  std::vector<int> entry(n * n, -1);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= j; ++i) {
      int acc = -1;
      for (int k = 0; k < depth; ++k) {
        if (kind[i][k] == Factor::Absent) continue;
        int term = w[j][k];
        if (kind[i][k] != Factor::One)
          term = percent(rng) < 50 ? b.add(specialise::ScalarOp::Mul, a[i][k], w[j][k])
                                   : b.add(specialise::ScalarOp::Mul, w[j][k], a[i][k]);
        if (acc < 0) {
          acc = term;
        } else if (percent(rng) < 20) {
          acc = b.add(specialise::ScalarOp::Sub, acc, term);
        } else {
          acc = percent(rng) < 50 ? b.add(specialise::ScalarOp::Add, acc, term)
                                  : b.add(specialise::ScalarOp::Add, term, acc);
        }
      }
      if (percent(rng) < 10)
        acc = acc < 0 ? b.lit(value(rng)) : b.add(specialise::ScalarOp::Add, acc, b.lit(value(rng)));
      if (acc < 0) acc = b.lit(0.0);
      entry[j * n + i] = entry[i * n + j] = acc;
    }
  b.p.outputs = entry;
  specialise::check(b.p);
  return b.p;
}

// The factors of a product X S as input nodes: x(r, j) = x[r * inner + j], s(j, d) =
// s[j * cols + d].
struct ProductFactors {
  std::vector<int> x, s;
};
inline ProductFactors product_factors(ScalarBuilder& b, int rows, int inner, int cols) {
  ProductFactors f;
  for (int i = 0; i < rows * inner; ++i) f.x.push_back(b.in(i));
  for (int i = 0; i < inner * cols; ++i) f.s.push_back(b.in(rows * inner + i));
  return f;
}

// out(r, d) = -(sum over j of x(r, j) s(j, d)) for r < rows, d < cols, column-major, as
// forward dynamics' derivatives end (-calM^-1 d tau): each column skips some j, some terms
// are subtracted; the tracer's folding leaves such entries as Neg(chain).
inline specialise::ScalarProgram negated_product(std::mt19937_64& rng, int rows, int inner, int cols) {
  ScalarBuilder b(rows * inner + inner * cols);
  std::uniform_int_distribution<int> percent(0, 99);
  const auto [x, s] = product_factors(b, rows, inner, cols);
  std::vector<int> out;
  for (int d = 0; d < cols; ++d) {
    std::vector<int> js;
    std::vector<bool> sub;
    for (int j = 0; j < inner; ++j)
      if (percent(rng) < 70) js.push_back(j), sub.push_back(!js.empty() && js.size() > 1 && percent(rng) < 25);
    for (int r = 0; r < rows; ++r) {
      int acc = -1;
      for (std::size_t k = 0; k < js.size(); ++k) {
        const int term = b.add(specialise::ScalarOp::Mul, x[r * inner + js[k]], s[js[k] * cols + d]);
        acc = acc < 0 ? term : b.add(sub[k] ? specialise::ScalarOp::Sub : specialise::ScalarOp::Add, acc, term);
      }
      out.push_back(acc < 0 ? b.lit(0.0) : b.add(specialise::ScalarOp::Neg, acc));
    }
  }
  b.p.outputs = out;
  specialise::check(b.p);
  return b.p;
}

// out(r, d) = sum over j of +-x(r, j) s(j, d), column-major, each entry a chain as
// Tracer::sum records forward dynamics' derivatives' (-calM^-1 d tau, pipeline/kernels.cpp):
// the terms in j's order, each column skipping some j, term j's sign that of its row and j
// times that of j and its column (calM^-1's and d tau's negations), a subtracted first term
// the negation -x s. A column's rows line up term by term, with their own signs
// (lanes.hpp: columns). With `repeated`, the last j's factor s(j, d) is s(0, d), the same
// node: two entries of d tau that are one value (lanes.cpp), a factor twice in every row's
// chain.
inline specialise::ScalarProgram signed_product(std::mt19937_64& rng, int rows, int inner, int cols,
                                                bool repeated = false) {
  ScalarBuilder b(rows * inner + inner * cols);
  std::uniform_int_distribution<int> percent(0, 99);
  auto [x, s] = product_factors(b, rows, inner, cols);
  if (repeated)
    for (int d = 0; d < cols; ++d) s[(inner - 1) * cols + d] = s[d];
  std::vector<char> row_sign(rows * inner);
  for (char& sign : row_sign) sign = percent(rng) < 30;
  std::vector<int> out;
  for (int d = 0; d < cols; ++d) {
    std::vector<int> js;
    std::vector<char> column_sign;
    for (int j = 0; j < inner; ++j)
      if (js.empty() || (repeated && j == inner - 1) || percent(rng) < 70)
        js.push_back(j), column_sign.push_back(percent(rng) < 40);
    for (int r = 0; r < rows; ++r) {
      int acc = -1;
      for (std::size_t k = 0; k < js.size(); ++k) {
        const int term = b.add(specialise::ScalarOp::Mul, x[r * inner + js[k]], s[js[k] * cols + d]);
        const bool sub = row_sign[r * inner + js[k]] != column_sign[k];
        acc = acc >= 0 ? b.add(sub ? specialise::ScalarOp::Sub : specialise::ScalarOp::Add, acc, term)
              : sub    ? b.add(specialise::ScalarOp::Neg, term)
                       : term;
      }
      out.push_back(acc);
    }
  }
  b.p.outputs = out;
  specialise::check(b.p);
  return b.p;
}

// A product X S (rows x inner times inner x cols, column-major) whose entries start with
// their first two terms the other way round from row to row: even rows as x_b s_b + x_a s_a,
// odd rows as x_a s_a - x_b s_b, the rest in one order. Lanes sharing s_a and s_b take s_b
// first, so the odd rows start at -x_b s_b (lanes.hpp: a subtracted first term).
inline specialise::ScalarProgram swapped_pairs(std::mt19937_64& rng, int rows, int inner, int cols) {
  ScalarBuilder b(rows * inner + inner * cols);
  std::uniform_int_distribution<int> percent(0, 99);
  const auto [x, s] = product_factors(b, rows, inner, cols);
  std::vector<int> out;
  for (int d = 0; d < cols; ++d)
    for (int r = 0; r < rows; ++r) {
      const auto term = [&](int j) { return b.add(specialise::ScalarOp::Mul, x[r * inner + j], s[j * cols + d]); };
      int acc = r % 2 ? b.add(specialise::ScalarOp::Sub, term(0), term(1))
                      : b.add(specialise::ScalarOp::Add, term(1), term(0));
      for (int j = 2; j < inner; ++j)
        acc = b.add(percent(rng) < 25 ? specialise::ScalarOp::Sub : specialise::ScalarOp::Add, acc, term(j));
      out.push_back(acc);
    }
  b.p.outputs = out;
  specialise::check(b.p);
  return b.p;
}

}  // namespace soa::test
