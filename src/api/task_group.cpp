// The out-of-line parts of the task_group ABI: the errors user code throws, and the thread-local fiber
// pointer. Spawns and joins reach engine<Policy> through the worker's entry points (detail/abi.hpp).
#include <cmath>
#include <sstream>

#include "engine/engine_base.hpp"
#include "engine/fiber.hpp"
#include "engine/worker.hpp"
#include "platform/platform.hpp"
#include "ult/context.hpp"
#include "roost/errors.hpp"
#include "roost/task_group.hpp"

namespace roost::detail {

__thread fiber_abi* t_running_fiber __attribute__((tls_model("initial-exec"))) = nullptr;

__attribute__((noinline)) fiber_abi* running_fiber_out_of_line() { return t_running_fiber; }

// Its path stays `engine` (never written): a two-way join outside every worker takes the engine's path,
// which throws outside a task. Constant-initialised where it matters: the path, read before any
// constructor of this file might have run (a join in another library's static initialiser).
worker_abi g_no_worker;
__thread worker_abi* t_running_worker __attribute__((tls_model("initial-exec"))) = &g_no_worker;

__attribute__((noinline)) worker_abi* running_worker_out_of_line() { return t_running_worker; }

// A wait for another worker's claim of a join's frame that outlasted its spins (abi.hpp, wait_out_join_claim):
// the platform's yield (the simulated platform's own, should a claim ever span a charge). Both sides wait
// with preemption held off, so preemption's wrapper of sched_yield (platform/sleep_calls.cpp), which sees
// this call as the program's, never preempts there, as in the scheduling loop's yields.
void yield_for_join_claim() noexcept { platform::os::yield_cpu(); }
__thread ws_deque<job>* t_join_window __attribute__((tls_model("initial-exec"))) = nullptr;

std::uint64_t new_worker_uid() noexcept {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

ws_deque<job>& shut_join_window() {
  static ws_deque<job> shut(2);  // never pushed onto, never popped: a new deque's limit and floor
  return shut;
}

void throw_outside_task(const char* call) {
  // Not only "outside run": a std::thread a task started is inside run and still no worker (an outside-user
  // campaign read "called outside roost::runtime::run" there, and a tg.run hint for a parallel_for).
  throw usage_error(std::string(call) + " called on a thread that runs no roost task: outside roost::runtime::run, "
                    "or on a thread the program started (std::thread) inside a task, which is no worker; call it "
                    "from the root task of rt.run([&] { ... }) or from a task that one spawns");
}

void throw_negative_bound_digits(const char* call, const char* which, const char* digits) {
  throw usage_error(std::string(call) + ": " + which + " = " + digits +
                    " is negative and the other bound is unsigned, so the range has no type that holds both; "
                    "give both bounds one type (for instance std::ptrdiff_t)");
}

void throw_negative_bound(const char* call, const char* which, long long value) {
  throw_negative_bound_digits(call, which, std::to_string(value).c_str());
}

void throw_bad_grain(const char* call, std::size_t grain) {
  throw usage_error(std::string(call) + ": grain = " + std::to_string(grain) + " (" +
                    std::to_string(static_cast<long long>(grain)) + " as a signed number) is no piece size: a "
                    "negative grain converted to std::size_t? Give a grain in [0, 2^63) (0 is taken as 1)");
}

void throw_not_owner(const char* call, const fiber_abi* fb, const group_state& g) {
  if (!fb && !g.owner_fiber) throw_outside_task(call);
  std::string why;
  if (!fb)
    why = " called outside roost::runtime::run on a group that a task created; a group is waited by the task "
          "that created it, before that task ends";
  else if (!g.owner_fiber)
    why = " called by a task on a group created outside roost::runtime::run; create the group inside the task "
          "that runs and waits it";
  else if (fb == g.owner_fiber && (g.spawned & group_state::kJoining))
    why = " called by a child of the group, run on its owner's stack (a join that ran it there, run_if(false, f), "
          "or a final region's inline child); a child may not wait for its own group, whichever way it runs: "
          "only the task that created a group may call its wait(), outside its children";
  else
    why = " called by a task that did not create the group; only the task that created a group may call its "
          "wait() (any task may call its run())";
  throw usage_error(std::string(call) + why);
}

void check_other_task(const char* call, fiber_abi* fb, const group_state& g) {
  if (!fb || !g.owner_fiber) throw_not_owner(call, fb, g);
  // The group's owner fiber never changes, and the runtime that made a fiber is its for life.
  const auto& w = static_cast<const engine::worker&>(*fb->worker);
  if (static_cast<const engine::fiber*>(g.owner_fiber)->home != w.eng)
    throw usage_error(std::string(call) + " called by a task of another roost::runtime than the one whose task "
                      "created the group; a group's children run in its creator's runtime: spawn them from a "
                      "task of that runtime");
}

void spawn_by_other_task(const char* call, fiber_abi* fb, group_state& g, task_frame& f) {
  check_other_task(call, fb, g);
  spawn_foreign(*fb->worker, g, f);
}

void spawn_foreign(worker_abi& wa, group_state& g, task_frame& f) {
  auto& w = static_cast<engine::worker&>(wa);
  // In a final region (final.hpp) every spawn runs at once, as part of the spawner's task: so does this
  // one, its exception kept for the owner's wait as a foreign child's would be.
  if (w.final_depth != 0) {
    const frame_ops* ops = f.ops;
    f.ops = nullptr;  // consumed, whatever it throws (run_in_place destroys the closure either way)
    try {
      ops->run_in_place(&f);
    } catch (...) {
      record_exception(g, std::current_exception());
    }
    return;
  }
  w.eng->spawn_foreign(w, g, f);
}

std::exception_ptr g_exception_lost_to_oom;
std::exception_ptr g_foreign_children;

// The owner's stack is unwinding: the thread's count of uncaught exceptions says 1 or more. A child the
// join runs on this stack (a help-first join pops its own children back) would see that count as its own,
// and a task_group it destroys without wait() would drop its child's exception as if its own stack were
// unwinding, and go on past code it should never reach (an outside-user campaign, under ws-help, cats and
// numa). So the join runs with the thread's exception state cleared, and puts it back after, on whichever
// thread the owner then runs (ult/context.hpp: each context carries its own across a switch). Not covered:
// a wait() called explicitly, or a work-first spawn, from a destructor that runs during unwinding; their
// children see the unwinding's count (include/roost/task_group.hpp says so).
void join_while_unwinding(group_state& g) noexcept {
  ult::eh_state* here = ult::thread_eh_state();
  const ult::eh_state unwinding = *here;
  *here = ult::eh_state{nullptr, 0};
  // Destroyed by another task than its owner (or outside the runtime) while unwinding: nothing may leave a
  // destructor then, and returning would free the group under its running children.
  if (running_fiber() != g.owner_fiber)
    platform::os::fatal("roost::task_group destroyed during unwinding by a task that did not create it",
                        "only the task that created a group may wait for it; its children would run on with "
                        "the group freed");
  try {
    if (g.spawned == 0) open_for_foreign_join(g);  // only other tasks' children are left
    worker_abi* w = g.owner_fiber->worker;
    w->engine_wait(*w, g);
  } catch (...) {
  }
  *ult::thread_eh_state() = unwinding;  // out of line: the thread the owner runs on now
}

// A group that escaped its creator through the heap and is destroyed outside runtime::run (user-guide.md,
// "Ownership"). Once every child has ended there is nothing to wait for, and the destructor does what the
// join would have done after them: it threw a usage_error before, which std::unique_ptr::reset (noexcept)
// turned into std::terminate under the schedulers whose count still held children that had ended elsewhere
// (an outside-user campaign: ws-help, cats, adws, adws-ml and numa; hws and cab had counted them off).
// run() returns when its root ends, not when such a group's children do: another worker may still run one
// (natively), or it waits for the next run() (simulated). Destroyed by another task once every child
// ended, it is a usage_error, as a wait() there is.
// Destroyed, outside a task or by another task, while a child has not ended, it ends the process with the
// reason. It threw a usage_error there, and the child ran on with the group's storage freed or reused: a
// stolen first child runs its closure where it lies, in the group's inline slot, and every child ends by
// counting itself off in the group (an outside-user campaign: 1 to 3 of 10 runs crashed under ws-help, cats
// and numa after the program reused the storage; valgrind saw hws's child read the freed group). Waiting
// for the children instead could hang: on the simulated platform they run only in a later run(), and a
// task of the same runtime would hold its worker while they wait in that worker's queue.
void join_unowned_at_destruction(group_state& g) {
  const std::uint32_t remote = g.spawned - g.local_done;  // kJoining is set only inside the owner's join
  if (g.remote_balance.load(std::memory_order_acquire) != static_cast<std::int64_t>(remote))
    platform::os::fatal(running_fiber() ? "roost::task_group destroyed by a task that did not create it, while "
                                          "children of it have not ended"
                                        : "roost::task_group destroyed outside roost::runtime::run while children "
                                          "of it have not ended",
                        "the group outlived the task that created it, which must wait for it (or destroy it) before "
                        "it ends; its children would run on with the group's storage freed (runtime::run returns "
                        "when its root task ends, whatever such a group's children do)");
  if (!running_fiber() && g.owner_fiber) {
    g.remote_balance.store(0, std::memory_order_relaxed);
    finish_join(g);  // rethrows a child's exception, as the destructor's join would have
    return;
  }
  throw_not_owner("roost::task_group::wait (in its destructor)", running_fiber(), g);
}

void rethrow_group_error(std::exception_ptr* e) {
  if (e == &g_exception_lost_to_oom)
    throw std::bad_alloc();  // a child threw, and there was no memory left to keep its exception
  std::exception_ptr x = std::move(*e);
  delete e;
  std::rethrow_exception(x);
}


void throw_bad_hint(const char* what, double value) {
  std::ostringstream os;
  os << what << " = " << value << ": a hint must be a finite number >= 0 (it is relative work or bytes)";
  throw std::invalid_argument(os.str());
}

}  // namespace roost::detail
