// Numerical verification of claimed identities.
//
// Contract: a claim S0 = S1 = ... holds on a robot when, for every sampled state, the dense
// evaluation (the ground truth, compiler/interp) of every side agrees with S0 entry by entry,
// each entry judged against its own scale (relative_errors()):
//   |Si - S0|(i,j) <= tol * max(sqrt(r_i c_j), kScaleFloor * G)
// where r_i and c_j are the largest magnitudes in row i and column j of S0 and Si together,
// and G the largest in both. Why: with a body 1e9 times heavier than the rest, a judge
// against G alone passes an error of 1 among entries of 1; a judge against the entry alone
// fails an entry that is ~0 by cancellation of large terms on rounding. Rows and columns
// carry the scale of their degree of freedom (units and mass), so an error in a light row
// or column is judged against that row or column, while an entry's rounding is bounded by
// the terms around it. The floor keeps an all-zero row and column (rounding leftovers
// only) from failing. "max rel" is the largest such relative error. A non-finite entry on
// either side never agrees. A side without symbols (`I`, `0`) takes the equation's size.
// Samples are reproducible:
// on a robot file, sample i uses the state drawn from seed + i; a random tree t is built
// from seed + t and its sample i uses seed + t + i. A failure carries everything needed to
// reproduce it (robot, seed, worst entry).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "algebra/expr.hpp"
#include "model/kinematics.hpp"
#include "algebra/definitions.hpp"
#include "model/robot.hpp"
#include "model/tips.hpp"

namespace soa::verify {

struct Claim {
  std::string name;  // identity name, or the statement itself for a command-line claim
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

// The relative floor of an entry's scale, against the largest magnitude G of both sides:
// rounding leftovers of k operations on terms of size G are ~k eps G, which stays far
// below tol * kScaleFloor * G for the default tol.
inline constexpr double kScaleFloor = 1e-5;

// Per entry: max(sqrt(r_i c_j), kScaleFloor * G), and |Si - S0| over it (infinite where
// either side is not finite). Both sides have one size.
MatX entry_scales(const MatX& S0, const MatX& Si);
MatX relative_errors(const MatX& S0, const MatX& Si);
// The largest of relative_errors(S0, Si); 0 when the sides are empty (a robot without joints).
double max_relative_error(const MatX& S0, const MatX& Si);

// A claim with d(...)/dq_i or X_i: the coordinates i each sample checks, and the tolerance
// its derivatives by differences meet (rounding over the step, 1e-16 / 1e-3 of the
// function, against entries floored at kScaleFloor of the largest: up to ~1e-8).
inline constexpr int kCoordinatesPerSample = 3;
inline constexpr double kDerivativeTol = 1e-6;
// The coordinates one sample checks: kCoordinatesPerSample drawn from 0 to N - 1 (none
// when N is 0: the claim has no i to hold at).
std::vector<int> sample_coordinates(int N, std::mt19937_64& rng);

enum class Verdict { Pass, Fail, ExpectedFail, UnexpectedPass, Skipped };
const char* to_string(Verdict v);
bool is_success(Verdict v);

struct Worst {
  std::uint64_t seed = 0;  // the state seed of the worst sample
  std::uint64_t tree = 0;  // the subject's seed_offset (the random tree t)
  int sample = 0;          // the sample index i: seed = options.seed + tree + i
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

// Check one claim on one robot, the derived operators evaluated by the library's
// `definitions`. `progress` (may be empty) is called after every sample.
Result check(const Claim& claim, const Subject& subject, const ir::Definitions& definitions, const Options& options,
             const std::function<void()>& progress = {});

// Combine the results of one claim over several robots: the worst one wins.
Result merge(const Result& a, const Result& b);

// One claim on every subject, the results merged.
Result check_all(const Claim& claim, const std::vector<Subject>& subjects, const ir::Definitions& definitions,
                 const Options& options, const std::function<void()>& progress = {});

// What soac verify and soac.verify share, so that both read and report claims alike.
// Each argument a .soa file (every identity in it; one without any is a UserError) or a
// statement "LHS = RHS [= ...]", parsed as the text `source_name` ("<command line>").
std::vector<Claim> read_claims(const std::vector<std::string>& args, const std::string& source_name);
// The claim as soac prints it: its sides joined by " = ".
std::string statement(const Claim& claim);
// `count` random trees, tree t from seed + t: size (2 to 12 bodies), joint mix and base vary
// with the seed; claims about arms (psi2, ...) get as many random arms, one tip each
// (random_robot), else every leaf is a tip.
std::vector<LoadedRobot> random_trees(const std::vector<Claim>& claims, std::uint64_t seed, int count);
// The robot a reproduce command names: a URDF file and soac verify's options for it.
struct CommandRobot {
  std::string path;
  bool floating = false;
  std::vector<std::string> tips;
};
// `soac verify ... "STATEMENT"`: the command that checks exactly the worst sample of `r`
// again. On random trees (`robot` null), the tree it came from (seed + t) and the samples up
// to it, the last of them the worst one; on `robot`, that sample's seed alone.
std::string reproduce_command(const Result& r, const Options& options, const CommandRobot* robot,
                              const std::string& statement);
// soac verify's lines about a result that is no success, without the last newline: an
// XPASS's one line, or a FAIL's worst entry and "  reproduce: " `reproduce`. Empty for a
// success.
std::string failure_text(const Result& r, const std::string& reproduce);

}  // namespace soa::verify
