#include "specialise/partition.hpp"

#include <algorithm>

namespace soa::specialise {

Partition partition(const ScalarProgram& p, int part_ops, const std::vector<char>& removed, int whole_ops,
                    const std::vector<std::pair<int, int>>& atomic, const std::vector<char>& slotted,
                    const std::vector<std::pair<int, int>>& together, const std::vector<std::array<int, 4>>& blocks) {
  Partition plan;
  const int size = static_cast<int>(p.nodes.size());
  const auto is_removed = [&](int i) { return !removed.empty() && removed[i]; };
  int total_ops = 0;
  for (int i = 0; i < size; ++i) total_ops += arity(p.nodes[i].op) > 0 && !is_removed(i) ? 1 : 0;
  const int cut = part_ops > 0 && (total_ops > std::max(part_ops, whole_ops) || !atomic.empty()) ? part_ops : 0;
  // Per node: 1 starts a part (an atomic range, or the first operation after one), 2 may
  // not start one (inside an atomic range).
  std::vector<char> mark(size, 0);
  for (const auto& [first, last] : atomic) {
    mark[first] = 1;
    for (int i = first + 1; i < last; ++i) mark[i] = 2;
    for (int i = last; i < size; ++i)
      if (arity(p.nodes[i].op) > 0 && !is_removed(i)) {
        if (mark[i] == 0) mark[i] = 1;
        break;
      }
  }
  for (const auto& [first, last] : together)
    for (int i = first + 1; i < last; ++i) mark[i] = 2;
  plan.part.assign(size, 0);
  plan.begin = {0};
  int ops = 0, part = 0;
  for (int i = 0; i < size; ++i) {
    if (is_removed(i)) plan.part[i] = -1;
    if (arity(p.nodes[i].op) == 0 || is_removed(i)) continue;
    if (ops > 0 && (mark[i] == 1 || (cut > 0 && ops >= cut && mark[i] == 0))) {
      ++part;
      ops = 0;
      plan.begin.push_back(i);
    }
    plan.part[i] = part;
    ++ops;
  }
  plan.parts = part + 1;
  plan.begin.push_back(size);
  plan.outputs.assign(plan.parts, {});
  for (std::size_t o = 0; o < p.outputs.size(); ++o)
    if (!is_removed(p.outputs[o])) plan.outputs[plan.part[p.outputs[o]]].push_back(static_cast<int>(o));
  plan.slot.assign(size, -1);
  const auto marked = [&](int i) { return !slotted.empty() && slotted[i]; };
  if (plan.parts <= 1 && std::none_of(slotted.begin(), slotted.end(), [](char c) { return c != 0; })) return plan;
  std::vector<int> block_of(size, -1);
  for (std::size_t b = 0; b < blocks.size(); ++b)
    for (int i : blocks[b])
      if (i >= 0) block_of[i] = static_cast<int>(b);

  std::vector<int> last_part(size, -1);  // the last part reading a value
  for (int i = 0; i < size; ++i) {
    const ScalarNode& n = p.nodes[i];
    if (is_removed(i)) continue;
    if (arity(n.op) >= 1) last_part[n.a] = std::max(last_part[n.a], plan.part[i]);
    if (arity(n.op) == 2) last_part[n.b] = std::max(last_part[n.b], plan.part[i]);
  }
  // Per part k: the slots, and the blocks' first slots, free from part k on.
  std::vector<std::vector<int>> expiring(plan.parts + 1), expiring_blocks(plan.parts + 1);
  std::vector<int> free, free_blocks;
  std::vector<char> placed(blocks.size(), 0);
  int next_part = 0;
  for (int i = 0; i < size; ++i) {
    if (arity(p.nodes[i].op) == 0 || is_removed(i) || (last_part[i] <= plan.part[i] && !marked(i))) continue;
    for (; next_part <= plan.part[i]; ++next_part) {
      free.insert(free.end(), expiring[next_part].begin(), expiring[next_part].end());
      free_blocks.insert(free_blocks.end(), expiring_blocks[next_part].begin(), expiring_blocks[next_part].end());
    }
    if (block_of[i] >= 0) {
      const int b = block_of[i];
      if (placed[b]) continue;
      placed[b] = 1;
      int first = plan.slots;
      if (free_blocks.empty()) {
        first = (plan.slots + 3) / 4 * 4;  // slots skipped for alignment go to the single ones
        for (int s = plan.slots; s < first; ++s) free.push_back(s);
        plan.slots = first + 4;
      } else {
        first = free_blocks.back();
        free_blocks.pop_back();
      }
      int last = plan.part[i];
      for (int k = 0; k < 4; ++k)
        if (blocks[b][k] >= 0) {
          plan.slot[blocks[b][k]] = first + k;
          last = std::max(last, last_part[blocks[b][k]]);
        }
      expiring_blocks[last + 1].push_back(first);
      continue;
    }
    if (free.empty()) {
      plan.slot[i] = plan.slots++;
    } else {
      plan.slot[i] = free.back();
      free.pop_back();
    }
    expiring[std::max(last_part[i], plan.part[i]) + 1].push_back(plan.slot[i]);
  }
  return plan;
}

}  // namespace soa::specialise
