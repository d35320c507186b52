#include "emit-llvm/emit_llvm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <memory>
#include <utility>
#include <vector>

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "specialise/lanes.hpp"
#include "specialise/partition.hpp"
#include "specialise/kernel.hpp"
#include "support/error.hpp"
#include "support/sincos.hpp"

namespace soa::emit {

using specialise::arity;
using specialise::kAbsent;
using specialise::kMaxLanes;
using specialise::kOne;
using specialise::LaneGroup;
using specialise::LanePlan;
using specialise::LaneStep;
using specialise::LaneTerm;
using specialise::plan_lanes;
using specialise::ScalarNode;
using specialise::ScalarOp;
using specialise::ScalarProgram;

namespace {

// The C library functions the code generator may call for llvm.sin/cos/sqrt/memset (and
// the sincos it forms from a sin and a cos of one value): a kernel of that name would
// capture the calls in the JIT's symbol table.
bool is_reserved(const std::string& s) {
  static constexpr std::array<std::string_view, 7> reserved = {"sin",    "cos",    "sqrt",   "sincos",
                                                               "memset", "memcpy", "memmove"};
  for (std::string_view r : reserved)
    if (s == r || s == std::string(r) + "f" || s == std::string(r) + "l") return true;
  return false;
}

// void NAME(ptr, ...) nounwind, with the promises the C++ signature cannot make but every
// caller keeps (as with the generated C++, where the kernel reads `in` only and writes
// `out` only): the arrays do not overlap, and the function neither keeps the pointers nor
// writes its input.
llvm::Function* kernel_function(llvm::Module& m, const std::string& name, std::initializer_list<const char*> args,
                                llvm::GlobalValue::LinkageTypes linkage, const std::string& tune_cpu) {
  llvm::LLVMContext& context = m.getContext();
  std::vector<llvm::Type*> params(args.size(), llvm::PointerType::getUnqual(context));
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), params, false);
  llvm::Function* f = llvm::Function::Create(type, linkage, name, m);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  if (!tune_cpu.empty()) f->addFnAttr("tune-cpu", tune_cpu);
  int i = 0;
  for (const char* arg : args) {
    llvm::Argument* a = f->getArg(i++);
    a->setName(arg);
    a->addAttr(llvm::Attribute::NoAlias);
    a->addAttr(llvm::Attribute::NoCapture);
    if (std::string_view(arg) == "in") a->addAttr(llvm::Attribute::ReadOnly);
    if (std::string_view(arg) == "out") a->addAttr(llvm::Attribute::WriteOnly);
  }
  return f;
}

}  // namespace

void check_llvm_kernel(const std::string& name, const ScalarProgram& p) {
  // The rule both back-ends name their symbols by (specialise/kernel.hpp).
  specialise::check_name(name, "emit-llvm: kernel name");
  if (is_reserved(name))
    throw UserError(fmt::format("emit-llvm: kernel name '{}' would shadow the C library function of that name", name));
  const auto bad = [&](const std::string& what) {
    throw InternalError(fmt::format("emit-llvm: kernel '{}' violates the ScalarProgram contract: {}", name, what));
  };
  if (p.input_count < 0) bad(fmt::format("input_count is {}", p.input_count));
  const int size = static_cast<int>(p.nodes.size());
  for (int i = 0; i < size; ++i) {
    const ScalarNode& n = p.nodes[i];
    if (static_cast<int>(n.op) > static_cast<int>(ScalarOp::Cos)) bad(fmt::format("node {} has an unknown op", i));
    if (n.op == ScalarOp::Input && (n.a < 0 || n.a >= p.input_count))
      bad(fmt::format("node {} reads in[{}], but the kernel has {} inputs", i, n.a, p.input_count));
    const auto operand = [&](int x, char which) {
      if (x < 0 || x >= i)
        bad(fmt::format("node {} ({}) has operand {} = {}, which is not an earlier node", i,
                        specialise::to_string(n.op), which, x));
    };
    if (arity(n.op) >= 1) operand(n.a, 'a');
    if (arity(n.op) == 2) operand(n.b, 'b');
  }
  for (std::size_t k = 0; k < p.outputs.size(); ++k)
    if (p.outputs[k] < 0 || p.outputs[k] >= size)
      bad(fmt::format("out[{}] is node {}, but the kernel has {} nodes", k, p.outputs[k], size));
}

// The parts of a kernel, its scratch slots and its lane groups: what every slice of it
// must agree on, computed once (plan_llvm_kernel) and shared by the slices' emitters.
struct LlvmKernelPlan {
  LanePlan lanes;
  std::vector<int> part, slot;  // per node: its part (-1: computed by a lane group), its scratch slot (or -1)
  std::vector<int> begin;       // scalar part k is nodes [begin[k], begin[k + 1])
  int scalar_parts = 1, part_count = 1, slot_count = 0;
  std::vector<std::vector<int>> outputs;  // per scalar part: the outputs whose node it computes
  // Lane parts follow the scalar ones: lane part d holds groups [group_begin[d], group_begin[d + 1]).
  std::vector<int> group_begin;
  // Per group and step, where its two vector operands come from: the lanes' factors and
  // the shared factor (W copies of it), each a run of W scratch slots, a row of
  // `literals`, or nothing (every factor is 1).
  struct Operand {
    int slot = -1, literal = -1;
  };
  std::vector<std::vector<std::pair<Operand, Operand>>> operands;
  std::vector<std::vector<double>> literals;
  std::vector<std::vector<int>> pack_slots_of;  // per node: the slots a scalar part stores it to
  // Per lane part: the slots it fills first -- inputs and literals in tuples that also hold
  // computed values -- as (slot, node or kOne or kAbsent).
  std::vector<std::vector<std::pair<int, int>>> pack_fills;
  // Per group: W slots for its result when a root has other output positions (a Gram
  // entry's mirror), copied from there at the end of the lane part; -1: none.
  std::vector<int> result_slot;
  std::vector<std::vector<int>> positions;  // per root: every output position it is stored to
};

namespace {

bool literal_or_one(const ScalarProgram& p, int x) {
  return x == kOne || x == kAbsent || p.nodes[x].op == ScalarOp::Const;
}

// Scalar parts of about options.part_ops operations each, in program order, skipping what
// the lane groups compute; lane parts of about as many steps after them. For every value
// a later part reads, a scratch slot (reused once no later part reads it); for every
// tuple of lane factors, W slots side by side (never reused: later lane parts read them).
LlvmKernelPlan make_plan(const ScalarProgram& p, const LlvmOptions& options) {
  LlvmKernelPlan plan;
  const int size = static_cast<int>(p.nodes.size());
  int total_ops = 0;
  for (const ScalarNode& n : p.nodes) total_ops += arity(n.op) > 0 ? 1 : 0;
  const bool split = options.part_ops > 0 && total_ops > options.part_ops;
  plan.lanes = plan_lanes(p, split ? options.lanes : 0);
  const std::vector<char>& removed = plan.lanes.removed;
  specialise::Partition scalar = specialise::partition(p, options.part_ops, removed);
  plan.part = std::move(scalar.part);
  plan.begin = std::move(scalar.begin);
  plan.slot = std::move(scalar.slot);
  plan.outputs = std::move(scalar.outputs);
  plan.scalar_parts = scalar.parts;
  plan.slot_count = scalar.slots;
  // Lane parts.
  const int groups = static_cast<int>(plan.lanes.groups.size());
  plan.group_begin = {0};
  for (int g = 0, steps = 0; g < groups; ++g) {
    if (options.part_ops > 0 && steps >= options.part_ops) {
      plan.group_begin.push_back(g);
      steps = 0;
    }
    steps += static_cast<int>(plan.lanes.groups[g].steps.size());
  }
  if (groups > 0) plan.group_begin.push_back(groups);
  const int lane_parts = static_cast<int>(plan.group_begin.size()) - 1;
  plan.part_count = plan.scalar_parts + std::max(lane_parts, 0);
  if (plan.part_count <= 1) return plan;

  // Operand tuples: each distinct one a run of W slots (a row tuple recurs in every column
  // of a Gram matrix, a shared factor in every row group), filled by the scalar part
  // computing each value in it or, for inputs and literals, by the first lane part reading
  // it; a tuple of literals only is a row of `literals` instead.
  plan.pack_slots_of.assign(size, {});
  plan.pack_fills.assign(lane_parts, {});
  plan.positions.assign(size, {});
  for (std::size_t o = 0; o < p.outputs.size(); ++o) plan.positions[p.outputs[o]].push_back(static_cast<int>(o));
  std::map<std::vector<int>, int> tuples, literal_rows;
  const auto operand = [&](const std::vector<int>& tuple, int d) {
    LlvmKernelPlan::Operand where;
    if (std::all_of(tuple.begin(), tuple.end(), [](int x) { return x == kOne || x == kAbsent; })) return where;
    if (std::all_of(tuple.begin(), tuple.end(), [&](int x) { return literal_or_one(p, x); })) {
      auto [it, fresh] = literal_rows.emplace(tuple, static_cast<int>(plan.literals.size()));
      if (fresh) {
        std::vector<double>& row = plan.literals.emplace_back();
        for (int x : tuple) row.push_back(x == kOne ? 1.0 : x == kAbsent ? 0.0 : p.nodes[x].value);
      }
      where.literal = it->second;
      return where;
    }
    auto [it, fresh] = tuples.emplace(tuple, plan.slot_count);
    if (fresh) {
      plan.slot_count += static_cast<int>(tuple.size());
      for (std::size_t l = 0; l < tuple.size(); ++l) {
        const int x = tuple[l], slot = it->second + static_cast<int>(l);
        if (x >= 0 && arity(p.nodes[x].op) > 0)
          plan.pack_slots_of[x].push_back(slot);
        else
          plan.pack_fills[d].push_back({slot, x});
      }
    }
    where.slot = it->second;
    return where;
  };
  for (int d = 0; d < lane_parts; ++d)
    for (int g = plan.group_begin[d]; g < plan.group_begin[d + 1]; ++g) {
      const LaneGroup& group = plan.lanes.groups[g];
      auto& operands = plan.operands.emplace_back();
      for (const LaneStep& s : group.steps) {
        std::vector<int> factors(group.width), shared(group.width, s.shared);
        // A lane without a term multiplies 0 (kAbsent), or what the others do when that is
        // one value: a broadcast, stored once.
        int uniform = kAbsent;
        bool one_value = true;
        for (int l = 0; l < group.width; ++l) {
          const int x = s.lane[l].x;
          if (x == kAbsent) continue;
          one_value = one_value && (uniform == kAbsent || x == uniform);
          uniform = x;
        }
        for (int l = 0; l < group.width; ++l) factors[l] = one_value ? uniform : s.lane[l].x;
        operands.push_back({operand(factors, d), operand(shared, d)});
      }
    }
  for (const LaneGroup& g : plan.lanes.groups) {
    bool mirrored = false;
    for (int l = 0; l < g.width; ++l) mirrored = mirrored || plan.positions[g.root[l]].size() > 1;
    plan.result_slot.push_back(mirrored ? plan.slot_count : -1);
    if (mirrored) plan.slot_count += g.width;
  }
  return plan;
}

// Builds the IR of one kernel. With one part the kernel is a single function in program
// order; with several, parts are `internal noinline` functions called in order by the
// kernel, and a value computed in one part and used in a later one goes through a slot of
// a stack array (`scratch`) allocated by the kernel. Slots are reused once no later part
// reads them, so the array holds at most the values live across one part boundary.
class Emitter {
public:
  Emitter(llvm::Module& m, const std::string& name, const ScalarProgram& p, const LlvmOptions& options,
          const LlvmKernelPlan& plan)
      : m_(m),
        name_(name),
        p_(p),
        options_(options),
        plan_(plan),
        context_(m.getContext()),
        f64_(llvm::Type::getDoubleTy(context_)),
        ptr_(llvm::PointerType::getUnqual(context_)),
        part_(plan.part),
        slot_(plan.slot),
        begin_(plan.begin),
        outputs_(plan.outputs),
        part_count_(plan.part_count),
        slot_count_(plan.slot_count) {}

  llvm::Function* emit() {
    const bool sliced = options_.first_part > 0 || options_.end_part >= 0 || !options_.entry;
    const int end = options_.end_part < 0 ? part_count_ : std::min(options_.end_part, part_count_);
    const auto defined = [&](int k) { return k >= options_.first_part && k < end; };
    // The parts: internal to the kernel's module, or external when sliced over modules.
    std::vector<llvm::Function*> parts;
    for (int k = 0; part_count_ > 1 && k < part_count_; ++k) {
      if (!defined(k) && !options_.entry) continue;
      llvm::Function* part = function(fmt::format("{}.part{}", name_, k), {"in", "out", "scratch"},
                                      sliced ? llvm::Function::ExternalLinkage : llvm::Function::InternalLinkage);
      // Kept apart: inlining would rebuild the one huge block the parts exist to avoid.
      part->addFnAttr(llvm::Attribute::NoInline);
      if (defined(k)) {
        llvm::IRBuilder<> pb(llvm::BasicBlock::Create(context_, "entry", part));
        if (k < plan_.scalar_parts)
          body(pb, part->getArg(0), part->getArg(1), part->getArg(2), k);
        else
          lane_body(pb, part->getArg(0), part->getArg(1), part->getArg(2), k);
        pb.CreateRetVoid();
      }
      parts.push_back(part);
    }
    if (!options_.entry) return nullptr;
    llvm::Function* kernel = function(name_, {"in", "out"}, llvm::Function::ExternalLinkage);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(context_, "entry", kernel));
    if (part_count_ <= 1) {
      body(b, kernel->getArg(0), kernel->getArg(1), nullptr, 0);
    } else {
      // Aligned for the lane parts' vector loads of factor tuples.
      auto* scratch = b.CreateAlloca(llvm::ArrayType::get(f64_, std::max(slot_count_, 1)), nullptr, "scratch");
      scratch->setAlignment(llvm::Align(32));
      for (llvm::Function* part : parts) b.CreateCall(part, {kernel->getArg(0), kernel->getArg(1), scratch});
      // Outputs that are an input belong to no part.
      for (std::size_t i = 0; i < p_.outputs.size(); ++i) {
        const ScalarNode& n = p_.nodes[p_.outputs[i]];
        if (n.op == ScalarOp::Input) store(b, load(b, kernel->getArg(0), n.a), kernel->getArg(1), i);
      }
    }
    literal_outputs(b, kernel->getArg(1));
    b.CreateRetVoid();
    return kernel;
  }

private:
  llvm::Function* function(const std::string& fname, std::initializer_list<const char*> args,
                           llvm::GlobalValue::LinkageTypes linkage) {
    return kernel_function(m_, fname, args, linkage, options_.tune_cpu);
  }

  // Outputs that are literals -- most of a Jacobian or a mass matrix of a branched robot
  // is 0 -- with runs of +0.0 written by vector stores of zeros (4, then 2, then 1 wide),
  // or by one memset when long: one store per output would cost the code generator
  // (FastISel does not merge stores) more than the rest of such kernels, and a memset call
  // per short run costs the kernel a call each (talos_full's Jacobian had 89 of them).
  void literal_outputs(llvm::IRBuilder<>& b, llvm::Value* out) {
    const auto zero = [&](std::size_t i) {
      const ScalarNode& n = p_.nodes[p_.outputs[i]];
      return n.op == ScalarOp::Const && n.value == 0.0 && !std::signbit(n.value);
    };
    constexpr std::size_t kMemsetFrom = 32;  // doubles: 8 vector stores
    for (std::size_t i = 0; i < p_.outputs.size();) {
      const ScalarNode& n = p_.nodes[p_.outputs[i]];
      if (n.op != ScalarOp::Const) {
        ++i;
        continue;
      }
      std::size_t end = i + 1;
      if (zero(i))
        while (end < p_.outputs.size() && zero(end)) ++end;
      if (end - i >= kMemsetFrom) {
        b.CreateMemSet(address(b, out, i), b.getInt8(0), (end - i) * sizeof(double), llvm::MaybeAlign(alignof(double)));
      } else if (end - i >= 2) {
        for (std::size_t at = i; at < end;) {
          const unsigned width = end - at >= 4 ? 4 : end - at >= 2 ? 2 : 1;
          b.CreateAlignedStore(zeros(b, width), address(b, out, at), llvm::Align(alignof(double)));
          at += width;
        }
      } else {
        store(b, constant(n.value), out, i);
      }
      i = end;
    }
  }

  llvm::Value* constant(double x) { return llvm::ConstantFP::get(f64_, x); }
  // +0.0 in `width` lanes, as a value FastISel can store: a vector constant operand is
  // what it cannot select, and its miss hands the rest of the block -- here every literal
  // output of the kernel -- to SelectionDAG, at many times the compile cost. So the
  // vectors are loaded from a table of zeros, once per width and block.
  llvm::Value* zeros(llvm::IRBuilder<>& b, unsigned width) {
    if (width == 1) return constant(0.0);
    enter_block(b);
    llvm::Value*& z = zeros_[width == 4 ? 1 : 0];
    if (!z) {
      llvm::Constant* init = llvm::ConstantAggregateZero::get(llvm::ArrayType::get(f64_, 4));
      z = b.CreateAlignedLoad(llvm::FixedVectorType::get(f64_, width), table(zero_table_, "zeros", init),
                              llvm::Align(alignof(double)));
    }
    return z;
  }
  // &base[i], one getelementptr per address and basic block: a split kernel reads an input
  // or a scratch slot at each use, and FastISel folds the address into every load and
  // store of the block that computes it -- only there, hence per block: fewer IR
  // instructions, the same machine code.
  llvm::Value* address(llvm::IRBuilder<>& b, llvm::Value* base, std::size_t i) {
    enter_block(b);
    auto [it, fresh] = addresses_.try_emplace({base, i}, nullptr);
    if (fresh) it->second = b.CreateConstInBoundsGEP1_64(f64_, base, i);
    return it->second;
  }
  // address() and zeros() keep what they made for the block being filled: a value is
  // reused only in its own block.
  void enter_block(llvm::IRBuilder<>& b) {
    if (b.GetInsertBlock() == cache_block_) return;
    addresses_.clear();
    zeros_ = {};
    cache_block_ = b.GetInsertBlock();
  }
  llvm::Value* load(llvm::IRBuilder<>& b, llvm::Value* base, std::size_t i) {
    return b.CreateAlignedLoad(f64_, address(b, base, i), llvm::Align(alignof(double)));
  }
  void store(llvm::IRBuilder<>& b, llvm::Value* v, llvm::Value* base, std::size_t i) {
    b.CreateAlignedStore(v, address(b, base, i), llvm::Align(alignof(double)));
  }

  void prepare_values() {
    if (!v_.empty()) return;
    v_.assign(p_.nodes.size(), nullptr);
    inputs_.assign(static_cast<std::size_t>(p_.input_count), {nullptr, -1});
    sincos_.assign(p_.nodes.size(), {{nullptr, nullptr}, -1});
  }

  // Node x's value in part k: computed there already, a literal, or read from memory -- an
  // input, or an earlier part's value from its scratch slot. In a split kernel the read is
  // repeated at every use rather than kept in a register through the part: each load
  // folds into its one user, and the register allocator, the code generator's largest
  // cost here, has fewer and shorter live ranges (fewer spills). Unsplit, each input is
  // loaded once.
  llvm::Value* value_in_part(llvm::IRBuilder<>& b, llvm::Value* in, llvm::Value* scratch, int x, int k) {
    const ScalarNode& n = p_.nodes[x];
    if (n.op == ScalarOp::Const) return constant(n.value);
    if (n.op == ScalarOp::Input) {
      if (scratch) return load(b, in, n.a);
      auto& [load_of_part, part] = inputs_[n.a];
      if (part != k) load_of_part = load(b, in, n.a), part = k;
      return load_of_part;
    }
    if (part_[x] == k) return v_[x];    // computed earlier in this part
    return load(b, scratch, slot_[x]);  // an earlier part's
  }

  // The module's constant tables for lane parts, made at first use: the plan's literal
  // tuples one after the other, and the blend masks (row m: lane l all ones iff bit l of m).
  llvm::GlobalVariable* table(llvm::GlobalVariable*& global, const char* name, llvm::Constant* init) {
    if (!global)
      global = new llvm::GlobalVariable(m_, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init,
                                        fmt::format("{}.{}", name_, name));
    global->setAlignment(llvm::Align(32));
    return global;
  }
  llvm::Value* literal_row(llvm::IRBuilder<>& b, llvm::Type* vec, int row) {
    if (literal_offset_.empty()) {
      std::vector<double> all;
      for (const std::vector<double>& r : plan_.literals) {
        literal_offset_.push_back(static_cast<int>(all.size()));
        all.insert(all.end(), r.begin(), r.end());
      }
      table(literals_, "lane.literals", llvm::ConstantDataArray::get(context_, all));
    }
    return b.CreateAlignedLoad(vec, b.CreateConstInBoundsGEP1_64(f64_, literals_, literal_offset_[row]),
                               llvm::Align(alignof(double)));
  }
  llvm::Value* mask_row(llvm::IRBuilder<>& b, llvm::Type* vec, unsigned mask) {
    if (!masks_) {
      std::vector<std::uint64_t> rows;
      for (unsigned m = 0; m < (1u << kMaxLanes); ++m)
        for (int l = 0; l < kMaxLanes; ++l) rows.push_back(m >> l & 1 ? ~std::uint64_t{0} : 0);
      table(masks_, "lane.masks", llvm::ConstantDataArray::get(context_, rows));
    }
    return b.CreateAlignedLoad(vec, b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), masks_, mask * kMaxLanes),
                               llvm::Align(32));
  }

  // -v lane by lane, as the sign bits flipped by an integer xor (what FastISel selects; IEEE
  // negation is exactly that).
  llvm::Value* negate(llvm::IRBuilder<>& b, llvm::Value* v, int w) {
    if (!signs_) {
      const std::vector<std::uint64_t> row(kMaxLanes, std::uint64_t{1} << 63);
      table(signs_, "lane.signs", llvm::ConstantDataArray::get(context_, row));
    }
    auto* ivec = llvm::FixedVectorType::get(b.getInt64Ty(), static_cast<unsigned>(w));
    llvm::Value* sign = b.CreateAlignedLoad(ivec, signs_, llvm::Align(32));
    return b.CreateBitCast(b.CreateXor(b.CreateBitCast(v, ivec), sign), v->getType());
  }

  // Lane part k: its groups (lanes.hpp), each a chain of W-wide steps
  //   product = (lane factors) * (shared factor, W copies)
  //   acc     = lane by lane: product (a lane's first term), acc + product, acc - product,
  //             or acc (no term in this lane here) -- whole-vector results blended by masks
  // then one vector store of the W outputs, and one into scratch when a root has other
  // positions (a Gram entry's mirror), copied lane by lane at the end of the part (read
  // back at once, the narrow loads of a wide store would stall store-to-load forwarding).
  // Only loads, stores, arithmetic and bitwise and/or of vectors: FastISel selects all of
  // it (a shuffle or a splat would send the part to SelectionDAG, several times slower to
  // compile).
  void lane_body(llvm::IRBuilder<>& b, llvm::Value* in, llvm::Value* out, llvm::Value* scratch, int k) {
    prepare_values();
    const int d = k - plan_.scalar_parts;
    for (const auto& [slot, x] : plan_.pack_fills[d]) {
      llvm::Value* v = x == kOne ? constant(1.0) : x == kAbsent ? constant(0.0) : value_in_part(b, in, scratch, x, k);
      store(b, v, scratch, slot);
    }
    for (int gi = plan_.group_begin[d]; gi < plan_.group_begin[d + 1]; ++gi) {
      const LaneGroup& g = plan_.lanes.groups[gi];
      const int w = g.width;
      auto* vec = llvm::FixedVectorType::get(f64_, w);
      auto* ivec = llvm::FixedVectorType::get(b.getInt64Ty(), w);
      const auto operand = [&](const LlvmKernelPlan::Operand& o) -> llvm::Value* {
        if (o.slot >= 0) return b.CreateAlignedLoad(vec, address(b, scratch, o.slot), llvm::Align(alignof(double)));
        if (o.literal >= 0) return literal_row(b, vec, o.literal);
        return nullptr;  // every factor 1
      };
      // a with the lanes of `mask` taken from c
      const auto blend = [&](llvm::Value* a, llvm::Value* c, unsigned mask) -> llvm::Value* {
        if (mask == (1u << w) - 1) return c;
        llvm::Value* keep = b.CreateAnd(b.CreateBitCast(a, ivec), mask_row(b, ivec, ~mask & ((1u << w) - 1)));
        llvm::Value* take = b.CreateAnd(b.CreateBitCast(c, ivec), mask_row(b, ivec, mask));
        return b.CreateBitCast(b.CreateOr(keep, take), vec);
      };
      llvm::Value* acc = nullptr;
      for (std::size_t si = 0; si < g.steps.size(); ++si) {
        const LaneStep& s = g.steps[si];
        const auto& [factors_at, shared_at] = plan_.operands[gi][si];
        llvm::Value* factors = operand(factors_at);
        llvm::Value* shared = operand(shared_at);
        llvm::Value* product = !factors ? shared : !shared ? factors : b.CreateFMul(factors, shared);
        unsigned first = 0, first_sub = 0, add = 0, sub = 0;
        for (int l = 0; l < w; ++l) {
          const LaneTerm& t = s.lane[l];
          if (t.x == kAbsent) continue;
          (t.first ? (t.sub ? first_sub : first) : t.sub ? sub : add) |= 1u << l;
        }
        if (!acc) {
          acc = product;  // a lane starting later takes its first product then
          if (first_sub) acc = blend(acc, negate(b, product, w), first_sub);
          continue;
        }
        llvm::Value* next = acc;
        if (add) next = blend(next, b.CreateFAdd(acc, product), add);
        if (sub) next = blend(next, b.CreateFSub(acc, product), sub);
        if (first) next = blend(next, product, first);
        if (first_sub) next = blend(next, negate(b, product, w), first_sub);  // -x s, exact
        acc = next;
      }
      if (g.negate) acc = negate(b, acc, w);
      b.CreateAlignedStore(acc, address(b, out, g.first_output), llvm::Align(alignof(double)));
      if (plan_.result_slot[gi] >= 0)
        b.CreateAlignedStore(acc, address(b, scratch, plan_.result_slot[gi]), llvm::Align(alignof(double)));
    }
    for (int gi = plan_.group_begin[d]; gi < plan_.group_begin[d + 1]; ++gi) {
      const LaneGroup& g = plan_.lanes.groups[gi];
      for (int l = 0; l < g.width; ++l)
        for (int o : plan_.positions[g.root[l]])
          if (o != g.first_output + l) store(b, load(b, scratch, plan_.result_slot[gi] + l), out, o);
    }
  }

  // The operations of part k (all of them when scratch is null), reading inputs and
  // earlier parts' values as value_in_part() says.
  void body(llvm::IRBuilder<>& b, llvm::Value* in, llvm::Value* out, llvm::Value* scratch, int k) {
    if (options_.allow_contraction) {
      llvm::FastMathFlags fmf;
      fmf.setAllowContract(true);
      b.setFastMathFlags(fmf);
    }
    prepare_values();
    first_cold_ = nullptr;
    const auto value = [&](int x) { return value_in_part(b, in, scratch, x, k); };
    std::vector<llvm::Value*>& v = v_;
    const int first = scratch ? begin_[k] : 0, last = scratch ? begin_[k + 1] : static_cast<int>(p_.nodes.size());
    // The sin and cos of the inputs (joint angles) the part's Sin and Cos nodes read, first
    // and in input order: independent of everything else, their latencies overlap (as in
    // the generated C++). Those of computed values come at their first Sin or Cos.
    const std::vector<int> angles = specialise::trig_inputs(p_, first, last);
    const int width = options_.sincos_lanes;
    if (width >= 2 && static_cast<int>(angles.size()) >= specialise::kTrigVectorMin) {
      // Several at a time: the same operations on a vector of angles (padded with zeros).
      llvm::Type* vector = llvm::FixedVectorType::get(f64_, static_cast<unsigned>(width));
      for (std::size_t at = 0; at < angles.size(); at += static_cast<std::size_t>(width)) {
        const int lanes = std::min(width, static_cast<int>(angles.size() - at));
        llvm::Value* x = llvm::ConstantFP::get(vector, 0.0);
        for (int j = 0; j < lanes; ++j) x = b.CreateInsertElement(x, value(angles[at + j]), j);
        const auto [s, c] = sincos(b, x);
        for (int j = 0; j < lanes; ++j)
          sincos_[angles[at + j]] = {{b.CreateExtractElement(s, j), b.CreateExtractElement(c, j)}, k};
      }
    } else {
      for (int x : angles) sincos_[x] = {sincos(b, value(x)), k};
    }
    for (int i = first; i < last; ++i) {
      const ScalarNode& n = p_.nodes[i];
      if (arity(n.op) == 0 || part_[i] < 0) continue;
      llvm::Value* a = value(n.a);
      llvm::Value* c = arity(n.op) == 2 ? value(n.b) : nullptr;
      switch (n.op) {
        case ScalarOp::Add: v[i] = b.CreateFAdd(a, c); break;
        case ScalarOp::Sub: v[i] = b.CreateFSub(a, c); break;
        case ScalarOp::Mul: v[i] = b.CreateFMul(a, c); break;
        case ScalarOp::Div: v[i] = b.CreateFDiv(a, c); break;
        case ScalarOp::Neg: v[i] = b.CreateFNeg(a); break;
        case ScalarOp::Sqrt: v[i] = b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a); break;
        case ScalarOp::Sin:
        case ScalarOp::Cos: {
          // One pair per operand and part (parts are functions): an input's made above, a
          // computed value's here, at its first Sin or Cos.
          auto& [pair, part] = sincos_[n.a];
          if (part != k) pair = sincos(b, a), part = k;
          v[i] = n.op == ScalarOp::Sin ? pair.first : pair.second;
          break;
        }
        default: break;
      }
      if (scratch && slot_[i] >= 0) store(b, v[i], scratch, slot_[i]);
      if (scratch)
        for (int slot : plan_.pack_slots_of[i]) store(b, v[i], scratch, slot);
    }
    const auto output = [&](int i) {
      const int o = p_.outputs[i];
      if (p_.nodes[o].op == ScalarOp::Const || (scratch && p_.nodes[o].op == ScalarOp::Input))
        return;  // literal_outputs(), or the kernel's
      store(b, value(o), out, i);
    };
    if (scratch) {
      for (int i : outputs_[k]) output(i);
    } else {
      for (std::size_t i = 0; i < p_.outputs.size(); ++i) output(static_cast<int>(i));
    }
  }

  // soa::sincos (support/sincos.hpp) of x, built in place -- the same operations in the
  // same order, hence specialise::evaluate's bits:
  //     ...the fast path, straight-line, whatever x is...
  //     br (fabs x < 2^20), %sincos.join, %sincos.cold    weighted: the cold block out of line
  //   sincos.cold:  sin(x), cos(x)                       libm, soa::sincos's fallback
  //   sincos.join:  a phi for sin and one for cos; emission continues here.
  // For large, infinite or NaN x the fast path computes garbage the phi drops, never
  // poison: k mod 4 is read from the low bits of x * 2/pi + 1.5 * 2^52, not from fptosi
  // (poison out of range); on the fast path it is the C++ static_cast<int>(k) & 3. The
  // quadrant is then selects, which FastISel turns into branches -- predictable for joint
  // angles; cmov on the bits instead ran the Panda's inverse dynamics more slowly.
  // Not a call to one shared function: no inliner runs on this IR, and a call clobbers
  // every vector register, the very cost this replaces.
  // x may be a vector of angles (LlvmOptions::sincos_lanes): the same operations lane by
  // lane, the branch taken when every lane is in range, libm for each lane of the cold block
  // whose angle is not.
  std::pair<llvm::Value*, llvm::Value*> sincos(llvm::IRBuilder<>& b, llvm::Value* x) {
    namespace c = sincos_constants;
    llvm::Type* type = x->getType();
    auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
    llvm::Type* i64 =
        vector ? static_cast<llvm::Type*>(llvm::FixedVectorType::get(b.getInt64Ty(), vector->getNumElements()))
               : b.getInt64Ty();
    const auto lit = [&](double value) { return llvm::ConstantFP::get(type, value); };
    const auto int_lit = [&](std::uint64_t value) { return llvm::ConstantInt::get(i64, value); };
    const auto add = [&](llvm::Value* l, llvm::Value* r) { return b.CreateFAdd(l, r); };
    const auto sub = [&](llvm::Value* l, llvm::Value* r) { return b.CreateFSub(l, r); };
    const auto mul = [&](llvm::Value* l, llvm::Value* r) { return b.CreateFMul(l, r); };
    // |x| by clearing the sign bit, not llvm.fabs: FastISel selects integer and-masks but
    // not that intrinsic, and would hand the block to SelectionDAG.
    llvm::Value* magnitude =
        b.CreateBitCast(b.CreateAnd(b.CreateBitCast(x, i64), int_lit(0x7fffffffffffffffULL)), type);
    llvm::Value* in_range = b.CreateFCmpOLT(magnitude, lit(c::fast_bound));
    // 1. x - k pi/2 = r - e (kp2, kp3: soa::sincos's b and c)
    llvm::Value* t = add(mul(x, lit(c::two_over_pi)), lit(c::round_shift));
    llvm::Value* k = sub(t, lit(c::round_shift));
    llvm::Value* a = sub(x, mul(k, lit(c::pio2_1)));
    llvm::Value* kp2 = mul(k, lit(c::pio2_2));
    llvm::Value* s1 = sub(a, kp2);
    llvm::Value* e1 = add(sub(s1, a), kp2);
    llvm::Value* kp3 = mul(k, lit(c::pio2_3));
    llvm::Value* r = sub(s1, kp3);
    llvm::Value* e2 = add(sub(r, s1), kp3);
    llvm::Value* e = add(add(e1, e2), mul(k, lit(c::pio2_4)));
    // 2. sin and cos of r - e
    llvm::Value* z = mul(r, r);
    llvm::Value* w = mul(z, z);
    llvm::Value* v = mul(z, r);
    llvm::Value* hz = mul(lit(0.5), z);
    llvm::Value* h = sub(lit(1.0), hz);
    const auto estrin = [&](double c0, double c1, double c2, double c3) {  // (c0 + z c1) + w (c2 + z c3)
      return add(add(lit(c0), mul(z, lit(c1))), mul(w, add(lit(c2), mul(z, lit(c3)))));
    };
    llvm::Value* ww = mul(w, w);
    llvm::Value* ps = add(estrin(c::S2, c::S3, c::S4, c::S5), mul(ww, lit(c::S6)));
    llvm::Value* sin_r = sub(r, sub(sub(sub(e, mul(hz, e)), mul(mul(z, v), ps)), mul(v, lit(c::S1))));
    llvm::Value* pc = add(estrin(c::C1, c::C2, c::C3, c::C4), mul(ww, add(lit(c::C5), mul(z, lit(c::C6)))));
    llvm::Value* cos_r = add(h, add(sub(sub(lit(1.0), h), hz), add(mul(w, pc), mul(r, e))));
    // 3. the quadrant n = k mod 4
    llvm::Value* n = b.CreateAnd(b.CreateBitCast(t, i64), int_lit(3));
    llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(n, int_lit(1)), int_lit(0));
    llvm::Value* s = b.CreateSelect(odd, cos_r, sin_r);
    llvm::Value* co = b.CreateSelect(odd, sin_r, cos_r);
    llvm::Value* fast_sin = b.CreateSelect(b.CreateICmpNE(b.CreateAnd(n, int_lit(2)), int_lit(0)), b.CreateFNeg(s), s);
    llvm::Value* fast_cos = b.CreateSelect(
        b.CreateICmpNE(b.CreateAnd(b.CreateAdd(n, int_lit(1)), int_lit(2)), int_lit(0)), b.CreateFNeg(co), co);

    llvm::BasicBlock* fast = b.GetInsertBlock();
    llvm::Function* f = fast->getParent();
    llvm::BasicBlock* join = llvm::BasicBlock::Create(context_, "sincos.join", f, first_cold_);
    llvm::BasicBlock* cold = llvm::BasicBlock::Create(context_, "sincos.cold", f);
    if (!first_cold_) first_cold_ = cold;
    b.CreateCondBr(vector ? b.CreateAndReduce(in_range) : in_range, join, cold,
                   llvm::MDBuilder(context_).createBranchWeights(1 << 20, 1));
    b.SetInsertPoint(cold);
    llvm::Value* libm_sin = nullptr;
    llvm::Value* libm_cos = nullptr;
    if (!vector) {
      libm_sin = libm_call(b, "sin", x);
      libm_cos = libm_call(b, "cos", x);
    } else {
      libm_sin = fast_sin;
      libm_cos = fast_cos;
      for (unsigned j = 0; j < vector->getNumElements(); ++j) {
        llvm::Value* xj = b.CreateExtractElement(x, j);
        llvm::Value* inj = b.CreateExtractElement(in_range, j);
        libm_sin = b.CreateInsertElement(
            libm_sin, b.CreateSelect(inj, b.CreateExtractElement(fast_sin, j), libm_call(b, "sin", xj)), j);
        libm_cos = b.CreateInsertElement(
            libm_cos, b.CreateSelect(inj, b.CreateExtractElement(fast_cos, j), libm_call(b, "cos", xj)), j);
      }
    }
    b.CreateBr(join);
    b.SetInsertPoint(join);
    llvm::PHINode* sin_x = b.CreatePHI(type, 2, "sin");
    sin_x->addIncoming(fast_sin, fast);
    sin_x->addIncoming(libm_sin, cold);
    llvm::PHINode* cos_x = b.CreatePHI(type, 2, "cos");
    cos_x->addIncoming(fast_cos, fast);
    cos_x->addIncoming(libm_cos, cold);
    return {sin_x, cos_x};
  }

  // sin(x) or cos(x) of the C library, called through a pointer kept in a module constant.
  // Why not llvm.sin, or a direct call: FastISel selects neither (it leaves calls to
  // library functions it knows to SelectionDAG), and each miss would build a SelectionDAG
  // for its cold block.
  llvm::Value* libm_call(llvm::IRBuilder<>& b, const char* function, llvm::Value* x) {
    llvm::FunctionType* type = llvm::FunctionType::get(f64_, {f64_}, false);
    const std::string name = fmt::format("soa.{}", function);
    llvm::GlobalVariable* pointer = m_.getGlobalVariable(name, true);
    if (!pointer) {
      auto* callee = llvm::cast<llvm::Constant>(m_.getOrInsertFunction(function, type).getCallee());
      pointer = new llvm::GlobalVariable(m_, ptr_, true, llvm::GlobalValue::PrivateLinkage, callee, name);
    }
    return b.CreateCall(type, b.CreateAlignedLoad(ptr_, pointer, llvm::Align(alignof(void*))), {x});
  }

  llvm::Module& m_;
  const std::string& name_;
  const ScalarProgram& p_;
  const LlvmOptions& options_;
  const LlvmKernelPlan& plan_;
  llvm::LLVMContext& context_;
  llvm::Type* f64_;
  llvm::Type* ptr_;
  const std::vector<int>& part_;                  // per node: its part (-1: a lane group's), ...
  const std::vector<int>& slot_;                  // ...its scratch slot (or -1)
  const std::vector<int>& begin_;                 // scalar part k is nodes [begin_[k], begin_[k + 1])
  const std::vector<std::vector<int>>& outputs_;  // per scalar part: the outputs whose node it computes
  const int part_count_, slot_count_;
  std::vector<llvm::Value*> v_;                       // per node: its value, in the part computing it
  std::vector<std::pair<llvm::Value*, int>> inputs_;  // per input: its load, in which part
  // per node: the sin and cos of its value, in which part
  std::vector<std::pair<std::pair<llvm::Value*, llvm::Value*>, int>> sincos_;
  llvm::BasicBlock* first_cold_ = nullptr;  // of the function being built: cold blocks follow it
  struct AddressHash {
    std::size_t operator()(const std::pair<llvm::Value*, std::size_t>& a) const {
      return std::hash<const void*>()(a.first) ^ (a.second * 0x9e3779b97f4a7c15ULL);
    }
  };
  std::unordered_map<std::pair<llvm::Value*, std::size_t>, llvm::Value*, AddressHash> addresses_;  // address()'s
  std::array<llvm::Value*, 2> zeros_{};       // zeros()'s loads (2 and 4 wide)
  llvm::BasicBlock* cache_block_ = nullptr;   // ...both in this block
  llvm::GlobalVariable* literals_ = nullptr;  // lane parts' tables (module-private)
  llvm::GlobalVariable* zero_table_ = nullptr;
  llvm::GlobalVariable* masks_ = nullptr;
  llvm::GlobalVariable* signs_ = nullptr;
  std::vector<int> literal_offset_;  // per literal row: its first element in literals_
};

}  // namespace

std::shared_ptr<const LlvmKernelPlan> plan_llvm_kernel(const ScalarProgram& p, const LlvmOptions& options) {
  return std::make_shared<const LlvmKernelPlan>(make_plan(p, options));
}

int part_count(const LlvmKernelPlan& plan) { return plan.part_count; }

int part_count(const ScalarProgram& p, int part_ops) {
  LlvmOptions options;
  options.part_ops = part_ops;
  return make_plan(p, options).part_count;
}

llvm::Function* emit_llvm_function(llvm::Module& m, const std::string& name, const ScalarProgram& p,
                                   const LlvmOptions& options, const LlvmKernelPlan* plan) {
  check_llvm_kernel(name, p);
  if (m.getNamedValue(name))
    throw UserError(fmt::format("emit-llvm: module '{}' already defines '{}'", m.getModuleIdentifier(), name));
  if (plan) return Emitter(m, name, p, options, *plan).emit();
  const LlvmKernelPlan own = make_plan(p, options);
  return Emitter(m, name, p, options, own).emit();
}

llvm::Function* emit_llvm_shared_entry(llvm::Module& m, const std::string& name, const std::string& body,
                                       int own_inputs, int inputs,
                                       const std::vector<std::pair<std::string, int>>& shared,
                                       const LlvmOptions& options) {
  specialise::check_name(name, "emit-llvm: kernel name");
  if (is_reserved(name))
    throw UserError(fmt::format("emit-llvm: kernel name '{}' would shadow the C library function of that name", name));
  if (m.getNamedValue(name))
    throw UserError(fmt::format("emit-llvm: module '{}' already defines '{}'", m.getModuleIdentifier(), name));
  if (own_inputs < 0 || inputs < own_inputs)
    throw InternalError(fmt::format("emit-llvm: kernel '{}' has {} inputs of its own of {}", name, own_inputs, inputs));
  for (const auto& [f, at] : shared)
    if (at < own_inputs || at > inputs)
      throw InternalError(
          fmt::format("emit-llvm: kernel '{}': outputs of '{}' at {} of {} inputs", name, f, at, inputs));
  llvm::Function* kernel = kernel_function(m, name, {"in", "out"}, llvm::Function::ExternalLinkage, options.tune_cpu);
  llvm::Argument* in = kernel->getArg(0);
  const auto callee = [&](const std::string& f) {
    llvm::FunctionCallee c = m.getOrInsertFunction(f, kernel->getFunctionType());
    if (auto* fn = llvm::dyn_cast<llvm::Function>(c.getCallee())) fn->addFnAttr(llvm::Attribute::NoUnwind);
    return c;
  };
  llvm::Type* f64 = llvm::Type::getDoubleTy(m.getContext());
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(m.getContext(), "entry", kernel));
  auto* array = b.CreateAlloca(llvm::ArrayType::get(f64, std::max(inputs, 1)), nullptr, "inputs");
  array->setAlignment(llvm::Align(32));
  if (own_inputs > 0)
    b.CreateMemCpy(array, llvm::Align(32), in, llvm::Align(alignof(double)), own_inputs * sizeof(double));
  for (const auto& [f, at] : shared) b.CreateCall(callee(f), {array, b.CreateConstInBoundsGEP1_64(f64, array, at)});
  b.CreateCall(callee(body), {array, kernel->getArg(1)});
  b.CreateRetVoid();
  return kernel;
}

std::unique_ptr<llvm::Module> emit_llvm_module(llvm::LLVMContext& context, const std::string& module_name,
                                               const std::vector<NamedProgram>& kernels, const LlvmOptions& options) {
  auto m = std::make_unique<llvm::Module>(module_name, context);
  for (const auto& [name, program] : kernels) emit_llvm_function(*m, name, program, options);
  verify(*m);
  return m;
}

void verify(const llvm::Module& m) {
  std::string report;
  llvm::raw_string_ostream os(report);
  if (llvm::verifyModule(m, &os)) {
    os.flush();
    while (!report.empty() && report.back() == '\n') report.pop_back();
    throw InternalError(
        fmt::format("emit-llvm: module '{}' is not valid LLVM IR: {}", m.getModuleIdentifier(), report));
  }
}

std::string to_text(const llvm::Module& m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  os.flush();
  return text;
}

}  // namespace soa::emit
