// Parallel stable partition with double buffering, as the thesis's quicksort and kd-tree build do it
// (seed 003 ch. 5): src is cut into blocks; a parallel loop counts each block's elements that satisfy the
// predicate, a serial prefix sum turns the counts into offsets, and a second parallel loop copies every
// block's elements to their places in dst (those that satisfy it first, each part in input order). The
// output does not depend on the schedule.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

#include "common/forkjoin.hpp"

namespace bench {

// Returns how many elements satisfy pred (they are dst[0, count)). Below `block` elements it runs serially.
template <class FJ, class T, class Pred, class Touch>
long partition_into(const T* src, T* dst, long n, long block, const Pred& pred, const Touch& touch) {
  const long blocks = (n + block - 1) / block;
  std::vector<long> first(static_cast<std::size_t>(blocks) + 1, 0), second(static_cast<std::size_t>(blocks) + 1, 0);
  const double block_bytes = static_cast<double>(block) * sizeof(T);
  split_rows<FJ>(0, blocks, 1, block_bytes, [&](long lo, long hi) {
    for (long b = lo; b < hi; ++b) {
      const long s = b * block, e = s + block < n ? s + block : n;
      touch(src + s, static_cast<std::size_t>(e - s) * sizeof(T), false);
      long c = 0;
      for (long i = s; i < e; ++i) c += pred(src[i]) ? 1 : 0;
      first[b + 1] = c;
      second[b + 1] = (e - s) - c;
    }
  });
  for (long b = 0; b < blocks; ++b) {
    first[b + 1] += first[b];
    second[b + 1] += second[b];
  }
  const long count = first[blocks];
  split_rows<FJ>(0, blocks, 1, 2 * block_bytes, [&](long lo, long hi) {
    for (long b = lo; b < hi; ++b) {
      const long s = b * block, e = s + block < n ? s + block : n;
      touch(src + s, static_cast<std::size_t>(e - s) * sizeof(T), false);
      touch(dst + first[b], static_cast<std::size_t>(first[b + 1] - first[b]) * sizeof(T), true);
      touch(dst + count + second[b], static_cast<std::size_t>(second[b + 1] - second[b]) * sizeof(T), true);
      long f = first[b], g = count + second[b];
      for (long i = s; i < e; ++i) {
        if (pred(src[i])) dst[f++] = src[i];
        else dst[g++] = src[i];
      }
    }
  });
  return count;
}

// Median of the first, middle and last values of key over src[0, n) (n >= 1).
template <class T, class Key>
auto median_of_three(const T* src, long n, const Key& key) {
  auto a = key(src[0]), b = key(src[n / 2]), c = key(src[n - 1]);
  if (a > b) std::swap(a, b);
  if (b > c) std::swap(b, c);
  if (a > b) std::swap(a, b);
  return b;
}

// Quicksort-style split of src into dst around the median of three: elements whose key is below the
// pivot first. When none is below it, the split is "key <= pivot" instead, so a side is never empty unless
// every key equals the pivot; then the whole range is returned as the first part (count == n) and the
// caller treats it as done.
template <class FJ, class T, class Key, class Touch>
long pivot_split(const T* src, T* dst, long n, long block, const Key& key, const Touch& touch, decltype(key(*src))* pivot_out = nullptr) {
  const auto pivot = median_of_three(src, n, key);
  if (pivot_out) *pivot_out = pivot;
  long m = partition_into<FJ>(src, dst, n, block, [&](const T& x) { return key(x) < pivot; }, touch);
  if (m == 0) m = partition_into<FJ>(src, dst, n, block, [&](const T& x) { return key(x) <= pivot; }, touch);
  return m;
}

}  // namespace bench
