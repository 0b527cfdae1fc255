// Distribution ranges on the worker line (seed 003 §4.2.2; digest §2.1-2.2). Worker r owns [r, r+1); a
// range is half-open [lo, hi). A child with weight w spawned by a task whose group has R work left takes
// the *upper* part in the ratio (R - w) : w, the continuation keeps the lower part, so each worker runs its
// pieces in serial order and work-first holds inside its own region.
#pragma once
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>

namespace roost::sched::adws {

struct range {
  double lo = 0, hi = 0;
};

// floor and ceil for coordinates on the line (0 <= x < 2^52; anything else goes through std::floor). GCC's
// std::floor without SSE4.1 is an emulation of some twenty instructions, and multi() runs at every task's
// end; for such x, truncation toward zero is the floor.
inline double floor_coord(double x) {
  if (x >= 0.0 && x < 4503599627370496.0) [[likely]] return static_cast<double>(static_cast<std::int64_t>(x));
  return std::floor(x);
}
inline double ceil_coord(double x) {
  double f = floor_coord(x);
  return f < x ? f + 1.0 : f;
}

inline unsigned first(range r) { return static_cast<unsigned>(std::max(0.0, floor_coord(r.lo))); }
// The highest worker whose region the range reaches; a range ending exactly on r+1 does not reach r+1.
inline unsigned last(range r) {
  double c = ceil_coord(r.hi) - 1;
  return std::max(first(r), static_cast<unsigned>(std::max(0.0, c)));
}
inline bool multi(range r) { return r.hi > floor_coord(r.lo) + 1.0; }  // last(r) > first(r), one floor
// Whether the range ends exactly on a worker boundary (then its last worker's region lies wholly inside).
inline bool ends_on_boundary(range r) { return floor_coord(r.hi) == r.hi; }

// A steal's victim (seed 003 Algorithm 4.3): uniform over [a, b] without `self` (a < b), from a random word.
inline unsigned random_other(std::uint64_t random, unsigned a, unsigned b, unsigned self) {
  assert(a < b);
  if (self < a || self > b) return a + static_cast<unsigned>(random % (b - a + 1));
  const unsigned v = a + static_cast<unsigned>(random % (b - a));
  return v >= self ? v + 1 : v;
}

// A zero weight would give an empty range (the reference implementation uses 1e-5 in its place).
constexpr double kMinWeight = 1e-5;

struct split_result {
  range child, continuation;
  double remaining;  // the group's work left after this child
};

// cur: the spawning task's range; remaining: the group's work left before this spawn; w: the child's weight.
inline split_result split(range cur, double remaining, double w) {
  w = std::max(w, kMinWeight);
  double r = std::max(0.0, remaining - w);
  double at = cur.lo + (cur.hi - cur.lo) * (r / (r + w));
  at = std::clamp(at, cur.lo, cur.hi);
  // A weight below the range's precision (a hint 2^53 times smaller than the group's total, e.g. hint 0,
  // which weighs kMinWeight, in a group of 1e12) rounds `at` up to hi: the child would get the empty range
  // [hi, hi), whose first worker lies past the range, past the line when hi = P (ship() then indexed
  // worker P). It gets the range's last representable point instead: a sliver of its last worker's region.
  if (at >= cur.hi && cur.hi > cur.lo) at = std::nextafter(cur.hi, cur.lo);
  return {{at, cur.hi}, {cur.lo, at}, r};
}

}  // namespace roost::sched::adws
