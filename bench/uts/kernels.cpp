#include "uts/uts.hpp"

namespace bench::uts {

// The state, then grain - 1 more rounds of the same mixing, as BOTS's granularity repeats its SHA-1: the
// tree does not depend on the grain, only the work per node does. The empty asm keeps that work.
std::uint64_t child_state(std::uint64_t parent, long index, int grain) {
  const std::uint64_t s = mix(parent ^ mix(static_cast<std::uint64_t>(index) + 1));
  std::uint64_t w = s;
  for (int r = 1; r < grain; ++r) w = mix(w);
  asm volatile("" : : "r"(w));
  return s;
}

}  // namespace bench::uts
