// soac emit: robot-specialised C++ for a kernel set (a .soa file's kernels, or the
// standard ones), written atomically: either both files appear complete, or neither.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "driver/driver.hpp"
#include "emit-cpp/emit_cpp.hpp"
#include "specialise/lanes.hpp"
#include "pipeline/kernels.hpp"
#include "specialise/share.hpp"
#include "support/error.hpp"

namespace soa::driver {
namespace {

struct EmitOptions {
  std::string kernels;  // .soa file; empty: the standard kernels
  bool derivatives = false;
  RobotOptions robot;
  std::string out;
  std::string name;
  std::string library;
  std::string emit;  // --emit=STAGE
  int share_min_ops = specialise::kDefaultShareMinOps;
  emit::CppOptions cpp{emit::kDefaultSources};
  long warn_lines = emit::kDefaultWarnLines;
};

long lines_of(const std::string& text) { return static_cast<long>(std::count(text.begin(), text.end(), '\n')); }

std::string size_of(const std::string& text) {
  const double kb = static_cast<double>(text.size()) / 1024.0;
  return kb < 1024.0 ? fmt::format("{:.0f} KB", kb) : fmt::format("{:.1f} MB", kb / 1024.0);
}

emit::CppOptions cpp_options(const EmitOptions& o) {
  emit::CppOptions c = o.cpp;
  c.share_min_ops = o.share_min_ops;
  return c;
}

int run_emit(const EmitOptions& o) {
  // The name first: a bad one costs nothing.
  if (!o.name.empty()) specialise::check_name(o.name, "--name", true);
  if (!o.emit.empty() && !o.out.empty())
    throw UserError("--emit prints a stage on stdout: give --emit or --out, not both");
  if (!o.emit.empty())
    return print_stage({o.emit,
                        pipeline::kernel_set(o.kernels, o.robot.constrained(), o.derivatives, o.robot.grasped()),
                        nullptr, o.library, o.robot, o.name, o.kernels, o.share_min_ops, nullptr, cpp_options(o)});
  // Without --emit the files are the output: a robot and a directory are needed.
  if (!o.robot.given()) throw UserError("--robot is required (or --emit=STAGE for a stage that needs none)");
  if (o.out.empty()) throw UserError("--out is required (or --emit=STAGE to print a stage instead)");
  const pipeline::Library lib = pipeline::load_library(o.library);
  const std::vector<pipeline::KernelSpec> specs =
      pipeline::kernel_set(o.kernels, o.robot.constrained(), o.derivatives, o.robot.grasped());
  const LoadedRobot r = load_robot(o.robot, declared_holds(o.kernels));
  const std::vector<specialise::Kernel> kernels = pipeline::compile_for_robot(specs, lib, r.robot, r.tips).code;
  // --name is the file stem, the namespace soa_gen::<name> and the extern "C" prefix.
  emit::Target target = emit::make_target(r.robot, r.tips, code_name(r, o.name));
  target.kernel_source = o.kernels;
  const emit::Emitted files = emit::emit_cpp(kernels, target, cpp_options(o));

  const std::vector<std::string> paths = emit::write_files(files, o.out);
  const long lines = emit::source_lines(files);
  std::size_t bytes = 0;
  for (const emit::SourceFile& f : files.sources) bytes += f.text.size();
  fmt::print("soac emit: {} kernels for {} -> {}{}\n", kernels.size(), r.describe(), paths.front(),
             files.sources.size() == 1 ? ", " + paths.back()
                                       : fmt::format(" and {} sources {}/{}_1.cpp ... _{}.cpp", files.sources.size(),
                                                     o.out, target.file_stem, files.sources.size()));
  const long compiled = emit::compiled_lines(files);
  fmt::print(
      "  size: {} {} lines {}; {} {} lines {}{}\n", files.header_name, lines_of(files.header), size_of(files.header),
      files.sources.size() == 1 ? "source" : "sources", lines, size_of(std::string(bytes, ' ')),
      compiled == lines ? ""
                        : fmt::format(", of which a build compiles {} (one form of each kernel with packs)", compiled));
  if (const std::string warning = emit::size_warning(compiled, o.warn_lines); !warning.empty())
    fmt::print(stderr, "soac: warning: {}\n", warning);
  return kOk;
}

}  // namespace

void add_emit(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<EmitOptions>();
  CLI::App* cmd = app.add_subcommand("emit", "generate robot-specialised C++ for a kernel set");
  cmd->add_option("kernels", opts->kernels, "FILE.soa with kernel declarations (default: the standard kernels)");
  opts->robot.add_to(*cmd, false, true);
  cmd->add_flag("--derivatives", opts->derivatives,
                "also the derivative kernels: inverse_dynamics_derivatives, forward_dynamics_derivatives, "
                "mass_matrix_derivative (with respect to q in its tangent space, and qd), coriolis_matrix, "
                "christoffel (docs/mathematics.md, \"Derivatives\")");
  cmd->add_option("--out", opts->out, "output directory (required unless --emit is given)");
  cmd->add_option("--name", opts->name,
                  "file stem, C++ namespace soa_gen::NAME and extern \"C\" prefix NAME_ (a C identifier; "
                  "default: the URDF robot name as one)");
  cmd->add_option("--library", opts->library,
                  "identity library (default: $SOAC_LIBRARY, else the built-in identities.soa)");
  add_emit_stage_option(*cmd, opts->emit);
  cmd->add_option("--share-min-ops", opts->share_min_ops,
                  "compute once what at least this many operations of a set of kernels compute alike (the generated "
                  "C++, --emit=shared)")
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--sources", opts->cpp.sources,
                  "write the code as N source files NAME_1.cpp ... NAME_N.cpp of about equal size, to compile in "
                  "parallel (1: NAME.cpp)")
      ->check(CLI::Range(1, emit::kMaxSources));
  cmd->add_option("--part-ops", opts->cpp.part_ops,
                  "cut kernels into functions of about this many operations (compile time grows faster than a "
                  "function's length)")
      ->check(CLI::Range(100, 1 << 30));
  cmd->add_option("--whole-ops", opts->cpp.whole_ops,
                  "keep kernels of at most this many operations one function (cut, they run slower)")
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--dot-min-terms", opts->cpp.dot_min_terms,
                  "compute a kernel's sums of products (Gram entries) by a loop over a table when they have at least "
                  "this many products (0: never)")
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--lanes", opts->cpp.lanes,
                  "compute sums of products sharing a factor per term (Gram entries) this many entries at a time, as "
                  "vector code (1: one at a time)")
      ->check(CLI::Range(1, specialise::kMaxLanes));
  cmd->add_option("--lane-min-ops", opts->cpp.lane_min_ops, "...in kernels of at least this many operations")
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--lane-max-steps", opts->cpp.lane_max_steps,
                  "...taking at most this many vector steps (more: a dot table, which compiles faster)")
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--column-min-rows", opts->cpp.column_min_rows,
                  "...and those that are a dense product column by column (-calM^-1 d tau) with at least this many "
                  "rows as one loop over each column's terms (0: written out)")
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--step-lanes", opts->cpp.step_lanes,
                  "compute the steps repeated column after column (the same operations at one body) this many "
                  "columns at a time, as vector code, in kernels written out (1: one at a time)")
      ->check(CLI::Range(1, 4));
  cmd->add_option("--step-lanes-without-avx", opts->cpp.step_lanes_without_avx,
                  "...and this many at a time in the form compiled where the compiler targets no AVX (2: SSE2's "
                  "vectors; 1: one at a time)")
      ->check(CLI::Range(1, 2));
  cmd->add_option("--step-lane-min-ops", opts->cpp.step_lane_min_ops, "...in kernels of at least this many operations")
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--loop-min-ops", opts->cpp.loop_min_ops,
                  "in kernels of at least this many operations, run the steps repeated column after column as loops "
                  "over tables (0: never)")
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--loop-min-instances", opts->cpp.loop_min_instances,
                  "...where the loops run at least this many columns each on average (else written out, with packs)")
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--large-set-ops", opts->cpp.large_set_ops,
                  "a kernel set of at least this many operations is large: it shares more and runs per-body loops "
                  "(sweep steps alike up to their bodies' constants; docs/performance.md)")
      ->check(CLI::Range(1L, 1L << 40));
  cmd->add_option(
         "--warn-lines", opts->warn_lines,
         "warn when a build would compile more lines of the generated sources than this (compile time grows with it)")
      ->check(CLI::Range(1L, 1L << 40));
  cmd->callback([opts, &run] { run = [opts] { return run_emit(*opts); }; });
}

}  // namespace soa::driver
