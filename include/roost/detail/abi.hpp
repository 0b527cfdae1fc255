// The worker ABI: the part of a worker and of a fiber that user code touches directly, so that the common
// help-first spawn and its join cost no call into the library (the idea of OpenCilk's cilk ABI, where
// compiler-generated code pushes onto the worker's deque with the THE protocol).
//
// How user code finds its worker: every task runs on a fiber, and a fiber's record says which worker runs
// it *now* (the engine updates it at every resume). A task_group keeps the fiber it was made on (its
// owner's), checks at every spawn and wait that the caller runs on it (the one check that tells the owner
// from any other task, and from code outside the runtime), and reads fiber->worker each time, so a task that
// moved to another thread during a join sees its new worker.
//
// The fiber is read from t_running_fiber, an initial-exec __thread variable read inline: one
// %fs-relative load, no call, no TLS wrapper. Its *value* may be kept by the compiler across a migration
// and still be right: the fiber a task runs on does not change when the task moves, and every thread that
// resumes it sets t_running_fiber to it. What must never be kept is the variable's *address* (the old
// thread's slot): initial-exec scalar reads are segment-relative loads that hold no address in a register.
// The two-way join reads the thread's worker the same way (t_running_worker, below), not the fiber: a
// thread serves one worker, whose fibers are the only ones it runs.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include "roost/detail/build_mode.hpp"  // a program in another libstdc++ mode does not link
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>

#include "roost/detail/task_frame.hpp"
#include "roost/detail/spawn_inline.hpp"
#include "roost/detail/ws_deque.hpp"

namespace roost {
class task_observer;
}

namespace roost::detail {

// How user code may spawn on this worker: through the engine (any policy); inline as help-first onto the
// worker's own deque (policies whose spawn decision is always exactly that, e.g. ws-help), which covers
// tg.run() and the two-way join; or inline for the two-way join only (inline_join: work-first policies whose
// deque and order the inline join keeps, e.g. ws; fork_join2.hpp). A policy whose join is such a spawn only
// in some states (adws, adws-ml, cab, cats: worker_abi::names_join_queue) takes inline_join too, and keeps
// its deque's inline windows shut while its state is another (ws_deque::shut_joins_here): their slow paths
// then push onto the queue it names, or let the engine join. The engine keeps the path at `engine` while an
// observer or a simulation is installed, so that user code tests one byte per spawn and join, not the path
// and the hook flag (engine_base.cpp, refresh_spawn_paths).
//
// While preemption is on (ROOST_PREEMPT=signal or klt) the paths stay as they are: their deque operations
// are critical windows a tick cannot land in (below), at no cost. A policy's state of the moment is in the
// deque's push limit and pop floor, which the windows read inside themselves; their slow paths run under the
// task's no_preempt_scope.
//
// final_region: the engine's path too, written by the worker itself as it enters a final region
// (src/api/final.cpp), whose spawns and waits are its own; a hook's refresh of the paths leaves it, and the
// worker's leaving computes its path again. A value of its own, not `engine`: a refresh that read the path
// and the region's flag before the worker entered could otherwise compare-exchange `engine` with the
// inline path after the worker had written `engine` over `engine`, and put a worker inside a region back
// on an inline path (an outside-user campaign: parallel_invoke in a region then ran out of program order,
// its halves stolen).
enum class spawn_path : std::uint8_t {
  engine,
  inline_help_first,
  inline_join,
  final_region,
};

// A number no other worker or thread of this process had or will have (task_group.cpp): per_worker's key.
std::uint64_t new_worker_uid() noexcept;

struct worker_abi {
  ws_deque<job> deque;
  // A policy that names its join's queue (names_join_queue: its inline join is ws's only in some states).
  // Both written by the policy on the worker's own thread, read by the tasks it runs. join_queue and
  // join_window are relaxed atomics (plain moves) for the one writer on another thread, cats naming every
  // worker's deque at an iteration's end (name_join_queue_elsewhere): a child of a group that escaped its
  // run() may run then on that worker, and as plain fields that was a data race (TSan).
  // join_queue: where a join pushes its half now, the queue a continuation would go to; nullptr while the
  // policy must see the join (an ADWS search deals it). The deque's inline windows are open only while it
  // is the worker's own deque (name_join_queue). run_first: a slot other workers fill with a job to run
  // before the worker's own (ADWS's mailbox); while it is full the deque's pop floor stays closed, and a
  // join's slow pop lets the engine join, which runs that job first, as a work-first child's end does.
  // In a line of their own, between the deque and the line that every switch reads: that line is full
  // (engine/worker.hpp), and moving the deque off the worker's start cost 2-7 instructions per spawn.
  std::atomic<ws_deque<job>*> join_queue{nullptr};
  const std::atomic<job*>* run_first = nullptr;
  // The queue the work-first two-way join's windows address (fork_join2.hpp, the inline_join path): the
  // worker's own deque, or for a policy that names its join's queue, the queue named now (its limit and floor
  // stand for the same as the deque's: other_join_window), or a queue whose windows never open while none is
  // named (shut_join_window). The windows read the thread's copy of it (t_join_window, below): one load, as
  // ws-help's help-first join's of the worker (issue #25, src/engine/README.md).
  std::atomic<ws_deque<job>*> join_window{&deque};
  // The one queue other than the deque that the policy names for its joins, if any (adws's migration queue's
  // own end, adws-ml's leaf group's): fixed at the policy's start. Its pops' window closes with the deque's
  // whenever the path leaves the inline ones (sync_inline_pops), and its floor watches run_first too.
  ws_deque<job>* other_join_window = nullptr;
  bool names_join_queue = false;  // set by the engine at start for such a policy; never changes
  // While preemption is on: the scheduling points this worker passed (a spawn or wait through the engine's
  // entry points, a task taken from its loop, a resumption). With the deque's bottom, what a tick compares
  // with the previous tick's to tell a stuck task from one that makes progress (engine/preemption.cpp).
  // Written by the worker's thread only (plain moves), read by its handler and by the chained timer's.
  std::atomic<std::uint64_t> sched_points{0};
  // This worker's number for the process's life: per_worker's key. Its address is no key: the allocator
  // gives a destroyed runtime's worker's address to the next runtime's, which then found the dead one's
  // element (an outside-user campaign). In this line, not the next: that one is full (engine/worker.hpp).
  std::uint64_t uid = new_worker_uid();
  alignas(64) task_id* current_task = nullptr;
  unsigned id = 0;
  // Written by the engine at start and whenever hooks are installed or removed (any thread), read by the
  // owner at each spawn and join: relaxed, a plain byte load.
  std::atomic<spawn_path> path{spawn_path::engine};
  // The engine's spawn and join for this worker's scheduler (engine<P>, set when the engine starts). User
  // code calls them directly, through the worker it already holds: one indirect call for what the inline
  // paths below do not cover, no call into the library first.
  void (*engine_spawn)(worker_abi&, group_state&, task_frame&) = nullptr;
  void (*engine_wait)(worker_abi&, group_state&) = nullptr;
};

// The critical windows (below) address the deque through the worker's address.
static_assert(offsetof(worker_abi, deque) == 0);

// Whether a worker on path p lets the inline pop's window run without a path test of its own: only the two
// paths whose pops use the window on the worker's deque. Not `engine` (hooks came, or a final region: the
// engine joins). A worker's path is `engine` or its policy's inline path, and a policy of the two never
// places a group's inline frame on the deque where the other's pop would take it: ws and hws spawn
// child-first, ws-help's joins push what their own pops take. A policy that names its join's queue keeps
// the pops shut (ws_deque::kJoinPopShut) in every state in which it places a child on its deque that its
// join must see (cats while profiling): a task group's inline pop would run that child in place instead of
// the engine's join (a review).
inline bool inline_pops_open_on(spawn_path p) {
  return p == spawn_path::inline_help_first || p == spawn_path::inline_join;
}
// After any write of w.path (any thread): the deque's inline pops closed exactly while inline_pops_open_on
// says no, so that the inline pop needs no test of the path (ws_deque::set_inline_pops_closed). The path is
// read after the flag's write, again until it holds still: of two writers, the one that writes the flag
// last then writes the path's last value.
inline void sync_inline_pops(worker_abi& w) {
  for (;;) {
    const spawn_path p = w.path.load();
    w.deque.set_inline_pops_closed(!inline_pops_open_on(p));
    if (w.other_join_window) w.other_join_window->set_inline_pops_closed(!inline_pops_open_on(p));
    if (w.path.load() == p) return;
  }
}

// For a policy that names its join's queue, on the worker's own thread: the queue the running task's
// two-way joins push onto now (nullptr: the engine joins them), and whether its task groups' waits may pop
// their inline child in place. The two-way join's windows address that queue (join_window; a queue whose
// windows never open while it is none), and the deque's own windows, which a task group's inline pop uses,
// are open exactly while that queue is the worker's own deque (for the pops: and they may). A task group's wait pops in place only a child
// in its inline slot, which a work-first spawn never puts on the deque; a policy that places children
// there in a state whose joins it must see says no.
inline std::uint8_t join_shut_for(const worker_abi& w, const ws_deque<job>* q, bool waits_pop_in_place) {
  if (q != &w.deque) return ws_deque<job>::kJoinPushShut | ws_deque<job>::kJoinPopShut;
  return waits_pop_in_place ? 0 : ws_deque<job>::kJoinPopShut;
}
// A queue whose windows never open: what the two-way join's windows address while the policy names no queue
// (the engine joins). Nobody pushes onto it or pops from it: its limit and floor stay as a new deque's are,
// below and above every index.
ws_deque<job>& shut_join_window();

struct fiber_abi : job {
  worker_abi* worker = nullptr;  // the worker running this fiber now
  std::uint64_t epoch = 0;       // bumped whenever the fiber is switched away from
  // Preemption (include/roost/preempt.hpp): nonzero while this fiber runs the runtime's own code, or a
  // task's roost::non_preemptible region; the timer signal's handler preempts only at zero. A fiber starts
  // in the runtime (1) and is at 0 only inside a task's body. Written by its own thread only, read by that
  // thread's signal handler: changed by preempt_off_add, one unlocked add to memory (never a locked RMW).
  std::atomic<std::uint32_t> preempt_off{1};
  // How a tick preempts this fiber's task (roost::preempt_as): 0 as the runtime's ROOST_PREEMPT says, 1 by
  // signal-yield, 2 by KLT-switching. Written and read as preempt_off is.
  std::atomic<std::uint8_t> preempt_kind{0};
  // The roost::preempt_as(off) scopes the task is inside, each one of preempt_off's raises: an inner
  // preempt_as(signal|klt) takes them back for its life, so that the innermost scope wins. Own thread only.
  std::uint32_t off_scopes = 0;
};

// Changes a fiber's preempt_off by `delta`, on its own thread. One instruction where it can be (an add to
// memory, not locked: a signal lands before or after it, and no other thread writes the count), else a
// relaxed load and store. Either way a compiler barrier on both sides (the inline assembly's memory
// clobber, or signal fences): nothing of the region it opens or closes moves across it, and on x86-64 the
// hardware keeps a thread's stores in order, so the handler sees them as the program wrote them.
// Always inline: a count lowered out of line would leave a caller in the engine's runtime text
// (critical_windows.hpp) for a return at count 0 outside it (a sanitizer build made it a call).
__attribute__((always_inline)) inline void preempt_off_add(fiber_abi& f, std::int32_t delta) {
#if defined(__x86_64__) && !defined(ROOST_TSAN)
  asm volatile("addl %1, %0" : "+m"(f.preempt_off) : "ri"(delta) : "cc", "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
  f.preempt_off.store(f.preempt_off.load(std::memory_order_relaxed) + static_cast<std::uint32_t>(delta),
                      std::memory_order_release);
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// Keeps the fiber `f` (the caller's, or nullptr outside a task) from being preempted while it lives. The
// destructor runs on the same stack, hence for the same fiber, wherever the task moved meanwhile.
struct no_preempt_scope {
  fiber_abi* f;
  // Always inline, on an exception's path too: a lowering out of line would leave a caller in the engine's
  // runtime text (critical_windows.hpp) for a return at count 0 outside it.
  __attribute__((always_inline)) explicit no_preempt_scope(fiber_abi* fb) noexcept : f(fb) {
    if (f) preempt_off_add(*f, 1);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // nothing of the region moves above the raise
  }
  __attribute__((always_inline)) ~no_preempt_scope() {
    std::atomic_signal_fence(std::memory_order_seq_cst);  // nor below the lowering
    if (f) preempt_off_add(*f, -1);
  }
  no_preempt_scope(const no_preempt_scope&) = delete;
  no_preempt_scope& operator=(const no_preempt_scope&) = delete;
};

// The engine's side: a task's body runs inside one of these, the only place where the count drops to 0.
__attribute__((always_inline)) inline void preempt_lower(fiber_abi& f) { preempt_off_add(f, -1); }
__attribute__((always_inline)) inline void preempt_raise(fiber_abi& f) { preempt_off_add(f, 1); }
// The opposite, for the engine's entry points while preemption is on: raises the count of the caller's
// fiber (never nullptr: only a task reaches them) for the scope's duration.
struct runtime_code_scope {
  fiber_abi& f;
  __attribute__((always_inline)) explicit runtime_code_scope(fiber_abi& fb) noexcept : f(fb) {
    preempt_raise(f);
  }
  __attribute__((always_inline)) ~runtime_code_scope() { preempt_lower(f); }
  runtime_code_scope(const runtime_code_scope&) = delete;
  runtime_code_scope& operator=(const runtime_code_scope&) = delete;
};
struct preemptible_body {
  fiber_abi* f;
  explicit preemptible_body(fiber_abi* fb) noexcept : f(fb) { preempt_lower(*f); }
  ~preemptible_body() { preempt_raise(*f); }
  preemptible_body(const preemptible_body&) = delete;
  preemptible_body& operator=(const preemptible_body&) = delete;
};

// The TLS model of the two thread-locals user code reads at every inline spawn and join. A program linked with
// the static archive (ROOST_LINKED_STATIC: roost's CMake target and roost.pc say so) holds them in its own
// TLS block, so a translation unit of the program itself (position-dependent or PIE, not -fPIC without
// -fPIE, which may go into a shared object) reads them local-exec: one %fs-relative load whose offset is in
// the instruction. initial-exec, which the linker relaxes to the same offset, still loads it into a register
// first, and GCC keeps that register across the join (a callee-saved one: its save and restore as well):
// issue #25, 6 instructions a task_group spawn, 1 a two-way join. Everything else, the library's own objects
// included, reads initial-exec.
#if defined(ROOST_LINKED_STATIC) && (defined(__PIE__) || !defined(__PIC__))
#define ROOST_DETAIL_USER_TLS_LOCAL_EXEC 1  // also the windows' read of t_join_window by its symbol (below)
#define ROOST_DETAIL_USER_TLS_MODEL "local-exec"
#else
#define ROOST_DETAIL_USER_TLS_MODEL "initial-exec"
#endif
// The fiber the calling task runs on, nullptr outside a roost task (set by engine::worker::become).
extern __thread fiber_abi* t_running_fiber __attribute__((tls_model(ROOST_DETAIL_USER_TLS_MODEL)));

// The fiber the calling task runs on now (see the file's head). A plain initial-exec read re-reads the
// thread's segment each time, so it stays right across a migration; a sanitizer build instead computes the
// slot's address and may keep it across one (TSan saw a wait read the old thread's slot), so there the read
// is out of line, where no address can be kept from before a switch.
fiber_abi* running_fiber_out_of_line();
inline fiber_abi* running_fiber() {
#if defined(ROOST_TSAN) || defined(ROOST_ASAN)  // GCC's and clang's ways (sanitizers.hpp)
  return running_fiber_out_of_line();
#else
  return t_running_fiber;
#endif
}

// The inline two-way join's slot (group_state, "The join's slot", task_frame.hpp): the group's balance and
// error slot, which its frame's claimer writes. Each side waits out the other's claim, which holds no call,
// no preemption point and no charge of the simulated platform (which switches threads only at a charge, so
// that there the wait never spins): a few stores. With more workers than CPUs the kernel may deschedule the
// claimer inside them, so after a while the wait yields its CPU.
void yield_for_join_claim() noexcept;  // the platform's yield of the CPU (api/task_group.cpp)
inline void wait_out_join_claim(task_frame& f, job::kind claim, job::kind seen) {
  for (unsigned spins = 0; seen == claim; ++spins) {
    if (spins < 256) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      yield_for_join_claim();
    }
    seen = f.k_acquire();  // the claimer's rename is a release
  }
}
// The claimer's stores: the balance a remote child's end adds to, the error slot its exception goes to.
inline void write_join_slot(group_state& g) {
  g.remote_balance.store(0, std::memory_order_relaxed);
  g.error.store(nullptr, std::memory_order_relaxed);
}
// The owner's side: its pop failed (the half was stolen, or the engine must join it), so before its engine
// join reads the two fields they are written, by this call or by the taker whose claim came first. No
// preemption between the claim and its release: a taker would wait for a preempted owner. Out of line and
// cold, on the slow path alone; called before the join reads anything it keeps across the call.
__attribute__((noinline, cold)) inline void settle_join_slot(group_state& g) {
  task_frame& f = *reinterpret_cast<task_frame*>(g.inline_frame);
  no_preempt_scope np(running_fiber());
  job::kind seen{};
  if (f.claim_kind(job::kind::fresh_join, job::kind::join_settling, seen)) {
    write_join_slot(g);
    f.release_claim_kind(job::kind::fresh_unnamed);  // a later taker names it as any unnamed frame
    return;
  }
  wait_out_join_claim(f, job::kind::join_taken, seen);  // a taker's, which names it fresh
}
// The taker's side, before the half runs (engine.hpp, name_unnamed, with the frame's other fields written):
// true where this call claimed the frame, wrote the two fields and named it fresh. Else the owner claimed
// it first; this returns once the owner released it, and the caller names it.
inline bool take_join_slot(task_frame& f, group_state& g) {
  job::kind seen{};
  if (f.claim_kind(job::kind::fresh_join, job::kind::join_taken, seen)) {
    write_join_slot(g);
    f.rename_kind(job::kind::fresh);
    return true;
  }
  wait_out_join_claim(f, job::kind::join_settling, seen);
  return false;
}

// The worker the calling thread serves now, for the two-way join's fast path (fork_join2.hpp); outside
// every worker, g_no_worker, whose path is always `engine`: so the join reads a path without testing for a
// null pointer first, and its engine path throws outside a task (issue #25: the fiber's null test and the
// load of its worker, 3 instructions a join). A thread serves one worker at a time and every fiber it runs
// is that worker's (worker::become), so this is fb->worker for the task running on it: the engine sets it
// with its own current worker (engine::set_current_worker, and for each sim thread). The same rules as
// t_running_fiber's: its value may be kept across a migration only where no task can move (a read is an
// %fs-relative load, never an address kept in a register), and a sanitizer build reads it out of line.
extern __thread worker_abi* t_running_worker __attribute__((tls_model(ROOST_DETAIL_USER_TLS_MODEL)));
extern worker_abi g_no_worker;
worker_abi* running_worker_out_of_line();
inline worker_abi& running_worker() {
#if defined(ROOST_TSAN) || defined(ROOST_ASAN)
  return *running_worker_out_of_line();
#else
  return *t_running_worker;
#endif
}

// The thread's copy of its worker's join_window (nullptr until the thread serves a worker: a join reaches its
// window only on a worker whose path is inline_join), so that the work-first join's windows find the queue in
// one %fs-relative load where join_window took two dependent ones, the worker's and then the field's (issue
// #25: fib-invoke under ws, adws and cab 0.95x the time). Written wherever join_window is on the worker's own
// thread (below), and in the work-first join's slow paths (join_window_to_thread): a thread that starts to
// serve a worker (engine::set_current_worker) and a worker whose queue another thread named
// (name_join_queue_elsewhere) have the window that never opens, or their own deque, until the next slow join.
// The windows' sequences read it themselves, inside the window, by its symbol (a TLS memory operand of an asm
// goto left a local label undefined in GCC 12's output).
extern __thread ws_deque<job>* t_join_window __asm__("roost_t_join_window")
    __attribute__((tls_model(ROOST_DETAIL_USER_TLS_MODEL)));
inline void name_join_queue(worker_abi& w, ws_deque<job>* q, bool waits_pop_in_place = true) {
  w.join_queue.store(q, std::memory_order_relaxed);
  w.join_window.store(q ? q : &shut_join_window(), std::memory_order_relaxed);
  if (&running_worker() == &w) t_join_window = q ? q : &shut_join_window();  // the contract: the worker's own thread
  w.deque.shut_joins_here(join_shut_for(w, q, waits_pop_in_place));
}
// The same from another thread, while the worker runs no task of a correct program (cats between iterations;
// a child of a group that escaped its run() may run then, and read or write the fields itself: they are
// atomics). The worker's thread keeps its copy (t_join_window) until its next slow join: the only caller names
// the worker's own deque, and the copy is that deque already or the window that never opens, whose joins all
// take the slow path.
inline void name_join_queue_elsewhere(worker_abi& w, ws_deque<job>* q, bool waits_pop_in_place = true) {
  ws_deque<job>* const window = q ? q : &shut_join_window();
  w.join_queue.store(q, std::memory_order_relaxed);
  w.deque.shut_joins_elsewhere(join_shut_for(w, q, waits_pop_in_place));
  w.join_window.store(window, std::memory_order_relaxed);
}
// On the worker's own thread, in the work-first join's slow paths: the thread's copy of join_window brought up
// to date (name_join_queue_elsewhere).
inline void join_window_to_thread(const worker_abi& w) { t_join_window = w.join_window.load(std::memory_order_relaxed); }

// Out of line (src/api/task_group.cpp).
[[noreturn]] void throw_outside_task(const char* call);  // usage_error
// usage_error for a spawn or wait by a task that does not own g (fb: its fiber, nullptr outside a task), or
// by one of g's own children while the owner joins g (group_state::kJoining).
[[noreturn]] void throw_not_owner(const char* call, const fiber_abi* fb, const group_state& g);
// The spawn of a foreign child of g on worker w, the caller's (src/engine/join.hpp): another task's run(), or a
// child's that its owner's join runs on the owner's stack (engine.hpp, final.cpp). src/api/task_group.cpp.
void spawn_foreign(worker_abi& w, group_state& g, task_frame& f);
// The join of a group by its owner while an exception is in flight: its children start with no exception in
// flight, and what they throw is dropped (src/api/task_group.cpp).
void join_while_unwinding(group_state& g) noexcept;
inline fiber_abi* current_fiber_or_throw(const char* call) {
  fiber_abi* f = running_fiber();
  if (!f) [[unlikely]] throw_outside_task(call);
  return f;
}
// Observation and tracing hooks: one flag, so that with neither installed a hook point costs one relaxed
// load and a branch. User code does not test it: while an observer or a simulation is installed no worker's
// path is inline (both must see every task), nor while a tracer records every task (ROOST_TRACE_DEPTH=all:
// kHookTracerEveryTask, beside kHookTracer); a tracer at a depth leaves the inline paths on, and what they
// run is part of the task that spawned it. The engine's hook points are in src/engine/observe.hpp, the
// dispatch in src/api/observer.cpp.
extern std::atomic<unsigned> g_hooks;
inline constexpr unsigned kHookObserver = 1, kHookTracer = 2, kHookSim = 4, kHookTracerEveryTask = 8;
inline constexpr unsigned kHooksSeeingEveryTask = kHookObserver | kHookSim | kHookTracerEveryTask;
// Whether an observer, a simulation or a tracer of every task is installed: every spawn must then go through the engine. seq_cst,
// as the flag's writers (src/api/final.cpp reads it after storing a worker's path).
inline bool hooks_see_every_task() {
#ifdef ROOST_NO_HOOKS
  return false;
#else
  return (g_hooks.load() & kHooksSeeingEveryTask) != 0;
#endif
}
// The hook flag's bits (kHook*), one relaxed load; 0 when built with -DROOST_HOOKS=OFF.
inline unsigned hook_bits() {
#ifdef ROOST_NO_HOOKS
  return 0;
#else
  return g_hooks.load(std::memory_order_relaxed);
#endif
}
// Built with -DROOST_HOOKS=OFF (CMake), the hooks compile out: no observer, no tracing.
inline bool hooks_installed() { return hook_bits() != 0; }

// Keeps the first exception of a group's children (any thread). Allocation failure keeps the address of
// g_exception_lost_to_oom instead, which the join reports as std::bad_alloc: never lost silently.
extern std::exception_ptr g_exception_lost_to_oom;  // a marker only, never thrown (src/api/task_group.cpp)
// The group's error word before any exception, once another task spawned into the group since its last
// join (engine/join.hpp's foreign children): a marker only, never thrown. So the owner's wait and the
// group's destructor test one word, which is null exactly when neither an exception nor a foreign child
// needs the engine's join (task_group.hpp, foreign_pending).
extern std::exception_ptr g_foreign_children;
inline bool is_exception(const std::exception_ptr* e) { return e != nullptr && e != &g_foreign_children; }
inline void record_exception(group_state& g, std::exception_ptr e) {
  std::exception_ptr* seen = g.error.load(std::memory_order_relaxed);
  if (is_exception(seen)) return;  // not the first
  std::exception_ptr* p = new (std::nothrow) std::exception_ptr(std::move(e));
  if (!p) p = &g_exception_lost_to_oom;
  // Over the null or the marker (which a foreign spawn may write meanwhile), never over an exception.
  while (!g.error.compare_exchange_weak(seen, p, std::memory_order_acq_rel, std::memory_order_relaxed)) {
    if (is_exception(seen)) {
      if (p != &g_exception_lost_to_oom) delete p;
      return;
    }
  }
}
// A foreign child is spawned into g (engine/join.hpp): marks the error word if it holds nothing yet.
inline void mark_foreign_children(group_state& g) {
  std::exception_ptr* none = nullptr;
  g.error.compare_exchange_strong(none, &g_foreign_children, std::memory_order_acq_rel, std::memory_order_relaxed);
}
[[noreturn]] void rethrow_group_error(std::exception_ptr* e);  // frees e (src/api/task_group.cpp)

// After a join: ready for reuse; rethrows the first exception a child threw.
inline void finish_join(group_state& g) {
  g.spawned = 0;
  g.local_done = 0;
  if (std::exception_ptr* e = g.error.load(std::memory_order_acquire)) [[unlikely]] {
    g.error.store(nullptr, std::memory_order_relaxed);
    if (e != &g_foreign_children) rethrow_group_error(e);
  }
}

// ---- Critical windows: the inline deque operations, which no tick may interrupt.
//
// The inline paths push onto and pop from the deque of the worker their task runs on, from user code, where
// the fiber's preempt_off is 0. A tick that suspended the task half way, after it read its worker and before
// its last store to that worker's deque, would resume it (on that worker: a preempted task never moves) after
// other tasks pushed and popped there, with the deque's old state in its registers, and finish the operation
// on a deque that changed meanwhile. So each operation is one assembly sequence, from the first load of the
// worker's state it depends on (fb.worker; or, in the _on forms, given a worker the caller read since its
// task last could move, the deque's bottom, the path or the policy's queue) to the store that commits it,
// and the sequence's address
// range goes into the section roost_critical; the handler defers a tick whose interrupted instruction lies
// in one (engine/critical_windows.cpp). That costs the operation nothing: no mark stored, no fence, the
// instructions the compiler made from the C++ before (the idea of Linux's restartable sequences, and of Go,
// which preempts asynchronously only where the interrupted instruction is known to be safe).
//
// A sequence either commits with its last instruction or changes nothing and leaves for the slow path, the
// same operation in C++ under a no_preempt_scope: a deque that must grow, a request to share, a pop that
// finds another job on top, a pop from the shared part. Each range entry is position-independent (its
// start relative to the entry, and a length); the "?" flag puts it in the section group of the function it
// describes, so the linker drops it with a discarded copy of an inline function.
//
// Without the sequences (not GCC on x86-64, or a sanitizer build, whose instrumentation must see every
// access), each inline operation is that slow path, inlined: a raise and a lowering of preempt_off, whether
// preemption is on or not.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 && !defined(ROOST_TSAN) && \
    !defined(ROOST_ASAN) && !defined(ROOST_NO_CRITICAL_WINDOWS)
#define ROOST_CRITICAL_WINDOWS 1
#endif

struct critical_range {
  std::int32_t start;    // the first instruction's address, relative to this entry's
  std::uint32_t length;  // bytes: the last one is the committing store's
};
// Adds a module's ranges to those the handler looks at (src/engine/critical_windows.cpp); idempotent.
void register_critical_ranges(const critical_range* begin, const critical_range* end) noexcept;

#ifdef ROOST_CRITICAL_WINDOWS
// The section's bounds in the module that refers to them (the linker defines both; hidden, so that an
// executable and each shared object name their own), registered once per module before main.
extern "C" const critical_range __start_roost_critical[] __attribute__((weak, visibility("hidden")));
extern "C" const critical_range __stop_roost_critical[] __attribute__((weak, visibility("hidden")));
struct critical_ranges_registrar {
  critical_ranges_registrar() noexcept { register_critical_ranges(__start_roost_critical, __stop_roost_critical); }
};
__attribute__((visibility("hidden"))) inline critical_ranges_registrar g_critical_ranges_registrar;

// Ends a sequence that starts at local label 0 and ends at local label 1.
#define ROOST_CRITICAL_RECORD                                      \
  ".pushsection roost_critical, \"a?\", @progbits\n\t"             \
  ".balign 4\n\t"                                                  \
  ".long 0b - ., 1b - 0b\n\t"                                      \
  ".popsection\n\t"
// What the deque sequences share. Each starts at label 0 with the worker the task runs on now, read by the caller
// (its deque lies at offset 0; a preempted task resumes on its worker, so a tick between the read and the sequence
// changes nothing), or with the queue it names, and the deque's bottom (the pops: the index their push took), and
// finds the slot of index %[b] at %c[slots_at](deque,%[t],8): %[t] is %[b] & kWindowMask, an immediate, and the
// slots are the deque's first array, which lies inside it; no load on the way to a slot's address (issue #25: each
// load there cost the two-way join 3-5% of its time). A deque's windows are open only while that array is its own
// (ws_deque.hpp, windows_fit). A thief's request shows in the deque's push limit (kAsked, below every index, while
// one waits: ws_deque.hpp), which the push's room test covers, and in its pop floor (kFloorClosed, above every
// index), which the pop's test of the private part covers, as it covers a path whose pops do not use the window
// (inline_pops_open_on); both leave for the slow path, which serves the request or lets the engine join. The
// policy-queue sequences test the limit's sign and the path themselves.
#define ROOST_CRITICAL_BEGIN_AT_WORKER \
  "0:\n\t"                             \
  "movq %c[bottom](%[w]), %[b]\n\t"
#define ROOST_CRITICAL_SLOT             \
  "movq %[b], %[t]\n\t"                \
  "andq %[mask], %[t]\n\t"
// The pops' sequence after the queue's address (Q: "%[w]", the worker's deque at offset 0, or "%[q]", the queue
// named; SLOT: the matching slot macro): the slot the push took, at the index it left in the group's queue_base
// (%[at]), is taken when that index lies at or above the pop floor, is the top (bottom is one above it) and the
// slot holds %[mine], the group's inline frame; the bottom lowered to that index is committed. Any other case
// leaves for the slow path: another job on top (the child was taken, or the task's worker or the queue named
// changed), a window shut (the floor stands for the private part, a request, the path, a policy's shut pops and
// its run-first slot). These are the tests of a pop from the loaded bottom (`b > floor`, slot b - 1 is ours) and
// one more, that b - 1 is the push's index, so a queue_base no push wrote (a task group whose first child was
// spawned child-first) can only send the join to its slow path. Why not the loaded bottom less one: the commit's
// value would then wait for that load, which the store buffer forwards from the last push's or pop's store to the
// bottom, so every push and pop of a recursion would form one chain of store-to-load forwards; with the index the
// push left in the caller's frame, the loads of the bottom only decide branches, which the CPU predicts, and a
// pop's store no longer waits for the pushes and pops of the half that ran meanwhile (issue #25: fib-invoke under
// ws-help took 0.85x the time, ws 0.94x, task_group fib under ws-help 0.97x, Zen 4; src/engine/README.md, "The
// pop's chain through the bottom").
#define ROOST_CRITICAL_POP_PUSHED(Q, SLOT)            \
  ROOST_CRITICAL_POP_TO_SLOT(Q, SLOT)                 \
  "cmpq %[mine], %c[slots_at](" Q ",%[t],8)\n\t"      \
  ROOST_CRITICAL_POP_COMMIT(Q)
// The same pop, handing back in %[taken] the job it found in the slot (the frame, where the pop succeeds).
#define ROOST_CRITICAL_POP_PUSHED_TAKING(Q, SLOT)     \
  ROOST_CRITICAL_POP_TO_SLOT(Q, SLOT)                 \
  "movq %c[slots_at](" Q ",%[t],8), %[taken]\n\t"     \
  "cmpq %[mine], %[taken]\n\t"                        \
  ROOST_CRITICAL_POP_COMMIT(Q)
// Their shared parts: the index's tests, up to the slot's index in %[t]; after the slot's compare, the commit.
#define ROOST_CRITICAL_POP_TO_SLOT(Q, SLOT)           \
  "movq %[at], %[b]\n\t"                              \
  "cmpq %c[floor](" Q "), %[b]\n\t"                   \
  "jl %l[slow]\n\t"                                   \
  "leaq 1(%[b]), %[t]\n\t"                            \
  "cmpq %c[bottom](" Q "), %[t]\n\t"                  \
  "jne %l[slow]\n\t"                                  \
  SLOT
#define ROOST_CRITICAL_POP_COMMIT(Q)                  \
  "jne %l[slow]\n\t"                                  \
  "movq %[b], %c[bottom](" Q ")\n" /* commit */        \
  "1:\n\t" ROOST_CRITICAL_RECORD
#define ROOST_CRITICAL_MINE(g) [mine] "r"(static_cast<job*>(reinterpret_cast<task_frame*>((g).inline_frame)))
#define ROOST_CRITICAL_DEQUE_FIELDS(L) \
  [bottom] "i"(L.bottom), [mask] "i"(ws_deque<job>::kWindowMask), [slots_at] "i"(L.window_slots)
#endif

// Help-first spawn of the group's first child, built in g.inline_frame, onto the deque of the worker the
// owner's fiber runs on (the engine's join pops the group's children back from there). Only on a worker
// whose path is inline_help_first or inline_join (the caller checks), so only while no observer or tracer
// is installed: then nobody reads task identities, so the child's id and hint are not even written
// (job::kind::fresh_unnamed: the engine names it, a child of an unrecorded parent, if it ever runs it,
// after a steal or in its own join) and the worker's current task is not switched to it, which is most of
// what a spawn and join would cost otherwise. With hooks installed, the engine spawns and joins it.
__attribute__((always_inline)) inline void push_first_child_in_scope(group_state& g, fiber_abi& fb, task_frame& f) {
  no_preempt_scope np(&fb);
  ws_deque<job>& q = fb.worker->deque;
  g.spawned = 1;
  g.base_epoch = fb.epoch;
  const std::int64_t b = q.bottom_index();
  g.queue_base = b;
  q.push_at(b, &f);  // a private push needs no wake-up: only sharing does (ws_deque.hpp)
}
// A push that must grow the deque may throw std::bad_alloc: the child was not spawned, so the group counts
// none (its join or destructor would wait for it for ever) and its closure, which only this frame holds, is
// destroyed here (the two-way join's is a reference: nothing). No cost while nothing throws.
ROOST_DETAIL_SPAWN_INLINE inline void push_first_child_or_undo(group_state& g, fiber_abi& fb, task_frame& f) {
  try {
    push_first_child_in_scope(g, fb, f);
  } catch (...) {
    g.spawned = 0;
    f.ops->destroy(&f);
    throw;
  }
}
__attribute__((noinline, cold)) inline void push_first_child_slow(group_state& g, fiber_abi& fb, task_frame& f) {
  push_first_child_or_undo(g, fb, f);
}
#ifdef ROOST_CRITICAL_WINDOWS
// push_at's fast path; BASE writes the group's base inside (a fiber's epoch moves when it is suspended, and
// the index is the worker's), or is empty.
#define ROOST_CRITICAL_PUSH(BEGIN, BASE)                       \
  BEGIN                                                        \
  "cmpq %c[limit](%[w]), %[b]\n\t"                              \
  "jge %l[slow]\n\t" /* no room without growing, or a request */ \
  BASE                                                         \
  ROOST_CRITICAL_SLOT                                          \
  "movq %[f], %c[slots_at](%[w],%[t],8)\n\t"                   \
  "leaq 1(%[b]), %[t]\n\t"                                     \
  "movq %[t], %c[bottom](%[w])\n" /* commit */                 \
  "1:\n\t" ROOST_CRITICAL_RECORD
#define ROOST_CRITICAL_PUSH_BASE        \
  "movq %[epoch], %[t]\n\t"            \
  "movq %[t], %[base_epoch]\n\t"       \
  "movq %[b], %[queue_base]\n\t"
#endif
// `w`: the worker the calling thread serves (running_worker()), read by the caller, which ran no code since
// that could have moved its task (the closure's constructor is user code: the caller reads w after it). The
// thread's worker is one load from thread-local storage, where fb->worker is two dependent ones: 3 instructions
// a task_group spawn fewer under ws-help (108 -> 105), the time unchanged (issue #25).
ROOST_DETAIL_SPAWN_INLINE inline void push_first_child(group_state& g, fiber_abi& fb, worker_abi& w, task_frame& f) {
#ifdef ROOST_CRITICAL_WINDOWS
  constexpr auto L = ws_deque<job>::layout();
  std::int64_t b, t;
  g.spawned = 1;  // the group's: nothing of the worker's
  asm volatile goto(ROOST_CRITICAL_PUSH(ROOST_CRITICAL_BEGIN_AT_WORKER, ROOST_CRITICAL_PUSH_BASE)
                    : [b] "=&r"(b), [t] "=&r"(t), [base_epoch] "=m"(g.base_epoch), [queue_base] "=m"(g.queue_base)
                    : [w] "r"(&w), [epoch] "m"(fb.epoch), [f] "r"(static_cast<job*>(&f)), [limit] "i"(L.push_limit),
                      ROOST_CRITICAL_DEQUE_FIELDS(L)
                    : "cc", "memory"
                    : slow);
  return;
slow:
  push_first_child_slow(g, fb, f);
#else
  (void)w;
  push_first_child_or_undo(g, fb, f);
#endif
}

#ifdef ROOST_CRITICAL_WINDOWS
// The work-first join's pop where its window found the floor closed: the group's inline frame back off the
// queue named if it lies on top there, true; false where the C++ path must decide (the path is no longer
// inline_join, a job waits in the run-first slot, the policy names no queue, nothing private, a request,
// another job on top), having changed nothing. The queue's split and push limit stand for its private part
// and its requests. For a floor kept closed on purpose (cats shuts its deque's pops while profiling, since a
// task group's wait must not run a child in place then, and adws and adws-ml while the worker is behind the
// iteration): the two-way join's own frame does not care about it, so each of its pops comes here (under
// cats on fib-invoke at two workers, the whole run). Its own window: no tick between the queue's read and
// the commit.
ROOST_DETAIL_SPAWN_INLINE inline bool pop_from_named_queue_on(worker_abi& w, group_state& g) {
  constexpr auto L = ws_deque<job>::layout();
  ws_deque<job>* q;
  std::int64_t b, t;
  asm volatile goto(
      "0:\n\t"
      "cmpb %[join_path], %c[path](%[w])\n\t"
      "jne %l[slow]\n\t"  // hooks came, or a final region: the engine joins
      "movq %c[run_first](%[w]), %[t]\n\t"
      "cmpq $0, (%[t])\n\t"
      "jne %l[slow]\n\t"  // a job waits to run first: the engine joins
      "movq %c[queue](%[w]), %[q]\n\t"
      "testq %[q], %[q]\n\t"
      "jz %l[slow]\n\t"
      "movq %c[bottom](%[q]), %[b]\n\t"
      "cmpq %c[split_seen](%[q]), %[b]\n\t"
      "jle %l[slow]\n\t"  // nothing private
      "cmpq $0, %c[limit](%[q])\n\t"
      "jl %l[slow]\n\t"  // a thief's request waits: the deque's pop serves it
      "subq $1, %[b]\n\t"
      "movq %[b], %[t]\n\t"
      "andq %[mask], %[t]\n\t"
      "cmpq %[mine], %c[slots_at](%[q],%[t],8)\n\t"
      "jne %l[slow]\n\t"  // another job on top
      "movq %[b], %c[bottom](%[q])\n"  // commit
      "1:\n\t" ROOST_CRITICAL_RECORD
      : [q] "=&r"(q), [b] "=&r"(b), [t] "=&r"(t)
      : [w] "r"(&w), ROOST_CRITICAL_MINE(g), [join_path] "i"(static_cast<int>(spawn_path::inline_join)),
        [path] "i"(offsetof(worker_abi, path)), [run_first] "i"(offsetof(worker_abi, run_first)),
        [queue] "i"(offsetof(worker_abi, join_queue)), [split_seen] "i"(L.split_seen), [limit] "i"(L.push_limit),
        ROOST_CRITICAL_DEQUE_FIELDS(L)
      : "cc", "memory"
      : slow);
  return true;
slow:
  return false;
}
#endif

// A worker whose policy names its join's queue (names_join_queue) comes here where the join's window on it
// needs the C++ path (room, a request) or it names none: f goes onto the queue named now, and true;
// false when the policy names none (an ADWS search deals the join): nothing pushed, the engine joins. The
// queue's read and the push under one no_preempt_scope: a preempted task's worker runs other tasks
// meanwhile, which may make the policy name another queue. The queue may be one the engine's join does not
// pop its group's children back from (ADWS's migration queue): the join then only waits for this half,
// which the worker's own pops or a thief run meanwhile (group_state::for_engine_join marks its group plain).
inline bool push_onto_named_join_queue(group_state& g, fiber_abi& fb, task_frame& f) {
  no_preempt_scope np(&fb);
  ws_deque<job>* q = fb.worker->join_queue.load(std::memory_order_relaxed);
  if (!q) return false;
  g.queue_base = q->bottom_index();  // the index the push takes, for the inline pop (as the windows' push)
  q->push(&f);  // a private push needs no wake-up: only sharing does (ws_deque.hpp)
  return true;
}
// The push's C++ form: its window's slow path, and the path itself where there are no windows. Whether the
// child was pushed: always, but where the policy names no queue.
ROOST_DETAIL_SPAWN_INLINE inline bool push_first_child_here(group_state& g, task_frame& f) {
  fiber_abi* fb = running_fiber();
  if (fb->worker->names_join_queue) return push_onto_named_join_queue(g, *fb, f);
  push_first_child_or_undo(g, *fb, f);
  return true;
}
// The two-way join's push where its window sent it to the C++ path, out of line.
// Brings the thread's copy of the join's queue up to date first (join_window_to_thread).
__attribute__((noinline, cold)) inline bool push_first_child_slow_here(group_state& g, task_frame& f) {
  join_window_to_thread(running_worker());
  return push_first_child_here(g, f);
}
#ifdef ROOST_CRITICAL_WINDOWS
// The work-first join's sequences start at the load of the queue its windows address (the thread's copy of
// worker_abi::join_window, t_join_window, read by its symbol), inside the window: a preempted task's worker
// runs other tasks meanwhile, which may make the policy name another queue. The rest is the deque's own
// sequence on that queue, addressed through %[q].
#ifdef ROOST_DETAIL_USER_TLS_LOCAL_EXEC
#define ROOST_CRITICAL_LOAD_JOIN_WINDOW "movq %%fs:roost_t_join_window@tpoff, %[q]\n\t"
#else
#define ROOST_CRITICAL_LOAD_JOIN_WINDOW          \
  "movq roost_t_join_window@gottpoff(%%rip), %[q]\n\t" \
  "movq %%fs:(%[q]), %[q]\n\t"
#endif
#define ROOST_CRITICAL_BEGIN_AT_JOIN_WINDOW \
  "0:\n\t"                                  \
  ROOST_CRITICAL_LOAD_JOIN_WINDOW           \
  "movq %c[bottom](%[q]), %[b]\n\t"
#define ROOST_CRITICAL_SLOT_OF_Q            \
  "movq %[b], %[t]\n\t"                    \
  "andq %[mask], %[t]\n\t"
#endif
// The two-way join's push (fork_join2.hpp), for a caller that read `w`, the worker fb runs on, and ran no
// code since that could have moved its task: only a join that waits moves a task (a preempted one resumes
// on its worker, engine.hpp), and user code could call one (a closure's copy constructor); the join builds
// its frame around a reference, no user code. One load fewer a spawn (#25). The group's count and base
// epoch are not written: the join pushes one child and pops that one itself; should the engine join it
// after all, the child is not on this deque any more, and the join writes a group without a base first
// (group_state::for_engine_join). The index the child took goes into queue_base, for the pop
// (ROOST_CRITICAL_POP_PUSHED).
// `w`: the worker the caller read, which a preempted task resumes on.
// The push's window alone: false, having pushed nothing, where its slow path must run. For the two-way join,
// which then starts over out of line (fork_join2.hpp, join_slow), so that no value of the caller is live
// across the slow path's call. Without windows, the whole push: false then only where the policy names no
// queue, which the join's second try finds again. P: the join's path; the work-first join's (inline_join)
// pushes onto the queue worker_abi::join_window names, the help-first join's onto the worker's deque.
template <spawn_path P>
ROOST_DETAIL_SPAWN_INLINE inline bool push_first_child_window_on(worker_abi& w, group_state& g, task_frame& f) {
#ifdef ROOST_CRITICAL_WINDOWS
  constexpr auto L = ws_deque<job>::layout();
  std::int64_t b, t;
  if constexpr (P == spawn_path::inline_join) {
    (void)w;  // the queue is the thread's copy of w's join window (t_join_window)
    ws_deque<job>* q;
    asm volatile goto(
        ROOST_CRITICAL_BEGIN_AT_JOIN_WINDOW
        "cmpq %c[limit](%[q]), %[b]\n\t"
        "jge %l[slow]\n\t"  // no room without growing, or a request, or shut
        "movq %[b], %[queue_base]\n\t"
        ROOST_CRITICAL_SLOT_OF_Q
        "movq %[f], %c[slots_at](%[q],%[t],8)\n\t"
        "leaq 1(%[b]), %[t]\n\t"
        "movq %[t], %c[bottom](%[q])\n"  // commit
        "1:\n\t" ROOST_CRITICAL_RECORD
        : [q] "=&r"(q), [b] "=&r"(b), [t] "=&r"(t), [queue_base] "=m"(g.queue_base)
        : [f] "r"(static_cast<job*>(&f)), [limit] "i"(L.push_limit), ROOST_CRITICAL_DEQUE_FIELDS(L)
        : "cc", "memory"
        : slow);
  } else {
    asm volatile goto(ROOST_CRITICAL_PUSH(ROOST_CRITICAL_BEGIN_AT_WORKER, "movq %[b], %[queue_base]\n\t")
                      : [b] "=&r"(b), [t] "=&r"(t), [queue_base] "=m"(g.queue_base)
                      : [w] "r"(&w), [f] "r"(static_cast<job*>(&f)), [limit] "i"(L.push_limit),
                        ROOST_CRITICAL_DEQUE_FIELDS(L)
                      : "cc", "memory"
                      : slow);
  }
  return true;
slow:
  return false;
#else
  (void)w;
  return push_first_child_here(g, f);
#endif
}
template <spawn_path P>
ROOST_DETAIL_SPAWN_INLINE inline bool push_first_child_on(worker_abi& w, group_state& g, task_frame& f) {
#ifdef ROOST_CRITICAL_WINDOWS
  if (push_first_child_window_on<P>(w, g, f)) [[likely]] return true;
  return push_first_child_slow_here(g, f);
#else
  (void)w;
  return push_first_child_here(g, f);
#endif
}

// Pops the group's only child, the frame in its inline slot, off q (a queue of the worker its owner runs on
// now) if it lies on top there, unstarted and ours; otherwise puts back what it popped and returns false.
// Without a window, under the caller's no_preempt_scope.
ROOST_DETAIL_SPAWN_INLINE inline bool pop_first_child_from(group_state& g, ws_deque<job>& q) {
  job* j = q.pop();
  if (j != reinterpret_cast<task_frame*>(g.inline_frame)) [[unlikely]] {
    if (j) q.push(j);  // not ours: leave it as it was
    return false;
  }
  return true;
}
// For a worker whose policy names its join's queue: off the queue named now, unless a job waits to run
// first (adws's mailbox: the engine joins, and runs that job first) or none is named (the engine joins).
inline bool pop_from_named_join_queue(group_state& g, worker_abi& w) {
  if (w.run_first && w.run_first->load(std::memory_order_relaxed) != nullptr) [[unlikely]] return false;
  ws_deque<job>* q = w.join_queue.load(std::memory_order_relaxed);
  return q && pop_first_child_from(g, *q);
}
// After a slow pop by a worker whose policy names its join's queue, on its thread and out of a tick's reach:
// the floor of the queue named (the work-first join's window) back to its private part's where the reason it
// was closed went (a job run first, the path back to inline, a request served); a shut floor only, and not
// the deque's while the policy shuts its pops on purpose (cats while profiling; adws and adws-ml while the
// worker is behind the iteration), which a re-arm would close again: no seq-cst stores for nothing at every
// join.
inline bool named_floor_to_rearm(const worker_abi& w, const ws_deque<job>* q) {
  return q && q->pop_window_shut() && !(q == &w.deque && (w.deque.joins_shut() & ws_deque<job>::kJoinPopShut));
}
inline void rearm_named_floor(worker_abi& w) {
  ws_deque<job>* q = w.join_queue.load(std::memory_order_relaxed);  // read once: the test and the re-arm agree
  if (named_floor_to_rearm(w, q)) q->rearm_pop_floor();
}
// `expect`: the path the caller's inline join belongs to. Another one means hooks were installed since (every
// path is then `engine`): the child must be observed as a task, so the engine joins it; the pop says false.
template <spawn_path expect>
__attribute__((always_inline)) inline bool pop_first_child_in_scope(group_state& g, fiber_abi& fb) {
  no_preempt_scope np(&fb);
  worker_abi& w = *fb.worker;
  if (w.path.load(std::memory_order_relaxed) != expect) return false;
  if (w.names_join_queue) return pop_from_named_join_queue(g, w);
  return pop_first_child_from(g, w.deque);
}
// The inline pop's other path. While the worker's path is still `expect`, its floor goes back to the private
// part's afterwards: it may have been closed (inline pops closed and opened again since, a job run first,
// a policy's pops opened again: nothing else reopens it) or left high by the pop (ws_deque.hpp, pop_floor_).
template <spawn_path expect>
__attribute__((noinline, cold)) bool pop_first_child_slow(group_state& g, fiber_abi& fb) {
  no_preempt_scope np(&fb);
  worker_abi& w = *fb.worker;
  if (w.path.load(std::memory_order_relaxed) != expect) return false;
  if (!w.names_join_queue) {
    const bool mine = pop_first_child_from(g, w.deque);
    w.deque.rearm_pop_floor();
    return mine;
  }
  const bool mine = pop_from_named_join_queue(g, w);
  rearm_named_floor(w);
  return mine;
}
// The two-way join's pop where its window sent it to the slow path, out of line: for the work-first join, the
// queue named by its own tests first where there are windows (pop_from_named_queue_on), then the C++ pop,
// each re-arming that queue's floor where the reason it was shut went.
template <spawn_path expect>
__attribute__((noinline, cold)) bool pop_first_child_slow_here(group_state& g) {
  fiber_abi* fb = running_fiber();
  join_window_to_thread(*fb->worker);  // as push_first_child_slow_here
#ifdef ROOST_CRITICAL_WINDOWS
  if constexpr (expect == spawn_path::inline_join)
    if (worker_abi& w = *fb->worker; w.names_join_queue && w.run_first && pop_from_named_queue_on(w, g)) {
      if (named_floor_to_rearm(w, w.join_queue.load(std::memory_order_relaxed))) [[unlikely]] {
        no_preempt_scope np(fb);
        rearm_named_floor(w);  // tested again: a tick before the scope may have let other tasks run here
      }
      return true;
    }
#endif
  return pop_first_child_slow<expect>(g, *fb);
}
// Pops the group's inline frame back (the two-way join's, fork_join2.hpp; a task group's first child goes
// through the same pop in pop_group_first_child, below) off the deque of `w`, the worker the calling thread
// serves now (running_worker()), read by the caller after the other half ran, if that worker's path is still
// `expect`: a task that moved meanwhile reads its new worker, and from the read on it cannot move (a preempted
// task resumes on its worker), so the sequence may start at the load of the push's index, or of the queue the
// work-first join's window names, as push_first_child_on's starts at the bottom's. It tests the
// deque's pop floor, which is closed unless the path is one of the two whose pops use the window
// (sync_inline_pops), and the slow path tests the path itself; a worker on the other of the two never has
// the frame on top (inline_pops_open_on). The work-first join's pop addresses the queue worker_abi::join_window
// names now, whose floor stands for what the deque's does (name_join_queue, other_join_window).
template <spawn_path expect>
ROOST_DETAIL_SPAWN_INLINE inline bool pop_first_child_on(worker_abi& w, group_state& g) {
#ifdef ROOST_CRITICAL_WINDOWS
  constexpr auto L = ws_deque<job>::layout();
  std::int64_t b, t;
  if constexpr (expect == spawn_path::inline_join) {
    (void)w;  // as push_first_child_window_on's
    ws_deque<job>* q;
    asm volatile goto(
        "0:\n\t"
        ROOST_CRITICAL_LOAD_JOIN_WINDOW
        ROOST_CRITICAL_POP_PUSHED("%[q]", ROOST_CRITICAL_SLOT_OF_Q)
        : [q] "=&r"(q), [b] "=&r"(b), [t] "=&r"(t)
        : ROOST_CRITICAL_MINE(g), [at] "m"(g.queue_base), [floor] "i"(L.pop_floor), ROOST_CRITICAL_DEQUE_FIELDS(L)
        : "cc", "memory"
        : slow);
  } else {
    asm volatile goto(
        "0:\n\t"
        ROOST_CRITICAL_POP_PUSHED("%[w]", ROOST_CRITICAL_SLOT)
        : [b] "=&r"(b), [t] "=&r"(t)
        : [w] "r"(&w), ROOST_CRITICAL_MINE(g), [at] "m"(g.queue_base),
          [floor] "i"(L.pop_floor), ROOST_CRITICAL_DEQUE_FIELDS(L)
        : "cc", "memory"
        : slow);
  }
  return true;
slow:
  return pop_first_child_slow_here<expect>(g);
#else
  (void)w;
  return pop_first_child_in_scope<expect>(g, *running_fiber());
#endif
}

// A task group's first child popped back for its join (try_join_first_child): pop_first_child_on's help-first
// pop, which hands back the frame it took from the slot, or null where the engine must join. The join calls the
// frame through that value, which the pop loaded (issue #25). Through the frame's own address, the value the
// push stored in the slot, GCC kept that address in a callee-saved register across the other half's call, and
// every call of a recursion then saved and restored the register at its entry, its leaves included. The slow
// path hands the frame back from a call for the same reason. tests/split_check counts the registers.
__attribute__((noinline, cold)) inline task_frame* pop_group_first_child_slow(group_state& g) {
  if (!pop_first_child_slow_here<spawn_path::inline_help_first>(g)) return nullptr;
  return reinterpret_cast<task_frame*>(g.inline_frame);
}
ROOST_DETAIL_SPAWN_INLINE inline task_frame* pop_group_first_child(worker_abi& w, group_state& g) {
#ifdef ROOST_CRITICAL_WINDOWS
  constexpr auto L = ws_deque<job>::layout();
  std::int64_t b, t;
  job* taken;
  asm volatile goto(
      "0:\n\t"
      ROOST_CRITICAL_POP_PUSHED_TAKING("%[w]", ROOST_CRITICAL_SLOT)
      : [b] "=&r"(b), [t] "=&r"(t), [taken] "=&r"(taken)
      : [w] "r"(&w), ROOST_CRITICAL_MINE(g), [at] "m"(g.queue_base),
        [floor] "i"(L.pop_floor), ROOST_CRITICAL_DEQUE_FIELDS(L)
      : "cc", "memory"
      : slow);
  if (taken == nullptr) __builtin_unreachable();  // it is the frame, which the caller then need not test
  return static_cast<task_frame*>(taken);
slow:
  return pop_group_first_child_slow(g);
#else
  (void)w;
  if (!pop_first_child_in_scope<spawn_path::inline_help_first>(g, *running_fiber())) return nullptr;
  return reinterpret_cast<task_frame*>(g.inline_frame);
#endif
}

// Join of a group whose only child is the unstolen inline frame: pop it back and run it here. Returns
// false (having changed nothing) when that is not the case, or when the worker's path is no longer inline
// (hooks were installed since: the child must then be observed as a task); the engine's join takes over.
//
// Why popping and comparing is enough, without the base checks of the engine's join: the frame's address
// is the group's, so the job on top of the deque of the worker the owner runs on now is this child exactly
// when the child is still unstarted and owned by this worker (a frame is in at most one deque, and nested
// groups joined before we got here, so nothing of theirs lies above it). Anything else means it was
// stolen, or the owner moved; the job is put back as it was and the engine decides.
ROOST_DETAIL_SPAWN_INLINE inline bool try_join_first_child(group_state& g) {
  // The caller is the owner (task_group::wait checked): anyone else would pop the owner's deque from
  // another thread.
  // Off the deque of the thread's worker, the owner's fiber's (one load fewer than g.owner_fiber->worker, as in
  // push_first_child).
  task_frame* f = pop_group_first_child(running_worker(), g);
  if (!f) [[unlikely]] return false;
  // The child is the group's only one and it is ours now: nobody else can record an exception in the group
  // or be waited for, so the join is complete once it returns, and an exception it throws leaves wait()
  // directly, as the join's rethrow would have (run_in_place destroys the closure either way). The group is
  // reset after the call, not before: the compiler then knows it is reset when the destructor tests it.
  // The child runs on the owner's fiber: marked as joining, the group tells its run() and wait() from the
  // owner's (the owner is inside this call until the child returns).
  g.spawned = group_state::kJoining | 1;
  try {
    f->ops->run_in_place(f);
  } catch (...) {
    g.spawned = 0;  // the destructor, run by the unwinding, must not wait for this child again
    // Siblings the child added before it threw (foreign children, src/engine/join.hpp) are joined before
    // its exception leaves wait(): the caller's data after the group may be gone by the destructor (a
    // review). Their own exceptions are dropped, as any after the first.
    if (g.error.load(std::memory_order_relaxed) != nullptr) [[unlikely]] join_while_unwinding(g);
    throw;
  }
  g.spawned = 0;  // local_done is 0: ready for reuse
  return true;
}

}  // namespace roost::detail

#include "roost/detail/min_max_back.hpp"
