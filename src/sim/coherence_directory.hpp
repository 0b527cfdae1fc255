// Which caches hold a line: the sharer sets of the model's write-invalidate coherence (DESIGN §6), apart from
// the cache arrays as ZSim keeps its MESI directory apart from them.
//
// A "unit" is what a write invalidates as one: the private caches of one core together, or one shared cache
// instance. Each line has a bitmask of units, `words()` 64-bit words wide, all zero while no unit holds it.
// The masks are indexed directly by line, in blocks of 4,096 consecutive lines made when a line of the block
// is first held and kept from then on: a lookup finds the block (by its number for the simulated platform's
// dense lines, by a hash above 2^32 lines) and indexes it; nothing is ever moved or removed, and the lines of
// a stream (and the victims it evicts, a stream too) share host cache lines. Memory follows the lines ever
// touched, words() x 8 bytes each (the simulated platform numbers its pages densely, so its blocks are
// full); a mask pointer stays valid for the directory's life.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/cache_array.hpp"
#include "sim/host_memory.hpp"

namespace roost::sim {

class coherence_directory {
 public:
  explicit coherence_directory(unsigned units);

  unsigned words() const { return words_; }

  // The line's sharer mask, or nullptr when no line of its block was ever held (no unit holds it).
  [[gnu::always_inline]] std::uint64_t* find(line_addr line) {
    std::uint64_t* block = block_of(line >> kBlockShift);
    return block ? block + (line & kBlockMask) * words_ : nullptr;
  }
  // The line's mask (all zero when no unit holds it), its block made when it had none.
  [[gnu::always_inline]] std::uint64_t* find_or_insert(line_addr line) {
    std::uint64_t* block = block_of(line >> kBlockShift);
    if (!block) block = make_block(line >> kBlockShift);
    return block + (line & kBlockMask) * words_;
  }

 private:
  static constexpr unsigned kBlockShift = 12;
  static constexpr line_addr kBlockMask = (line_addr{1} << kBlockShift) - 1;
  static constexpr unsigned kBlocksPerArena = 64;  // an arena is 64 blocks: 2 MiB x words, huge pages
  // Block number -> masks. Below kDirectBlocks (lines below 2^32: the simulated platform numbers its pages
  // densely from 0, so all of its blocks) a table indexed by the number, grown to the highest block made: a
  // compare and a load. Above, for the raw addresses of a roost-cachesim trace: open addressing with linear
  // probing, at most half full, block numbers offset by one so that a zero slot is free.
  static constexpr std::uint64_t kDirectBlocks = std::uint64_t{1} << 20;  // at most 8 MiB of pointers
  struct slot {
    std::uint64_t key = 0;  // block + 1
    std::uint64_t* masks = nullptr;
  };
  [[gnu::always_inline]] std::uint64_t* block_of(std::uint64_t block) const {
    if (block < direct_.size()) [[likely]] return direct_[block];
    return block_in_table(block);
  }
  [[gnu::noinline]] std::uint64_t* block_in_table(std::uint64_t block) const {
    if (block < kDirectBlocks) return nullptr;
    const std::size_t m = table_.size() - 1;
    for (std::size_t i = slot_of(block, m);; i = (i + 1) & m) {
      if (table_[i].key == block + 1) return table_[i].masks;
      if (table_[i].key == 0) return nullptr;
    }
  }
  static std::size_t slot_of(std::uint64_t block, std::size_t mask) {
    return static_cast<std::size_t>((block * 0x9E3779B97F4A7C15ull) >> 32) & mask;
  }
  std::uint64_t* make_block(std::uint64_t block);

  unsigned words_;
  std::size_t blocks_ = 0;        // made, in all
  std::size_t table_blocks_ = 0;  // of which in table_
  host_vector<std::uint64_t*> direct_;             // [block]: its masks, or null
  host_vector<slot> table_;                        // a power of two
  host_vector<zeroed_array<std::uint64_t>> arenas_;  // the masks: fresh zero pages
};

}  // namespace roost::sim
