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

// Spins until `flag` is set, for at most 10 s (a loaded machine may start the other worker late).
bool wait_for(const std::atomic<bool>& flag) {
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (!flag.load(std::memory_order_acquire))
    if (std::chrono::steady_clock::now() > give_up) return false;
  return true;
}

}  // namespace

// A root ends where its last part runs, possibly on a worker other than the caller's (a thief took its
// continuation). Its end must reach the policy before run() returns: the next run's iteration_begin resets
// state that the end writes (ADWS activates the root's node, cats records the root's footprint). The root
// below is made to end on worker 1: its child holds worker 0 until worker 1 has stolen the continuation,
// and the continuation waits for the child to finish before it joins, so the join never suspends.
TEST(EngineRootEnd, ReachesThePolicyBeforeRunReturns) {
  roost::options o;
  o.scheduler = "ws";
  o.workers = 2;
  roost::detail::runtime_core core(o, &roost::sched::make_engine_of<slow_root_end_policy>);
  unsigned ended_on_worker_1 = 0;
  g_root_ends.store(0);
  for (unsigned run = 1; run <= 3; ++run) {
    int last_part_on = -1;
    bool stolen = true;
    run_on(core, [&] {
      std::atomic<bool> continuation_moved{false}, child_done{false};
      roost::task_group tg;
      tg.run([&] {
        stolen = wait_for(continuation_moved);
        child_done.store(true, std::memory_order_release);
      });
      continuation_moved.store(true, std::memory_order_release);  // runs once a thief took it (work-first)
      wait_for(child_done);
      std::this_thread::sleep_for(5ms);  // the child's own end completes meanwhile
      tg.wait();
      last_part_on = roost::this_worker_id();
    });
    ASSERT_TRUE(stolen) << "worker 1 never took the root's continuation in 10 s";
    EXPECT_EQ(g_root_ends.load(std::memory_order_acquire), run) << "run " << run << " returned before its root's end "
                                                               << "reached the policy (root ended on worker "
                                                               << last_part_on << ")";
    EXPECT_EQ(g_root_end_worker.load(std::memory_order_relaxed), last_part_on)
        << "the policy heard of the root's end from another worker than the one its last part ran on";
    ended_on_worker_1 += last_part_on == 1;
  }
  EXPECT_GT(ended_on_worker_1, 0u) << "no root ended on worker 1: the case under test never happened";
}
