// Per-task data declarations: the regions a task will read and write, given when it is spawned.
//
//   roost::task_group tg;
//   tg.run([&] { scale(v[k]); }, roost::data{roost::updates(v[k], bytes)});
//   tg.run([&] { tile(a, c); }, work, roost::data{roost::reads_rows(a, w, h, ld), roost::writes(c, n)});
//
// A declaration is what OpenMP's `depend` and `affinity` clauses say of a task (seed 002 §4): the numa
// scheduler deals the task, when it is created, to the NUMA node that holds most of its data by distance
// (Algorithm 1). Every other scheduler ignores it. It never changes what a program computes: a wrong or
// missing declaration only changes where the task runs.
//
// Declarations and roost::touch (touch.hpp) answer different questions. A declaration is made by the
// spawner, before the task exists, for a scheduler that must place it; it costs a library call per
// spawn, so declare tasks that touch kilobytes or more, not every leaf of a recursion. roost::touch is
// called by the task itself while it runs, for what measures data at run time (cats's footprint profile,
// the simulator's cost model, the tracer); it is free when nothing listens. A benchmark that wants both
// placement and a modelled cost says both.
//
// Rules, checked when a region is added (a roost::usage_error naming the region and what is valid): a
// null base with a non-zero size; a region whose end (the address one past its last byte) is not an
// address, because it lies beyond the address space or wraps to 0 (a region may end at the address space's
// last byte but one, as a C++ object may); rows longer than their stride; two regions of one declaration that share a byte. Empty regions are allowed and
// ignored. The shared-byte check is exact for every pair but one kind: two tiles of different strides are
// compared row by row, out of a budget of 65,536 rows (of the tile with the larger stride) that all such
// pairs of one declaration share, about an eighth of a millisecond of walking; a pair with more rows than the budget
// has left is let through, and a later, smaller pair is still compared.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include "roost/detail/build_mode.hpp"  // a program in another libstdc++ mode does not link
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <vector>

#include "roost/touch.hpp"

namespace roost {

// `rows` rows of `row_bytes` bytes, `stride` bytes apart (rows == 1: one contiguous range).
struct region {
  const void* base = nullptr;
  std::size_t row_bytes = 0;
  std::size_t rows = 1;
  std::size_t stride = 0;
  access mode = access::read;

  std::size_t bytes() const { return row_bytes * rows; }
};

inline region reads(const void* p, std::size_t bytes) { return {p, bytes, 1, bytes, access::read}; }
inline region writes(const void* p, std::size_t bytes) { return {p, bytes, 1, bytes, access::write}; }
inline region updates(const void* p, std::size_t bytes) { return {p, bytes, 1, bytes, access::read_write}; }
// A tile of a row-major matrix: base = &m[r0 * ld + c0], row_bytes = width * sizeof(T), stride = ld * sizeof(T).
inline region reads_rows(const void* p, std::size_t row_bytes, std::size_t rows, std::size_t stride) {
  return {p, row_bytes, rows, stride, access::read};
}
inline region writes_rows(const void* p, std::size_t row_bytes, std::size_t rows, std::size_t stride) {
  return {p, row_bytes, rows, stride, access::write};
}
inline region updates_rows(const void* p, std::size_t row_bytes, std::size_t rows, std::size_t stride) {
  return {p, row_bytes, rows, stride, access::read_write};
}

// The regions one task declares. Built once per spawn; the runtime reads it during the spawn only.
class data {
 public:
  data() = default;
  data(std::initializer_list<region> rs) {
    regions_.reserve(rs.size());
    for (const region& r : rs) add(r);
  }
  data& add(const region& r);  // checks r alone and against the regions already added

  const region* begin() const { return regions_.data(); }
  const region* end() const { return regions_.data() + regions_.size(); }
  std::size_t size() const { return regions_.size(); }
  bool empty() const { return regions_.empty(); }
  // Bytes declared, all regions together.
  std::size_t bytes() const;

 private:
  std::vector<region> regions_;
  // Beyond a few regions, add() finds the ones a new region could share a byte with through indexes by
  // base address, instead of comparing it with all of them (a list of 80,000 rows took 4 s that way).
  // Contiguous regions (one row) share no byte, so their spans are disjoint: the one below a new region's
  // base and those from its base to its end are all that can meet it. Strided ones (tiles, columns) may
  // interleave: those whose base lies within the longest strided span below its end. (One index for both
  // looked back the longest span of any: one long input read made every later add walk all regions above
  // it, quadratic, 3.4 s for 32,000 rows; an outside-user campaign.) Empty until then.
  static constexpr std::size_t kUnindexed = 32;
  std::map<std::uintptr_t, std::size_t> contiguous_;   // a one-row region's base -> position in regions_
  std::multimap<std::uintptr_t, std::size_t> strided_;  // a region of more rows: base -> position
  std::uintptr_t longest_strided_span_ = 0;            // bytes from a strided region's base to its end, the most
  // Rows the shared-byte check may still walk for pairs of tiles of different strides, in the whole
  // declaration (data.cpp, overlap): a budget per pair made 50 declared tiles take 58 ms and 1,000 take 23 s
  // (an outside-user campaign). A pair with more rows than are left is let through uncompared. A copy of
  // the declaration carries what is left.
  std::size_t rows_left_to_walk_ = std::size_t{1} << 16;
};

}  // namespace roost

#include "roost/detail/min_max_back.hpp"
