// Page -> NUMA node: where the model's memory lives (DESIGN §6). A page gets its node when it is first placed,
// by first touch or explicitly (a data-distribution allocator, seed 002 §3), and keeps it. Open addressing with
// linear probing; pages are never removed, so the table only grows (by doubling, at half full).
#pragma once
#include <cstdint>
#include <vector>

namespace roost::sim {

class page_map {
 public:
  static constexpr std::uint32_t none = ~std::uint32_t{0};

  page_map() : keys_(kInitial, kEmpty), nodes_(kInitial, none) {}

  // The page's node, or none.
  std::uint32_t node_of(std::uint64_t page) const {
    const std::size_t m = keys_.size() - 1;
    for (std::size_t i = slot_of(page, m);; i = (i + 1) & m) {
      if (keys_[i] == page) return nodes_[i];
      if (keys_[i] == kEmpty) return none;
    }
  }

  // Places the page on `node`, moving it when it was placed before.
  void place(std::uint64_t page, std::uint32_t node) {
    if ((size_ + 1) * 2 > keys_.size()) grow();
    const std::size_t m = keys_.size() - 1;
    std::size_t i = slot_of(page, m);
    while (keys_[i] != kEmpty && keys_[i] != page) i = (i + 1) & m;
    if (keys_[i] == kEmpty) ++size_;
    keys_[i] = page;
    nodes_[i] = node;
  }

  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kInitial = 1024;
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  static std::size_t slot_of(std::uint64_t page, std::size_t mask) {
    return static_cast<std::size_t>((page * 0x9E3779B97F4A7C15ull) >> 20) & mask;
  }
  void grow() {
    page_map bigger;
    bigger.keys_.assign(keys_.size() * 2, kEmpty);
    bigger.nodes_.assign(keys_.size() * 2, none);
    for (std::size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] != kEmpty) bigger.place(keys_[i], nodes_[i]);
    *this = std::move(bigger);
  }

  std::size_t size_ = 0;
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> nodes_;
};

}  // namespace roost::sim
