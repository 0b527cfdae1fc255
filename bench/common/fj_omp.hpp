// OpenMP tasks as a fork-join adapter: run() creates a task with a copy of the closure, wait() is a
// taskwait (hints are ignored). Call inside `#pragma omp parallel` + `#pragma omp single`.
#pragma once
#include <utility>

#include "common/forkjoin.hpp"

namespace bench {
struct omp_fj {
  struct group {
    group() = default;
    explicit group(double) {}
    group(double, double) {}
    template <class F>
    void run(F&& f) {
      auto fn = std::forward<F>(f);
#pragma omp task firstprivate(fn)
      fn();
    }
    template <class F>
    void run(F&& f, double) { run(std::forward<F>(f)); }
    void wait() {
#pragma omp taskwait
    }
  };
};
// Runs body() on one thread of a new OpenMP team, the others executing the tasks it creates.
template <class F>
void in_omp_team(F&& body) {
#pragma omp parallel
#pragma omp single
  body();
}


// Loop-shaped benchmarks write their time steps once as run_loops(for_each), where for_each(count, body)
// runs body(i) for every i in [0, count) as one parallel loop. Here that loop is an OpenMP worksharing
// loop; run_loops is called by every thread of the team, so it must keep its state in locals.
template <class RunLoops>
void omp_for_static(RunLoops&& run_loops) {
#pragma omp parallel
  run_loops([](long count, auto&& body) {
#pragma omp for schedule(static)
    for (long i = 0; i < count; ++i) body(i);
  });
}
template <class RunLoops>
void omp_for_dynamic(RunLoops&& run_loops) {
#pragma omp parallel
  run_loops([](long count, auto&& body) {
#pragma omp for schedule(dynamic, 1)
    for (long i = 0; i < count; ++i) body(i);
  });
}

template <class P>
void omp_tasks_of(problem& p) {
  in_omp_team([&] { run_tasks<omp_fj>(static_cast<P&>(p), inline_iteration{}, no_touch{}); });
}
template <class P>
void omp_static_of(problem& p) { omp_for_static([&](auto&& for_each) { run_loops(static_cast<P&>(p), for_each); }); }
template <class P>
void omp_dynamic_of(problem& p) { omp_for_dynamic([&](auto&& for_each) { run_loops(static_cast<P&>(p), for_each); }); }
}  // namespace bench
