#include "verify/verify.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "interp/interpreter.hpp"
#include "support/error.hpp"

namespace soa::verify {

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::Pass: return "PASS";
    case Verdict::Fail: return "FAIL";
    case Verdict::ExpectedFail: return "XFAIL";
    case Verdict::UnexpectedPass: return "XPASS";
    case Verdict::Skipped: return "SKIP";
  }
  return "?";
}

MatX entry_scales(const MatX& S0, const MatX& Si) {
  SOA_ASSERT(S0.rows() == Si.rows() && S0.cols() == Si.cols(), "entry_scales: sides differ in size");
  MatX scale(S0.rows(), S0.cols());
  if (S0.size() == 0) return scale;
  // Non-finite entries are left out of the scales; relative_errors() fails them itself.
  const MatX A = S0.cwiseAbs().cwiseMax(Si.cwiseAbs()).unaryExpr([](double x) { return std::isfinite(x) ? x : 0.0; });
  const VecX r = A.rowwise().maxCoeff();
  const VecX c = A.colwise().maxCoeff().transpose();
  const double floor = std::max(kScaleFloor * A.maxCoeff(), std::numeric_limits<double>::min());
  for (Eigen::Index j = 0; j < A.cols(); ++j)
    for (Eigen::Index i = 0; i < A.rows(); ++i) scale(i, j) = std::max(std::sqrt(r(i)) * std::sqrt(c(j)), floor);
  return scale;
}

MatX relative_errors(const MatX& S0, const MatX& Si) {
  const MatX scale = entry_scales(S0, Si);
  MatX rel(S0.rows(), S0.cols());
  for (Eigen::Index j = 0; j < S0.cols(); ++j)
    for (Eigen::Index i = 0; i < S0.rows(); ++i) {
      const double a = S0(i, j), b = Si(i, j);
      // Equal infinities are not agreement either: neither side has a value there.
      rel(i, j) = std::isfinite(a) && std::isfinite(b) ? std::abs(b - a) / scale(i, j)
                                                       : std::numeric_limits<double>::infinity();
    }
  return rel;
}

double max_relative_error(const MatX& S0, const MatX& Si) {
  const MatX rel = relative_errors(S0, Si);
  return rel.size() ? rel.maxCoeff() : 0.0;
}

std::vector<int> sample_coordinates(int N, std::mt19937_64& rng) {
  std::vector<int> coordinates;
  if (N == 0) return coordinates;
  std::uniform_int_distribution<int> pick(0, N - 1);
  for (int c = 0; c < kCoordinatesPerSample; ++c) coordinates.push_back(pick(rng));
  return coordinates;
}

namespace {

bool has_symbol(const ir::Expr& e) {
  if (e.op() == ir::Op::Symbol) return true;
  return std::any_of(e.kids().begin(), e.kids().end(), has_symbol);
}

// The number c of a side made of I, 0 and numbers alone (its value is c I).
double scalar_value(const ir::Expr& e) {
  switch (e.op()) {
    case ir::Op::Identity: return 1.0;
    case ir::Op::Zero: return 0.0;
    case ir::Op::Scale: return e.coef() * scalar_value(e.kids().front());
    case ir::Op::Adjoint: return scalar_value(e.kids().front());
    case ir::Op::Derivative: return 0.0;  // of a constant
    case ir::Op::Inverse: {
      const double x = scalar_value(e.kids().front());
      if (x == 0.0) throw UserError(fmt::format("{} is singular", ir::print(e)));
      return 1.0 / x;
    }
    case ir::Op::Sum: {
      double x = 0.0;
      for (const auto& k : e.kids()) x += scalar_value(k);
      return x;
    }
    case ir::Op::Product: {
      double x = 1.0;
      for (const auto& k : e.kids()) x *= scalar_value(k);
      return x;
    }
    case ir::Op::Symbol: break;
  }
  SOA_ASSERT(false, "scalar_value of an expression with a symbol");
  return 0.0;
}

// A side's dense value. A side without symbols (`I`, `0`, `2 I - I`) has no size of its
// own: it takes the equation's, sized against `sized`, a side that has one.
MatX side_value(const interp::Evaluation& ev, const ir::Expr& side, const ir::Expr& sized) {
  if (has_symbol(side)) return interp::eval_dense(ev, side);
  const ir::Shape shape = ir::infer_shape(sized);
  const int rows = interp::rows(ev, shape.rows, shape.row_arm, sized);
  const int cols = interp::rows(ev, shape.cols, shape.col_arm, sized);
  // c I is square; a 0 side may be any shape (H psi - H psi = 0).
  return scalar_value(side) * MatX::Identity(rows, cols);
}

}  // namespace

bool is_success(Verdict v) { return v == Verdict::Pass || v == Verdict::ExpectedFail || v == Verdict::Skipped; }

Result check(const Claim& claim, const Subject& subject, const ir::Definitions& definitions, const Options& options,
             const std::function<void()>& progress) {
  Result r;
  r.name = claim.name;
  r.citation = claim.citation;
  r.robot = subject.robot->source;
  if (claim.serial_only && !subject.robot->is_serial_chain()) {
    r.verdict = Verdict::Skipped;
    r.note = "holds on serial chains only";
    return r;
  }
  bool failed = false;
  const auto with_size = std::find_if(claim.sides.begin(), claim.sides.end(), has_symbol);
  const ir::Expr& sized = with_size != claim.sides.end() ? *with_size : claim.sides.front();
  // A claim about d(...)/dq_i or X_i holds for every coordinate i: each sample checks
  // kCoordinatesPerSample of them, drawn from its seed, against the dense interpreter's
  // differences (interp/dense.cpp), so to at most kDerivativeTol.
  const bool per_coordinate = std::any_of(claim.sides.begin(), claim.sides.end(), ir::needs_coordinate);
  const double tol = per_coordinate ? std::max(options.tol, kDerivativeTol) : options.tol;
  bool inconclusive = false;
  try {
    for (int i = 0; i < options.samples; ++i) {
      const std::uint64_t seed = options.seed + subject.seed_offset + static_cast<std::uint64_t>(i);
      std::mt19937_64 rng(seed);
      const State state = random_state(*subject.robot, static_cast<int>(subject.tips.size()), rng);
      interp::Evaluation ev = interp::prepare(*subject.robot, state, subject.tips, definitions);
      const std::vector<int> coordinates = per_coordinate ? sample_coordinates(ev.N, rng) : std::vector<int>{-1};
      if (coordinates.empty()) {  // nothing to differentiate by: the claim says nothing here
        r.verdict = Verdict::Skipped;
        r.note = "the robot has no coordinates, so d(...)/dq_i and X_i have no i";
        return r;
      }
      for (const int coordinate : coordinates) {
        ev.coordinate = coordinate;
        const MatX first = side_value(ev, claim.sides.front(), sized);
        for (std::size_t s = 1; s < claim.sides.size(); ++s) {
          const MatX other = side_value(ev, claim.sides[s], sized);
          SOA_ASSERT(other.rows() == first.rows() && other.cols() == first.cols(),
                     "sides of a shape-checked claim differ in size");
          const MatX rels = relative_errors(first, other);
          Eigen::Index row = 0, col = 0;
          const double rel = rels.size() ? rels.maxCoeff(&row, &col) : 0.0;
          const double abs =
              rels.size()
                  ? (other - first)
                        .cwiseAbs()
                        .unaryExpr([](double x) { return std::isnan(x) ? std::numeric_limits<double>::infinity() : x; })
                        .maxCoeff()
                  : 0.0;
          if (!(rel <= tol)) {  // NaN fails too
            if (per_coordinate && !failed) {
              // Differences judge a claim only where they are accurate: the sides again at a
              // step 4 times longer; where either moves by more than tol, rounding (a robot
              // whose masses are 1e9 apart) decides, not the claim.
              interp::Evaluation longer = ev;
              longer.step = 4 * ev.step;
              const double noise = std::max(max_relative_error(first, side_value(longer, claim.sides.front(), sized)),
                                            max_relative_error(other, side_value(longer, claim.sides[s], sized)));
              if (noise <= tol) {
                failed = true;
              } else if (!inconclusive) {
                inconclusive = true;
                r.note = fmt::format(
                    "d(...)/dq_i by differences is not accurate enough here to judge: steps of {:g} and {:g} give "
                    "values {:.1e} apart (relative)",
                    ev.step, longer.step, noise);
              }
            } else {
              failed = true;
            }
          }
          if (rels.size() && (rel > r.max_rel || (i == 0 && s == 1))) {
            r.max_rel = rel;
            r.worst = {seed,
                       subject.seed_offset,
                       i,
                       static_cast<int>(s),
                       static_cast<int>(row),
                       static_cast<int>(col),
                       first(row, col),
                       other(row, col)};
          }
          r.max_abs = std::max(r.max_abs, abs);
        }
      }
      if (progress) progress();
    }
  } catch (const UserError& e) {
    // A side that has no value here (a singular inverse) cannot equal the others.
    failed = true;
    r.note = e.what();
  }
  if (claim.expect_false)
    r.verdict = failed ? Verdict::ExpectedFail : Verdict::UnexpectedPass;
  else
    r.verdict = failed ? Verdict::Fail : Verdict::Pass;
  if (inconclusive && !failed) r.verdict = Verdict::Skipped;
  return r;
}

Result merge(const Result& a, const Result& b) {
  auto rank = [](Verdict v) {
    switch (v) {
      case Verdict::Fail:
      case Verdict::UnexpectedPass: return 3;
      case Verdict::ExpectedFail: return 2;
      case Verdict::Pass: return 1;
      case Verdict::Skipped: return 0;
    }
    return 0;
  };
  Result out =
      rank(b.verdict) > rank(a.verdict) || (rank(b.verdict) == rank(a.verdict) && b.max_rel > a.max_rel) ? b : a;
  out.max_abs = std::max(a.max_abs, b.max_abs);
  out.max_rel = std::max(a.max_rel, b.max_rel);
  return out;
}

}  // namespace soa::verify
