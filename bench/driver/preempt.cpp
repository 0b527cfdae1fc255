// roost-bench --preempt-cost and --preempt-barrier: the measurements of preemption (seed 003 ch. 3).
//
// --preempt-cost N: the thesis's Table 3.1 method. Two threads share one core and spin, each writing the
// time into a shared stamp as it goes; when the other one appears, the gap since the stamp it left is the
// cost of one preemption (interrupt, handler, switch, scheduler). Median of N preemptions:
//   pthreads       two OS threads pinned to one CPU, switched by the kernel's scheduler at its time slice;
//   signal-yield   two roost tasks on one worker, ROOST_PREEMPT=signal at a 10 ms interval;
//   KLT-switching  the same with ROOST_PREEMPT=klt: each preemption wakes the other task's kernel thread
//                  (two futex hand-overs: to a spare, which schedules, then to the task's thread).
//
// --preempt-timers R: what a tick costs before roost does anything with it, the floor under preemption's
// overhead. One busy thread per CPU of this process runs a fixed loop, R interleaved rounds, with no timer
// and with each timer design at a 1 ms interval and an empty handler (seed 003 §3.4, digest §4.4):
//   per-worker aligned / naive   a CLOCK_MONOTONIC timer per thread, staggered by 1/n ms or all at once;
//   chained (one timer)          one timer, to the first thread: the signals a chain sends when every task
//                                progresses (it passes the tick on to nobody);
//   per-worker CPU time          a CLOCK_THREAD_CPUTIME_ID timer per thread: the kernel checks those at its
//                                own scheduler tick, so they add no interrupt, and fire at its granularity.
// Prints the median time of each against none, and the ticks each thread took per second. Then, on x86-64, the
// same floor one interruption at a time (interruption_gaps): a busy loop's gaps with no timer, a 1 ms timer and
// a thread that wakes every 1 ms on its CPU, and what a tick costs the CPU it interrupts.
//
// --preempt-overhead R: what preemption costs a program that never needs it, at a 1 ms interval (issue #28's
// "under 1%"). For each benchmark, variant and worker count named (--bench, default fib,heat2d,matmul;
// --variants, default ws,ws-help; --workers, default 1; --size), seven runtimes live side by side: off, and
// signal-yield and KLT-switching under per-worker CPU-time timers and under aligned timers (the default).
// Each round runs the benchmark once on each, in an order that rotates with the round, and every result is
// checked. The runs of the seven alternate one by one, so that a shared machine's drift (tens of percent
// between seconds on a VM) falls on all alike, and the runtimes are made afresh each round in a rotating
// order. A sixth runtime has preemption off and its workers get the aligned timers' ticks with an empty
// handler: what the ticks cost before roost does anything with them, on this workload. A seventh, off as
// well, is the control: its ratio to the first is what the method reads into two identical runtimes.
// Prints the median of the per-round ratios to off, of process CPU time and of wall time, their
// quartiles, and the preemptions and deferred ticks a run.
//
// --preempt-barrier: a case where preemption is the difference between a hang and a result. 4 tasks per
// worker each do a slice of work and then wait at a busy-wait barrier (the kind a nested parallel library
// spins at), 20 times. Without preemption the first tasks to reach the barrier hold every worker and the
// others never start: the run is ended after a bound and reported as hung. With it, it completes.
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/fj_roost.hpp"
#include "common/harness.hpp"
#include "driver/alternating.hpp"
#include "driver/registry.hpp"
#include "roost/roost.hpp"

namespace bench {

namespace {

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// The shared stamp: who ran last and when, in one word ((time << 1) | side; 0 before either side ran), which
// each side moves on with a compare-and-swap. Each side spins until `count` gaps are recorded. Two plain words
// (an owner and a time) let a side switched out between reading the clock and writing come back and write a
// time older than the other side's stamps, and a gap wrapped around: 1.8e13 us "a switch" in 5 of 6 runs of
// --preempt-cost on a loaded machine, then ratios of 0.00x (an outside-user campaign). A swap that succeeds
// replaced the word the clock was read after, so every gap is the clock's own order.
struct switch_log {
  std::atomic<std::uint64_t> last{0};
  std::vector<std::uint64_t> gaps;
  std::atomic<std::size_t> recorded{0};
  std::size_t count = 0;
  explicit switch_log(std::size_t n) : gaps(n + 8), count(n) {}

  void spin_as(int me) {
    const auto side = static_cast<std::uint64_t>(me);
    for (;;) {
      const std::size_t r = recorded.load(std::memory_order_relaxed);
      if (r >= count + 8) return;
      std::uint64_t seen = last.load(std::memory_order_relaxed);
      const std::uint64_t t = now_ns();
      // Its own stamp moved on, or the first one after the other side's (a switch): either fails only where
      // the other side stamped meanwhile, which the next round sees.
      if (!last.compare_exchange_strong(seen, t << 1 | side, std::memory_order_relaxed)) continue;
      if (seen != 0 && (seen & 1) != side) {  // the very first start is no switch
        gaps[r] = t - (seen >> 1);
        recorded.store(r + 1, std::memory_order_relaxed);
      }
    }
  }
  // The gaps, leaving out the first 8 (a start-up's switches: creating the second side, first faults).
  std::vector<std::uint64_t> kept() const {
    return std::vector<std::uint64_t>(gaps.begin() + 8, gaps.begin() + static_cast<long>(count + 8));
  }
};

double median_us(const std::vector<std::uint64_t>& g) {
  return median_of(std::vector<double>(g.begin(), g.end())) / 1e3;
}

// The first CPU the process may use: CPU 0 is not one under `taskset -c 1`, where pinning to it failed
// unsaid and the two threads ran side by side, every alternation a "switch" of under 1 us (a review).
int first_allowed_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) return c;
  return 0;
}

std::vector<std::uint64_t> pthreads_gaps(std::size_t n, int cpu) {
  switch_log log(n);
  auto side = [&](int me) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (const int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set)) {
      std::fprintf(stderr, "roost-bench --preempt-cost: cannot pin the two threads to CPU %d (%s): they would not "
                   "share a core\n", cpu, std::strerror(err));
      std::exit(1);
    }
    log.spin_as(me);
  };
  std::thread a(side, 0), b(side, 1);
  a.join();
  b.join();
  return log.kept();
}

std::vector<std::uint64_t> roost_gaps(std::size_t n, const char* mode) {
  roost::options o;
  o.scheduler = "ws-help";  // both tasks queued before either spins: every switch goes through the FIFO
  o.workers = 1;
  o.preempt = mode;
  o.preempt_interval = "10ms";
  roost::runtime rt(o);
  switch_log log(n);
  rt.run([&] {
    roost::task_group g;
    g.run([&] { log.spin_as(0); });
    g.run([&] { log.spin_as(1); });
    g.wait();
  });
  return log.kept();
}

// The barrier case; returns the seconds it took, or -1 if it did not finish within `bound_s` (run in a
// child process, which is then killed: a hung runtime cannot be stopped from inside).
double barrier_seconds(const char* preempt, unsigned workers, double bound_s) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    roost::options o;
    o.workers = workers;
    o.preempt = preempt;
    roost::runtime rt(o);
    const unsigned tasks = 4 * workers;
    constexpr int kRounds = 20;
    std::atomic<unsigned> arrived{0};
    const auto t0 = std::chrono::steady_clock::now();
    rt.run([&] {
      roost::task_group g;
      for (unsigned t = 0; t < tasks; ++t)
        g.run([&] {
          for (int r = 1; r <= kRounds; ++r) {
            volatile double x = 1;
            for (int i = 0; i < 200000; ++i) x = x * 1.0000001 + 1e-9;  // ~0.5 ms of work
            arrived.fetch_add(1, std::memory_order_acq_rel);
            while (arrived.load(std::memory_order_acquire) < r * tasks) {  // busy-wait barrier
            }
          }
        });
      g.wait();
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (write(fds[1], &s, sizeof s) != static_cast<ssize_t>(sizeof s)) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  double s = -1;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(bound_s);
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      if (read(fds[0], &s, sizeof s) != static_cast<ssize_t>(sizeof s)) s = -1;
      break;
    }
    if (std::chrono::steady_clock::now() > end) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  close(fds[0]);
  return s;
}

// The floor measurement (--preempt-timers).
enum class floor_timer { none, aligned, naive, one, cputime, monitor };
std::atomic<long> g_floor_ticks{0};
void floor_handler(int) { g_floor_ticks.fetch_add(1, std::memory_order_relaxed); }

// The monitor design's wake-ups alone: a thread that wakes every 1 ms until `stop`, counting them in
// g_floor_ticks, on the CPUs of `cpus` where given.
std::thread waking_thread(std::atomic<bool>& stop, const cpu_set_t* cpus) {
  return std::thread([&stop, cpus] {
    if (cpus) pthread_setaffinity_np(pthread_self(), sizeof *cpus, cpus);
    timespec next{};
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!stop.load(std::memory_order_relaxed)) {
      next.tv_nsec += 1'000'000;
      if (next.tv_nsec >= 1'000'000'000) {
        next.tv_nsec -= 1'000'000'000;
        ++next.tv_sec;
      }
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
      g_floor_ticks.fetch_add(1, std::memory_order_relaxed);
    }
  });
}

double floor_round(floor_timer kind, unsigned threads) {
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  const std::uint64_t base = now_ns() + 2'000'000;
  std::vector<std::thread> ts;
  std::uint64_t t0 = 0;
  // The monitor design's thread: it wakes every 1 ms and signals nobody (ROOST_PREEMPT_TIMER=monitor signals
  // only a worker that passed no scheduling point, and these loops pass none, so its looks alone are
  // measured; a wake-up counts as a tick spread over the threads).
  std::atomic<bool> monitor_stop{false};
  std::thread monitor;
  if (kind == floor_timer::monitor) monitor = waking_thread(monitor_stop, nullptr);
  for (unsigned id = 0; id < threads; ++id)
    ts.emplace_back([&, id] {
      timer_t tm{};
      const bool timed = kind == floor_timer::aligned || kind == floor_timer::naive || kind == floor_timer::cputime ||
                         (kind == floor_timer::one && id == 0);
      if (timed) {
        sigevent ev{};
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = SIGURG;
        ev._sigev_un._tid = static_cast<pid_t>(gettid());
        timer_create(kind == floor_timer::cputime ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ev, &tm);
        itimerspec its{};
        its.it_interval.tv_nsec = 1'000'000;
        if (kind == floor_timer::cputime) {
          its.it_value.tv_nsec = 1'000'000;
          timer_settime(tm, 0, &its, nullptr);
        } else {
          const std::uint64_t first = base + (kind == floor_timer::aligned ? 1'000'000ull * id / threads : 0);
          its.it_value.tv_sec = static_cast<time_t>(first / 1'000'000'000ull);
          its.it_value.tv_nsec = static_cast<long>(first % 1'000'000'000ull);
          timer_settime(tm, TIMER_ABSTIME, &its, nullptr);
        }
      }
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      volatile double x = 1;
      for (long i = 0; i < 150'000'000; ++i) x = x * 1.0000001 + 1e-9;
      if (timed) timer_delete(tm);
    });
  while (ready.load() < threads) std::this_thread::yield();
  t0 = now_ns();
  go.store(true, std::memory_order_release);
  for (auto& t : ts) t.join();
  const double took_ms = static_cast<double>(now_ns() - t0) / 1e6;
  monitor_stop.store(true, std::memory_order_relaxed);
  if (monitor.joinable()) monitor.join();
  return took_ms;
}

// What one interruption of a busy CPU costs, apart from what is done in it: one thread, pinned to one CPU,
// reads the time-stamp counter in a loop and counts each gap over 1 us between two reads (an interrupt, a
// signal delivered to it, another thread run on its CPU). `kind`: none, one per-thread 1 ms CLOCK_MONOTONIC
// timer with the empty handler, or a monitor thread on the same CPU that wakes every 1 ms. Returns the gaps
// a second and the share of the time they took.
struct gap_count {
  double per_s = 0, lost = 0;
};
gap_count interruption_gaps(floor_timer kind, double seconds) {
  gap_count out;
  std::thread loop([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    std::atomic<bool> stop{false};
    std::thread monitor;
    timer_t tm{};
    if (kind == floor_timer::monitor) monitor = waking_thread(stop, &one);  // on the loop's CPU: it must give it up
    if (kind == floor_timer::aligned) {
      sigevent ev{};
      ev.sigev_notify = SIGEV_THREAD_ID;
      ev.sigev_signo = SIGURG;
      ev._sigev_un._tid = static_cast<pid_t>(gettid());
      timer_create(CLOCK_MONOTONIC, &ev, &tm);
      itimerspec its{};
      its.it_interval.tv_nsec = its.it_value.tv_nsec = 1'000'000;
      timer_settime(tm, 0, &its, nullptr);
    }
    // The counter's rate, from the clock over 20 ms.
    const std::uint64_t c0 = __builtin_ia32_rdtsc(), n0 = now_ns();
    while (now_ns() - n0 < 20'000'000) {
    }
    const double per_ns = static_cast<double>(__builtin_ia32_rdtsc() - c0) / static_cast<double>(now_ns() - n0);
    const std::uint64_t gap = static_cast<std::uint64_t>(1000 * per_ns);
    const std::uint64_t start = __builtin_ia32_rdtsc(), end = start + static_cast<std::uint64_t>(seconds * 1e9 * per_ns);
    std::uint64_t prev = start, lost = 0, gaps = 0;
    for (;;) {
      const std::uint64_t t = __builtin_ia32_rdtsc();
      if (t - prev > gap) {
        lost += t - prev;
        ++gaps;
      }
      prev = t;
      if (t > end) break;
    }
    if (kind == floor_timer::aligned) timer_delete(tm);
    stop.store(true, std::memory_order_relaxed);
    if (monitor.joinable()) monitor.join();
    const double total = static_cast<double>(prev - start);
    out.per_s = static_cast<double>(gaps) / (total / per_ns / 1e9);
    out.lost = static_cast<double>(lost) / total;
  });
  loop.join();
  return out;
}

}  // namespace

int preempt_timers(int rounds) {
  cpu_set_t set;
  sched_getaffinity(0, sizeof set, &set);
  const unsigned threads = static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
  struct sigaction sa {}, old{};
  sa.sa_handler = &floor_handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGURG, &sa, &old);
  constexpr int kKinds = 6;
  const char* names[kKinds] = {"no timer", "per-worker aligned", "per-worker naive", "chained (one timer)",
                               "per-worker CPU time", "monitor thread"};
  const floor_timer kinds[kKinds] = {floor_timer::none, floor_timer::aligned, floor_timer::naive, floor_timer::one,
                                     floor_timer::cputime, floor_timer::monitor};
  std::vector<double> ms[kKinds];
  long ticks[kKinds] = {};
  double total_ms[kKinds] = {};
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < kKinds; ++k) {
      const long before = g_floor_ticks.load();
      const double t = floor_round(kinds[k], threads);
      ms[k].push_back(t);
      total_ms[k] += t;
      ticks[k] += g_floor_ticks.load() - before;
    }
  sigaction(SIGURG, &old, nullptr);
  std::printf("The floor under preemption's overhead: %u busy threads (one per CPU), a 1 ms interval, an empty "
              "handler, median of %d interleaved rounds\n",
              threads, rounds);
  const auto median = [](const std::vector<double>& v) { return median_of(v); };
  const double none = median(ms[0]);
  for (int k = 0; k < kKinds; ++k)
    std::printf("  %-22s %9.1f ms   %.4fx   %6.0f ticks/s per thread\n", names[k], median(ms[k]), median(ms[k]) / none,
                static_cast<double>(ticks[k]) / (total_ms[k] / 1e3) / threads);
#if defined(__x86_64__)
  // The same floor, one interruption at a time (interruption_gaps): what the designs above pay per tick.
  sigaction(SIGURG, &sa, &old);
  const floor_timer gap_kinds[3] = {floor_timer::none, floor_timer::aligned, floor_timer::monitor};
  const char* gap_names[3] = {"no timer", "a 1 ms timer", "a 1 ms monitor"};
  std::vector<double> per_s[3], lost[3];
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < 3; ++k) {
      const gap_count g = interruption_gaps(gap_kinds[k], 1.0);
      per_s[k].push_back(g.per_s);
      lost[k].push_back(g.lost);
    }
  sigaction(SIGURG, &old, nullptr);
  std::printf("What one interruption costs: one busy thread pinned to one CPU counts the gaps over 1 us between its "
              "reads of the time-stamp counter, 1 s, median of %d interleaved rounds\n",
              rounds);
  // Both designs tick 1,000 times a second: a tick's cost is the time lost beyond none's, over 1,000.
  double least_us = 0;
  for (int k = 0; k < 3; ++k) {
    std::printf("  %-16s %6.0f gaps/s   %5.2f%% of the time lost", gap_names[k], median(per_s[k]), 100 * median(lost[k]));
    if (k > 0) {
      const double us = (median(lost[k]) - median(lost[0])) * 1e6 / 1000;
      least_us = k == 1 ? us : std::min(least_us, us);
      std::printf("   %.1f us a tick", us);
      // Less time lost than with no timer at all: the machine's noise, not a gain (a single round on a loaded
      // machine printed -30.3 us a tick and a cost of -3.0% without a word: an outside-user campaign).
      if (us < 0) std::printf(" (below the noise of the runs without a timer)");
    }
    std::printf("\n");
  }
  if (least_us < 0)
    std::printf("  so a design that interrupts a busy CPU once a ms costs it less than this machine's noise here (a "
                "negative difference to no timer); more rounds (--preempt-timers R) or a quieter machine tell more\n");
  else
    std::printf("  so a design that interrupts a busy CPU once a ms costs it about %.1f%% here; one wake a ms for the "
                "whole process, spread over its %u busy CPUs, about %.1f%% of them\n",
                least_us / 10, threads, least_us / 10 / threads);
#endif
  return 0;
}

namespace {
// The ticks alone, for --preempt-overhead's floor: a runtime with preemption off, whose workers' threads get
// the same per-worker aligned 1 ms timers as ROOST_PREEMPT_TIMER=aligned, with an empty handler, while it
// runs (armed just before, disarmed just after: worker 0's thread runs every runtime's runs).
constexpr int kBareTickSignal = 40;  // a real-time signal nobody else uses here (SIGRTMIN is 34 or 35)
void bare_tick_handler(int) {}
void install_bare_tick_handler() {
  struct sigaction sa {};
  sa.sa_handler = &bare_tick_handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(kBareTickSignal, &sa, nullptr);
}
struct bare_ticks {
  std::vector<timer_t> timers;
  // The kernel thread of each worker, found by tasks that wait for each other to be seen (bounded).
  void attach(roost::runtime& rt, unsigned workers) {
    std::vector<std::atomic<long>> tid(workers);
    for (auto& t : tid) t.store(0);
    std::atomic<unsigned> seen{0};
    rt.run([&] {
      roost::task_group g;
      for (unsigned i = 0; i < 16 * workers; ++i)
        g.run([&] {
          const int id = roost::this_worker_id();
          long none = 0;
          if (id >= 0 && tid[static_cast<unsigned>(id)].compare_exchange_strong(none, static_cast<long>(gettid())))
            seen.fetch_add(1);
          const std::uint64_t until = now_ns() + 1'000'000'000;
          while (seen.load() < workers && now_ns() < until) std::this_thread::yield();
        });
      g.wait();
    });
    for (unsigned i = 0; i < workers; ++i) {
      if (tid[i].load() == 0) {
        std::fprintf(stderr, "roost-bench: --preempt-overhead: worker %u ran no task in 1 s; its bare ticks are "
                             "left out\n", i);
        continue;
      }
      sigevent ev{};
      ev.sigev_notify = SIGEV_THREAD_ID;
      ev.sigev_signo = kBareTickSignal;
      ev._sigev_un._tid = static_cast<pid_t>(tid[i].load());
      timer_t t{};
      if (timer_create(CLOCK_MONOTONIC, &ev, &t) == 0) timers.push_back(t);
    }
  }
  void arm() {
    for (std::size_t i = 0; i < timers.size(); ++i) {
      // Worker i's ticks i/n of an interval after worker 0's, as the aligned design's (relative times).
      const std::uint64_t first = 1'000'000ull + 1'000'000ull * i / timers.size();
      itimerspec its{};
      its.it_interval.tv_nsec = 1'000'000;
      its.it_value.tv_sec = static_cast<time_t>(first / 1'000'000'000ull);
      its.it_value.tv_nsec = static_cast<long>(first % 1'000'000'000ull);
      timer_settime(timers[i], 0, &its, nullptr);
    }
  }
  void disarm() {
    itimerspec off{};
    for (timer_t t : timers) timer_settime(t, 0, &off, nullptr);
  }
  void detach() {
    for (timer_t t : timers) timer_delete(t);
    timers.clear();
  }
};
}  // namespace

int preempt_overhead(int rounds, std::vector<std::string> benches, std::vector<std::string> variants,
                     std::vector<unsigned> workers, const size_choice& size) {
  if (benches.empty()) benches = {"fib", "heat2d", "matmul"};
  if (variants.empty()) variants = {"ws", "ws-help"};
  if (workers.empty()) workers = {1};
  struct config {
    const char* name;
    const char* preempt;
    const char* timer;
    bool bare_ticks = false;
  };
  const config configs[] = {{"off", "off", nullptr},
                            {"signal, CPU-time timers", "signal", "cputime"},
                            {"klt, CPU-time timers", "klt", "cputime"},
                            {"signal, aligned timers", "signal", "aligned"},
                            {"klt, aligned timers", "klt", "aligned"},
                            {"signal, chained timer", "signal", "chained"},
                            {"klt, chained timer", "klt", "chained"},
                            {"signal, monitor thread", "signal", "monitor"},
                            {"klt, monitor thread", "klt", "monitor"},
                            {"off, bare aligned ticks", "off", nullptr, true},
                            {"off again (control)", "off", nullptr}};
  constexpr int kConfigs = 11;
  install_bare_tick_handler();
  const std::string heading = "Preemption's overhead at a 1 ms interval against off: median of " +
                              std::to_string(rounds) + " interleaved rounds (quartiles), process CPU time and wall time";
  bool all_ok = true;
  const int status = for_each_case("--preempt-overhead", heading, benches, variants, workers, size, [&](const overhead_case& c) {
    double preempted[kConfigs] = {}, deferred[kConfigs] = {};  // per timed run, summed
    std::vector<bare_ticks> bare(kConfigs);
    alternation a;
    a.configs = kConfigs;
    a.make = [&](int k) {
      roost::options o;
      o.scheduler = c.variant;
      o.workers = c.workers;
      o.preempt = configs[k].preempt;
      if (configs[k].timer) {
        o.preempt_timer = configs[k].timer;
        o.preempt_interval = "1ms";
      }
      return std::make_unique<roost::runtime>(o);
    };
    a.made = [&](std::vector<std::unique_ptr<roost::runtime>>& rts) {
      for (int k = 0; k < kConfigs; ++k)
        if (configs[k].bare_ticks) bare[static_cast<std::size_t>(k)].attach(*rts[static_cast<std::size_t>(k)], c.workers);
    };
    a.ending = [&](std::vector<std::unique_ptr<roost::runtime>>&) {
      for (auto& bt : bare) bt.detach();
    };
    a.run = [&](int k, roost::runtime& rt, bool timed) {
      const unsigned long long p0 = rt.preemptions(), d0 = rt.preempt_ticks_deferred();
      bare_ticks& bt = bare[static_cast<std::size_t>(k)];
      const bool ticks = configs[k].bare_ticks;
      const run_times took = time_run(c, rt, configs[k].name, all_ok, [&] { if (ticks) bt.arm(); },
                                      [&] { if (ticks) bt.disarm(); });
      if (timed) {  // the warm-up's counts are not kept
        preempted[k] += static_cast<double>(rt.preemptions() - p0);
        deferred[k] += static_cast<double>(rt.preempt_ticks_deferred() - d0);
      }
      return took;
    };
    const alternation_ratios ratios = alternate(a, rounds);
    for (int k = 1; k < kConfigs; ++k)
      std::printf("    %-24s %s   %.1f preempted, %.1f deferred a run\n", configs[k].name,
                  ratio_columns(ratios, k).c_str(), preempted[k] / rounds, deferred[k] / rounds);
    std::fflush(stdout);
  });
  if (status != 0) return status;
  return all_ok ? 0 : 1;
}

int preempt_cost(int count) {
  // In interleaved rounds, so that the three meet the same load on a shared machine (a VM's neighbours moved
  // the pthreads figure from 19 to 33 us between two runs of a minute).
  constexpr int kRounds = 5;
  const std::size_t n = static_cast<std::size_t>(std::max(count / kRounds, 1));
  std::printf("Preemption cost, two spinning threads on one core, median of %zu preemptions in %d interleaved "
              "rounds (seed 003 Table 3.1 method)\n",
              n * kRounds, kRounds);
  std::vector<std::uint64_t> gaps[3];
  for (int r = 0; r < kRounds; ++r) {
    auto add = [](std::vector<std::uint64_t>& to, const std::vector<std::uint64_t>& g) { to.insert(to.end(), g.begin(), g.end()); };
    add(gaps[0], pthreads_gaps(n, first_allowed_cpu()));
    add(gaps[1], roost_gaps(n, "signal"));
    add(gaps[2], roost_gaps(n, "klt"));
  }
  const double p = median_us(gaps[0]), s = median_us(gaps[1]), k = median_us(gaps[2]);
  std::printf("  pthreads (kernel time slice)          %8.2f us\n", p);
  std::printf("  signal-yield (ROOST_PREEMPT=signal)   %8.2f us   %.2fx pthreads (goal: at most 1.3x)\n", s, s / p);
  std::printf("  KLT-switching (ROOST_PREEMPT=klt)     %8.2f us   %.2fx pthreads (goal: at most 2.5x)\n", k, k / p);
  return 0;
}

int preempt_barrier(unsigned workers, double bound_s) {
  std::printf("A busy-wait barrier: %u tasks on %u workers, 20 rounds of ~0.5 ms of work each, then the barrier\n",
              4 * workers, workers);
  for (const char* mode : {"off", "signal", "klt"}) {
    const double s = barrier_seconds(mode, workers, bound_s);
    if (s < 0) std::printf("  preemption %-6s hung: no result after %.0f s (ended)\n", mode, bound_s);
    else std::printf("  preemption %-6s %8.3f s\n", mode, s);
  }
  return 0;
}

}  // namespace bench
