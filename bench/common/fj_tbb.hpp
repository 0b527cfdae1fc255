// oneTBB task_group as a fork-join adapter (hints are ignored), and parallel_for with an
// affinity_partitioner as the for_each of a loop-shaped benchmark (see omp_for_static in fj_omp.hpp): one
// partitioner for the whole run, so repeated loops replay its mapping.
#pragma once
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_group.h>

#include <utility>

#include "common/forkjoin.hpp"

namespace bench {
struct tbb_fj {
  struct group {
    group() = default;
    explicit group(double) {}
    group(double, double) {}
    template <class F>
    void run(F&& f) { tg.run(std::forward<F>(f)); }
    template <class F>
    void run(F&& f, double) { tg.run(std::forward<F>(f)); }
    void wait() { tg.wait(); }
    tbb::task_group tg;
  };
};

template <class RunLoops>
void tbb_for_affinity(RunLoops&& run_loops) {
  tbb::affinity_partitioner ap;
  run_loops([&](long count, auto&& body) {
    tbb::parallel_for(
        tbb::blocked_range<long>(0, count, 1),
        [&](const tbb::blocked_range<long>& r) {
          for (long i = r.begin(); i < r.end(); ++i) body(i);
        },
        ap);
  });
}

template <class P>
void tbb_tasks_of(problem& p) { run_tasks<tbb_fj>(static_cast<P&>(p), inline_iteration{}, no_touch{}); }
template <class P>
void tbb_pfor_of(problem& p) { tbb_for_affinity([&](auto&& for_each) { run_loops(static_cast<P&>(p), for_each); }); }

}  // namespace bench
