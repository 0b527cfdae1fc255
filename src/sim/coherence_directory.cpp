#include "sim/coherence_directory.hpp"

#include <algorithm>
#include <cstring>

namespace roost::sim {

namespace {
constexpr unsigned kInitialLog2 = 12;  // 4096 slots
}

coherence_directory::coherence_directory(unsigned units)
    : words_(std::max(1u, (units + 63) / 64)),
      shift_(64 - kInitialLog2),
      capacity_(std::size_t{1} << kInitialLog2),
      keys_(capacity_, kEmpty),
      masks_(capacity_ * words_, 0) {}

std::uint64_t* coherence_directory::find(line_addr line) {
  const std::size_t m = capacity_ - 1;
  for (std::size_t i = slot_of(line);; i = (i + 1) & m) {
    if (keys_[i] == line) return &masks_[i * words_];
    if (keys_[i] == kEmpty) return nullptr;
  }
}

std::uint64_t* coherence_directory::find_or_insert(line_addr line) {
  if (std::uint64_t* mask = find(line)) return mask;
  if ((size_ + 1) * 2 > capacity_) grow();  // load factor at most 1/2: short probe runs
  const std::size_t m = capacity_ - 1;
  std::size_t i = slot_of(line);
  while (keys_[i] != kEmpty) i = (i + 1) & m;
  keys_[i] = line;
  ++size_;
  return &masks_[i * words_];  // zeroed when its entry was erased or created
}

void coherence_directory::erase(line_addr line) {
  const std::size_t m = capacity_ - 1;
  std::size_t hole = slot_of(line);
  while (keys_[hole] != line) hole = (hole + 1) & m;
  // Backward shift: move later members of the probe run into the hole while their home slot allows it.
  for (std::size_t j = (hole + 1) & m; keys_[j] != kEmpty; j = (j + 1) & m) {
    const std::size_t home = slot_of(keys_[j]);
    const bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
    if (!movable) continue;
    keys_[hole] = keys_[j];
    std::memcpy(&masks_[hole * words_], &masks_[j * words_], words_ * sizeof(std::uint64_t));
    hole = j;
  }
  keys_[hole] = kEmpty;
  std::memset(&masks_[hole * words_], 0, words_ * sizeof(std::uint64_t));
  --size_;
}

void coherence_directory::grow() {
  std::vector<std::uint64_t> old_keys = std::move(keys_);
  std::vector<std::uint64_t> old_masks = std::move(masks_);
  capacity_ *= 2;
  --shift_;
  keys_.assign(capacity_, kEmpty);
  masks_.assign(capacity_ * words_, 0);
  const std::size_t m = capacity_ - 1;
  for (std::size_t k = 0; k < old_keys.size(); ++k) {
    if (old_keys[k] == kEmpty) continue;
    std::size_t i = slot_of(old_keys[k]);
    while (keys_[i] != kEmpty) i = (i + 1) & m;
    keys_[i] = old_keys[k];
    std::memcpy(&masks_[i * words_], &old_masks[k * words_], words_ * sizeof(std::uint64_t));
  }
}

}  // namespace roost::sim
