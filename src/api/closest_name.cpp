// The edit distance behind the suggestions of closest_name.hpp.
#include "api/closest_name.hpp"

#include <algorithm>
#include <vector>

namespace roost::detail {

// Edits between two names, a swap of two neighbouring letters counting one (the optimal string alignment
// distance: the typos people make, ROOST_TRACE_DEPHT one edit from ROOST_TRACE_DEPTH, not two), or limit + 1
// when there are more: only the cells within `limit` of the diagonal are computed, every value capped at
// limit + 1, which the recurrence keeps exact below the cap (a cell off that band needs more edits). Every
// runtime's construction compares each variable of the environment with each name: the whole table, a
// vector per row, cost about 1.7 million instructions a construction (callgrind, fib(20) in roost-bench).
std::size_t edit_distance_up_to(const std::string& a, const std::string& b, std::size_t limit) {
  const std::size_t cap = limit + 1, w = b.size() + 1;
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > limit) return cap;
  std::vector<std::size_t> rows(3 * w, cap);  // the row two above, the one above, this one
  std::size_t *before = rows.data(), *prev = before + w, *cur = prev + w;
  for (std::size_t j = 0; j < w; ++j) prev[j] = std::min(j, cap);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    const std::size_t from = i > limit ? i - limit : 1, to = std::min(w - 1, i + limit);
    // The cells next to the band, which the next rows read, hold the cap (a row older than the one above
    // may have left another value there).
    cur[from - 1] = from == 1 ? std::min(i, cap) : cap;
    if (to + 1 < w) cur[to + 1] = cap;
    for (std::size_t j = from; j <= to; ++j) {
      std::size_t v = std::min(prev[j], cur[j - 1]) + 1;
      v = std::min(v, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) v = std::min(v, before[j - 2] + 1);
      cur[j] = std::min(v, cap);
    }
    std::size_t* oldest = before;
    before = prev;
    prev = cur;
    cur = oldest;
  }
  return prev[w - 1];
}

}  // namespace roost::detail
