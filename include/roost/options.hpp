// Start-up configuration. Every field has an environment variable (OpenMP style); a field set in code wins
// over the environment. Unset fields fall back to the environment, then to the documented default.
// Every value, variable or string field, is read by one rule (docs/configuration.md): surrounding
// whitespace is trimmed; empty is an error, not the default; words are case-insensitive; numbers are
// decimal, in the range given below.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include "roost/detail/build_mode.hpp"  // a program in another libstdc++ mode does not link
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace roost {

// The most workers a runtime runs (ROOST_WORKERS), and the most PUs a virtual topology (ROOST_TOPOLOGY) may
// describe, since the default is a worker per PU.
inline constexpr unsigned max_workers = 4096;

// ROOST_ADWS_STEAL: whether adws and adws-ml repair imbalance by stealing. adaptive ("auto") measures the
// program's iterations with and without and keeps the faster (src/sched/steal_tuner.hpp).
enum class adws_stealing { off, on, adaptive };

// ROOST_PREEMPT_TIMER: how preemption's ticks are made (options::preempt_timer).
enum class preempt_timer_design { aligned, naive, chained, cputime, monitor };

struct options {
  // ROOST_SCHED: scheduler name (roost::schedulers() lists them). Default "ws".
  std::optional<std::string> scheduler;
  // ROOST_WORKERS: number of workers, 1 .. max_workers. Default: one per PU of the topology.
  std::optional<unsigned> workers;
  // ROOST_TOPOLOGY: hwloc synthetic description ("pack:2 l3:1(size=1MiB) core:1 pu:1") or a path to an
  // hwloc XML export (lstopo-no-graphics --of xml), of at most max_workers PUs; cache sizes 1 B .. 1 TiB.
  // Default: the real machine, restricted to the affinity mask of the thread that makes the runtime.
  std::optional<std::string> topology;
  // ROOST_BIND: pin each worker to its PU (true/false, 1/0, yes/no, on/off). Default true; ignored when
  // oversubscribed.
  std::optional<bool> bind;
  // ROOST_STACK_SIZE: bytes per task stack (suffix K, M or G allowed), 64 KiB .. 1 GiB. Default 8 MiB,
  // reserved, not committed (a page costs memory once a task touches it).
  std::optional<std::size_t> stack_size;
  // ROOST_VERBOSE: print the resolved configuration on stderr at start-up (true/false). Default false.
  std::optional<bool> verbose;
  // ROOST_TRACE: write a trace of this runtime to this file as it runs (binary, see src/trace/trace_format.hpp),
  // not a directory, and FILE.json (Chrome/Perfetto timeline) when the runtime is destroyed. A file that cannot be written is
  // a config_error at construction; a write that fails later is thrown from the next run() (std::system_error)
  // or printed by the destructor. Default: no trace.
  std::optional<std::string> trace;
  // ROOST_TRACE_DEPTH: how deep, in splits, the trace records tasks that run where they were spawned: "auto",
  // an integer in [0, 1000000] or "all". A task's split depth is its spawner's + 1 + its rank among the
  // spawner's children (the k-th child is k + 1 binary splits down, as in fib or quicksort). A deeper task is
  // part of the recorded task that spawned it (its time is in that task's span), unless the scheduler moved
  // it: a task a worker takes from its scheduling loop (the root, a stolen or dealt task) and a resumed one
  // are always recorded. "auto" lets each worker's depth follow what its records cost: the tasks' records
  // within what is left of 1% of the worker's time after the records it always makes (touches, idle,
  // steals), a quarter of 1% at least, as the tracer prices a record (about twice that in all;
  // src/trace/tracer.hpp); so the depth differs between workers and over a run. Give "all" where every
  // task must be recorded (roost-analyze mapping). Default: auto.
  std::optional<std::string> trace_depth;

  // ROOST_PLATFORM: "native" (this machine's threads and clock) or "sim" (the simulated platform: every
  // worker a user-level thread on the calling OS thread, in virtual time; src/platform/README.md).
  // Default native.
  std::optional<std::string> platform;
  // ROOST_SIM_SEED: the simulation's seed (tie-breaks between equal clocks, cost jitter), an integer in
  // [0, 2^64-1]; the same program, topology, seed and parameters give the same run. Default 1.
  std::optional<std::uint64_t> sim_seed;
  // ROOST_SIM_REPORT: write the simulation's report to this file as JSON when the runtime is destroyed.
  std::optional<std::string> sim_report;
  // ROOST_SIM_PARAMS: overrides of the simulation's cost table, "name=value,name=value" (names and units:
  // src/platform/README.md; the memory model's, such as l2.ways or dram.local_ns: src/sim/README.md).
  // Default: none.
  std::optional<std::string> sim_params;

  // ROOST_PREEMPT: whether a task that runs too long without a scheduling point (a spin-wait on a sibling,
  // a busy barrier) is preempted, as the thesis's M:N threads are (seed 003 ch. 3): "off", or "signal"
  // (signal-yield: a timer signal switches the worker to its scheduler, and the task is re-queued behind the
  // worker's other work, to resume on the kernel thread serving the worker then; include/roost/preempt.hpp says what code must
  // not do under it), or "klt" (KLT-switching: the preempted task keeps its kernel thread, which sleeps in
  // the signal's handler while a spare kernel thread serves the worker, so the next task of the worker runs
  // on another thread and sees neither the first one's thread_local values nor its locks as its own; each
  // preemption costs two futex hand-overs more than signal-yield). Native platform only. Default off.
  std::optional<std::string> preempt;
  // ROOST_PREEMPT_INTERVAL: how often a worker's timer ticks, a duration with a unit (ns, us, ms, s) in
  // [100us, 10s], e.g. "1ms". Default 1ms.
  std::optional<std::string> preempt_interval;
  // ROOST_PREEMPT_TIMER: the timer design (seed 003 §3.4, digest §4.4). "aligned": a timer per worker, each
  // worker's ticks offset by interval / workers from the previous worker's, so that no two coincide.
  // "naive": a timer per worker, all ticking at the same instants (the contended design the thesis measures
  // against). "chained": one timer for the runtime, whose tick each worker passes on to the next worker that
  // runs a task which passed no scheduling point since the chain's last tick: workers whose tasks spawn, wait
  // or end, or that sleep, are not interrupted at all. "cputime": a timer per worker that counts its
  // thread's CPU time, so a sleeping worker is never ticked; the kernel checks such timers at its own
  // scheduler tick, so they add no interrupt of their own (the cheapest design: roost-bench
  // --preempt-timers) but fire at that tick's granularity (CONFIG_HZ: an interval shorter than the kernel's
  // tick becomes that tick). "monitor": no timer on any worker; a thread of the runtime's own wakes every
  // interval during run() and signals only the awake workers whose task passed no scheduling point since its
  // last look (Go's sysmon is the model), so workers whose tasks spawn, wait or end are never interrupted.
  // Default aligned.
  std::optional<std::string> preempt_timer;

  // Scheduler knobs (read only by their scheduler, validated always).
  // ROOST_ADWS_STEAL: adws and adws-ml repair imbalance by stealing: true (on, seed 003's ADWS), false
  // ("ADWS (no steal)"), or auto (adaptive: keep whichever makes the iterations faster). Default auto.
  std::optional<adws_stealing> adws_steal;
  // ROOST_CAB_LEVEL: cab's boundary level, the spawn depth of leaf inter-socket tasks, 0..64. Default: from
  // the topology, the least depth at which a binary task tree has a task for every socket (0 on one socket,
  // 1 on two, 2 on three or four, ...).
  std::optional<unsigned> cab_level;
  // ROOST_CAB_SUBTREES: "one" intra-socket subtree per socket at a time (true, default) or "many" (false).
  std::optional<bool> cab_one_subtree;
  // ROOST_CATS_MIN_INTENSITY: bytes per worker-ns of the profiled iteration below which cats runs as ws, 0 .. 1e9.
  // Default 0.05.
  std::optional<double> cats_min_intensity;
  // ROOST_CATS_PROFILE: a file cats writes its profile to after each profiling iteration (seed 000 Fig. 8):
  // one line per task it kept, with its spawn path, SOID, tier and home socket. Default: none.
  std::optional<std::string> cats_profile;
  // ROOST_NUMA_VICINITY: how many nodes a numa worker steals from, its own and the nearest others (seed
  // 002 §4.2's vicinity), an integer in [1, 4096] or "all" (numa_vicinity_all here). Default all.
  std::optional<unsigned> numa_vicinity;
  static constexpr unsigned numa_vicinity_all = ~0u;
  // ROOST_NUMA_DEAL: what numa deals a task by. "writes": the bytes it writes, whatever their size (the
  // owner of the output computes: the seed's access-intensive dependence, §4.2); "footprint": every byte it
  // declared, and only a footprint above the LLC's share of a core (seed 002 Algorithm 1). Default writes
  // (faster on every seed-002 benchmark: src/sched/README.md).
  std::optional<std::string> numa_deal;
  // ROOST_DATA_DISTRIBUTION: the distribution of roost::numa_alloc and numa_allocator without one
  // (roost/memory.hpp): standard, fine or coarse. Set here, it becomes the process's default when the runtime
  // is made. Default standard.
  std::optional<std::string> data_distribution;
};

// The configuration after options, environment and defaults are merged and validated.
struct resolved_options {
  std::string scheduler;
  unsigned workers = 0;
  std::string workers_source = "ROOST_WORKERS";  // where a count came from, for errors: or options::workers
  std::string topology;  // empty: the real machine
  std::string topology_source = "ROOST_TOPOLOGY";  // where it came from, for errors: or options::topology
  bool bind = true;  // runtime::config(): whether the workers are pinned (false where they run oversubscribed)
  std::size_t stack_size = 0;
  bool verbose = false;
  std::string trace;  // empty: no trace
  std::string trace_source = "ROOST_TRACE";  // where it came from, for errors: or options::trace
  std::uint32_t trace_depth = ~std::uint32_t{0};  // deepest split recorded where spawned (UINT32_MAX: all)
  bool trace_depth_auto = true;                    // ROOST_TRACE_DEPTH=auto: trace_depth is where it starts
  adws_stealing adws_steal = adws_stealing::adaptive;
  std::optional<unsigned> cab_level;  // unset: from the topology (cab_policy)
  bool cab_one_subtree = true;
  double cats_min_intensity = 0.05;
  std::string cats_profile;        // empty: none
  std::string cats_profile_source = "ROOST_CATS_PROFILE";  // where it came from, for errors
  unsigned numa_vicinity = 0;      // 0: all nodes
  bool numa_deal_writes = true;           // ROOST_NUMA_DEAL=writes
  std::string data_distribution;   // empty: not given (the allocator's own default)
  std::string data_distribution_source = "ROOST_DATA_DISTRIBUTION";  // or options::data_distribution
  bool simulated = false;          // ROOST_PLATFORM=sim
  std::uint64_t sim_seed = 1;
  std::string sim_report;          // empty: none
  std::string sim_report_source = "ROOST_SIM_REPORT";  // where it came from, for errors
  std::string sim_params;          // empty: the defaults
  std::string sim_params_source = "ROOST_SIM_PARAMS";  // where they came from, for errors
  bool preempt = false;            // ROOST_PREEMPT=signal or klt
  bool preempt_klt = false;        // ROOST_PREEMPT=klt
  std::string preempt_source = "ROOST_PREEMPT";  // where it came from, for errors: or options::preempt
  std::uint64_t preempt_interval_ns = 1'000'000;
  preempt_timer_design preempt_timer = preempt_timer_design::aligned;  // ROOST_PREEMPT_TIMER
  // Variables of the environment that a field set in code overrides (so they are not read) and that are
  // not valid themselves: each a line naming the variable, its value and why, which the runtime prints on
  // stderr when it is made, so that a typo in a launch script does not go unseen.
  std::vector<std::string> overridden_env_errors;
  // Variables of the environment named ROOST_... that roost does not read and that look like one it does
  // (ROOST_SCHEDULER, ROOST_NUM_WORKERS): each a line naming it and the likely one, printed with the above.
  std::vector<std::string> unknown_env_notes;
  // Variables of the simulated platform (ROOST_SIM_SEED, ROOST_SIM_REPORT, ROOST_SIM_PARAMS) set in the
  // environment of a native runtime, which does not read them: each a line saying so, printed with the above.
  std::vector<std::string> unused_env_notes;
  // Knobs of another scheduler that are set (field or variable) and that this one does not read: "NAME (read
  // by SCHEDULERS only)" each, said by ROOST_VERBOSE.
  std::vector<std::string> unread_knobs;
};

// Merges `opts` with the environment and validates. Throws roost::config_error naming the variable, the
// value and the valid values. A field set in `opts` wins over its variable, which is then not used; if that
// variable is not valid either, overridden_env_errors says so.
namespace detail {
resolved_options resolve_in_mode(const options& opts, const int* build_mode);  // detail/build_mode.hpp
}
inline resolved_options resolve(const options& opts) { return detail::resolve_in_mode(opts, detail::build_mode()); }

// Scheduler names roost knows, and which of them are implemented in this build.
struct scheduler_info {
  const char* name;
  const char* summary;
  bool available;
};
const std::vector<scheduler_info>& schedulers();

}  // namespace roost

#include "roost/detail/min_max_back.hpp"
