// Distribution ranges on the worker line (seed 003 §4.2.2; digest §2.1-2.2). Worker r owns [r, r+1); a
// range is half-open [lo, hi). A child with weight w spawned by a task whose group has R work left takes
// the *upper* part in the ratio (R - w) : w, the continuation keeps the lower part, so each worker runs its
// pieces in serial order and work-first holds inside its own region.
#pragma once
#include <algorithm>
#include <cmath>

namespace roost::sched::adws {

struct range {
  double lo = 0, hi = 0;
};

inline unsigned first(range r) { return static_cast<unsigned>(std::max(0.0, std::floor(r.lo))); }
// The highest worker whose region the range reaches; a range ending exactly on r+1 does not reach r+1.
inline unsigned last(range r) {
  double c = std::ceil(r.hi) - 1;
  return std::max(first(r), static_cast<unsigned>(std::max(0.0, c)));
}
inline bool multi(range r) { return r.hi > std::floor(r.lo) + 1.0; }  // last(r) > first(r), one floor
// Whether the range ends exactly on a worker boundary (then its last worker's region lies wholly inside).
inline bool ends_on_boundary(range r) { return std::floor(r.hi) == r.hi; }

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
  return {{at, cur.hi}, {cur.lo, at}, r};
}

}  // namespace roost::sched::adws
