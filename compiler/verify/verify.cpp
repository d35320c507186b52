#include "verify/verify.hpp"

#include <random>

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

bool is_success(Verdict v) {
  return v == Verdict::Pass || v == Verdict::ExpectedFail || v == Verdict::Skipped;
}

Result check(const Claim& claim, const Subject& subject, const Options& options,
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
  try {
    for (int i = 0; i < options.samples; ++i) {
      const std::uint64_t seed = options.seed + subject.seed_offset + static_cast<std::uint64_t>(i);
      std::mt19937_64 rng(seed);
      const State state = random_state(*subject.robot, static_cast<int>(subject.tips.size()), rng);
      const interp::Evaluation ev = interp::prepare(*subject.robot, state, subject.tips);
      const MatX first = interp::eval_dense(ev, claim.sides.front());
      for (std::size_t s = 1; s < claim.sides.size(); ++s) {
        const MatX other = interp::eval_dense(ev, claim.sides[s]);
        SOA_ASSERT(other.rows() == first.rows() && other.cols() == first.cols(),
                   "sides of a shape-checked claim differ in size");
        const MatX diff = (other - first).cwiseAbs();
        Eigen::Index row = 0, col = 0;
        const double abs = diff.size() ? diff.maxCoeff(&row, &col) : 0.0;
        const double scale = std::max({first.size() ? first.cwiseAbs().maxCoeff() : 0.0,
                                       other.size() ? other.cwiseAbs().maxCoeff() : 0.0, 1.0});
        const double rel = abs / scale;
        if (!(rel <= options.tol)) failed = true;  // NaN fails too
        if (rel > r.max_rel || std::isnan(rel) || (i == 0 && s == 1)) {
          r.max_rel = rel;
          r.worst = {seed,
                     static_cast<int>(s),
                     static_cast<int>(row),
                     static_cast<int>(col),
                     first(row, col),
                     other(row, col)};
        }
        r.max_abs = std::max(r.max_abs, abs);
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
  Result out = rank(b.verdict) > rank(a.verdict) ||
                       (rank(b.verdict) == rank(a.verdict) && b.max_rel > a.max_rel)
                   ? b
                   : a;
  out.max_abs = std::max(a.max_abs, b.max_abs);
  out.max_rel = std::max(a.max_rel, b.max_rel);
  return out;
}

}  // namespace soa::verify
