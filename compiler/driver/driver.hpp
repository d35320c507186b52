// The soac command line: one subcommand per pipeline stage (like MLIR's toyc -emit=...).
//
// Exit codes, for every subcommand: 0 success; 1 a check failed (verify, --check, a
// self-test); 2 bad input (usage, DSL text, URDF, state file, a singular model); 3 an
// internal error (a bug). `soac` with no arguments prints the usage and exits 2.
// Errors are one line naming the place (file:line:col, file: link 'x'), then any detail.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emit-cpp/emit_cpp.hpp"
#include "model/robot.hpp"
#include "model/tips.hpp"
#include "pipeline/kernels.hpp"

namespace soa::driver {

enum Exit { kOk = 0, kCheckFailed = 1, kBadInput = 2, kInternalError = 3 };

// --robot FILE [--floating] [--tip LINK ...] [--gravity X,Y,Z]; or --random-trees N where a
// command allows it.
struct RobotOptions {
  std::string path;
  std::string random_tree;  // "BODIES[:SEED]": random_tree() instead of a URDF (benchmarks, scaling tables)
  bool floating = false;
  std::vector<std::string> tips;
  // Constraints with the world: --weld FRAME[:DIRS] (DIRS held, all six by default) and
  // --contact FRAME (a point contact: x,y,z held). The held frames are the tips (welds
  // first), each marked with Frame::held, and the constrained kernels (lower/kernels.hpp)
  // join the standard ones.
  std::vector<std::string> welds;
  std::vector<std::string> contacts;
  // --object FILE: a free body the robot holds (model/robot.hpp with_object), added before
  // the welds are resolved so that they can name its frames.
  std::string object;
  bool constrained() const { return !welds.empty() || !contacts.empty(); }
  // --grasp FRAME=OTHER:KT,KR,DT,DR: compliant grasps (model/robot.hpp Spring), tips after the
  // held frames; the kernels compliant_forward_dynamics and grasp_forces join the standard ones.
  std::vector<std::string> grasps;
  bool grasped() const { return !grasps.empty(); }
  std::string gravity;  // "x,y,z" in m/s^2, world axes; empty: the model's (0, 0, -9.81)
  bool given() const { return !path.empty() || !random_tree.empty(); }
  // `random`: offer --random-tree too (soac emit, jit, model: code for a tree of any size).
  void add_to(CLI::App& cmd, bool robot_required, bool random = false);
};

// "x,y,z" -> the gravity vector: three finite numbers; else UserError naming the value.
Eigen::Vector3d parse_gravity(const std::string& text);

// "BODIES[:SEED]" -> (bodies, seed); else UserError naming the value.
std::pair<int, std::uint64_t> parse_random_tree(const std::string& text);
// Loads --robot (or makes --random-tree's robot; LoadedRobot: model/tips.hpp); names the URDF's mimic joints (treated
// as independent) in one warning line on stderr. `declared`: the constraints a kernel file declares (`weld`,
// `contact`), held like --weld and --contact after them; an unknown frame, or one held twice, is a UserError at the
// declaration.
LoadedRobot load_robot(const RobotOptions& o, const std::vector<syntax::Hold>& declared = {});
// The constraints the kernel file `path` declares (none when `path` is empty).
std::vector<syntax::Hold> declared_holds(const std::string& path);
// --emit=STAGE (stages.cpp): the pipeline printed at one stage, computed by the same
// pipeline functions as soac emit and soac jit. Stages, in order: ast, ir, rewritten,
// sweeps (robot independent), scalar, shared, cpp, llvm (these need --robot: without one,
// a UserError, so exit 2). The option's help lists each stage.
void add_emit_stage_option(CLI::App& cmd, std::string& stage);
struct StageRequest {
  std::string stage;
  std::vector<pipeline::KernelSpec> specs;
  std::shared_ptr<const syntax::Source> source;  // the command line's text, for --emit=ast
  std::string library;
  RobotOptions robot;
  std::string name;                           // soac emit --name
  std::string kernel_source;                  // the .soa file, for the generated banner
  int share_min_ops = 0;                      // --emit=shared: specialise::share's threshold
  const pipeline::Library* loaded = nullptr;  // the library when the command has read it already
  emit::CppOptions cpp;                       // --emit=cpp: soac emit's options
};
int print_stage(const StageRequest& request);
// The name of generated code for a robot: --name, else the robot's name as an identifier
// (the file stem, namespace and symbol prefix of soac emit, the function prefix of soac jit).
std::string code_name(const LoadedRobot& robot, const std::string& name);

// Each subcommand registers itself and sets `run` when it is the one chosen.
using Runner = std::function<int()>;
void add_verify(CLI::App& app, Runner& run);
void add_eval(CLI::App& app, Runner& run);
void add_model(CLI::App& app, Runner& run);
void add_derive(CLI::App& app, Runner& run);
void add_lower(CLI::App& app, Runner& run);
void add_emit(CLI::App& app, Runner& run);
void add_jit(CLI::App& app, Runner& run);
void add_vocabulary(CLI::App& app, Runner& run);

// True when stderr is a terminal (progress is shown only then).
bool stderr_is_terminal();

}  // namespace soa::driver
