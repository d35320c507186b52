// --emit=STAGE: the pipeline printed at any stage (MLIR's -emit= idea), for `soac lower`
// (one expression) and `soac emit` (a kernel set). Every stage is computed by the same
// pipeline functions soac emit and soac jit run (pipeline/kernels.hpp), so what is printed
// is what is compiled.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "driver/driver.hpp"
#include "emit-cpp/emit_cpp.hpp"
#include "exec/execute.hpp"
#include "lower/kernels.hpp"
#include "pipeline/kernels.hpp"
#include "specialise/print.hpp"
#include "specialise/share.hpp"
#include "support/error.hpp"
#include "syntax/diagnostics.hpp"
#ifdef SOA_HAVE_LLVM_JIT
#include "pipeline/jit.hpp"
#endif

namespace soa::driver {
namespace {

// A kernel's specialised code and ports, whichever stage's header declares them.
using KernelCode = decltype(pipeline::RobotKernels{}.code)::value_type;
using Port = decltype(KernelCode{}.inputs)::value_type;

struct StageInfo {
  const char* name;
  bool needs_robot;
  const char* help;
};

// In pipeline order; the help text of --emit is made from this table.
constexpr StageInfo kStages[] = {
    {"ast", false, "the parsed expression as a tree, each node with its place in the source"},
    {"ir", false, "the operator IR: shape-checked, in canonical form (adjoints pushed inward), each node's shape"},
    {"rewritten", false, "the cheapest form the identity library reaches and the steps to it"},
    {"sweeps", false, "the sweep program (loops over the bodies), robot independent"},
    {"scalar", true, "the robot-specialised scalar program in SSA form (constants folded, CSE, DCE)"},
    {"shared", true,
     "the programs several kernels share (as soac jit compiles them once), with their users, "
     "then each kernel's own rest"},
    {"cpp", true, "the generated C++ header and source (as soac emit writes them)"},
    {"llvm", true, "the LLVM IR of every kernel (as soac jit compiles it)"},
};

const StageInfo& stage_info(const std::string& name) {
  for (const StageInfo& s : kStages)
    if (name == s.name) return s;
  throw InternalError("unknown stage " + name);  // CLI11 checked the value
}

// The text a kernel's spans point into: its .soa file, the command line, or the standard
// kernel's own expression.
std::shared_ptr<const syntax::Source> source_of(const pipeline::KernelSpec& spec,
                                                const std::shared_ptr<const syntax::Source>& given) {
  if (spec.where) return spec.where->source;
  if (given) return given;
  for (const lower::KernelDecl& k : lower::standard_kernels())
    if (k.name == spec.name)
      return std::make_shared<syntax::Source>(syntax::Source{"<standard kernel " + k.name + ">", k.expression});
  return nullptr;
}

std::string node_head(const ir::Expr& e) {
  switch (e.op()) {
    case ir::Op::Symbol: return "symbol " + e.name();
    case ir::Op::Identity: return "identity I";
    case ir::Op::Zero: return "zero 0";
    case ir::Op::Sum: return "sum";
    case ir::Op::Product: return "product";
    case ir::Op::Scale: return "scale " + ir::format_number(e.coef());
    case ir::Op::Adjoint: return "adjoint *";
    case ir::Op::Inverse: return "inverse ^-1";
    case ir::Op::Derivative: return "derivative d/dq_i";
  }
  return "?";
}

// ast: each node with the line:col and the text it was parsed from.
void print_ast(std::string& out, const ir::Expr& e, const syntax::Source* src, int depth) {
  out += fmt::format("{:{}}{}", "", 2 * depth, node_head(e));
  if (src && e.span().known() && e.span().end <= src->text.size()) {
    const std::string where = syntax::location(*src, e.span());
    out += fmt::format("  @{}  \"{}\"", where.substr(where.rfind(':', where.rfind(':') - 1) + 1),
                       src->text.substr(e.span().begin, e.span().end - e.span().begin));
  }
  out += '\n';
  for (const ir::Expr& k : e.kids()) print_ast(out, k, src, depth + 1);
}

// ir: each node with its shape (I and 0 take theirs from their context).
void print_ir(std::string& out, const ir::Expr& e, int depth) {
  std::string shape = "sized by its context";
  if (!e.is(ir::Op::Identity) && !e.is(ir::Op::Zero)) {
    try {
      shape = ir::to_string(ir::infer_shape(e));
    } catch (const ir::ShapeError&) {
      // A sum holding a bare I: its size comes from the context too.
    }
  }
  out += fmt::format("{:{}}{} : {}\n", "", 2 * depth, node_head(e), shape);
  for (const ir::Expr& k : e.kids()) print_ir(out, k, depth + 1);
}

std::string signature(const pipeline::KernelSpec& spec) {
  // soac lower without --inputs: the lowering orders the inputs it finds.
  if (spec.inputs.empty()) return "kernel " + spec.name;
  return fmt::format("kernel {}({})", spec.name, fmt::join(spec.inputs, ", "));
}

// "q[0]" ... for a kernel's inputs, "tau[3]" or "calM[2,1]" for its outputs.
std::vector<std::string> input_names(const KernelCode& k) {
  std::vector<std::string> names;
  for (const Port& p : k.inputs)
    for (int i = 0; i < p.size; ++i) names.push_back(fmt::format("{}[{}]", p.name, i));
  return names;
}
std::vector<std::string> output_names(const KernelCode& k) {
  std::vector<std::string> names;
  for (int j = 0; j < k.rows * k.cols; ++j)
    names.push_back(k.cols == 1 ? fmt::format("{}[{}]", k.output, j)
                                : fmt::format("{}[{},{}]", k.output, j % k.rows, j / k.rows));
  return names;
}

// What in[i] holds for a caller of the shared programs: `caller`'s own input, or an output
// of an earlier shared program ("shared 1 [4]").
std::vector<std::string> caller_inputs(const specialise::Sharing& sharing, const KernelCode& caller, int count) {
  std::vector<std::string> names = input_names(caller);
  names.resize(std::min<std::size_t>(names.size(), sharing.base), "");
  names.resize(std::max(count, 0), "");
  for (std::size_t j = 0; j < sharing.programs.size(); ++j) {
    const specialise::SharedProgram& p = sharing.programs[j];
    for (std::size_t o = 0; o < p.code.outputs.size(); ++o) {
      const std::size_t at = static_cast<std::size_t>(sharing.base + p.offset) + o;
      if (at < names.size()) names[at] = fmt::format("shared {} [{}]", j, o);
    }
  }
  return names;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

void add_emit_stage_option(CLI::App& cmd, std::string& stage) {
  std::string help = "print the pipeline at STAGE instead of the command's usual output:";
  std::vector<std::string> names;
  for (const StageInfo& s : kStages) {
    help += fmt::format("\n  {:<10} {}{}", s.name, s.help, s.needs_robot ? " (needs --robot)" : "");
    names.emplace_back(s.name);
  }
  cmd.add_option("--emit", stage, help)->check(CLI::IsMember(names));
}

std::string code_name(const LoadedRobot& robot, const std::string& name) {
  return name.empty() ? specialise::identifier(robot.robot.name) : name;
}

int print_stage(const StageRequest& r) {
  const StageInfo& stage = stage_info(r.stage);
  if (stage.needs_robot && !r.robot.given())
    throw UserError(fmt::format("--emit={} needs a robot: give --robot FILE.urdf", stage.name));
  const std::string name = stage.name;

  if (name == "ast" || name == "ir") {
    std::string out;
    for (const pipeline::KernelSpec& spec : r.specs) {
      if (name == "ast") {
        const auto src = source_of(spec, r.source);
        out += fmt::format("{} = {}\n", signature(spec), ir::print(spec.expression));
        if (src) out += fmt::format("  source: {}\n", src->name);
        print_ast(out, spec.expression, src.get(), 1);
      } else {
        const ir::Expr e = rewrite::normalize(spec.expression);
        out +=
            fmt::format("{} : {}\n  canonical: {}\n", signature(spec), ir::to_string(ir::infer_shape(e)), ir::print(e));
        print_ir(out, e, 1);
      }
      out += '\n';
    }
    fmt::print("{}", out.substr(0, out.size() - 1));
    return kOk;
  }

  std::optional<pipeline::Library> own;
  if (!r.loaded) own = pipeline::load_library(r.library);
  const pipeline::Library& lib = r.loaded ? *r.loaded : *own;
  if (name == "rewritten" || name == "sweeps") {
    // Robot independent, but a serial chain allows more rules (as soac emit lowers).
    rewrite::Options options;
    if (r.robot.given()) options.serial_chain = load_robot(r.robot).robot.is_serial_chain();
    for (std::size_t i = 0; i < r.specs.size(); ++i) {
      const pipeline::LoweredKernel k = pipeline::lower_kernel(r.specs[i], lib, options);
      if (i) fmt::print("\n");
      if (name == "rewritten")
        fmt::print("{} = {}\n  cost {}\n{}\n  cost {}\n", signature(k.spec), ir::print(k.spec.expression),
                   rewrite::to_string(k.derivation.input_cost), pipeline::derivation_summary(k.derivation),
                   rewrite::to_string(k.derivation.cost));
      else
        fmt::print("{}", exec::print(k.program));
    }
    return kOk;
  }

  const LoadedRobot robot = load_robot(r.robot, declared_holds(r.kernel_source));
  const pipeline::RobotKernels compiled = pipeline::compile_for_robot(r.specs, lib, robot.robot, robot.tips);
  const std::vector<KernelCode>& code = compiled.code;
  if (name == "scalar") {
    fmt::print("; {}\n", robot.describe());
    for (const KernelCode& k : code) {
      fmt::print("\nkernel {}: {} inputs, {} outputs, {}\n", k.name, k.code.input_count, k.code.outputs.size(),
                 specialise::to_string(specialise::count_ops(k.code)));
      fmt::print("{}", specialise::print(k.code, {input_names(k), output_names(k)}));
    }
    return kOk;
  }
  if (name == "shared") {
    std::vector<const specialise::ScalarProgram*> programs;
    for (const KernelCode& k : code) programs.push_back(&k.code);
    const specialise::Sharing sharing = specialise::share(programs, r.share_min_ops);
    fmt::print("; {}\n; shared when {} operations or more are common to a set of kernels (sin, cos weigh 80)\n",
               robot.describe(), r.share_min_ops);
    fmt::print("; {} shared programs; their outputs start at in[{}] of a caller's array\n", sharing.programs.size(),
               sharing.base);
    for (std::size_t j = 0; j < sharing.programs.size(); ++j) {
      const specialise::SharedProgram& p = sharing.programs[j];
      std::vector<std::string> users;
      for (int u : p.users) users.push_back(code[u].name);
      fmt::print("\nshared {}: used by {}\n  {}; outputs to in[{}..{}]\n", j, fmt::join(users, ", "),
                 specialise::to_string(specialise::count_ops(p.code)), sharing.base + p.offset,
                 sharing.base + p.offset + static_cast<int>(p.code.outputs.size()) - 1);
      // The inputs named as the first user sees them; every user passes its own.
      fmt::print("{}",
                 specialise::print(p.code, {caller_inputs(sharing, code[p.users.front()], p.code.input_count), {}}));
    }
    for (std::size_t i = 0; i < code.size(); ++i) {
      const specialise::FactoredKernel& k = sharing.kernels[i];
      std::vector<std::string> uses;
      for (int u : k.uses) uses.push_back(fmt::format("shared {}", u));
      const std::vector<std::string> names = caller_inputs(sharing, code[i], k.code.input_count);
      fmt::print("\nkernel {}: calls {}, then {}\n", code[i].name,
                 uses.empty() ? "nothing shared" : fmt::format("{}", fmt::join(uses, ", ")),
                 specialise::to_string(specialise::count_ops(k.code)));
      fmt::print("{}", specialise::print(k.code, {names, output_names(code[i])}));
    }
    return kOk;
  }
  if (name == "cpp") {
    emit::Target target = emit::make_target(robot.robot, robot.tips, r.name);
    target.kernel_source = r.kernel_source;
    const emit::Emitted files = emit::emit_cpp(code, target, r.cpp);
    fmt::print("// ---- {}\n{}", files.header_name, files.header);
    for (const emit::SourceFile& f : files.sources) fmt::print("\n// ---- {}\n{}", f.name, f.text);
    return kOk;
  }
#ifdef SOA_HAVE_LLVM_JIT
  // The IR exactly as soac jit builds it: compiled, and written to a file that is read back.
  pipeline::JitOptions jopt;
  jopt.prefix = code_name(robot, r.name);
  const std::string ir_file =
      (std::filesystem::temp_directory_path() / fmt::format("soac-emit-{}.ll", ::getpid())).string();
  jopt.ir_file = ir_file;
  try {
    pipeline::jit_compile(code, jopt);
  } catch (...) {
    std::remove(ir_file.c_str());
    throw;
  }
  const std::string ir = read_text(ir_file);
  std::remove(ir_file.c_str());
  fmt::print("{}", ir);
  return kOk;
#else
  (void)read_text;
  throw UserError("--emit=llvm: this soac was built without LLVM (SOA_WITH_LLVM=OFF)");
#endif
}

}  // namespace soa::driver
