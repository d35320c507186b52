// Numerical verification of claimed identities.
//
// Contract: a claim S0 = S1 = ... holds on a robot when, for every sampled state, the dense
// evaluation (the ground truth, runtime/interp) of every side agrees with S0 to `tol`
// relative: max |Si - S0| <= tol * max(max |S0|, max |Si|, 1). Samples are reproducible:
// on a robot file, sample i uses the state drawn from seed + i; a random tree t is built
// from seed + t and its sample i uses seed + t + i. A failure carries everything needed to
// reproduce it (robot, seed, worst entry).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "algebra/expr.hpp"
#include "model/robot.hpp"

namespace soa::verify {

struct Claim {
  std::string name;      // identity name, or the statement itself for a command-line claim
  std::string citation;
  std::vector<ir::Expr> sides;
  bool serial_only = false;   // [serial]: meaningful on serial chains only
  bool expect_false = false;  // [false]: a known-false statement; FAIL is the expected answer
};

struct Options {
  int samples = 10;
  std::uint64_t seed = 1;
  double tol = 1e-9;
};

enum class Verdict { Pass, Fail, ExpectedFail, UnexpectedPass, Skipped };
const char* to_string(Verdict v);
bool is_success(Verdict v);

struct Worst {
  std::uint64_t seed = 0;  // the state seed of the worst sample
  int side = 1;            // which side disagreed most with side 0
  int row = 0, col = 0;
  double lhs = 0.0, rhs = 0.0;
};

struct Result {
  std::string name, citation;
  std::string robot;  // source of the robot the worst sample came from
  Verdict verdict = Verdict::Pass;
  double max_abs = 0.0, max_rel = 0.0;
  std::string note;  // why skipped, or the error that stopped evaluation
  Worst worst;
};

// One robot, with its tip frames.
struct Subject {
  const Robot* robot;
  std::vector<int> tips;
  std::uint64_t seed_offset = 0;  // the random tree's offset t (0 on a robot file)
};

// Check one claim on one robot. `progress` (may be empty) is called after every sample.
Result check(const Claim& claim, const Subject& subject, const Options& options,
             const std::function<void()>& progress = {});

// Combine the results of one claim over several robots: the worst one wins.
Result merge(const Result& a, const Result& b);

}  // namespace soa::verify
