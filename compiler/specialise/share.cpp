#include "specialise/share.hpp"

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
  std::vector<Key> keys;                    // per value
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
  // Open addressing, at most half full: the kernels of a 50-dof robot are 10^5 values,
  // and a node-based map's allocations made this pass slower than code generation's
  // first module (it runs before any compile thread has work).
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

bool intersect(const std::vector<int>& a, const std::vector<int>& b) {  // both ascending
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] == b[j]) return true;
    a[i] < b[j] ? ++i : ++j;
  }
  return false;
}

}  // namespace

Sharing share(const std::vector<const ScalarProgram*>& kernels, int min_ops) {
  Sharing result;
  const Numbering n = number(kernels);
  const int values = static_cast<int>(n.keys.size());

  // Groups: operations by the set of kernels computing them, those of >= min_ops.
  std::map<std::vector<int>, std::vector<int>> groups;
  if (min_ops > 0)
    for (int v = 0; v < values; ++v)
      if (is_operation(n.keys[v]) && n.user_count(v) >= 2) groups[n.users_of(v)].push_back(v);
  struct Candidate {
    std::vector<int> users;
    std::vector<char> in_closure;
    int size = 0;
  };
  std::vector<Candidate> candidates;
  for (const auto& [users, members] : groups) {
    if (static_cast<int>(members.size()) < min_ops) continue;
    Candidate c{users, std::vector<char>(values, 0), 0};
    for (int v : members) c.in_closure[v] = 1;
    for (int v = values - 1; v >= 0; --v) {  // operands have smaller numbers
      if (!c.in_closure[v]) continue;
      ++c.size;
      const Key& key = n.keys[v];
      if (is_operation(n.keys[key.a])) c.in_closure[key.a] = 1;
      if (arity(key.op) == 2 && is_operation(n.keys[key.b])) c.in_closure[key.b] = 1;
    }
    candidates.push_back(std::move(c));
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.size > b.size; });
  std::vector<Candidate> taken;
  for (Candidate& c : candidates) {
    bool clash = false;
    for (const Candidate& t : taken) {
      if (!intersect(c.users, t.users)) continue;
      for (int v = 0; v < values && !clash; ++v) clash = c.in_closure[v] && t.in_closure[v];
    }
    if (!clash) taken.push_back(std::move(c));
  }

  // Per kernel and value: the program computing it for that kernel (at most one: closures
  // taken for kernels in common are disjoint), or -1.
  std::vector<std::vector<int>> program_for(kernels.size());
  for (std::size_t t = 0; t < taken.size(); ++t)
    for (int k : taken[t].users) {
      if (program_for[k].empty()) program_for[k].assign(values, -1);
      for (int v = 0; v < values; ++v)
        if (taken[t].in_closure[v]) program_for[k][v] = static_cast<int>(t);
    }
  const auto computed_for = [&](int k, int v) { return !program_for[k].empty() && program_for[k][v] >= 0; };
  // Per taken program: its outputs, the closure's values its users read from outside it.
  std::vector<std::vector<int>> outputs(taken.size());
  {
    std::vector<std::vector<char>> exported(taken.size(), std::vector<char>(values, 0));
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      const ScalarProgram& p = *kernels[k];
      const std::vector<int>& value = n.value_of[k];
      const int kk = static_cast<int>(k);
      const auto read = [&](int node) {
        if (computed_for(kk, value[node])) exported[program_for[k][value[node]]][value[node]] = 1;
      };
      for (std::size_t i = 0; i < p.nodes.size(); ++i) {
        const ScalarNode& node = p.nodes[i];
        if (computed_for(kk, value[i]) || arity(node.op) == 0) continue;
        read(node.a);
        if (arity(node.op) == 2) read(node.b);
      }
      for (int o : p.outputs) read(o);
    }
    for (std::size_t t = 0; t < taken.size(); ++t)
      for (int v = 0; v < values; ++v)
        if (exported[t][v]) outputs[t].push_back(v);
  }

  // The shared programs, in value order (topological), labels as in the kernel where the
  // value first appeared.
  for (std::size_t t = 0; t < taken.size(); ++t) {
    SharedProgram& s = result.programs.emplace_back();
    s.users = taken[t].users;
    ScalarProgram& code = s.code;
    std::unordered_map<int, int> local;  // value -> node
    std::map<std::pair<int, int>, int> label_of;
    const auto node_for = [&](int v, const auto& self) -> int {
      if (auto it = local.find(v); it != local.end()) return it->second;
      const Key& key = n.keys[v];
      const auto [k, i] = n.where[v];
      const ScalarNode& original = kernels[k]->nodes[i];
      ScalarNode node;
      node.op = key.op;
      if (key.op == ScalarOp::Input) {
        node.a = static_cast<int>(key.a);
        code.input_count = std::max(code.input_count, node.a + 1);
      } else if (key.op == ScalarOp::Const) {
        node.value = original.value;
      } else {
        // The operands as the first kernel computing it wrote them (commuted Add or Mul
        // operands of another kernel give the same bits).
        node.a = self(n.value_of[k][original.a], self);
        if (arity(key.op) == 2) node.b = self(n.value_of[k][original.b], self);
      }
      if (original.label >= 0) {
        auto [it, fresh] = label_of.emplace(std::pair{k, original.label}, static_cast<int>(code.labels.size()));
        if (fresh) code.labels.push_back(kernels[k]->labels[original.label]);
        node.label = it->second;
      }
      local.emplace(v, static_cast<int>(code.nodes.size()));
      code.nodes.push_back(node);
      return static_cast<int>(code.nodes.size()) - 1;
    };
    // In numbering order, so a closure value's operands are there before it; the inputs
    // and literals it reads (not in the closure) are made at their first use.
    for (int v = 0; v < values; ++v)
      if (taken[t].in_closure[v]) node_for(v, node_for);
    for (int v : outputs[t]) code.outputs.push_back(local.at(v));
    code = without_dead_nodes(std::move(code));
    check(code);
  }

  // The kernels without the closures they use, reading the values they still need.
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    const ScalarProgram& p = *kernels[k];
    const std::vector<int>& value = n.value_of[k];
    FactoredKernel& f = result.kernels.emplace_back();
    f.own_inputs = p.input_count;
    std::vector<int> input_of(values, -1);  // value -> the kernel's input index for it
    int ext = 0;
    for (std::size_t t = 0; t < taken.size(); ++t) {
      if (!std::binary_search(taken[t].users.begin(), taken[t].users.end(), static_cast<int>(k))) continue;
      f.uses.push_back({static_cast<int>(t), ext});
      for (std::size_t o = 0; o < outputs[t].size(); ++o) input_of[outputs[t][o]] = p.input_count + ext + static_cast<int>(o);
      ext += static_cast<int>(outputs[t].size());
    }
    ScalarProgram& code = f.code;
    code.input_count = p.input_count + ext;
    code.labels = p.labels;
    std::vector<int> moved(p.nodes.size(), -1);
    std::unordered_map<int, int> read;  // input index -> its node in `code`
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      const int v = value[i];
      if (computed_for(static_cast<int>(k), v)) {
        if (input_of[v] < 0) continue;  // read by nothing out here
        auto [it, fresh] = read.emplace(input_of[v], static_cast<int>(code.nodes.size()));
        if (fresh) {
          ScalarNode in;
          in.op = ScalarOp::Input;
          in.a = input_of[v];
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
  }
  return result;
}

void evaluate(const Sharing& sharing, int k, const double* in, double* out) {
  const FactoredKernel& f = sharing.kernels.at(k);
  std::vector<double> extended(in, in + f.own_inputs);
  extended.resize(f.code.input_count);
  for (const SharedUse& u : f.uses)
    evaluate(sharing.programs[u.program].code, in, extended.data() + f.own_inputs + u.offset);
  evaluate(f.code, extended.data(), out);
}

}  // namespace soa::specialise
