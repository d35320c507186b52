// soac emit: robot-specialised C++ for a kernel set (a .soa file's kernels, or the
// standard ones), written atomically: either both files appear complete, or neither.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "driver/driver.hpp"
#include "emit-cpp/emit_cpp.hpp"
#include "pipeline/kernels.hpp"
#include "specialise/share.hpp"
#include "support/error.hpp"

namespace soa::driver {
namespace {

namespace fs = std::filesystem;

// Above this many lines a generated source costs g++ -O2 more than about a gigabyte and a
// minute or more of CPU (docs/performance.md, "Building the generated code"): too much for
// a 2-core CI runner building a robot's dynamics at build time.
constexpr long kDefaultWarnLines = 50000;

struct EmitOptions {
  std::string kernels;  // .soa file; empty: the standard kernels
  RobotOptions robot;
  std::string out;
  std::string name;
  std::string library;
  std::string emit;  // --emit=STAGE
  int share_min_ops = specialise::kDefaultShareMinOps;
  long warn_lines = kDefaultWarnLines;
};

long lines_of(const std::string& text) { return static_cast<long>(std::count(text.begin(), text.end(), '\n')); }

std::string size_of(const std::string& text) {
  const double kb = static_cast<double>(text.size()) / 1024.0;
  return kb < 1024.0 ? fmt::format("{:.0f} KB", kb) : fmt::format("{:.1f} MB", kb / 1024.0);
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) throw UserError(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
}

int run_emit(const EmitOptions& o) {
  // The name first: a bad one costs nothing.
  if (!o.name.empty()) specialise::check_name(o.name, "--name", true);
  if (!o.emit.empty() && !o.out.empty())
    throw UserError("--emit prints a stage on stdout: give --emit or --out, not both");
  if (!o.emit.empty())
    return print_stage(
        {o.emit, pipeline::kernel_set(o.kernels), nullptr, o.library, o.robot, o.name, o.kernels, o.share_min_ops});
  // Without --emit the files are the output: a robot and a directory are needed.
  if (o.robot.path.empty()) throw UserError("--robot is required (or --emit=STAGE for a stage that needs none)");
  if (o.out.empty()) throw UserError("--out is required (or --emit=STAGE to print a stage instead)");
  const pipeline::Library lib = pipeline::load_library(o.library);
  const std::vector<pipeline::KernelSpec> specs = pipeline::kernel_set(o.kernels);
  const LoadedRobot r = load_robot(o.robot);
  const std::vector<specialise::Kernel> kernels = pipeline::compile_for_robot(specs, lib, r.robot, r.tips).code;
  // --name is the file stem, the namespace soa_gen::<name> and the extern "C" prefix.
  emit::Target target = emit::make_target(r.robot, r.tips, code_name(r, o.name));
  target.kernel_source = o.kernels;
  const emit::Emitted files = emit::emit_cpp(kernels, target);

  // Write beside the targets, then rename: a failure leaves no half-written output.
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) throw UserError(fmt::format("{}: cannot create the output directory: {}", o.out, ec.message()));
  const fs::path header = fs::path(o.out) / files.header_name, source = fs::path(o.out) / files.source_name;
  const fs::path header_tmp = header.string() + ".tmp", source_tmp = source.string() + ".tmp";
  try {
    write_file(header_tmp, files.header);
    write_file(source_tmp, files.source);
    fs::rename(header_tmp, header);
    fs::rename(source_tmp, source);
  } catch (...) {
    fs::remove(header_tmp, ec);
    fs::remove(source_tmp, ec);
    throw;
  }
  fmt::print("soac emit: {} kernels for {} -> {}, {}\n", kernels.size(), r.describe(), header.string(),
             source.string());
  fmt::print("  size: {} {} lines {}, {} {} lines {}\n", files.header_name, lines_of(files.header),
             size_of(files.header), files.source_name, lines_of(files.source), size_of(files.source));
  if (lines_of(files.source) > o.warn_lines)
    fmt::print(stderr,
               "soac: warning: {} has {} lines (more than {}): compiling it takes minutes and gigabytes "
               "(docs/performance.md); fewer tips or fewer kernels make it smaller\n",
               source.string(), lines_of(files.source), o.warn_lines);
  return kOk;
}

}  // namespace

void add_emit(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<EmitOptions>();
  CLI::App* cmd = app.add_subcommand("emit", "generate robot-specialised C++ for a kernel set");
  cmd->add_option("kernels", opts->kernels, "FILE.soa with kernel declarations (default: the standard kernels)");
  opts->robot.add_to(*cmd, false);
  cmd->add_option("--out", opts->out, "output directory (required unless --emit is given)");
  cmd->add_option("--name", opts->name,
                  "file stem, C++ namespace soa_gen::NAME and extern \"C\" prefix NAME_ (a C identifier; "
                  "default: the URDF robot name as one)");
  cmd->add_option("--library", opts->library,
                  "identity library (default: $SOAC_LIBRARY, else the built-in identities.soa)");
  add_emit_stage_option(*cmd, opts->emit);
  cmd->add_option("--share-min-ops", opts->share_min_ops,
                  "--emit=shared: share what at least this many operations of a set of kernels compute alike")
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--warn-lines", opts->warn_lines,
                  "warn when the generated source has more lines than this (compile time and memory grow with it)")
      ->check(CLI::Range(1L, 1L << 40));
  cmd->callback([opts, &run] { run = [opts] { return run_emit(*opts); }; });
}

}  // namespace soa::driver
