// roost::task_group — spawn children, wait for all of them.
//
//   roost::task_group tg;                 // or tg(total_work, data_bytes) for ADWS / multi-level ADWS
//   tg.run([&] { left(); }, work_left);   // the hint is optional and only changes speed
//   right();
//   tg.wait();                            // rethrows the first exception a child threw
//
// Rules: a task_group is owned by the task that created it, which is the only one that may call wait();
// destroying it without wait() still waits for every child. Any task of the same runtime may call run(), as
// in oneTBB (a parallel_for body, or a child of the group, adding children to it), provided its run()
// happens before the owner's wait() begins or it is a descendant of one of the group's children
// (docs/user-guide.md, "Ownership"). Closures are moved into the runtime. Breaking a rule is a roost::usage_error, never a hang
// or a crash: run() or wait() outside roost::runtime::run, or on a group created outside it, run() on
// another runtime's group, wait() by another task than the owner (then the group could outlive the task,
// and runtime::run return with its children still running), and wait() on a group from one of its own
// children while the owner joins it (a wait that could only wait for itself). One break has no error that
// could leave safely: a group destroyed outside run(), or by another task than its owner, while a child of it
// has not ended (the child would run on in freed storage) ends the process with the reason.
// (A wait() on a group that has no child to join returns at once wherever it is called: a group made
// outside a task can never get one, since run() there throws. Checking it cost every join an instruction.)
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <cmath>
#include <type_traits>
#include <utility>

#include "roost/data.hpp"
#include "roost/detail/abi.hpp"
#include "roost/detail/spawn_inline.hpp"

namespace roost {

namespace detail {
// The spawn of a child with a data declaration (data.hpp): a library call, which tells the policy the
// declaration while it places the child (engine_base::uses_declarations), then spawns as run() does.
void spawn_declared(worker_abi& w, group_state& g, task_frame& f, const data& d);
// join_while_unwinding (abi.hpp) is also the join of a group destroyed while its owner's stack unwinds. Run by
// another task than the owner, it ends the process with the reason (nothing may leave a destructor then).
// The join of a group destroyed by another than its owner's task (src/api/task_group.cpp): outside any task,
// once every child ended (a group kept past its creator's end), it rethrows what a child threw and is done;
// by another task once every child ended, a usage_error, as wait() there; with a child not ended, either
// way, the end of the process with the reason. runtime::run returns when its root ends, not when such a
// group's children do (docs/user-guide.md, "Ownership").
void join_unowned_at_destruction(group_state& g);
// run() by a task that is not the group's owner, or by a child the owner's join runs on the owner's stack:
// a foreign child (src/engine/join.hpp), spawned by the engine out of line; a usage_error outside a task, on
// a group created outside one, or on another runtime's group (src/api/task_group.cpp). f's closure moves.
void spawn_by_other_task(const char* call, fiber_abi* fb, group_state& g, task_frame& f);
// The same checks for run_if(false, f) by such a task, which then runs f itself.
void check_other_task(const char* call, fiber_abi* fb, const group_state& g);
// Whether other tasks spawned into the group since its last join (the error word's marker, abi.hpp) or a
// child's exception waits there: only then does a wait that found its own children done need the engine's
// join (which waits for the foreign ones on the balance). One word: it is tested at every wait and
// destruction.
// The owner's count, read by a load of its own 4 bytes. The spawn that sets it writes those 4 bytes alone
// (the inline push's `spawned = 1`, the engine's `--spawned` after a child that ended here), right after the
// group's construction wrote the count and local_done as one 8-byte zero. Tested together with local_done,
// GCC merged the two reads into one 8-byte load, which no single store in flight holds: the CPU cannot
// forward it and waits for both stores to reach the cache, which then took half of a task_group spawn's
// time under ws-help (perf, fib: the join's first test). A volatile read is a load of its own, which GCC
// neither merges nor drops (an empty asm on the value did the same with two instructions more a spawn).
ROOST_DETAIL_SPAWN_INLINE inline std::uint32_t spawned_alone(const group_state& g) {
  return *static_cast<const volatile std::uint32_t*>(&g.spawned);
}
ROOST_DETAIL_SPAWN_INLINE inline bool foreign_pending(const group_state& g) {
  return g.error.load(std::memory_order_relaxed) != nullptr;
}
// Children of its own or foreign_pending: the join has work. One or of the two words, one branch, the count
// read first (the error word first cost a task_group spawn under ws-help 3 instructions: callgrind, fib).
// These three are always inline as the destructor is, in its copy in an exception cleanup too, for its reason
// (below).
ROOST_DETAIL_SPAWN_INLINE inline bool join_pending(const group_state& g) {
  return (static_cast<std::uintptr_t>(g.spawned) |
          reinterpret_cast<std::uintptr_t>(g.error.load(std::memory_order_relaxed))) != 0;
}
}  // namespace detail

class task_group {
 public:
  // The creating task's fiber, or nullptr outside a task: only a task on that fiber may spawn and wait. And
  // the creating task's id, which names its children (nullptr outside a task: g_no_worker's).
  task_group() {
    st_.owner_fiber = detail::running_fiber();
    st_.owner_task = detail::running_worker().current_task;
  }
  // total_work: the group's total work in the unit of the children's hints (ADWS W_all, seed 003 §4.2).
  // data_bytes: bytes the whole group touches (multi-level ADWS, seed 003 §5.2). Both must be finite and
  // >= 0; a wrong value only changes speed.
  explicit task_group(double total_work) : task_group() {
    check_hint("roost::task_group total_work", total_work);
    st_.total_work = total_work;
  }
  task_group(double total_work, double data_bytes) : task_group(total_work) {
    check_hint("roost::task_group data_bytes", data_bytes);
    st_.data_bytes = data_bytes;
  }
  task_group(const task_group&) = delete;
  task_group& operator=(const task_group&) = delete;

  // Waits for the children. An exception no one collected is rethrown unless the stack is already
  // unwinding because of another one (then it is dropped: C++ allows one exception in flight); the
  // children it then runs on this stack start with no exception in flight, so their own groups rethrow as
  // usual. One limit: a group waited explicitly, or a child spawned work-first, from a destructor that runs
  // during unwinding starts with the unwinding's exception count, and a group that child destroys without
  // wait() drops its children's exceptions (std::uncaught_exceptions() is all it can see).
  // Always inline (but in the sanitizer builds), its copy in the exception cleanup of the group's scope too
  // (issue #25): called out of line there, with the group's address as its argument, it had GCC keep that
  // address in a callee-saved register across every call in the scope, for the cleanup, so every call of a
  // recursion saved and restored one register more, its leaves included (task_group fib under ws-help, this
  // change alone: 107 -> 102 instructions a spawn, 0.88x the time; src/engine/README.md, "One register at a
  // task group's entry"; tests/split_check).
  ROOST_DETAIL_SPAWN_INLINE ~task_group() noexcept(false) {
    if (detail::join_pending(st_)) {
      if (std::uncaught_exceptions() > 0) {
        detail::join_while_unwinding(st_);
      } else if (detail::running_fiber() != st_.owner_fiber) [[unlikely]] {
        detail::join_unowned_at_destruction(st_);
      } else {
        engine_wait();
      }
    }
  }

  template <class F>
  void run(F&& f) { spawn_with_hint(std::forward<F>(f), -1.0); }

  // work: this child's share of the group's work (relative, any unit); finite and >= 0.
  template <class F>
  void run(F&& f, double work) {
    check_hint("roost::task_group::run work hint", work);
    spawn_with_hint(std::forward<F>(f), work);
  }

  // d: the regions the child will read and write (roost/data.hpp), for the numa scheduler's dealing (seed
  // 002 Algorithm 1); ignored by the other schedulers. Never changes results, only where the child runs.
  template <class F>
  void run(F&& f, const data& d) { spawn_declared(std::forward<F>(f), -1.0, d); }
  template <class F>
  void run(F&& f, double work, const data& d) {
    check_hint("roost::task_group::run work hint", work);
    spawn_declared(std::forward<F>(f), work, d);
  }

  // OpenMP's `if` clause: run(f) when `spawn` is true; otherwise f runs at once on the calling task
  // (undeferred, no task made), and an exception it throws is kept for wait() as a child's would be, so
  // that what the program computes and throws never depends on the cutoff. Same rules as run() (inside a
  // task, by a task that may add to the group) either way. The hint of an inline child is checked and then
  // unused: its share of task_group(total) stays with the caller, which is where it runs.
  template <class F>
  void run_if(bool spawn, F&& f) {
    if (spawn) spawn_with_hint(std::forward<F>(f), -1.0);
    else run_here(f);
  }
  template <class F>
  void run_if(bool spawn, F&& f, double work) {
    check_hint("roost::task_group::run_if work hint", work);
    if (spawn) spawn_with_hint(std::forward<F>(f), work);
    else run_here(f);
  }

  // Joins every child spawned so far; the group can be reused afterwards.
  ROOST_DETAIL_SPAWN_INLINE void wait() {
    // Only the owner: checked before anything else, since the counters are the owner's alone (another
    // task reading them while the owner joins would be a data race, not just a wrong answer).
    if (detail::running_fiber() != st_.owner_fiber) [[unlikely]]
      detail::throw_not_owner("roost::task_group::wait", detail::running_fiber(), st_);
    // spawned == 1 with nothing done: only the inline path fills the group's slot first. Its child was the
    // group's only one, unless other tasks spawned into the group (foreign_pending).
    if (detail::spawned_alone(st_) == 1 && st_.local_done == 0 && detail::try_join_first_child(st_)) [[likely]] {
      if (detail::foreign_pending(st_)) [[unlikely]] engine_wait();
      return;
    }
    if (detail::join_pending(st_)) engine_wait();
  }

  double total_work() const { return st_.total_work; }
  double data_bytes() const { return st_.data_bytes; }

 private:
  template <class F>
  ROOST_DETAIL_SPAWN_INLINE void spawn_with_hint(F&& f, double hint) {
    using frame_t = detail::closure_frame<std::decay_t<F>>;
    // The owner's spawns, counted in its plain counters; any other task's go out of line (spawn_by_other),
    // counted on the group's balance. The owner's fiber does not change when it moves (abi.hpp), so the
    // test holds at every spawn.
    detail::fiber_abi* fb = detail::running_fiber();
    if (fb != st_.owner_fiber || !fb) [[unlikely]] return spawn_by_other(fb, std::forward<F>(f), hint);
    if (st_.spawned == 0) {  // the first spawn since the join: the inline slot is free
      if constexpr (sizeof(frame_t) <= detail::group_state::kInlineFrameBytes && alignof(frame_t) <= 16) {
        // The thread's worker, fb->worker (abi.hpp, running_worker): one load, not two.
        detail::worker_abi* w = &detail::running_worker();
        void* slot = st_.inline_frame;
        if (w->path.load(std::memory_order_relaxed) == detail::spawn_path::inline_help_first) [[likely]] {
          // Nobody reads its name or hint unless the engine runs it, which names it then (abi.hpp).
          auto& frame = *::new (slot) frame_t(std::forward<F>(f), typename frame_t::unnamed_t{});
          // Read again after the closure's constructor, which is user code (push_first_child).
          detail::push_first_child(st_, *fb, detail::running_worker(), frame);
        } else {
          // The worker read after the closure's constructor too: as an argument beside the frame's
          // construction, it could be read first, and a constructor that joins (a work-first join whose
          // continuation a thief took) moves the task to another worker.
          auto& frame = *::new (slot) frame_t(std::forward<F>(f), &st_, hint);
          submit(detail::running_worker(), frame);
        }
        return;
      }
    }
    frame_t frame(std::forward<F>(f), &st_, hint);
    submit(*fb->worker, frame);  // the worker the owner runs on now (abi.hpp)
  }
  // Another task's run(): out of line, from a frame on this stack that the engine moves to its pool.
  template <class F>
  __attribute__((noinline)) void spawn_by_other(detail::fiber_abi* fb, F&& f, double hint) {
    detail::closure_frame<std::decay_t<F>> frame(std::forward<F>(f), &st_, hint);
    try {
      detail::spawn_by_other_task("roost::task_group::run", fb, st_, frame);
    } catch (...) {  // not spawned: the closure is still ours to destroy (unless the engine consumed it)
      frame.discard();
      throw;
    }
  }
  // Always through the engine (never the inline help-first path): the policy must see the declaration.
  // Another task's spawns ignore it (a declaration only ever changes where a child runs).
  template <class F>
  void spawn_declared(F&& f, double hint, const data& d) {
    using frame_t = detail::closure_frame<std::decay_t<F>>;
    detail::fiber_abi* fb = detail::running_fiber();
    if (fb != st_.owner_fiber || !fb) [[unlikely]] return spawn_by_other(fb, std::forward<F>(f), hint);
    frame_t frame(std::forward<F>(f), &st_, hint);
    try {
      detail::spawn_declared(*fb->worker, st_, frame, d);
    } catch (...) {  // not spawned: the closure is still ours to destroy
      frame.discard();
      throw;
    }
  }
  // run_if's inline child: checked as a spawn is, then called here.
  template <class F>
  void run_here(F& f) {
    detail::fiber_abi* fb = detail::running_fiber();
    if (fb != st_.owner_fiber || !fb || (st_.spawned & detail::group_state::kJoining)) [[unlikely]]
      return run_here_by_other(fb, f);
    // Marked as joining while f runs: f runs on the owner's fiber, and its wait() on this very group is an
    // error and its run() a foreign spawn, as a spawned child's are (it passed as the owner's, so
    // run_if(false, f) allowed what run_if(true, f) refused: an outside-user campaign). Two stores; nothing
    // else while f does not throw.
    const std::uint32_t before = st_.spawned;
    st_.spawned = before | detail::group_state::kJoining;
    try {
      f();
      st_.spawned = before;
    } catch (...) {
      st_.spawned = before;
      // Counted as a child that ended here, so that wait() (or the destructor) joins and rethrows it; a
      // first child so counted opens the group as the engine's spawn would, as a plain group
      // (group_state::dist), so the join asks no policy for a distribution it never made.
      detail::record_exception(st_, std::current_exception());
      if (st_.spawned == 0) {
        st_.base_epoch = detail::group_state::kNoBase;
        st_.dist.mode = detail::group_state::kNotOpened;
      }
      ++st_.spawned;
      ++st_.local_done;
    }
  }
  // Another task's run_if(false, f) (or a child's, on the owner's stack while the owner joins): f runs here
  // as part of that task, and what it throws is kept for the owner's wait(), as a foreign child's would be
  // (foreign_pending sees it). The group's counters are the owner's: not touched.
  template <class F>
  __attribute__((noinline)) void run_here_by_other(detail::fiber_abi* fb, F& f) {
    detail::check_other_task("roost::task_group::run_if", fb, st_);
    try {
      f();
    } catch (...) {
      detail::record_exception(st_, std::current_exception());
    }
  }
  template <class Frame>
  void submit(detail::worker_abi& w, Frame& fr) {
    try {
      w.engine_spawn(w, st_, fr);
    } catch (...) {  // not spawned (the engine threw before taking it): the closure is still ours to destroy
      fr.discard();
      throw;
    }
  }
  // Called with spawned != 0 or foreign children pending, so owner_fiber is set (another task's run() on a
  // group created outside a task throws).
  void engine_wait() {
    if (detail::running_fiber() != st_.owner_fiber) [[unlikely]]
      detail::throw_not_owner("roost::task_group::wait", detail::running_fiber(), st_);
    if (st_.spawned == 0) detail::open_for_foreign_join(st_);
    detail::worker_abi* w = st_.owner_fiber->worker;
    w->engine_wait(*w, st_);
  }
  static void check_hint(const char* what, double v) {
    if (!(v >= 0.0) || std::isinf(v)) detail::throw_bad_hint(what, v);
  }

  detail::group_state st_;
};

}  // namespace roost

#include "roost/detail/min_max_back.hpp"
