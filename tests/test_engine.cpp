// The engine's contract with its policies (src/sched/policy.hpp), seen through probe policies that the tests
// plug into engine<P> themselves (api/runtime_core.hpp takes an engine maker for this).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "api/runtime_core.hpp"
#include "roost/roost.hpp"
#include "sched/engine_of.hpp"
#include "sched/ws.hpp"
#include "test_util.hpp"

namespace {

using namespace std::chrono_literals;

// ws, plus a root's end that takes its time: the window in which a root that ended on another worker than
// the caller's could still be telling its policy so while the caller's run() had already returned.
std::atomic<unsigned> g_root_ends{0};
std::atomic<int> g_root_end_worker{-1};

class slow_root_end_policy : public roost::sched::ws_policy {
 public:
  using ws_policy::ws_policy;
  void on_task_end(roost::engine::worker& w, roost::detail::task_id& id) {
    if (id.parent != nullptr) return;
    std::this_thread::sleep_for(20ms);
    g_root_end_worker.store(static_cast<int>(w.id), std::memory_order_relaxed);
    g_root_ends.fetch_add(1, std::memory_order_release);
  }
};

template <class F>
void run_on(roost::detail::runtime_core& core, F&& f) {
  core.run([](void* p) { (*static_cast<F*>(p))(); }, &f);
}

}  // namespace

// A root ends where its last part runs, possibly on a worker other than the caller's (a thief took its
// continuation). Its end must reach the policy before run() returns: the next run's iteration_begin resets
// state that the end writes (ADWS activates the root's node, cats records the root's footprint). The roots
// below are made to end on worker 1: the child holds worker 0 until worker 1 has stolen the continuation,
// and the continuation waits for the child to finish before it joins, so that the join need not suspend.
// A root may still end on worker 0 (the child's end not yet counted when the join looks): runs go on until
// three ended on worker 1; the order is checked for every run.
TEST(EngineRootEnd, ReachesThePolicyBeforeRunReturns) {
  roost::options o;
  o.scheduler = "ws";
  o.workers = 2;
  roost::detail::runtime_core core(o, &roost::sched::make_engine_of<slow_root_end_policy>);
  unsigned runs = 0, ended_on_worker_1 = 0;
  g_root_ends.store(0);
  while (ended_on_worker_1 < 3 && runs < 50) {
    ++runs;
    int last_part_on = -1;
    bool stolen = true;
    run_on(core, [&] {
      std::atomic<bool> continuation_moved{false}, child_done{false};
      roost::task_group tg;
      tg.run([&] {
        stolen = roost_test::wait_until([&] { return continuation_moved.load(); });
        child_done.store(true);
      });
      continuation_moved.store(true);  // runs once a thief took it (work-first)
      roost_test::wait_until([&] { return child_done.load(); });
      std::this_thread::sleep_for(5ms);  // the child's own end completes meanwhile
      tg.wait();
      last_part_on = roost::this_worker_id();
    });
    ASSERT_TRUE(stolen) << "worker 1 never took the root's continuation in 5 s";
    EXPECT_EQ(g_root_ends.load(std::memory_order_acquire), runs)
        << "run " << runs << " returned before its root's end reached the policy (root ended on worker "
        << last_part_on << ")";
    EXPECT_EQ(g_root_end_worker.load(std::memory_order_relaxed), last_part_on)
        << "the policy heard of the root's end from another worker than the one its last part ran on";
    ended_on_worker_1 += last_part_on == 1;
  }
  EXPECT_GT(ended_on_worker_1, 0u) << "no root of " << runs
                                   << " ended on worker 1: the case under test never happened";
}
