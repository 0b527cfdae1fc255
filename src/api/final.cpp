// roost::run_final (include/roost/final.hpp): spawns inside a final region run inline.
//
// Zero cost for a spawn outside a region: no flag is tested on the spawn path. A region instead changes
// what that path already reads: the worker's `path` becomes `engine` (so tg.run() and the two-way joins of
// parallel_invoke / parallel_for / parallel_reduce call the worker's entry points, as they do while an
// observer is installed) and the entry points engine_spawn / engine_wait become final_spawn / final_wait
// below, which run the child at once and join without the scheduler. Leaving the region puts them back.
//
// Why per-worker state is sound here: a task migrates only at a scheduling point (a spawn the engine makes,
// a wait that suspends, a policy's move after a join). Inside a region no spawn reaches the engine and a
// wait of a group whose children all ran inline never suspends, so the task stays on the worker whose state
// it changed, and no other task runs on that worker meanwhile (the worker is busy running this one). The
// one exception, a wait for a group with children spawned before the region, leaves the region on this
// worker for the real wait and enters it again on whichever worker the task resumes on.
#include "engine/engine_base.hpp"
#include "engine/worker.hpp"
#include "roost/final.hpp"
#include "roost/task_group.hpp"

namespace roost {

namespace {

// Outside any worker (no runtime::run on this thread) nothing can spawn; the depth only answers in_final().
thread_local unsigned t_outside_depth = 0;

// base_epoch of a group whose first spawn since its join was inline in a final region: no fiber epoch ever
// reaches it, and it differs from group_state::kNoBase (a group the engine opened).
constexpr std::uint64_t kFinalOnly = detail::group_state::kNoBase - 1;

void final_spawn(detail::worker_abi&, detail::group_state& g, detail::task_frame& f);
void final_wait(detail::worker_abi&, detail::group_state& g);

void enter_mode(engine::worker& w) {
  w.saved_spawn = w.engine_spawn;
  w.saved_wait = w.engine_wait;
  w.engine_spawn = &final_spawn;
  w.engine_wait = &final_wait;
  // in_final first, then the path: refresh_spawn_paths (engine_base.cpp) reads them in the other order.
  w.in_final.store(true);
  w.path.store(detail::spawn_path::final_region);
  // A wait inside the region for a child pushed before it must leave the region for the real join, not pop
  // the child through the inline window (whose floor the path alone does not close: abi.hpp, a review).
  detail::sync_inline_pops(w);
}

// The hooks that keep every worker on the engine's path (a tracer at a depth does not: abi.hpp).
bool hooks_now() { return detail::hooks_see_every_task(); }

void leave_mode(engine::worker& w) {
  w.engine_spawn = w.saved_spawn;
  w.engine_wait = w.saved_wait;
  w.in_final.store(false);
  // The path a hook change would give it; a hook installed meanwhile may have refreshed before this store,
  // so the flag is read again after it (seq_cst on both sides: observer.cpp's set_bit).
  const bool hooks = hooks_now();
  w.path.store(hooks ? detail::spawn_path::engine : w.inline_path);
  if (!hooks && hooks_now()) w.path.store(detail::spawn_path::engine);
  // Made to agree with the path again (abi.hpp): enter_mode closed them, and a hook change during the
  // region may have written the flag before the store above.
  if (w.deque.inline_pops_closed() == detail::inline_pops_open_on(w.path.load())) detail::sync_inline_pops(w);
}

// Runs the child now, on the caller's fiber, as part of the caller's task (not a task of its own: no
// observer event, nothing for the policy). It is counted as a child done locally, so that a group mixing
// inline and spawned children joins as the engine expects; an exception is kept for the group's wait.
void final_spawn(detail::worker_abi& w, detail::group_state& g, detail::task_frame& f) {
  // A child of the group spawning into it while the owner joins it: a foreign child (engine/join.hpp).
  if (g.spawned & detail::group_state::kJoining) [[unlikely]] return detail::spawn_foreign(w, g, f);
  const std::uint32_t before = g.spawned;
  if (before == 0) {  // what the engine's spawn writes at a group's first spawn (task_frame.hpp)
    g.base_epoch = kFinalOnly;
    g.dist.mode = detail::group_state::kNotOpened;  // a plain group, should the engine join it later
  }
  // Marked as joining while the child runs: the child runs on the owner's fiber, and its run() or wait() on
  // this very group is an error, as in try_join_first_child (abi.hpp).
  g.spawned = (before + 1) | detail::group_state::kJoining;
  try {
    f.ops->run_in_place(&f);
  } catch (...) {
    detail::record_exception(g, std::current_exception());
  }
  g.spawned = before + 1;
  ++g.local_done;
}

void final_wait(detail::worker_abi& wa, detail::group_state& g) {
  // It may leave and re-enter the region's worker state: runtime code throughout (engine/preemption.cpp).
  detail::no_preempt_scope np(detail::running_fiber());
  if (g.spawned & detail::group_state::kJoining) [[unlikely]]
    detail::throw_not_owner("roost::task_group::wait", detail::running_fiber(), g);
  // Every child since the join ran inline (the first one did, and all are done): nothing to wait for, and
  // the policy never saw the group (its first spawn did not open it).
  if (g.base_epoch == kFinalOnly && g.spawned == g.local_done && g.remote_balance.load(std::memory_order_acquire) == 0) {
    detail::finish_join(g);
    return;
  }
  // A child spawned before the region may still run elsewhere: a real join, outside the region, after which
  // the task may be on another worker (then the region's state moves there with it).
  auto& w = static_cast<engine::worker&>(wa);
  const unsigned depth = w.final_depth;
  auto* real_wait = w.saved_wait;
  w.final_depth = 0;
  leave_mode(w);
  struct reenter {
    unsigned depth;
    ~reenter() {
      engine::worker& now = *engine::current_worker();
      now.final_depth = depth;
      enter_mode(now);
    }
  } again{depth};
  real_wait(w, g);
}

}  // namespace

namespace detail {

// Both change the worker's state: never preempted half done (engine/preemption.cpp).
void enter_final() {
  no_preempt_scope np(running_fiber());
  engine::worker* w = engine::current_worker();
  if (!w) {
    ++t_outside_depth;
    return;
  }
  if (w->final_depth++ == 0) enter_mode(*w);
}

void leave_final() noexcept {
  no_preempt_scope np(running_fiber());
  engine::worker* w = engine::current_worker();
  if (!w) {
    --t_outside_depth;
    return;
  }
  if (--w->final_depth == 0) leave_mode(*w);
}

}  // namespace detail

namespace engine {

unsigned leave_final_for_switch(worker& w) {
  const unsigned depth = w.final_depth;
  if (depth == 0) return 0;
  w.final_depth = 0;
  leave_mode(w);
  return depth;
}

void reenter_final_after_switch(worker& w, unsigned depth) {
  if (depth == 0) return;
  w.final_depth = depth;
  enter_mode(w);
}

}  // namespace engine

bool in_final() {
  engine::worker* w = engine::current_worker();
  return w ? w->final_depth > 0 : t_outside_depth > 0;
}

}  // namespace roost
