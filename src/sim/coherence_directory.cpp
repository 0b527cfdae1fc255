#include "sim/coherence_directory.hpp"

#include <algorithm>
#include <cstring>

namespace roost::sim {

namespace {
constexpr unsigned kInitialLog2 = 12;  // 4096 slots
}

coherence_directory::coherence_directory(unsigned units)
    : words_(std::max(1u, (units + 63) / 64)),
      stride_(words_ + 1),
      shift_(64 - kInitialLog2),
      capacity_(std::size_t{1} << kInitialLog2),
      slots_(capacity_ * stride_) {}

std::uint64_t* coherence_directory::find(line_addr line) {
  const std::size_t m = capacity_ - 1;
  for (std::size_t i = slot_of(line);; i = (i + 1) & m) {
    std::uint64_t* s = slot(i);
    if (s[0] == key_of(line)) return s + 1;
    if (s[0] == kEmpty) return nullptr;
  }
}

std::uint64_t* coherence_directory::find_or_insert(line_addr line) {
  if (std::uint64_t* mask = find(line)) return mask;
  if ((size_ + 1) * 2 > capacity_) grow();  // load factor at most 1/2: short probe runs
  const std::size_t m = capacity_ - 1;
  std::size_t i = slot_of(line);
  while (slot(i)[0] != kEmpty) i = (i + 1) & m;
  std::uint64_t* s = slot(i);
  s[0] = key_of(line);
  ++size_;
  return s + 1;  // zeroed when its entry was erased or created
}

void coherence_directory::erase(line_addr line) {
  const std::size_t m = capacity_ - 1;
  std::size_t hole = slot_of(line);
  while (slot(hole)[0] != key_of(line)) hole = (hole + 1) & m;
  // Backward shift: move later members of the probe run into the hole while their home slot allows it.
  for (std::size_t j = (hole + 1) & m; slot(j)[0] != kEmpty; j = (j + 1) & m) {
    const std::size_t home = slot_of(slot(j)[0] - 1);
    const bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
    if (!movable) continue;
    std::memcpy(slot(hole), slot(j), stride_ * sizeof(std::uint64_t));
    hole = j;
  }
  std::uint64_t* s = slot(hole);
  s[0] = kEmpty;
  for (unsigned w = 1; w <= words_; ++w) s[w] = 0;  // a word or two: no call to memset
  --size_;
}

void coherence_directory::grow() {
  zeroed_array<std::uint64_t> old = std::move(slots_);
  const std::size_t old_capacity = capacity_;
  capacity_ *= 2;
  --shift_;
  slots_ = zeroed_array<std::uint64_t>(capacity_ * stride_);
  const std::size_t m = capacity_ - 1;
  for (std::size_t k = 0; k < old_capacity; ++k) {
    const std::uint64_t* o = old.data() + k * stride_;
    if (o[0] == kEmpty) continue;
    std::size_t i = slot_of(o[0] - 1);
    while (slot(i)[0] != kEmpty) i = (i + 1) & m;
    std::memcpy(slot(i), o, stride_ * sizeof(std::uint64_t));
  }
}

}  // namespace roost::sim
