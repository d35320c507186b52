#include "specialise/share.hpp"

#include "support/error.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <unordered_map>
#include <utility>

namespace soa::specialise {

namespace {

// A value of the whole kernel set: its operation and operands (values again), the input
// index, or the literal's bits. Values are numbered in order of first appearance, so an
// operand's number is below its user's: numbering order is a topological order.
struct Key {
  ScalarOp op;
  std::int64_t a, b;  // operand values; Input: a = index; Const: a = the bits
  bool operator==(const Key&) const = default;
};
std::uint64_t hash(const Key& k) {
  std::uint64_t h = static_cast<std::uint64_t>(k.op) * 0x9e3779b97f4a7c15ULL;
  h ^= static_cast<std::uint64_t>(k.a) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= static_cast<std::uint64_t>(k.b) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h ^ (h >> 29);
}

struct Numbering {
  std::vector<Key> keys;                   // per value
  std::vector<std::vector<int>> value_of;  // per kernel and node
  // Per value: the kernels computing it, a bit each, `words` 64-bit words per value.
  std::size_t words = 1;
  std::vector<std::uint64_t> users;
  int user_count(int v) const {
    int c = 0;
    for (std::size_t w = 0; w < words; ++w) c += __builtin_popcountll(users[v * words + w]);
    return c;
  }
  std::vector<int> users_of(int v) const {  // ascending
    std::vector<int> out;
    for (std::size_t w = 0; w < words; ++w)
      for (std::uint64_t bits = users[v * words + w]; bits; bits &= bits - 1)
        out.push_back(static_cast<int>(64 * w + __builtin_ctzll(bits)));
    return out;
  }
  std::vector<std::pair<int, int>> where;  // per value: a (kernel, node) computing it
};

Numbering number(const std::vector<const ScalarProgram*>& kernels) {
  Numbering n;
  // Open addressing, at most half full: a large robot's kernels are hundreds of thousands
  // of nodes, and a node-based map's allocations would make this pass a visible part of
  // the JIT's compile time (it runs before any compile thread has work).
  std::size_t nodes = 0;
  for (const ScalarProgram* p : kernels) nodes += p->nodes.size();
  std::size_t capacity = 16;
  while (capacity < 2 * nodes) capacity *= 2;
  std::vector<int> table(capacity, -1);  // value numbers
  n.keys.reserve(nodes);
  n.words = (kernels.size() + 63) / 64;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    const ScalarProgram& p = *kernels[k];
    std::vector<int>& values = n.value_of.emplace_back(p.nodes.size());
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      const ScalarNode& node = p.nodes[i];
      Key key{node.op, -1, -1};
      if (node.op == ScalarOp::Input) {
        key.a = node.a;
      } else if (node.op == ScalarOp::Const) {
        std::memcpy(&key.a, &node.value, sizeof(double));
      } else {
        key.a = values[node.a];
        if (arity(node.op) == 2) key.b = values[node.b];
        if ((node.op == ScalarOp::Add || node.op == ScalarOp::Mul) && key.b < key.a) std::swap(key.a, key.b);
      }
      std::size_t slot = hash(key) & (capacity - 1);
      while (table[slot] >= 0 && !(n.keys[table[slot]] == key)) slot = (slot + 1) & (capacity - 1);
      if (table[slot] < 0) {
        table[slot] = static_cast<int>(n.keys.size());
        n.keys.push_back(key);
        n.users.resize(n.users.size() + n.words, 0);
        n.where.emplace_back(static_cast<int>(k), static_cast<int>(i));
      }
      values[i] = table[slot];
      n.users[table[slot] * n.words + k / 64] |= std::uint64_t{1} << (k % 64);
    }
  }
  return n;
}

bool is_operation(const Key& k) { return arity(k.op) > 0; }

// What an operation costs a back-end to compile, in additions: a sine or a cosine is half
// of soa::sincos inline, dozens of instructions with branches, each of which costs FastISel
// and the register allocator more than an arithmetic instruction (the weight is the LLVM
// back-end's compile work of a pair, in additions, halved).
int compile_weight(ScalarOp op) { return op == ScalarOp::Sin || op == ScalarOp::Cos ? 80 : 1; }

bool intersect(const std::vector<int>& a, const std::vector<int>& b) {  // both ascending
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] == b[j]) return true;
    a[i] < b[j] ? ++i : ++j;
  }
  return false;
}

// A group of operations: those the kernels `users` all compute, and their compile weight.
struct Candidate {
  std::vector<int> users;
  std::vector<int> members;
  int weight = 0;
};

// The operations two or more kernels compute, grouped by that set of kernels (their users),
// the groups weighing at least min_ops (none for min_ops <= 0), in the order they are tried.
std::vector<Candidate> candidates(const Numbering& n, int min_ops) {
  std::map<std::vector<int>, std::vector<int>> groups;
  if (min_ops > 0)
    for (int v = 0; v < static_cast<int>(n.keys.size()); ++v)
      if (is_operation(n.keys[v]) && n.user_count(v) >= 2) groups[n.users_of(v)].push_back(v);
  std::vector<Candidate> out;
  for (const auto& [users, members] : groups) {
    int w = 0;
    for (int v : members) w += compile_weight(n.keys[v].op);
    if (w >= min_ops) out.push_back({users, members, w});
  }
  // More users first: a group's closure may then read what one with a superset of its
  // users computes (the joints' sines and cosines, which every kernel takes) rather than
  // clash with it; among equals, the heavier first.
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    return a.users.size() != b.users.size() ? a.users.size() > b.users.size() : a.weight > b.weight;
  });
  return out;
}

// A program taken: its users and its closure (ascending value numbers).
struct Taken {
  std::vector<int> users;
  std::vector<int> closure;
};

// Candidates become programs in order, each with its closure: down from its members, stopping
// at values a program taken for a superset of its users computes (those it reads). A
// candidate whose closure overlaps in any other way a program serving one of its users
// would have that kernel compute a value twice: it is left out.
std::vector<Taken> take(const Numbering& n, const std::vector<Candidate>& candidates) {
  const int values = static_cast<int>(n.keys.size());
  std::vector<Taken> taken;
  std::vector<std::vector<int>> owner(values);  // the programs whose closure holds v (several only for disjoint users)
  std::vector<char> in_closure(values, 0);      // 1: in c's closure, 2: read from a program
  for (const Candidate& c : candidates) {
    std::fill(in_closure.begin(), in_closure.end(), 0);
    for (int v : c.members) in_closure[v] = 1;
    bool clash = false;
    std::vector<int> closure;
    for (int v = values - 1; v >= 0 && !clash; --v) {  // operands have smaller numbers
      if (!in_closure[v]) continue;
      for (int t : owner[v]) {
        if (!intersect(c.users, taken[t].users)) continue;
        if (std::includes(taken[t].users.begin(), taken[t].users.end(), c.users.begin(), c.users.end())) {
          in_closure[v] = 2;
        } else {
          clash = true;
        }
      }
      if (in_closure[v] != 1) continue;
      closure.push_back(v);
      const Key& key = n.keys[v];
      if (is_operation(n.keys[key.a])) in_closure[key.a] = 1;
      if (arity(key.op) == 2 && is_operation(n.keys[key.b])) in_closure[key.b] = 1;
    }
    if (clash) continue;
    std::reverse(closure.begin(), closure.end());
    for (int v : closure) owner[v].push_back(static_cast<int>(taken.size()));
    taken.push_back({c.users, std::move(closure)});
  }
  return taken;
}

// The programs taken and where everything lies: what the shared programs and the factored
// kernels are built from.
struct Factoring {
  Factoring(const std::vector<const ScalarProgram*>& kernels, const Numbering& n) : kernels(kernels), n(n) {}
  const std::vector<const ScalarProgram*>& kernels;
  const Numbering& n;
  int base = 0;  // Sharing::base
  std::vector<Taken> taken;
  // Per kernel and value: the program computing it for that kernel (at most one: closures
  // taken for kernels in common are disjoint), or -1; empty for a kernel using none.
  std::vector<std::vector<int>> program_for;
  std::vector<std::vector<int>> outputs;                       // per program: the values it outputs, ascending
  std::vector<int> offset;                                     // per program: Sharing's SharedProgram::offset
  std::vector<std::vector<std::pair<int, int>>> output_slots;  // per value: (program, slot) writing it

  bool computed_for(int k, int v) const { return !program_for[k].empty() && program_for[k][v] >= 0; }
  int slot_or(int t, int v) const {  // -1: not an output of t
    for (const auto& [writer, slot] : output_slots[v])
      if (writer == t) return slot;
    return -1;
  }
  int slot_of(int t, int v) const {
    const int slot = slot_or(t, v);
    if (slot < 0) throw InternalError("share: a value read from a program that does not output it");
    return slot;
  }
};

// Factoring::program_for from the programs taken.
std::vector<std::vector<int>> programs_per_kernel(const Factoring& f) {
  std::vector<std::vector<int>> program_for(f.kernels.size());
  for (std::size_t t = 0; t < f.taken.size(); ++t)
    for (int k : f.taken[t].users) {
      if (program_for[k].empty()) program_for[k].assign(f.n.keys.size(), -1);
      for (int v : f.taken[t].closure) program_for[k][v] = static_cast<int>(t);
    }
  return program_for;
}

// Per program, its outputs: the closure's values read from outside it -- by its users' own
// code or by a later program's closure.
std::vector<std::vector<int>> program_outputs(const Factoring& f) {
  const int values = static_cast<int>(f.n.keys.size());
  std::vector<std::vector<char>> exported(f.taken.size(), std::vector<char>(values, 0));
  for (std::size_t k = 0; k < f.kernels.size(); ++k) {
    const ScalarProgram& p = *f.kernels[k];
    const std::vector<int>& value = f.n.value_of[k];
    const int kk = static_cast<int>(k);
    const auto read = [&](int v) {
      if (f.computed_for(kk, v)) exported[f.program_for[k][v]][v] = 1;
    };
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      const ScalarNode& node = p.nodes[i];
      if (f.computed_for(kk, value[i]) || arity(node.op) == 0) continue;
      read(value[node.a]);
      if (arity(node.op) == 2) read(value[node.b]);
    }
    for (int o : p.outputs) read(value[o]);
  }
  // Programs reading other programs' values: every user of the reader is one of the
  // writer's, so its first user's view says which program writes each.
  for (std::size_t t = 0; t < f.taken.size(); ++t) {
    const std::vector<int>& writer = f.program_for[f.taken[t].users.front()];
    for (int v : f.taken[t].closure) {
      const Key& key = f.n.keys[v];
      for (int operand : {static_cast<int>(key.a), arity(key.op) == 2 ? static_cast<int>(key.b) : -1})
        if (operand >= 0 && writer[operand] >= 0 && writer[operand] != static_cast<int>(t))
          exported[writer[operand]][operand] = 1;
    }
  }
  std::vector<std::vector<int>> outputs(f.taken.size());
  for (std::size_t t = 0; t < f.taken.size(); ++t)
    for (int v = 0; v < values; ++v)
      if (exported[t][v]) outputs[t].push_back(v);
  return outputs;
}

// Factoring::offset and output_slots: program t's outputs at base + offset[t] + i of a
// caller's array, the programs one after another.
void lay_out_outputs(Factoring& f) {
  f.output_slots.assign(f.n.keys.size(), {});
  f.offset.assign(f.taken.size(), 0);
  int end = 0;
  for (std::size_t t = 0; t < f.taken.size(); ++t) {
    f.offset[t] = end;
    for (std::size_t o = 0; o < f.outputs[t].size(); ++o)
      f.output_slots[f.outputs[t][o]].emplace_back(static_cast<int>(t), f.base + end + static_cast<int>(o));
    end += static_cast<int>(f.outputs[t].size());
  }
}

// Shared program t, in value order (topological), labels as in the kernel where each value
// first appeared; the inputs, literals and earlier programs' values it reads are made at
// their first use.
SharedProgram shared_program(const Factoring& f, int t) {
  SharedProgram s;
  s.users = f.taken[t].users;
  s.offset = f.offset[t];
  const std::vector<int>& computing = f.program_for[s.users.front()];
  ScalarProgram& code = s.code;
  std::unordered_map<int, int> local;  // value -> node
  std::map<std::pair<int, int>, int> label_of;
  const auto add = [&](ScalarNode node) {
    if (node.op == ScalarOp::Input) code.input_count = std::max(code.input_count, node.a + 1);
    code.nodes.push_back(node);
    return static_cast<int>(code.nodes.size()) - 1;
  };
  const auto node_for = [&](int v, const auto& self) -> int {
    if (auto it = local.find(v); it != local.end()) return it->second;
    const Key& key = f.n.keys[v];
    const auto [k, i] = f.n.where[v];
    const ScalarNode& original = f.kernels[k]->nodes[i];
    ScalarNode node;
    if (original.label >= 0) {
      auto [it, fresh] = label_of.emplace(std::pair{k, original.label}, static_cast<int>(code.labels.size()));
      if (fresh) code.labels.push_back(f.kernels[k]->labels[original.label]);
      node.label = it->second;
    }
    if (key.op == ScalarOp::Input) {
      node.op = ScalarOp::Input;
      node.a = static_cast<int>(key.a);
    } else if (is_operation(key) && computing[v] != t) {
      node.op = ScalarOp::Input;  // an earlier program's
      node.a = f.slot_of(computing[v], v);
    } else {
      node.op = key.op;
      if (key.op == ScalarOp::Const) {
        node.value = original.value;
      } else {
        // The operands as the first kernel computing it wrote them (commuted Add or Mul
        // operands of another kernel give the same bits).
        node.a = self(f.n.value_of[k][original.a], self);
        if (arity(key.op) == 2) node.b = self(f.n.value_of[k][original.b], self);
      }
    }
    const int made = add(node);
    local.emplace(v, made);
    return made;
  };
  for (int v : f.taken[t].closure) node_for(v, node_for);
  for (int v : f.outputs[t]) code.outputs.push_back(local.at(v));
  code = without_dead_nodes(std::move(code));
  check(code);
  return s;
}

// Kernel k without the closures it uses, reading the values it still needs from their
// programs' outputs.
FactoredKernel factored_kernel(const Factoring& f, int k) {
  const ScalarProgram& p = *f.kernels[k];
  const std::vector<int>& value = f.n.value_of[k];
  FactoredKernel out;
  out.own_inputs = p.input_count;
  int inputs = p.input_count;
  for (std::size_t t = 0; t < f.taken.size(); ++t) {
    if (!std::binary_search(f.taken[t].users.begin(), f.taken[t].users.end(), k)) continue;
    out.uses.push_back(static_cast<int>(t));
    inputs = f.base + f.offset[t] + static_cast<int>(f.outputs[t].size());
  }
  ScalarProgram& code = out.code;
  code.input_count = inputs;
  code.labels = p.labels;
  std::vector<int> moved(p.nodes.size(), -1);
  std::unordered_map<int, int> read;  // input index -> its node in `code`
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const int v = value[i];
    if (f.computed_for(k, v)) {
      const int slot = f.slot_or(f.program_for[k][v], v);
      if (slot < 0) continue;  // read by nothing out here
      auto [it, fresh] = read.emplace(slot, static_cast<int>(code.nodes.size()));
      if (fresh) {
        ScalarNode in;
        in.op = ScalarOp::Input;
        in.a = it->first;
        in.label = p.nodes[i].label;
        code.nodes.push_back(in);
      }
      moved[i] = it->second;
      continue;
    }
    ScalarNode node = p.nodes[i];
    if (arity(node.op) >= 1) node.a = moved[node.a];
    if (arity(node.op) == 2) node.b = moved[node.b];
    moved[i] = static_cast<int>(code.nodes.size());
    code.nodes.push_back(node);
  }
  for (int o : p.outputs) code.outputs.push_back(moved[o]);
  code = without_dead_nodes(std::move(code));
  check(code);
  return out;
}

}  // namespace

Sharing share(const std::vector<const ScalarProgram*>& kernels, int min_ops) {
  const Numbering n = number(kernels);
  Factoring f(kernels, n);
  for (const ScalarProgram* p : kernels) f.base = std::max(f.base, p->input_count);
  f.taken = take(n, candidates(n, min_ops));
  f.program_for = programs_per_kernel(f);
  f.outputs = program_outputs(f);
  lay_out_outputs(f);
  Sharing result;
  result.base = f.base;
  for (std::size_t t = 0; t < f.taken.size(); ++t) result.programs.push_back(shared_program(f, static_cast<int>(t)));
  for (std::size_t k = 0; k < kernels.size(); ++k) result.kernels.push_back(factored_kernel(f, static_cast<int>(k)));
  return result;
}

Sharing reorder_outputs(Sharing sharing, int j, const std::vector<int>& order) {
  SharedProgram& program = sharing.programs.at(static_cast<std::size_t>(j));
  const int n = static_cast<int>(program.code.outputs.size());
  std::vector<int> position(static_cast<std::size_t>(n), -1);  // old output position -> new
  for (int p = 0; p < static_cast<int>(order.size()); ++p)
    if (order[p] >= 0 && order[p] < n && position[order[p]] < 0) position[order[p]] = p;
  if (static_cast<int>(order.size()) != n || std::find(position.begin(), position.end(), -1) != position.end())
    throw InternalError("share: an output order that is not a permutation");
  std::vector<int> outputs(static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) outputs[p] = program.code.outputs[order[p]];
  program.code.outputs = std::move(outputs);
  const int first = sharing.base + program.offset;
  const auto renumber = [&](ScalarProgram& code) {
    for (ScalarNode& node : code.nodes)
      if (node.op == ScalarOp::Input && node.a >= first && node.a < first + n) {
        node.a = first + position[node.a - first];
        code.input_count = std::max(code.input_count, node.a + 1);  // 1 + the largest index read
      }
  };
  for (std::size_t t = static_cast<std::size_t>(j) + 1; t < sharing.programs.size(); ++t)
    renumber(sharing.programs[t].code);
  for (FactoredKernel& k : sharing.kernels) renumber(k.code);
  return sharing;
}

void evaluate(const Sharing& sharing, int k, const double* in, double* out) {
  const FactoredKernel& f = sharing.kernels.at(k);
  std::vector<double> array(in, in + f.own_inputs);
  array.resize(f.code.input_count);  // the own inputs, then every used program's outputs
  for (int j : f.uses)
    evaluate(sharing.programs[j].code, array.data(), array.data() + sharing.base + sharing.programs[j].offset);
  evaluate(f.code, array.data(), out);
}

}  // namespace soa::specialise
