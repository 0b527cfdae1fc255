// oneTBB task_group as a fork-join adapter (hints are ignored).
#pragma once
#include <tbb/task_group.h>

#include <utility>

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
