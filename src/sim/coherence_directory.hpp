// Which caches hold a line: the sharer sets of the model's write-invalidate coherence (DESIGN §6), apart from
// the cache arrays as ZSim keeps its MESI directory apart from them.
//
// A "unit" is what a write invalidates as one: the private caches of one core together, or one shared cache
// instance. Every line held by at least one unit has an entry: the line and a bitmask of units, `words()`
// 64-bit words wide, stored beside its key (one host cache line for both, up to 7 words). Open addressing
// with linear probing and backward-shift deletion (no tombstones, since lines leave as often as they come);
// it grows by doubling, so memory follows the lines actually held (sizing it for every line the caches can
// hold spread a small working set over the whole table: tens of MiB of page faults). A new table is fresh
// zero pages (an empty slot is zero), not written before use. Pointers into it are valid until the next
// insert or erase.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/cache_array.hpp"
#include "sim/huge_pages.hpp"

namespace roost::sim {

class coherence_directory {
 public:
  explicit coherence_directory(unsigned units);

  unsigned words() const { return words_; }
  std::size_t size() const { return size_; }

  // The line's sharer mask, or nullptr when no unit holds it.
  std::uint64_t* find(line_addr line);
  // The line's mask, a new all-zero one when it had none.
  std::uint64_t* find_or_insert(line_addr line);
  // Removes the line's entry (present).
  void erase(line_addr line);

 private:
  // A slot's key is its line + 1: 0 marks a free slot, so that untouched (zero) memory is an empty table.
  static constexpr std::uint64_t kEmpty = 0;
  static std::uint64_t key_of(line_addr line) { return line + 1; }
  // Fibonacci hashing of the line's 8-line block, the line's place in the block kept: the lines of a stream
  // (and the victims it evicts, a stream too) share host cache lines, one host miss per block.
  std::size_t slot_of(line_addr line) const {
    return static_cast<std::size_t>((((line >> 3) * 0x9E3779B97F4A7C15ull) >> (shift_ + 3)) << 3 | (line & 7));
  }
  std::uint64_t* slot(std::size_t i) { return slots_.data() + i * stride_; }
  void grow();

  unsigned words_;
  unsigned stride_;           // 1 + words_: the key, then the mask
  unsigned shift_;            // 64 - log2(capacity)
  std::size_t capacity_ = 0;  // a power of two
  std::size_t size_ = 0;
  zeroed_array<std::uint64_t> slots_;  // capacity x stride
};

}  // namespace roost::sim
