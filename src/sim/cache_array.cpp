#include "sim/cache_array.hpp"

#include <cassert>
#include <cstring>

namespace roost::sim {

cache_array::cache_array(std::uint64_t sets, unsigned ways)
    : sets_(sets), ways_(ways), pow2_((sets & (sets - 1)) == 0), mask_(sets - 1), entries_(sets * ways, kEmpty) {
  assert(sets >= 1 && ways >= 1);
}

bool cache_array::invalidate(line_addr line) {
  const int w = find(line);
  if (w == miss) return false;
  std::uint64_t* s = set_of(line);
  // Valid entries form a prefix: close the gap inside it and put the mark at its end, before older marks and
  // empty ways, so that it is replaced after them.
  unsigned valid = static_cast<unsigned>(w) + 1;
  while (valid < ways_ && (s[valid] & kInvalidated) == 0) ++valid;
  std::memmove(s + w, s + w + 1, (valid - 1 - static_cast<unsigned>(w)) * sizeof(std::uint64_t));
  s[valid - 1] = (line << 3) | kInvalidated;
  missed_line_ = kNoLine;  // the set changed
  ++counts.invalidations;
  return true;
}

}  // namespace roost::sim
