// oneTBB task_group as a fork-join adapter (hints are ignored).
#pragma once
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
}  // namespace bench

namespace bench {
template <class P>
void tbb_tasks_of(problem& p) { run_tasks<tbb_fj>(static_cast<P&>(p), inline_iteration{}, no_touch{}); }
}  // namespace bench
