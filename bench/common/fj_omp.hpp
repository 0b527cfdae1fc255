// OpenMP tasks as a fork-join adapter: run() creates a task with a copy of the closure, wait() is a
// taskwait (hints are ignored). Call inside `#pragma omp parallel` + `#pragma omp single`.
#pragma once
#include <utility>

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

}  // namespace bench
