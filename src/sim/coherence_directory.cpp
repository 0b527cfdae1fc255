#include "sim/coherence_directory.hpp"

#include <algorithm>

namespace roost::sim {

coherence_directory::coherence_directory(unsigned units)
    : words_(std::max(1u, (units + 63) / 64)), table_(64) {}

std::uint64_t* coherence_directory::make_block(std::uint64_t block) {
  const std::size_t block_words = (std::size_t{1} << kBlockShift) * words_;
  if (blocks_ % kBlocksPerArena == 0) arenas_.emplace_back(block_words * kBlocksPerArena);
  std::uint64_t* masks = arenas_.back().data() + (blocks_ % kBlocksPerArena) * block_words;
  ++blocks_;
  if (block < kDirectBlocks) {
    if (block >= direct_.size())
      direct_.resize(std::min<std::size_t>(kDirectBlocks, std::max<std::size_t>(block + 1, 2 * direct_.size())), nullptr);
    direct_[block] = masks;
    return masks;
  }
  if ((table_blocks_ + 1) * 2 > table_.size()) {
    host_vector<slot> bigger(table_.size() * 2);
    const std::size_t m = bigger.size() - 1;
    for (const slot& s : table_) {
      if (s.key == 0) continue;
      std::size_t i = slot_of(s.key - 1, m);
      while (bigger[i].key != 0) i = (i + 1) & m;
      bigger[i] = s;
    }
    table_.swap(bigger);
  }
  const std::size_t m = table_.size() - 1;
  std::size_t i = slot_of(block, m);
  while (table_[i].key != 0) i = (i + 1) & m;
  table_[i] = {block + 1, masks};
  ++table_blocks_;
  return masks;
}

}  // namespace roost::sim
