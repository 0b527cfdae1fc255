// Fork-join shapes shared by the benchmarks, written once over a framework adapter FJ so that roost,
// oneTBB and OpenMP run the same recursion and the same kernels (a ratio compares schedulers, not code):
//
//   struct FJ { struct group { group(); group(double total_work); group(double total_work, double bytes);
//                              template <class F> void run(F&& f[, double work]); void wait(); }; };
// (the shape of roost::task_group, which is roost's adapter as it is).
//
// Adapters: common/fj_roost.hpp, fj_tbb.hpp, fj_omp.hpp. Work hints go to roost (ADWS uses them); the
// peers ignore them.
//
// One copy of each kernel. The arithmetic of a benchmark's leaves lives in its kernels.cpp, out of line,
// and the templates here and in each header keep only the recursion and the data annotations. Inlined into
// each variant's instantiation, the same loop was compiled to the same instructions at other addresses and
// ran at other speeds, from placement alone: rrm's map loop took 1.6-1.7x the serial time at one worker in
// every task variant (roost, oneTBB) and 1.07x in OpenMP's, whatever the problem size, with identical
// instruction counts (callgrind); moved out of line, all of them ran within 3% of serial. A ratio must
// compare schedulers, not code layout. (fib, nqueens and knapsack have no leaf kernel: their recursion is the
// work. quicksort, kdtree and decision-tree keep theirs inline, templated on predicates; at one worker they
// ran within 1-6% of serial in every variant.)
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "common/bench.hpp"

namespace bench {

// A task's data declaration, framework-neutral (seed 002 §4: what OpenMP's depend clause gives MIR): up to
// four regions of `rows` rows of `row_bytes`, `stride` apart. roost's adapter hands it to task_group::run
// as a roost::data (fj_roost.hpp), which the numa scheduler deals by; the other adapters drop it.
struct decl {
  struct region {
    const void* base;
    std::size_t row_bytes, rows, stride;
    bool write;
  };
  region r[4];
  int n = 0;
  decl& add(const void* base, std::size_t bytes, bool write) { return add_rows(base, bytes, 1, bytes, write); }
  decl& add_rows(const void* base, std::size_t row_bytes, std::size_t rows, std::size_t stride, bool write) {
    if (n < 4 && row_bytes && rows) r[n++] = {base, row_bytes, rows, stride, write};
    return *this;
  }
};

// g.run(f, work) with the declaration make_decl() builds, for an adapter that takes declarations
// (FJ::declares); make_decl is not even called for the others.
template <class FJ, class G, class F, class MakeDecl>
void run_declared(G& g, F&& f, double work, const MakeDecl& make_decl) {
  if constexpr (requires { FJ::declares; }) FJ::run(g, std::forward<F>(f), work, make_decl());
  else g.run(std::forward<F>(f), work);
}

// Seed 002's shape (Listing 1): one task per item, all spawned by one task in a loop, each with its
// declaration decl_of(k); item k's work is 1 and the group's data-size hint is bytes_per_item * count.
// Flat, not bisected, because Algorithm 2 counts tasks: a node's queue must hold the items for its
// threshold (more than distance * cores tasks) to mean what the seed measured.
template <class FJ, class DeclOf, class Item>
void spawn_each_declared(long count, double bytes_per_item, const DeclOf& decl_of, const Item& item) {
  typename FJ::group g(static_cast<double>(count), static_cast<double>(count) * bytes_per_item);
  for (long k = 0; k < count; ++k) run_declared<FJ>(g, [&item, k] { item(k); }, 1.0, [&decl_of, k] { return decl_of(k); });
  g.wait();
}

// Rows [lo, hi) split in halves down to `cutoff` rows; both halves spawned (seed 000's Heat).
template <class FJ, class Leaf>
void split_rows(long lo, long hi, long cutoff, double bytes_per_row, const Leaf& leaf) {
  if (hi - lo <= cutoff) {
    leaf(lo, hi);
    return;
  }
  long mid = lo + (hi - lo) / 2;
  typename FJ::group g(static_cast<double>(hi - lo), static_cast<double>(hi - lo) * bytes_per_row);
  g.run([&] { split_rows<FJ>(lo, mid, cutoff, bytes_per_row, leaf); }, static_cast<double>(mid - lo));
  g.run([&] { split_rows<FJ>(mid, hi, cutoff, bytes_per_row, leaf); }, static_cast<double>(hi - mid));
  g.wait();
}

// Seed 000 Algorithm 1 (the "-ub" variants): heat() splits in 2 with heat2() on the first half; heat2()
// splits in 4 with heat2() on the third quarter. The DAG is an unbalanced tree.
template <class FJ, class Leaf>
void split_rows_ub2(long lo, long hi, long cutoff, double bpr, const Leaf& leaf);

template <class FJ, class Leaf>
void split_rows_ub(long lo, long hi, long cutoff, double bpr, const Leaf& leaf) {
  if (hi - lo <= cutoff) {
    leaf(lo, hi);
    return;
  }
  long mid = lo + (hi - lo) / 2;
  typename FJ::group g(static_cast<double>(hi - lo), static_cast<double>(hi - lo) * bpr);
  g.run([&] { split_rows_ub2<FJ>(lo, mid, cutoff, bpr, leaf); }, static_cast<double>(mid - lo));
  g.run([&] { split_rows_ub<FJ>(mid, hi, cutoff, bpr, leaf); }, static_cast<double>(hi - mid));
  g.wait();
}

template <class FJ, class Leaf>
void split_rows_ub2(long lo, long hi, long cutoff, double bpr, const Leaf& leaf) {
  if (hi - lo < 4 || hi - lo <= cutoff) {
    split_rows_ub<FJ>(lo, hi, cutoff, bpr, leaf);
    return;
  }
  long q = (hi - lo) / 4;
  long b1 = lo + q, b2 = lo + 2 * q, b3 = lo + 3 * q;
  typename FJ::group g(static_cast<double>(hi - lo), static_cast<double>(hi - lo) * bpr);
  g.run([&] { split_rows_ub<FJ>(lo, b1, cutoff, bpr, leaf); }, static_cast<double>(b1 - lo));
  g.run([&] { split_rows_ub<FJ>(b1, b2, cutoff, bpr, leaf); }, static_cast<double>(b2 - b1));
  g.run([&] { split_rows_ub2<FJ>(b2, b3, cutoff, bpr, leaf); }, static_cast<double>(b3 - b2));
  g.run([&] { split_rows_ub<FJ>(b3, hi, cutoff, bpr, leaf); }, static_cast<double>(hi - b3));
  g.wait();
}

// The serial framework: same shapes, no parallelism (used for the reference and for checks of shape).
struct serial_fj {
  struct group {
    group() = default;
    explicit group(double) {}
    group(double, double) {}
    template <class F>
    void run(F&& f) { f(); }
    template <class F>
    void run(F&& f, double) { f(); }
    void wait() {}
  };
};

// What the serial and peer versions pass where roost's versions pass roost_iteration and roost_touch.
struct inline_iteration {
  template <class F>
  void operator()(F&& body) const { body(); }
};
struct no_touch {
  void operator()(const void*, std::size_t, bool) const {}
  void rows(const void*, std::size_t, std::size_t, std::size_t, bool) const {}
  void compute(std::uint64_t) const {}
};

// The variants of a benchmark written as run_tasks<FJ>(problem_t&, iteration, touch) (and, when it is
// loop-shaped, run_loops(problem_t&, for_each)), instantiated per framework by the fj_*.hpp headers.
template <class P>
void serial_of(problem& p) { run_tasks<serial_fj>(static_cast<P&>(p), inline_iteration{}, no_touch{}); }

}  // namespace bench
