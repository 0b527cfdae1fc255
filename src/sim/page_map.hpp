// Page -> NUMA node: where the model's memory lives (DESIGN §6). A page gets its node when it is first placed,
// by first touch or explicitly (a data-distribution allocator, seed 002 §3), and keeps it until its memory is
// freed (unplace). Open addressing with linear probing; pages are never removed (a freed page is used
// again: api/simulation.cpp), so the table only grows (by doubling, at half full).
#pragma once
#include <cstdint>
#include <vector>

#include "sim/host_memory.hpp"

namespace roost::sim {

class page_map {
 public:
  static constexpr std::uint32_t none = ~std::uint32_t{0};

  page_map() : slots_(kInitial) {}

  // The page's node, or none.
  std::uint32_t node_of(std::uint64_t page) const {
    const std::size_t m = slots_.size() - 1;
    for (std::size_t i = slot_of(page, m);; i = (i + 1) & m) {
      if (slots_[i].page == page) return slots_[i].node;
      if (slots_[i].page == kEmpty) return none;
    }
  }

  // Places the page on `node`, moving it when it was placed before.
  void place(std::uint64_t page, std::uint32_t node) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    const std::size_t m = slots_.size() - 1;
    std::size_t i = slot_of(page, m);
    while (slots_[i].page != kEmpty && slots_[i].page != page) i = (i + 1) & m;
    if (slots_[i].page == kEmpty) ++size_;
    slots_[i] = {page, node};
  }

  // Forgets the page's node (its memory was freed): the next access places it again. The entry stays, for
  // the page when it is used again.
  void unplace(std::uint64_t page) {
    const std::size_t m = slots_.size() - 1;
    for (std::size_t i = slot_of(page, m);; i = (i + 1) & m) {
      if (slots_[i].page == page) {
        slots_[i].node = none;
        return;
      }
      if (slots_[i].page == kEmpty) return;
    }
  }

  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kInitial = 1024;
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  static std::size_t slot_of(std::uint64_t page, std::size_t mask) {
    return static_cast<std::size_t>((page * 0x9E3779B97F4A7C15ull) >> 20) & mask;
  }
  struct entry {
    std::uint64_t page = kEmpty;
    std::uint32_t node = none;
  };
  void grow() {
    page_map bigger;
    bigger.slots_.assign(slots_.size() * 2, entry{});
    for (const entry& e : slots_)
      if (e.page != kEmpty) bigger.place(e.page, e.node);
    *this = std::move(bigger);
  }

  std::size_t size_ = 0;
  host_vector<entry> slots_;
};

}  // namespace roost::sim
