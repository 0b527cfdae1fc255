#include "engine/engine_base.hpp"
#include "platform/fork_hold.hpp"
#include "platform/say_once.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <system_error>

#include "engine/klt.hpp"
#include "engine/observe.hpp"
#include "engine/switch_msg.hpp"
#include "platform/sim_platform.hpp"
#include "ult/stack.hpp"

namespace roost::engine {

thread_local worker* t_current_worker = nullptr;

__attribute__((noinline)) worker* current_worker() { return t_current_worker; }
// With the ABI's copies for the two-way join (abi.hpp: g_no_worker while the thread serves none, and its
// join window).
__attribute__((noinline)) void set_current_worker(worker* w) {
  t_current_worker = w;
  detail::t_running_worker = w ? w : &detail::g_no_worker;
  // Not w->join_window, which another thread may be writing now (cats names every worker's deque between
  // iterations, name_join_queue_elsewhere): the window that never opens, whose first join's slow path copies
  // the worker's (abi.hpp, join_window_to_thread) inside a task, where no such write runs in a correct
  // program (a child of an escaped group may meet one: the fields are atomics, either value is a queue of
  // the worker's own or none).
  detail::t_join_window = &detail::shut_join_window();
}

// Simulated, every worker is a sim thread on the one OS thread: each keeps its own copy of these two.
platform::sim_platform::engine_tls sim_thread_locals() {
  platform::sim_platform::engine_tls t;
  t.save = [](platform::sim_platform::thread_locals& tl) {
    tl.running_fiber = detail::t_running_fiber;
    tl.current_worker = t_current_worker;
    tl.join_window = detail::t_join_window;
  };
  t.load = [](const platform::sim_platform::thread_locals& tl) {
    detail::t_running_fiber = static_cast<detail::fiber_abi*>(tl.running_fiber);
    // The worker's exception state is that of the OS thread that drives the simulation now: a runtime run from
    // several threads in turn (or destroyed on another than its last run's) is driven by each of them, and the
    // pointer its worker took when it started named the first one's (thread_main), freed once that thread
    // ended: exceptions in flight were mixed up ("terminate called without an active exception") and switches
    // wrote a dead thread's memory (an outside-user campaign).
    if (auto* w = static_cast<worker*>(tl.current_worker)) w->eh = ult::thread_eh_state();
    set_current_worker(static_cast<worker*>(tl.current_worker));
    // The join window's copy as the sim thread left it (set_current_worker would give it the never-open one,
    // and its next join a slow path: at every switch of sim threads).
    if (tl.join_window) detail::t_join_window = static_cast<detail::ws_deque<detail::job>*>(tl.join_window);
  };
  t.running_context = []() -> const ult::context* {
    worker* w = t_current_worker;
    if (!w) return nullptr;
    return w->current_fiber ? &w->current_fiber->ctx : &w->thread_ctx;
  };
  return t;
}

engine_base::engine_base(const resolved_options& cfg, std::shared_ptr<const topo::topology> tp,
                         topo::placement pl)
    : cfg_(cfg), topo_(std::move(tp)), place_(std::move(pl)) {
  workers_.reserve(cfg_.workers);
  for (unsigned i = 0; i < cfg_.workers; ++i) {
    auto w = std::make_unique<worker>();
    w->id = i;
    w->pu = place_.pu_of_worker[i];
    w->os_cpu = place_.cpu_of_worker[i];
    w->eng = this;
    w->rng_state = 0x9e3779b97f4a7c15ull * (i + 1) | 1;
    w->fibers.attach(&spare_fibers_);
    workers_.push_back(std::move(w));
  }
}

namespace {
// Each pool's bound on the fibers it keeps when it trims (fiber.hpp, stacks_to_keep).
void keep_stacks_within(std::size_t mapping_limit, fiber_overflow& spares,
                        const std::vector<std::unique_ptr<worker>>& workers) {
  const stacks_kept k = stacks_to_keep(mapping_limit, workers.size());
  spares.keep(k.spares);
  for (const auto& w : workers) w->fibers.keep_free_stacks(k.free_stacks_each);
}

// The started engines, for refresh_spawn_paths: a hook installed while a runtime runs must take its workers
// off the inline path. Touched at start, stop and hook changes only.
// Made on first use and never destroyed: a runtime at namespace scope is destroyed after this file's
// statics (an outside-user campaign: a simulated global runtime crashed at exit).
struct started_engines {
  std::mutex mu;
  std::vector<engine_base*> list;
};
started_engines& started() {
  static started_engines* s = new started_engines;
  return *s;
}
std::mutex& started_mutex() { return started().mu; }
// Held across fork() (platform/fork_hold.hpp): a child forked while another thread started or stopped a
// runtime hung making a runtime of its own.
__attribute__((constructor)) void watch_forks_for_started() { platform::hold_across_forks_of<&started_mutex>(); }
// What the locks held across fork() turn off and on (platform/fork_hold.hpp): the running task's preemption.
void add_to_running_tasks_preemption(int delta) {
  if (detail::fiber_abi* f = detail::t_running_fiber) detail::preempt_off_add(*f, delta);
}
__attribute__((constructor)) void give_forks_the_tasks_preemption() {
  platform::g_task_preemption.store(&add_to_running_tasks_preemption, std::memory_order_release);
}

void unregister_started(engine_base* e) {
  std::lock_guard<std::mutex> lock(started().mu);
  started().list.erase(std::remove(started().list.begin(), started().list.end(), e), started().list.end());
}
}  // namespace

// Also here, not only in stop(): a start() that registered and then failed to start a thread is never
// stopped, and the registry must not keep a dangling engine.
engine_base::~engine_base() {
  unregister_started(this);
  set_touch_sink(nullptr);  // a runtime whose start failed leaves its consumers counted otherwise
}

touch_consumer* engine_base::set_touch_sink(touch_consumer* c) {
  touch_consumer* prev = touch_sink_.exchange(c, std::memory_order_acq_rel);
  if ((prev == nullptr) != (c == nullptr)) detail::count_runtime_listener(c != nullptr);
  return prev;
}

void engine_base::set_spawn_paths() {
  // A tracer at a depth keeps the inline paths: what they run is part of the spawning task's span (abi.hpp);
  // one that records every task (ROOST_TRACE_DEPTH=all) does not.
  const bool every_task = detail::hooks_see_every_task();
  for (auto& w : workers_) {
    // A compare-exchange, not a store: a worker entering a final region (src/api/final.cpp) sets in_final,
    // then the path to final_region; a store computed from an in_final read before that could undo its path.
    // A worker in a region keeps its path: its leaving computes it (abi.hpp, spawn_path).
    detail::spawn_path seen = w->path.load();
    while (seen != detail::spawn_path::final_region &&
           !w->path.compare_exchange_weak(
               seen, every_task || w->in_final.load() ? detail::spawn_path::engine : w->inline_path)) {
    }
    detail::sync_inline_pops(*w);  // an inline pop joined before the hook came leaves for the engine's join
  }
}

void refresh_spawn_paths() {
  std::lock_guard<std::mutex> lock(started().mu);
  for (engine_base* e : started().list) e->set_spawn_paths();
}

void engine_base::start() {
  ult::install_overflow_handler(cfg_.stack_size);
  // Before any worker exists: the handler must be there before the first timer ticks.
  if (cfg_.preempt) {
    std::vector<worker*> ws;
    for (auto& w : workers_) ws.push_back(w.get());
    preempt_ = std::make_unique<preemption_timers>(cfg_.preempt_interval_ns, cfg_.preempt_timer, ws,
                                                   cfg_.preempt_source + "='" + (cfg_.preempt_klt ? "klt" : "signal") + "'");
    // Spares for the tasks preempted by KLT-switching, by default or by their own choice (roost::preempt_as):
    // under ROOST_PREEMPT=klt one per worker from the start, so that the first tick finds one; more as ticks
    // ask.
    klts_ = std::make_unique<klt_creator>(this, &klt_spare_main, ws);
    if (cfg_.preempt_klt)
      for (worker* w : ws) klts_->request(*w);
  }
  keep_stacks_within(ult::mapping_limit(), spare_fibers_, workers_);
  for (auto& w : workers_) {
    set_entry_points(*w);
    w->fibers.configure(cfg_.stack_size, fiber_entry(), cfg_.preempt, &w->current_fiber, this);
    // Sharing tasks is what makes them stealable: that is where sleepers are woken (ws_deque.hpp).
    w->deque.on_share(&idle_state::notify_on_share, &idle_);
    // A job in the policy's run-first slot keeps the inline pops shut (abi.hpp, pop_from_named_join_queue).
    w->deque.watch_run_first(w->run_first);
  }
  {
    // Registered before reading the flag: a hook change after this either comes before the read or
    // refreshes this engine too.
    std::lock_guard<std::mutex> lock(started().mu);
    started().list.push_back(this);
    set_spawn_paths();
  }
  // Worker 0 is the thread that calls run (run_root); every other worker has a thread of its own.
  threads_.reserve(workers_.size());
  // Each worker's first fiber (the stack its scheduling loop runs on) is made here, where a failure to map
  // it is this call's error: made by the worker's own thread, the exception left the thread and ended the
  // process (64 workers under a 300 MiB address-space cap). Until its thread starts, the worker is nobody's.
  std::vector<fiber*> first(workers_.size(), nullptr);
  unsigned started = 1;
  try {
    for (unsigned i = 1; i < workers_.size(); ++i) first[i] = workers_[i]->fibers.get();
    for (; started < workers_.size(); ++started) {
      const unsigned i = started;
      platform::os::thread_handle h{};
      try {
        h = platform::os::start_thread([this, i, f = first[i]] { thread_main(i, f); }, workers_[i]->os_cpu);
      } catch (const std::system_error& e) {
        // Named: "cannot start a worker thread: Resource temporarily unavailable" said neither how many nor
        // which setting (an outside-user campaign under ulimit -u).
        throw std::system_error(e.code(), "roost: cannot start the thread of worker " + std::to_string(i) + " of " +
                                              std::to_string(workers_.size()) + " (" + cfg_.workers_source + "=" +
                                              std::to_string(cfg_.workers) + "; the system refused it: the user's "
                                              "process limit, ulimit -u, or memory); give fewer workers or raise "
                                              "the limit");
      }
      threads_.push_back(h);
    }
  } catch (...) {
    // A stack or a thread the system refused: the threads started so far leave before the error goes on,
    // so that nothing runs on while the runtime that failed to be made takes back its listeners and is
    // destroyed; the fibers of the others go back to their pools.
    stop();
    for (unsigned i = started; i < workers_.size(); ++i)
      if (first[i]) workers_[i]->fibers.put(first[i]);
    throw;
  }
}

void engine_base::stop() {
  unregister_started(this);
  stop_.store(true, std::memory_order_release);
  idle_.wake_all();
  for (auto h : threads_) platform::os::join_thread(h);
  threads_.clear();
  klts_.reset();  // the spares, asleep in their pools now that every worker has left
}

namespace {
// What a thread needs once to act as a worker, kept for the thread's life: an alternate signal stack for the
// stack-overflow report (unless the thread has one already) and its own stack's bounds.
struct caller_thread_state {
  void* alt_stack = nullptr;
  ult::context own;
  bool ready = false;
  klt self;  // while preemption is on: this thread as one of worker 0's kernel threads (engine/klt.hpp)
  ~caller_thread_state() {
    platform::preempt::destroy(self.timer);
    ult::release_alt_stack(alt_stack);
  }
};

// While preemption is on: the calling thread's record, and its timer, on the clock the runtime's timer design
// ticks on (made once per thread and clock).
void ready_klt(klt& k, const ult::context& home, const resolved_options& cfg) {
  k.home = home;
  k.eh = ult::thread_eh_state();
  k.tid = platform::preempt::this_thread_id();
  const bool cpu_time = cfg.preempt_timer == preempt_timer_design::cputime;
  // A timer this thread's record holds from before a fork() (the parent's: timers are not inherited, and the
  // child's thread has another id) is forgotten, not deleted (its id may name one of the child's): the
  // child's runtime ran without ticks, and a spinner hung it.
  if (k.timer.valid && k.timer.tid != k.tid) k.timer.valid = false;
  // The monitor design signals threads by their id and arms no timer: none is made, and one made for another
  // design is deleted (one the kernel refused
  // left its thread's id unrecorded, and the monitor never looked at that worker: a review).
  if (cfg.preempt_timer == preempt_timer_design::monitor) {
    platform::preempt::destroy(k.timer);
    return;
  }
  if (k.timer.valid && k.timer.cpu_time != cpu_time) platform::preempt::destroy(k.timer);
  if (k.timer.valid) return;
  try {
    k.timer = platform::preempt::create_for_this_thread(cpu_time);
  } catch (const std::system_error& e) {
    // The thread serves its worker untimed: a task it runs is not preempted then. Said once per process.
    ROOST_SAY_ONCE("roost: ROOST_PREEMPT: the kernel refused a thread its timer (%s; a process's timers "
                           "count against RLIMIT_SIGPENDING): tasks are not preempted while such a thread serves "
                           "their worker\n", e.what());
  }
}
thread_local caller_thread_state t_caller;
}  // namespace

void engine_base::run_root(detail::job* root, std::atomic<std::uint32_t>& done) {
  worker& w = *workers_[0];
  const std::uint64_t caller_fp = detail::fp_control::capture();  // given back before the return (below)
  caller_thread_state& ct = t_caller;
  if (!ct.ready) {
    stack_t cur;
    if (sigaltstack(nullptr, &cur) == 0 && (cur.ss_flags & SS_DISABLE)) ct.alt_stack = ult::install_alt_stack();
    ult::adopt_thread_context(ct.own);
    ct.ready = true;
  }
#ifdef ROOST_TSAN
  ct.own.tsan_fiber = __tsan_get_current_fiber();
#endif
  w.thread_ctx = ct.own;
  w.eh = ult::thread_eh_state();
  w.leave_when = &done;
  // Where workers are bound, the lent thread is too, but only when it is not already on worker 0's CPU
  // (or when it first sleeps, worker.hpp): binding costs two system calls, ~4.5 us a call here. Its own
  // affinity comes back at return, or threads it starts later (an OpenMP team, say) would inherit one CPU.
  if (w.os_cpu >= 0 && platform::os::current_cpu() != w.os_cpu) w.bind_lent_thread();
  set_current_worker(&w);
  klt* self = nullptr;  // while preemption is on: this thread as one of worker 0's (engine/klt.hpp)
  fiber* first = nullptr;
  bool serving = false;
  try {
    if (preempt_) {
      self = &ct.self;
      ready_klt(*self, ct.own, cfg_);
      w.klts.original = w.klts.active = self;
      const std::uint64_t start = platform::native_platform::now_ns();
      self->last_gap_ns = self->last_run_end_ns != 0 ? start - self->last_run_end_ns : 0;
      self->back_to_back = self->last_run_end_ns != 0 && self->last_gap_ns < preempt_->interval_ns();
      const bool lingered = self->lingered;
      const bool still_lingering = start_serving(w, *self);
      serving = true;
      // A timer left lingering that a tick ended before this run came was a bet lost: the thread no longer
      // calls run back to back. This run leaves its timer disarmed, whenever it began: a sleep between runs
      // that the tick cut short returned at once, so each next run counted as back to back and lingered
      // again, and every later sleep was cut short (EINTR at each run(); nanosleep(50 ms) of a loop after one
      // back-to-back pair: an outside-user campaign). A steady gap shorter than an interval is judged at the
      // run's end (below: no lingering where the next tick comes within twice it).
      if (lingered && !still_lingering) self->back_to_back = false;
      preempt_->check_mask_here(0);  // after start_serving, which noted the mask (one system call a run fewer)
    }
    first = w.fibers.get();
    // A tick in the root before it passes any entry point (a spin in its own code, or behind the inline
    // joins, which take no fiber) finds an idle fiber to switch to (engine/README.md, "Preemption", 4).
    if (preempt_) w.fibers.reserve_idle(1);
  } catch (...) {
    // No fiber could be had: the thread serves no worker after all. Its timer stops (a review), and a join
    // on it later must find the no-worker (abi.hpp, t_running_worker) and say it is outside a task, not push
    // onto worker 0's deque.
    if (serving) stop_serving(w, *self);
    set_current_worker(nullptr);
    w.release_lent_thread();
    throw;
  }
  w.become(first);
  switch_msg boot;
  boot.w = &w;
  boot.action = after::run_root;
  boot.frame = static_cast<detail::task_frame*>(root);
  // Back when worker 0 found `done` set (engine.hpp, go_home), on this thread.
  serve(w, self, first, boot);
  // The caller goes on with the floating-point state it called with, whatever this thread ran meanwhile: the
  // root's changes stay in the run, as every run without preemption had it (this thread's own context, saved
  // with the state at the switch to the root's fiber, is where serve returns). Under KLT-switching the thread
  // may have served as another worker's spare meanwhile, which took a preempted task's state (fp_at_handover)
  // into that context: a run returned with a child's rounding mode (an outside-user campaign: up to a third
  // of the runs at two workers).
  detail::fp_control::apply(caller_fp);
  // No fiber runs on this thread from here: a tick (worker 0's timer is armed until stop_serving below)
  // must not read the fiber it last ran, which the trims below may unmap (a tick inside their munmap
  // read the unmapped fiber and crashed).
  detail::t_running_fiber = nullptr;
  // A deep nest's fibers beyond what the runtime keeps go back to the kernel (fiber.hpp, stacks_to_keep):
  // the spares, and worker 0's free stacks (the other workers trim theirs before they sleep).
  spare_fibers_.trim();
  w.fibers.trim_free_stacks();
  // Worker 0 has no sleep of its own between calls, where the others give back the stack pages of deep
  // tasks: at the end of the first call and of every 256th it looks at the idle fibers and free stacks used
  // since their last look (fiber_pool::release_deep_pages), so a program does not keep a deep recursion's
  // pages for long. A look reads each fiber's 4 KiB mark (ult/stack.hpp): made at every call at four fibers
  // it cost 0.56 us, against 0.16 us for a whole call of fib(3) at one worker; a clock read to space the looks
  // in time cost 0.02 us.
  if (roots_run_++ % 256 == 0) w.fibers.release_deep_pages();
  // Before the thread is no worker: a tick after it finds no fiber (and ends the timer's lingering). The
  // timer lingers only after a run that followed the thread's previous one within an interval (klt.hpp).
  if (self) {
    // Lingers only where the next tick is likely to come after the next run's start: beyond twice the last gap
    // between runs (a loop sleeping 500 us between runs at a 1 ms interval had half its sleeps cut short).
    stop_serving(w, *self, /*linger=*/self->back_to_back && preempt_->worker0_tick_later_than(2 * self->last_gap_ns));
    self->last_run_end_ns = platform::native_platform::now_ns();
  }
  set_current_worker(nullptr);
  w.release_lent_thread();
}

// `done` is the published word of the Dekker pair with worker 0 going to sleep (idle.hpp). Worker 0's
// leave_when points at it from before the root is published until worker 0 has seen it set, so any worker
// that ends the root reads it safely; once it is set the caller may return and clear it: read it first.
void engine_base::finish_root() {
  std::atomic<std::uint32_t>* done = workers_[0]->leave_when;
  done->store(1, std::memory_order_release);
  idle_.notify_all_new_work();
}

void engine_base::thread_main(unsigned id, fiber* first) {
  worker& w = *workers_[id];
  set_current_worker(&w);
  if (w.os_cpu >= 0) platform::os::pin_this_thread(w.os_cpu);
  // A sim thread shares the driver's OS thread, and its signal stack.
  void* alt = platform::os::simulated() ? nullptr : ult::install_alt_stack();
  if (platform::t_sim) platform::t_sim->adopt_own_stack(w.thread_ctx);
  else ult::adopt_thread_context(w.thread_ctx);
  w.eh = ult::thread_eh_state();
  klt self;  // while preemption is on: this thread as one of the worker's kernel threads (engine/klt.hpp)
  if (preempt_) {
    ready_klt(self, w.thread_ctx, cfg_);
    w.klts.original = w.klts.active = &self;
    preempt_->check_mask_here(id);
    start_serving(w, self);
  }

  // Enter the scheduling loop on the fiber start() made for it; at shutdown it comes back here, which parks
  // the last fiber so that the pool can free it.
  w.become(first);
  switch_msg boot;  // from == nullptr: the thread context, nothing to do
  boot.w = &w;
  serve(w, preempt_ ? &self : nullptr, first, boot);

  // No tick may look at a fiber after the pool frees it: the timer goes first, then the thread's fiber.
  if (preempt_) {
    stop_serving(w, self);
    platform::preempt::destroy(self.timer);
  }
  detail::t_running_fiber = nullptr;
  w.fibers.release_all();
  ult::release_alt_stack(alt);
  set_current_worker(nullptr);
}

// ---------------------------------------------------------------- KLT-switching (engine/klt.hpp)

void engine_base::serve(worker& w, klt* self, fiber* first, switch_msg& boot) {
  for (;;) {
    if (!first) {  // a spare
      if (!await_turn(w, *self)) return;
      first = w.fibers.get();  // one is there: a tick hands the worker over only then (preempt_klt)
      w.become(first);
      boot = switch_msg{};
      boot.w = &w;
    }
    ult::transfer back;
    const switch_msg& bye = switch_with(first->ctx, boot, back);
    bye.from->ctx.fctx = back.fctx;
    // No fiber runs on this thread from here, and the one it ran goes back to the pool, from where (spilled
    // to the shared overflow) another worker may start a task on it at once: a tick here (this thread's
    // timer is armed until stop_serving) must not find that fiber, count 0, and preempt the other worker's
    // task from this thread (a review).
    detail::t_running_fiber = nullptr;
    fiber* held = bye.action == after::klt_resume ? bye.resume : nullptr;  // the message is on that fiber
    w.fibers.put(bye.from);
    // The worker leaves (a run's end, shutdown): here, if this is its own thread.
    if (!self || (!held && self == w.klts.original)) return;
    // Hand the worker over as the next thread left it: to the thread asleep with the task `held`, or, to
    // leave, to the worker's own thread, a spare now (nothing is preempted once the worker leaves).
    klt* next;
    klt::command c;
    if (held) {
      next = held->klt_holder;
      held->klt_holder = nullptr;
      w.current_fiber = held;
      w.current_task = held->task;
      c = klt::command::resume;
    } else {
      next = w.klts.original;
      if (!w.klts.remove(next))
        platform::os::fatal("roost: ROOST_PREEMPT=klt", "a worker must leave on its own thread, which is not a spare");
      w.current_fiber = nullptr;
      w.current_task = nullptr;
      c = klt::command::leave;
    }
    w.thread_ctx = next->home;
    w.eh = next->eh;
    stop_serving(w, *self);
    w.klts.give(self);  // before the post: from then on the pool is the next thread's
    w.klts.active = next;
    next->post(c);
    first = nullptr;
  }
}

bool engine_base::await_turn(worker& w, klt& k) {
  for (;;) {
    switch (k.wait()) {
      case klt::command::take_over:
        set_current_worker(&w);
        // The suspended task's floating-point state (preempt_klt), for its children this thread runs next.
        detail::fp_control::apply(w.fp_at_handover);
        w.eh = k.eh;
        w.thread_ctx = k.home;  // its fctx is stored when the fiber we switch to arrives (on_arrival)
        start_serving(w, k);
        return true;
      case klt::command::leave:
      case klt::command::exit:
        return false;
      default:
        break;
    }
  }
}

void engine_base::klt_spare_main(void* eng, worker& w, klt& k) {
  auto& e = *static_cast<engine_base*>(eng);
  void* alt = ult::install_alt_stack();
  ult::context home;
  ult::adopt_thread_context(home);
  ready_klt(k, home, e.cfg_);
  platform::preempt::unblock_here();  // inherited from the creator
  w.klts.add_new(&k);
  switch_msg boot;
  e.serve(w, &k, nullptr, boot);
  platform::preempt::destroy(k.timer);
  detail::t_running_fiber = nullptr;
  set_current_worker(nullptr);
  ult::release_alt_stack(alt);
}

bool engine_base::start_serving(worker& w, klt& k, bool note_mask) {
  if (!preempt_) return false;
  // What its tasks run with, after check_mask_here or the spare's unblock.
  if (note_mask) platform::preempt::note_serving_mask();
  // A sleep that a tick interrupts gains an interval less the slack: at most a quarter of it while the
  // thread serves (platform/preempt_signal.hpp), given back when it stops (worker 0's is run's caller).
  k.slack_before = platform::preempt::lower_timer_slack(preempt_->interval_ns() / 4);
  const bool still_lingering = preempt_->serve_from(w.id, k.timer, k.tid);
  k.serving = true;
  return still_lingering;
}
void engine_base::stop_serving(worker& w, klt& k, bool linger) {
  if (!preempt_) return;
  k.lingered = linger && k.serving;
  preempt_->unserve(w.id, k.timer, k.lingered);
  k.serving = false;
  platform::preempt::restore_timer_slack(k.slack_before);
  k.slack_before = 0;
}

std::uint64_t engine_base::preemptions() const {
  std::uint64_t n = 0;
  for (const auto& w : workers_) n += w->preemptions.load(std::memory_order_relaxed);
  return n;
}

std::uint64_t engine_base::preempt_ticks_deferred() const {
  std::uint64_t n = 0;
  for (const auto& w : workers_) n += w->ticks_deferred.load(std::memory_order_relaxed);
  return n;
}

bool engine_base::any_work_visible() {
  if (stopping()) return true;
  for (auto& w : workers_)
    if (w->deque.shared_estimate()) return true;
  // Nothing stealable: ask every owner to share its private tasks. The owner that serves a request sees
  // this worker's announcement (sleep_unless made it before calling us) and wakes it (ws_deque.hpp).
  for (auto& w : workers_) w->deque.ask_to_share();
  return false;
}

}  // namespace roost::engine
