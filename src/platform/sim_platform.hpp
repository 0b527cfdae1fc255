// The simulated platform (DESIGN §6): the engine and the schedulers run unmodified, every worker a
// user-level thread ("sim thread") on the one OS thread that drives the runtime, each with a virtual clock.
// The sim thread with the smallest clock runs next; equal clocks are ordered by the seed's generator. A sim
// thread runs natively between two charges (a runtime operation, a kernel's declared data, a poll of an
// idle loop) and is switched away from at a charge that puts its clock past another runnable thread's:
// StarPU's SimGrid mode in miniature (the real scheduler in virtual time), with no OS thread but the caller.
//
// What the engine asks of the platform (platform.hpp) is answered here while this platform drives the
// calling OS thread (platform::t_sim): threads are sim threads, sleeping on a word blocks the sim thread until
// a wake, pausing and yielding cost virtual time, the clock is the running sim thread's. A run's result is
// then a function of the program, topology, seed and cost table alone (src/platform/README.md).
#pragma once
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "platform/sim_costs.hpp"
#include "platform/sim_watch.hpp"
#include "ult/context.hpp"
#include "ult/stack.hpp"

namespace roost::platform {

class sim_platform {
 public:
  // What the engine keeps per OS thread, swapped at every switch between sim threads (they share one OS
  // thread): its thread-locals, and the context the sim thread runs on now (for the sanitizers' fiber
  // bookkeeping, which must know the stack being left).
  struct thread_locals {
    void* running_fiber = nullptr;
    void* current_worker = nullptr;
    void* join_window = nullptr;  // the thread's copy of its worker's (abi.hpp, t_join_window)
  };
  struct engine_tls {
    void (*save)(thread_locals&) = nullptr;
    void (*load)(const thread_locals&) = nullptr;
    // The context the calling sim thread runs on now (an engine fiber's, or a worker's own), or nullptr
    // outside the engine: a switch back to it must name its stack and sanitizer fiber, not the thread's.
    const ult::context* (*running_context)() = nullptr;
  };

  // Per worker, which cache and which socket its PU belongs to (steals by distance).
  struct worker_place {
    int cache = 0;
    int socket = 0;
  };

  // cpus: the topology's PUs, each a CPU of its own (never oversubscribed).
  sim_platform(unsigned cpus, std::uint64_t seed, sim_costs costs);
  ~sim_platform();
  sim_platform(const sim_platform&) = delete;

  void set_engine_tls(engine_tls t) { tls_ = t; }
  // Where a host byte's page lives on the simulated machine, or -1 if no access placed it yet: set by the
  // simulation that owns this platform (api/simulation.cpp), asked through page_placement::node_of.
  std::function<int(std::uintptr_t)> page_node;
  // Where a host byte ranks for a policy that orders data by address (cats's anchors), set by the simulation:
  // a byte of roost::numa_alloc memory by its allocation, in the order the simulation first met them, then
  // by its offset in it; any other byte by its host address. Host addresses of separate mappings follow
  // where mmap, its holes and ASLR put them, which a simulated run must not.
  std::function<std::uint64_t(std::uintptr_t)> data_rank;
  // The simulated machine's NUMA nodes and the memory of its smallest (0: not described), for numa_node_of
  // and numa_alloc's check of a coarse part, called from a task of the simulated runtime.
  unsigned numa_nodes = 1;
  std::uint64_t numa_node_bytes = 0;
  // The memory model's page (sim_params page_size): distributed memory's rules give its pages their nodes
  // (page_placement::rule_page_bytes).
  std::size_t page_bytes = 0;
  // A worker's own context (engine thread_main) is its sim thread's stack, not the OS thread's.
  void adopt_own_stack(ult::context& c) const {
    ult::adopt_running_context(c, static_cast<char*>(current_->stk.base) + current_->stk.guard, current_->stk.usable());
  }
  void set_places(std::vector<worker_place> p) { places_ = std::move(p); }
  unsigned cpus() const { return cpus_; }

  // The platform seam (platform.hpp), for the sim thread that calls it.
  std::uintptr_t start_thread(std::function<void()> fn, int cpu);
  void join_thread(std::uintptr_t h);
  int current_cpu() const { return current_->cpu; }
  bool pin(int cpu) {
    current_->cpu = cpu;
    return true;
  }
  std::uint64_t now_ns() const { return static_cast<std::uint64_t>(current_->clock); }
  double clock_ns() const { return current_->clock; }  // the running sim thread's clock, unrounded
  void wait_on(std::atomic<std::uint32_t>& word, std::uint32_t expected);
  void wake(std::atomic<std::uint32_t>& word, bool all);
  void relax() { charge_op(costs_.relax_ns, false, "relax_ns"); }
  void yield() { charge_op(costs_.yield_ns, false, "yield_ns"); }

  // Runtime events, charged to the calling sim thread (engine/observe.hpp's hook points).
  void on_spawn() { charge_op(costs_.spawn_ns, true, "spawn_ns"); }
  void on_task_start(const void* task) {
    current_->task = task;
    running_task_.store(task, std::memory_order_relaxed);
    charge_op(costs_.task_start_ns + costs_.task_ns, true, "task_start_ns and task_ns");
  }
  // `continuing`: the task this sim thread goes on with if it goes on with one without a start or a resume
  // (its spawner, where a child ended locally: a work-first parent's continuation, a help-first join that ran
  // it inline), for the watchdog's name; a dead task's id is never left named. nullptr at a root's end.
  void on_task_end(const void* continuing) {
    current_->task = continuing;
    running_task_.store(continuing, std::memory_order_relaxed);
    charge_op(costs_.task_end_ns, true, "task_end_ns");
  }
  // A suspended task (a stolen continuation, a waiter) goes on: the watchdog names it, not the task that
  // last started on this sim thread ("task ?" for a stolen continuation that spun: an outside-user campaign).
  void on_resume(const void* task) {
    current_->task = task;
    running_task_.store(task, std::memory_order_relaxed);
    charge_op(costs_.resume_ns, true, "resume_ns");
  }
  void on_steal(unsigned thief, unsigned victim, bool taken);
  // A kernel's declared data (roost::touch): its compute part, plus what a memory model adds.
  void on_touch(std::size_t bytes, std::uint64_t lines, double memory_ns);
  // The same for a touch whose memory part is not known yet (lazy settlement): its lines' walk is under way
  // (sharded_model::post), and `floor_ns` is at most what it will cost (memory_model::region_cost_floor_ns).
  // Where the floor alone says that another sim thread runs first, the calling sim thread is switched away
  // from and waits in the ready queue at its floor; it is settled (settler(token) asked for the memory part,
  // its clock set to what charging it at once would have set) when it comes to the top, or when its clock
  // decides which thread runs next. Every decision is then the one charging at once makes (the floor is
  // never above the true clock), in the same order and with the same draws of the seed's generator, so
  // every result is bit-identical; only what the walk costs this machine overlaps the engine's and the
  // program's work.
  using settle_fn = double (*)(void* ctx, std::uint64_t token);
  void set_settler(settle_fn f, void* ctx) {
    settler_ = f;
    settler_ctx_ = ctx;
  }
  void on_touch_deferred(std::size_t bytes, std::uint64_t lines, double floor_ns, std::uint64_t token);
  // Settles every sim thread still waiting for a touch's cost (a report reads their busy time).
  void settle_all();
  // A kernel's declared arithmetic (roost::compute), charged at op_ns each.
  void on_compute(std::uint64_t operations);

  // Advances the calling sim thread's clock by ns (scaled by the seed's jitter) and switches to the
  // earliest runnable sim thread if that is no longer this one.
  void charge(double ns, bool busy);
  // A kernel's declared work (on_touch, on_compute): charge(ns, true) when ns > 0, else nothing.
  void charge_work(double ns);
  // The most virtual time a simulation may run: past it a double's steps (0.125 ns at 1e15) round charges of
  // a fraction of a ns away. A kernel's declared work is checked by its call (api/simulation.cpp), a
  // runtime operation's cost here (charge_op), where the cost table alone took the clock to 3e15 without a
  // word, and a later compute was blamed for it (an outside-user campaign).
  static constexpr double kMostClockNs = 1e15;
  // charge(ns, busy) for a runtime operation whose cost is `param`'s: ends the process naming it where the
  // calling sim thread's clock would pass kMostClockNs (the engine cannot take an exception at its charges).
  void charge_op(double ns, bool busy, const char* param) {
    if (current_->clock + ns > kMostClockNs) [[unlikely]] past_most_clock(ns, param);
    if (busy) op_progress_.store(op_progress_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    charge(ns, busy);
  }

  // run(): the driver's virtual time spent in runs so far.
  void run_begin();
  void run_end();

  // For a watchdog on another OS thread (api/simulation.cpp): a count that moves at every charge and switch,
  // whether a run is under way, and which sim thread runs which task now. A task that spins on another
  // task's progress never reaches a charge, and on one OS thread nothing else can run: the count stops.
  std::uint64_t progress() const { return progress_.load(std::memory_order_relaxed); }
  // All of it, with the count of busy charges only (a task's runtime operations and declared work, a steal)
  // and the latest clock one ended at: idle charges (a failed steal attempt, a poll's pause) move only
  // progress(), and workers that poll for work none of them can take move the clock past every busy end
  // (sim_watch.hpp); and the count of the busy charges that are runtime operations (charge_op), which
  // declared work alone does not move.
  sim_sample sample() const {
    sim_sample s;
    s.in_run = in_run();
    s.progress = progress();
    s.busy_progress = busy_progress_.load(std::memory_order_relaxed);
    s.op_progress = op_progress_.load(std::memory_order_relaxed);
    s.clock = running_clock();
    s.busy_clock = busy_clock_.load(std::memory_order_relaxed);
    return s;
  }
  bool in_run() const { return in_run_.load(std::memory_order_relaxed); }
  // The OS thread that drives the simulated workers of the run under way, or of the last one (its kernel
  // thread id): the watchdog asks the kernel whether it is asleep there.
  long run_os_thread() const { return run_os_thread_.load(std::memory_order_relaxed); }
  unsigned running_thread() const { return running_thread_.load(std::memory_order_relaxed); }
  const void* running_task() const { return running_task_.load(std::memory_order_relaxed); }
  double running_clock() const { return running_clock_.load(std::memory_order_relaxed); }

  // The calling sim thread's virtual clock (ns).
  double clock() const { return current_->clock; }
  const sim_costs& costs() const { return costs_; }
  std::uint64_t seed() const { return seed_; }

  // The report (JSON) and a one-line summary.
  struct worker_stats {
    double busy_ns = 0, idle_ns = 0;
  };
  // What the simulation cost this machine (the report's "host" part, the one that is not virtual).
  struct host_figures {
    double wall_s = 0;   // from the simulation's start to its report
    double runs_s = 0;   // of which inside run() calls: the simulated execution (run_host_s)
    double model_s = 0;  // of which in the memory model (the touched lines' walks)
    unsigned model_shards = 1, model_threads = 1;  // how the model was walked (sim/sharded_model.hpp)
    std::uint64_t regions_shared = 0;              // touches whose odd lines the second host thread walked
  };
  // memory: the memory model's part of the report, JSON members without the braces.
  std::string report_json(const std::string& scheduler, const std::string& topology, const std::string& memory,
                          const host_figures& host);
  std::uint64_t touches() const { return touches_; }
  // Touches charged at their floor first and settled later (on_touch_deferred), and of those, the ones whose
  // floor let another sim thread run first: the report's host part (how much of the walks could overlap).
  std::uint64_t deferred_touches() const { return deferred_touches_; }
  std::uint64_t deferred_switches() const { return deferred_switches_; }
  std::uint64_t line_accesses() const { return line_accesses_; }
  std::uint64_t operations() const { return operations_; }
  std::string summary() const;
  double virtual_time_ns() const { return run_ns_; }
  // This machine's time inside run() calls, from run_begin to run_end: what simulating the program's runs
  // cost, without what the program does between them (its set-up, its checks) or the model's construction.
  double run_host_s() const { return run_host_s_; }
  // The same as seen by the calling sim thread during a run: the runs before it, and this run up to the
  // caller's clock (runtime::virtual_time_ns from a task: it stood still at the last run's end while the
  // task's own compute and touches moved the clock, an outside-user campaign).
  double virtual_time_now_ns() const {
    if (!in_run_.load(std::memory_order_relaxed)) return run_ns_;
    const double in_this_run = current_->clock - run_start_;
    return run_ns_ + (in_this_run > 0 ? in_this_run : 0);
  }
  std::uint64_t steals_by_distance(int d) const { return steals_[d]; }

  // The sim thread for worker w (sim thread w: worker 0 is the driver).
  unsigned sim_threads() const { return static_cast<unsigned>(threads_.size()); }

 private:
  enum class state : std::uint8_t { running, runnable, blocked, finished };
  struct thread {
    unsigned id = 0;
    double clock = 0;
    state st = state::runnable;
    int cpu = -1;
    std::atomic<std::uint32_t>* blocked_on = nullptr;
    double blocked_since = 0;
    std::atomic<std::uint32_t> finished{0};
    std::function<void()> fn;
    ult::context ctx;     // its saved fctx, and (until it first leaves) its own stack's description
    ult::context leftas;  // the stack and sanitizer fiber it was on when it last left (see switch_away)
    bool left = false;
    ult::stack stk;
    thread_locals tls;
    worker_stats stats;
    const void* task = nullptr;  // the engine's task_id it runs now, as its last task start said
    // A touch charged at its floor (on_touch_deferred) until settled: token 0 when none.
    struct deferred_touch {
      std::uint64_t token = 0;
      double clock_before = 0;  // its clock before the touch
      double fixed_ns = 0;      // the touch's bytes x touch_ns_per_byte
      double scale = 1;         // the seed's jitter, drawn at the touch
      bool jittered = false;
    } deferred;
  };
  struct ready {
    double clock;
    std::uint64_t tie;
    thread* t;
    bool operator<(const ready& o) const {  // a max-heap of the reverse: the earliest on top
      return clock != o.clock ? clock > o.clock : tie > o.tie;
    }
  };

  void make_runnable(thread* t);
  // Switches to the earliest runnable thread (the caller has made itself runnable, blocked or finished).
  void switch_away();
  // Sets a deferred touch's true clock (settler_) and busy time.
  void settle(thread* t);
  // Whether the earliest runnable thread's clock is at or before `clock`, settling deferred threads on top
  // until the one on top has its true clock: what charge() asks before it switches.
  bool earliest_at_or_before(double clock);
  // The runnable thread on top, deferred: settled, and put back with its tie (its clock may have moved).
  void settle_top();
  // A charge's jitter factor, 1 +- costs_.jitter, one draw of the run's generator (costs_.jitter > 0).
  double draw_jitter_scale();
  // A busy charge's bookkeeping once its ns are known: the clock, the busy time, the watchdog's figures.
  void account_busy(thread* me, double ns);
  // The driver (sim thread 0) is whichever OS thread calls into the runtime now: run() may be called from
  // another thread than the one that made the runtime, and so may its destructor. Before the driver leaves,
  // its context (its stack, for the sanitizers) and the exception state that every switch carries (eh_)
  // are taken from the calling thread, anew when that thread is not the one they were taken from.
  void drive_from_calling_thread();
  static void entry(ult::transfer t);
  [[noreturn]] void report_deadlock();
  [[noreturn]] void past_most_clock(double ns, const char* param) const;

  unsigned cpus_;
  std::uint64_t seed_;
  sim_costs costs_;
  std::vector<worker_place> places_;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<thread>> threads_;  // [0]: the driver
  thread* current_ = nullptr;
  std::priority_queue<ready> ready_;
  std::vector<thread*> blocked_;
  settle_fn settler_ = nullptr;
  void* settler_ctx_ = nullptr;
  std::vector<ready> settling_;  // settle_all's
  engine_tls tls_;
  ult::eh_state* eh_ = nullptr;  // the exception state of the OS thread that drives the simulation now
  pthread_t driving_thread_{};   // that thread
  double run_start_ = 0, run_ns_ = 0;
  std::chrono::steady_clock::time_point run_host_start_{};
  double run_host_s_ = 0;
  std::uint64_t runs_ = 0;
  std::uint64_t steals_[3] = {0, 0, 0};  // same cache, same socket, other socket
  std::uint64_t steal_attempts_ = 0, touches_ = 0, deferred_touches_ = 0, deferred_switches_ = 0;
  std::uint64_t touched_bytes_ = 0, operations_ = 0;
  std::uint64_t line_accesses_ = 0;  // cache lines the touches walked through the memory model
  std::atomic<std::uint64_t> progress_{0};
  std::atomic<std::uint64_t> busy_progress_{0};  // written by the sim thread alone (a load and a store)
  std::atomic<std::uint64_t> op_progress_{0};    // the busy charges of runtime operations; the same
  std::atomic<double> busy_clock_{0};
  std::atomic<bool> in_run_{false};
  std::atomic<long> run_os_thread_{0};
  std::atomic<unsigned> running_thread_{0};
  std::atomic<const void*> running_task_{nullptr};
  std::atomic<double> running_clock_{0};
};

// While alive, the calling OS thread is driven by `p` (platform::t_sim): the runtime's constructor, run()
// and destructor enter one.
class sim_scope {
 public:
  explicit sim_scope(sim_platform* p);
  ~sim_scope();
  sim_scope(const sim_scope&) = delete;

 private:
  sim_platform* prev_;
  bool active_;
};

}  // namespace roost::platform
