// State files for soac eval, and the seeds random states are drawn from.
//
// A state file has one line per vector, `name: v1 v2 ...` (or `name = ...`), names q, qd,
// qdd, T and f0 (sizes nq, nv, nv, nv, 6 per tip), in joint-space order (`soac model`);
// `#` starts a comment; each name at most once. Missing q is the neutral configuration,
// missing qd and f0 are zero. qdd and T are tied by the equations of motion
// (T = calM qdd + C + J* f0): given one, the other follows from it; given neither, qdd is
// zero; given both, both are used as written. A quaternion (free-flyer, ball joint) must
// be of unit norm to 1e-6. Errors name the file and line. Written states give every number
// in the shortest form that reads back as the same double.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "model/kinematics.hpp"

namespace soa::driver {

struct StateFile {
  State state;              // q, qd, qdd (read or zero), f0
  std::optional<VecX> qdd;  // as written, when the file gives qdd
  std::optional<VecX> T;    // as written, when the file gives T
};

StateFile read_state_file(const std::string& path, const Robot& robot, int tips);

// The lines 'q: ...', 'qd: ...', 'qdd: ...', 'T: ...', 'f0: ...', each after `indent`.
std::string state_lines(const State& state, const VecX& T, const std::string& indent);
// Writes `header` as comments, then state_lines(), to `path`: all of it or nothing.
void write_state_file(const std::string& path, const State& state, const VecX& T, const std::string& header);

// --seed: a non-negative integer within uint64 ("-1", "1e3" and 2^64 are errors).
CLI::Validator seed_validator();
// --tol: a finite number > 0.
CLI::Validator tolerance_validator();

}  // namespace soa::driver
