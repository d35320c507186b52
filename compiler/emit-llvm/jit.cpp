#include "emit-llvm/jit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/IRCompileLayer.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include "emit-llvm/emit_llvm.hpp"
#include "specialise/kernel.hpp"
#include "support/error.hpp"

namespace soa::jit {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The process-wide options tune_llvm_process_options() sets, and their values (jit.hpp).
constexpr std::pair<const char*, const char*> kTunedOptions[] = {
    {"enable-misched", "false"}, {"disable-copyprop", "true"}, {"fixup-byte-word-insts", "false"}};

// LLVM's native target registers itself in LLVM's own global registry: once per process.
void initialise_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

// LLVM reports through llvm::Error, which must be consumed; ours are exceptions.
[[noreturn]] void fail(std::string_view what, llvm::Error error) {
  throw UserError(fmt::format("jit: {}: {}", what, llvm::toString(std::move(error))));
}
void take(llvm::Error error, std::string_view what) {
  if (error) fail(what, std::move(error));
}
template <class T>
T take(llvm::Expected<T> value, std::string_view what) {
  if (!value) fail(what, value.takeError());
  return std::move(*value);
}

std::vector<std::string> split_features(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string f = text.substr(start, end - start);
    f.erase(0, f.find_first_not_of(" \t"));
    f.erase(f.find_last_not_of(" \t") + 1);
    if (!f.empty()) out.push_back(f);
    start = end + 1;
  }
  return out;
}

// Checked here because LLVM itself only prints a warning for an unknown CPU or feature and
// carries on with the generic one -- code for a machine nobody asked for.
void validate_target(const llvm::Triple& triple, const std::string& cpu, const std::string& tune,
                     const std::vector<std::string>& features) {
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple.str(), error);
  if (!target) throw UserError(fmt::format("jit: no LLVM target for {}: {}", triple.str(), error));
  const std::unique_ptr<llvm::MCSubtargetInfo> generic(target->createMCSubtargetInfo(triple.str(), "", ""));
  if (!cpu.empty() && !generic->isCPUStringValid(cpu))
    throw UserError(fmt::format("jit: unknown CPU '{}' for {} (e.g. 'x86-64-v3', '{}', or empty for the host)", cpu,
                                triple.str(), llvm::sys::getHostCPUName().str()));
  if (!tune.empty() && !generic->isCPUStringValid(tune))
    throw UserError(
        fmt::format("jit: unknown CPU '{}' to tune for (e.g. 'generic', or 'cpu' for the target CPU)", tune));
  for (const std::string& f : features) {
    if (f[0] != '+' && f[0] != '-')
      throw UserError(fmt::format("jit: CPU feature '{}' must start with '+' (enable) or '-' (disable)", f));
    // A known feature changes the feature bits one way with '+' and the other with '-'; an
    // unknown one is ignored either way (LLVM prints its own warning for it).
    const std::string name = f.substr(1);
    const std::unique_ptr<llvm::MCSubtargetInfo> on(target->createMCSubtargetInfo(triple.str(), "", "+" + name));
    const std::unique_ptr<llvm::MCSubtargetInfo> off(target->createMCSubtargetInfo(triple.str(), "", "-" + name));
    if (on->getFeatureBits() == off->getFeatureBits())
      throw UserError(fmt::format("jit: unknown CPU feature '{}' for {}", name, triple.str()));
  }
}

// "generic" unless asked otherwise (see Options::tune_cpu); "" for the CPU's own.
std::string tune_cpu(const Options& options) { return options.tune_cpu == "cpu" ? std::string() : options.tune_cpu; }

llvm::orc::JITTargetMachineBuilder target_builder(const Options& options) {
  if (options.codegen_level < 0 || options.codegen_level > 3)
    throw UserError(fmt::format("jit: code generation level {} is not one of 0, 1, 2, 3", options.codegen_level));
  if (options.part_ops < 0) throw UserError(fmt::format("jit: part size {} is negative", options.part_ops));
  if (options.fast_isel_min_ops < 0)
    throw UserError(fmt::format("jit: FastISel threshold {} is negative", options.fast_isel_min_ops));
  const bool host = options.cpu.empty() || options.cpu == "host" || options.cpu == "native";
  const std::vector<std::string> features = split_features(options.features);
  const llvm::Triple triple(llvm::sys::getProcessTriple());
  validate_target(triple, host ? std::string() : options.cpu, tune_cpu(options), features);
  // detectHost: the host's CPU name and the features it actually has (a CPU name alone
  // would assume every feature of that model, e.g. AVX-512 disabled by a hypervisor).
  llvm::orc::JITTargetMachineBuilder builder =
      host ? take(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host CPU")
           : llvm::orc::JITTargetMachineBuilder(triple);
  if (!host) builder.setCPU(options.cpu);
  builder.addFeatures(features);  // after the host's: the last word on a feature wins
  static constexpr llvm::CodeGenOpt::Level levels[] = {llvm::CodeGenOpt::None, llvm::CodeGenOpt::Less,
                                                       llvm::CodeGenOpt::Default, llvm::CodeGenOpt::Aggressive};
  builder.setCodeGenOptLevel(levels[options.codegen_level]);
  // At -O0 FastISel is always on; above it replaces SelectionDAG, falling back to it for
  // whatever it cannot select.
  builder.getOptions().EnableFastISel = options.fast_isel;
  // Small code model, position independent: a literal or a lane table is one RIP-relative
  // operand, not a 64-bit address in a register first (the large model ORC picks by
  // default), and FastISel selects it (it gives up on large-model addresses). JITLink
  // (below) keeps each object's sections together and reaches libm through its GOT.
  builder.setCodeModel(llvm::CodeModel::Small);
  builder.setRelocationModel(llvm::Reloc::PIC_);
  return builder;
}

// A new-pass-manager pipeline in `opt -passes=` syntax ("default<O2>" is clang -O2's), with
// the target's cost model when a TargetMachine is given (PassBuilder registers its
// TargetIRAnalysis). Without a module it only parses: the check compile() makes up front.
llvm::Error run_passes(const std::string& passes, llvm::TargetMachine* tm, llvm::Module* m) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (llvm::Error error = pb.parsePassPipeline(mpm, passes)) return error;
  if (m) mpm.run(*m, mam);
  return llvm::Error::success();
}

int instruction_count(const llvm::Module& m) {
  int n = 0;
  for (const llvm::Function& f : m) n += static_cast<int>(f.getInstructionCount());
  return n;
}

// What the transform layer and the compiler measured, per module (= kernel) name. Both
// run on whichever thread materialises the module.
struct Record {
  struct Entry {
    double optimise_seconds = 0, codegen_seconds = 0;
    int instructions = 0;
    bool fast_isel = false;
  };
  std::mutex mutex;
  std::map<std::string, Entry> modules;
  Entry& operator[](const std::string& name) { return modules[name]; }  // under `mutex`
};

// The module flag of a module whose code SelectionDAG selects although the builder says
// FastISel (Options::fast_isel_min_ops).
constexpr const char* kSelectionDag = "soa.selection-dag";

llvm::orc::JITTargetMachineBuilder without_fast_isel(llvm::orc::JITTargetMachineBuilder builder) {
  builder.getOptions().EnableFastISel = false;
  return builder;
}

// LLJIT's thread-safe compiler (a TargetMachine per call), timed; FastISel or SelectionDAG
// per module, as the module's flag says.
class TimedCompiler : public llvm::orc::IRCompileLayer::IRCompiler {
public:
  // level0: code generation at -O0, where FastISel selects whatever the options say.
  TimedCompiler(llvm::orc::JITTargetMachineBuilder builder, bool level0, std::shared_ptr<Record> record)
      : IRCompiler(llvm::orc::irManglingOptionsFromTargetOptions(builder.getOptions())),
        flagged_fast_isel_(level0),
        unflagged_fast_isel_(builder.getOptions().EnableFastISel || level0),
        compile_(builder),
        compile_dag_(without_fast_isel(builder)),
        record_(std::move(record)) {}

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module& m) override {
    const int instructions = instruction_count(m);
    const bool dag = m.getModuleFlag(kSelectionDag) != nullptr;
    const Clock::time_point t = Clock::now();
    auto object = dag ? compile_dag_(m) : compile_(m);
    const double s = seconds_since(t);
    const std::lock_guard<std::mutex> lock(record_->mutex);
    Record::Entry& e = (*record_)[m.getModuleIdentifier()];
    e.codegen_seconds = s;
    e.instructions = instructions;
    e.fast_isel = dag ? flagged_fast_isel_ : unflagged_fast_isel_;
    return object;
  }

private:
  // FastISel or not: in the flagged modules, in the others
  bool flagged_fast_isel_, unflagged_fast_isel_;
  llvm::orc::ConcurrentIRCompiler compile_, compile_dag_;
  std::shared_ptr<Record> record_;
};

// Whether SelectionDAG selects the instructions of a program of `ops` operations: not at
// -O0 (FastISel there, whatever the options), nor with fast_isel_min_ops 0; otherwise in a
// program whose work grows with the bodies alone (`linear`, Options::fast_isel_min_ops)
// and in any program below fast_isel_min_ops.
bool selection_dag(const Options& options, int ops, bool linear) {
  if (options.codegen_level == 0) return false;
  if (!options.fast_isel) return true;
  return options.fast_isel_min_ops > 0 && (linear || ops < options.fast_isel_min_ops);
}

// The emitter's options for one kernel: lane groups only for kernels of lane_min_ops
// operations or more (Options::lane_min_ops says why).
emit::LlvmOptions llvm_options(const Options& options, const specialise::ScalarProgram& program, bool linear) {
  emit::LlvmOptions lo;
  lo.allow_contraction = options.allow_contraction;
  lo.part_ops = options.part_ops;
  const int ops = specialise::count_ops(program).total();
  lo.lanes = ops >= options.lane_min_ops ? options.lanes : 0;
  lo.tune_cpu = tune_cpu(options);
  // The angles' sines and cosines four at a time where SelectionDAG compiles the kernel.
  lo.sincos_lanes = selection_dag(options, ops, linear) ? 4 : 0;
  return lo;
}

// The emitter's options for a shared-program entry (emit_llvm_shared_entry): only the tuning.
emit::LlvmOptions entry_options(const Options& options) {
  emit::LlvmOptions lo;
  lo.tune_cpu = tune_cpu(options);
  return lo;
}

// Asynchronous lookups (each materialises what it names on the compile threads) and the
// wait for all of them: every symbol found, or every error joined.
class Lookups {
public:
  void request(llvm::orc::LLJIT& jit, llvm::orc::SymbolLookupSet symbols) {
    {
      const std::lock_guard<std::mutex> lock(state_->mutex);
      ++state_->outstanding;
    }
    jit.getExecutionSession().lookup(
        llvm::orc::LookupKind::Static, llvm::orc::makeJITDylibSearchOrder(&jit.getMainJITDylib()), std::move(symbols),
        llvm::orc::SymbolState::Ready,
        [state = state_](llvm::Expected<llvm::orc::SymbolMap> result) {
          const std::lock_guard<std::mutex> lock(state->mutex);
          if (result)
            for (const auto& [symbol, address] : *result) state->found.insert({symbol, address});
          else
            state->error = llvm::joinErrors(std::move(state->error), result.takeError());
          if (--state->outstanding == 0) state->done.notify_all();
        },
        llvm::orc::NoDependenciesToRegister);
  }
  llvm::Expected<llvm::orc::SymbolMap> wait() {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->done.wait(lock, [&] { return state_->outstanding == 0; });
    if (state_->error) return std::move(state_->error);
    return std::move(state_->found);
  }
  // Outstanding lookups still hold the state when an exception leaves compile() early.
  ~Lookups() {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->done.wait(lock, [&] { return state_->outstanding == 0; });
    llvm::consumeError(std::move(state_->error));
  }

private:
  struct State {
    std::mutex mutex;
    std::condition_variable done;
    int outstanding = 0;
    llvm::orc::SymbolMap found;
    llvm::Error error = llvm::Error::success();
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

// Every name and program checked before anything is compiled: a bad one costs nothing.
void check_code(const Code& code) {
  std::set<std::string> names, symbols;
  const auto distinct = [&](const std::string& symbol) {
    if (!symbols.insert(symbol).second) throw UserError(fmt::format("jit: two functions are called '{}'", symbol));
  };
  const auto program = [](const specialise::ScalarProgram* p,
                          const std::string& what) -> const specialise::ScalarProgram& {
    if (!p) throw InternalError(fmt::format("jit: {} has no program", what));
    return *p;
  };
  for (const SharedFunction& s : code.shared) {
    emit::check_llvm_kernel(s.symbol, program(s.program, "shared function '" + s.symbol + "'"));
    distinct(s.symbol);
  }
  const std::set<std::string> shared(symbols);
  for (const KernelCode& k : code.kernels) {
    specialise::check_name(k.name, "jit: kernel name");
    const specialise::ScalarProgram& p = program(k.program, "kernel '" + k.name + "'");
    emit::check_llvm_kernel(k.symbol, p);
    if (!k.calls.empty()) emit::check_llvm_kernel(k.body, p);
    if (!names.insert(k.name).second) throw UserError(fmt::format("jit: two kernels are called '{}'", k.name));
    distinct(k.symbol);
    if (!k.calls.empty()) distinct(k.body);
    for (const auto& [f, at] : k.calls)
      if (!shared.count(f))
        throw UserError(fmt::format("jit: kernel '{}' calls '{}', which is no shared function", k.name, f));
  }
}

// One function compile() generates from a program: a shared function, a kernel's, or the
// body of a kernel calling shared functions (whose entry is emitted apart).
struct Unit {
  std::string symbol;                        // the function's name
  std::string module;                        // its modules are this and this.sliceN
  const specialise::ScalarProgram* program;  // what the function computes
  int kernel = -1;                           // the kernel it belongs to, or -1 and...
  int shared = -1;                           // ...the shared function it is
  bool linear = false;                       // its work grows with the bodies alone (Options::fast_isel_min_ops)
};

// A kernel with no more outputs than inputs (inverse and forward dynamics, constrained or
// not, the forces) does O(N) work; one with more (calM, calM^-1, Lambda, J, derivatives)
// has outputs per pair of bodies.
bool linear_kernel(const KernelCode& k) {
  const int inputs = k.calls.empty() ? k.program->input_count : k.own_inputs;
  return static_cast<int>(k.program->outputs.size()) <= inputs;
}

// The shared functions, then every kernel's own, under the kernel's symbol (a body's
// modules too: its timings are the kernel's). A shared function is part of each caller's
// work, so O(N) when one of them is.
std::vector<Unit> units_of(const Code& code) {
  std::vector<Unit> units;
  for (std::size_t j = 0; j < code.shared.size(); ++j) {
    const SharedFunction& f = code.shared[j];
    const bool linear = std::any_of(code.kernels.begin(), code.kernels.end(), [&](const KernelCode& k) {
      return linear_kernel(k) && std::find(f.users.begin(), f.users.end(), k.name) != f.users.end();
    });
    units.push_back({f.symbol, f.symbol, f.program, -1, static_cast<int>(j), linear});
  }
  for (std::size_t k = 0; k < code.kernels.size(); ++k) {
    const KernelCode& kernel = code.kernels[k];
    units.push_back({kernel.calls.empty() ? kernel.symbol : kernel.body, kernel.symbol, kernel.program,
                     static_cast<int>(k), -1, linear_kernel(kernel)});
  }
  return units;
}

void write_ir(const Code& code, const Options& options, llvm::TargetMachine& tm) {
  llvm::LLVMContext context;
  auto m = std::make_unique<llvm::Module>("soa_kernels", context);
  for (const Unit& u : units_of(code))
    emit::emit_llvm_function(*m, u.symbol, *u.program, llvm_options(options, *u.program, u.linear));
  for (const KernelCode& k : code.kernels)
    if (!k.calls.empty())
      emit::emit_llvm_shared_entry(*m, k.symbol, k.body, k.own_inputs, k.program->input_count, k.calls,
                                   entry_options(options));
  emit::verify(*m);
  m->setDataLayout(tm.createDataLayout());
  m->setTargetTriple(tm.getTargetTriple().str());
  if (options.ir_optimised && !options.passes.empty())
    take(run_passes(options.passes, &tm, m.get()), "running the IR passes");
  std::error_code error;
  llvm::raw_fd_ostream os(options.ir_file, error, llvm::sys::fs::OF_Text);
  if (error) throw UserError(fmt::format("{}: cannot write the LLVM IR: {}", options.ir_file, error.message()));
  m->print(os, nullptr);
  os.close();
  if (os.has_error()) {
    const std::string message = os.error().message();
    os.clear_error();
    throw UserError(fmt::format("{}: cannot write the LLVM IR: {}", options.ir_file, message));
  }
}

// LLJIT for `builder`'s target: `threads` compile threads, JITLink, each module's code
// generation timed into `record`, this process's symbols visible (sin, cos and sincos --
// formed from a sin and a cos of one value -- come from its C library, as for the
// generated C++), and options.passes as the IR transform layer.
std::unique_ptr<llvm::orc::LLJIT> make_jit(const llvm::orc::JITTargetMachineBuilder& builder, unsigned threads,
                                           bool level0, const std::string& passes,
                                           const std::shared_ptr<Record>& record) {
  auto jit = take(
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(builder)
          // 0: materialise on the thread that looks symbols up.
          .setNumCompileThreads(threads > 1 ? threads : 0)
          // JITLink, not RuntimeDyld: the small code model needs its linking.
          .setObjectLinkingLayerCreator([](llvm::orc::ExecutionSession& es, const llvm::Triple&)
                                            -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
            return std::make_unique<llvm::orc::ObjectLinkingLayer>(es);
          })
          .setCompileFunctionCreator([record, level0](llvm::orc::JITTargetMachineBuilder b)
                                         -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
            return std::make_unique<TimedCompiler>(std::move(b), level0, record);
          })
          .create(),
      "creating the JIT");
  jit->getMainJITDylib().addGenerator(
      take(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit->getDataLayout().getGlobalPrefix()),
           "opening this process's symbols"));
  if (passes.empty()) return jit;
  jit->getIRTransformLayer().setTransform(
      [builder, passes, record](
          llvm::orc::ThreadSafeModule tsm,
          llvm::orc::MaterializationResponsibility&) -> llvm::Expected<llvm::orc::ThreadSafeModule> {
        // Its own TargetMachine: transforms run on the compile threads.
        auto tm = llvm::orc::JITTargetMachineBuilder(builder).createTargetMachine();
        if (!tm) return tm.takeError();
        llvm::Error error = tsm.withModuleDo([&](llvm::Module& m) {
          const Clock::time_point t = Clock::now();
          llvm::Error e = run_passes(passes, tm->get(), &m);
          const double s = seconds_since(t);
          const std::lock_guard<std::mutex> lock(record->mutex);
          (*record)[m.getModuleIdentifier()].optimise_seconds = s;
          return e;
        });
        if (error) return error;
        return tsm;
      });
  return jit;
}

}  // namespace

struct Kernels::Impl {
  // The target, for cpu(), features() and ir_file; the JIT makes its own from the same
  // builder (one per compile thread: a TargetMachine is not thread-safe).
  std::unique_ptr<llvm::TargetMachine> tm;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::vector<std::string> names;
  std::vector<KernelFunction> functions;
  std::vector<KernelTiming> timings, shared_timings;
  double total_seconds = 0, cpu_seconds = 0;
};

Kernels::Kernels(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Kernels::Kernels(Kernels&&) noexcept = default;
Kernels& Kernels::operator=(Kernels&&) noexcept = default;
Kernels::~Kernels() = default;

KernelFunction Kernels::find(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < impl_->names.size(); ++i)
    if (impl_->names[i] == name) return impl_->functions[i];
  return nullptr;
}

KernelFunction Kernels::lookup(std::string_view name) const {
  if (KernelFunction f = find(name)) return f;
  std::string known;
  for (const std::string& n : impl_->names) known += (known.empty() ? "" : ", ") + n;
  throw UserError(fmt::format("jit: no kernel '{}' (compiled: {})", name, known.empty() ? "none" : known));
}

std::vector<std::string> Kernels::names() const { return impl_->names; }
const std::vector<KernelTiming>& Kernels::timings() const { return impl_->timings; }
const std::vector<KernelTiming>& Kernels::shared_timings() const { return impl_->shared_timings; }
double Kernels::total_seconds() const { return impl_->total_seconds; }
double Kernels::cpu_seconds() const { return impl_->cpu_seconds; }
std::string Kernels::cpu() const { return impl_->tm->getTargetCPU().str(); }
std::string Kernels::features() const { return impl_->tm->getTargetFeatureString().str(); }

namespace {

// One compile() in flight: modules go into the JIT as they are emitted, and each is looked
// up as soon as it can be compiled, so the compile threads work while this thread emits.
class Compilation {
public:
  Compilation(const Code& code, const Options& options, Kernels::Impl& impl)
      : code_(code), options_(options), impl_(impl), jit_(*impl.jit) {
    impl_.timings.resize(code.kernels.size());
    impl_.shared_timings.resize(code.shared.size());
  }

  // A unit's function, in slices of about module_ops operations, each a module of its own
  // (the first holds the entry function), so that the parts of one large program compile
  // concurrently too.
  void emit_unit(const Unit& unit) {
    KernelTiming& timing = unit.kernel >= 0 ? impl_.timings[unit.kernel] : impl_.shared_timings[unit.shared];
    timing.name = unit.kernel >= 0 ? code_.kernels[unit.kernel].name : unit.symbol;
    if (unit.shared >= 0) timing.users = code_.shared[unit.shared].users;
    timing.ops = specialise::count_ops(*unit.program).total();
    const Clock::time_point t = Clock::now();
    const emit::LlvmOptions kernel_options = llvm_options(options_, *unit.program, unit.linear);
    // The flag where the builder's default is FastISel and this program's selector is not.
    const bool dag = options_.fast_isel && selection_dag(options_, timing.ops, unit.linear);
    const std::shared_ptr<const emit::LlvmKernelPlan> plan = emit::plan_llvm_kernel(*unit.program, kernel_options);
    const int parts = emit::part_count(*plan);
    const int per_module = options_.module_ops > 0 && options_.part_ops > 0 && parts > 1
                               ? std::max(1, options_.module_ops / options_.part_ops)
                               : parts;
    for (int first = 0; first < parts; first += per_module) {
      emit::LlvmOptions lo = kernel_options;
      if (per_module < parts) {
        lo.first_part = first;
        lo.end_part = first + per_module;
        lo.entry = first == 0;
      }
      std::unique_ptr<llvm::LLVMContext> context;
      auto m =
          new_module(first == 0 ? unit.module : fmt::format("{}.slice{}", unit.module, first / per_module), context);
      emit::emit_llvm_function(*m, unit.symbol, *unit.program, lo, plan.get());
      if (dag) m->addModuleFlag(llvm::Module::Warning, kSelectionDag, 1);
      add_module(std::move(m), std::move(context), fmt::format("kernel '{}'", timing.name));
      // A slice without the entry function refers to nothing outside itself: it can be
      // compiled while the next is emitted. The entry's module calls every slice's parts,
      // so it is looked up once they are all in.
      if (first > 0) request(fmt::format("{}.part{}", unit.symbol, first));
    }
    timing.emit_seconds = seconds_since(t);
    request(unit.symbol);
  }

  // The entry of a kernel calling shared functions: it calls them, then its body.
  void emit_entry(int kernel) {
    const KernelCode& k = code_.kernels[kernel];
    const Clock::time_point t = Clock::now();
    std::unique_ptr<llvm::LLVMContext> context;
    auto m = new_module(k.symbol + ".entry", context);
    emit::emit_llvm_shared_entry(*m, k.symbol, k.body, k.own_inputs, k.program->input_count, k.calls,
                                 entry_options(options_));
    add_module(std::move(m), std::move(context), fmt::format("kernel '{}'", k.symbol));
    impl_.timings[kernel].emit_seconds += seconds_since(t);
    request(k.symbol);
  }

  // Waits for every lookup; then each kernel's function and its modules' measurements.
  void finish(Record& record) {
    const llvm::orc::SymbolMap found = take(lookups_.wait(), "compiling the kernels");
    const std::lock_guard<std::mutex> lock(record.mutex);
    const auto add_up = [&](KernelTiming& timing, const std::string& module_name) {
      for (const auto& [module, e] : record.modules) {  // the unit's module, its slices (and entry)
        if (module != module_name && module.rfind(module_name + ".", 0) != 0) continue;
        timing.optimise_seconds += e.optimise_seconds;
        timing.codegen_seconds += e.codegen_seconds;
        timing.instructions += e.instructions;
        if (module == module_name) timing.fast_isel = e.fast_isel;
      }
    };
    for (KernelTiming& timing : impl_.shared_timings) add_up(timing, timing.name);
    for (std::size_t k = 0; k < code_.kernels.size(); ++k) {
      const std::string& function = code_.kernels[k].symbol;
      const auto symbol = found.find(jit_.mangleAndIntern(function));
      if (symbol == found.end())
        throw InternalError(fmt::format("jit: kernel '{}' compiled to no symbol", code_.kernels[k].name));
      add_up(impl_.timings[k], function);
      impl_.names.push_back(code_.kernels[k].name);
      impl_.functions.push_back(llvm::orc::ExecutorAddr(symbol->second.getAddress()).toPtr<KernelFunction>());
    }
  }

private:
  std::unique_ptr<llvm::Module> new_module(const std::string& name, std::unique_ptr<llvm::LLVMContext>& context) {
    context = std::make_unique<llvm::LLVMContext>();
    auto m = std::make_unique<llvm::Module>(name, *context);
    m->setDataLayout(jit_.getDataLayout());
    m->setTargetTriple(jit_.getTargetTriple().str());
    return m;
  }

  void add_module(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> context,
                  const std::string& what) {
    emit::verify(*m);
    // Into the transform layer itself, not through addIRModule: with compile threads,
    // LLJIT's entry layer clones every module into a fresh context before compiling it
    // (through bitcode: a large share of the compile time here), for modules that share
    // one. Ours each own theirs, and have no static constructors for that layer to run.
    take(jit_.getIRTransformLayer().add(jit_.getMainJITDylib(),
                                        llvm::orc::ThreadSafeModule(std::move(m), std::move(context))),
         fmt::format("adding {}", what));
  }

  void request(const std::string& function) {
    llvm::orc::SymbolLookupSet symbols;
    symbols.add(jit_.mangleAndIntern(function));
    lookups_.request(jit_, std::move(symbols));
  }

  const Code& code_;
  const Options& options_;
  Kernels::Impl& impl_;
  llvm::orc::LLJIT& jit_;
  Lookups lookups_;
};

// The units, largest first: the long poles start compiling first.
std::vector<Unit> largest_first(const Code& code) {
  std::vector<Unit> units = units_of(code);
  std::stable_sort(units.begin(), units.end(),
                   [](const Unit& a, const Unit& b) { return a.program->nodes.size() > b.program->nodes.size(); });
  return units;
}

}  // namespace

Kernels compile(const Code& code, const Options& options) {
  const Clock::time_point start = Clock::now();
  const std::clock_t cpu_start = std::clock();
  // Every check before any compilation: a bad kernel or option costs nothing.
  check_code(code);
  initialise_llvm();
  llvm::orc::JITTargetMachineBuilder builder = target_builder(options);
  if (!options.passes.empty())
    take(run_passes(options.passes, nullptr, nullptr), "IR pass pipeline '" + options.passes + "'");

  auto impl = std::make_unique<Kernels::Impl>();
  impl->tm = take(builder.createTargetMachine(), "creating the target machine");
  const unsigned threads = options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  auto record = std::make_shared<Record>();
  impl->jit = make_jit(builder, threads, options.codegen_level == 0, options.passes, record);
  {
    // One module (and context) per function or slice: each is optimised and compiled on
    // its own -- concurrently with the others when there are compile threads -- and timed
    // on its own. Materialisation is lazy: a lookup runs the passes and the code generator.
    Compilation compilation(code, options, *impl);
    for (const Unit& unit : largest_first(code)) compilation.emit_unit(unit);
    for (std::size_t k = 0; k < code.kernels.size(); ++k)
      if (!code.kernels[k].calls.empty()) compilation.emit_entry(static_cast<int>(k));
    compilation.finish(*record);
  }
  impl->total_seconds = code.prepare_seconds + seconds_since(start);
  impl->cpu_seconds = code.prepare_cpu_seconds + static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  if (!options.ir_file.empty()) write_ir(code, options, *impl->tm);
  return Kernels(std::move(impl));
}

Kernels compile(const std::vector<std::pair<std::string, specialise::ScalarProgram>>& kernels, const Options& options) {
  Code code;
  for (const auto& [name, program] : kernels) {
    jit::KernelCode& k = code.kernels.emplace_back();
    k.name = k.symbol = name;
    k.program = &program;
  }
  return compile(code, options);
}

void tune_llvm_process_options() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto& registered = llvm::cl::getRegisteredOptions();
    for (const auto& [name, value] : kTunedOptions)
      if (auto it = registered.find(name); it != registered.end() && it->second->getNumOccurrences() == 0)
        it->second->addOccurrence(0, name, value);
  });
}

std::string host_cpu() { return llvm::sys::getHostCPUName().str(); }

}  // namespace soa::jit
