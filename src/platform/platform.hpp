// The platform layer: everything the engine needs from the world — threads, pinning, sleep/wake, clock.
// The engine and the schedulers reach the OS only through `os` (DESIGN §2), which answers from
// `native_platform` (Linux) or, on an OS thread that a simulated platform drives (t_sim, set while a
// runtime made with ROOST_PLATFORM=sim works), from `sim_platform` (sim_platform.hpp: virtual time, every
// worker a user-level thread on that one OS thread). No call of `os` lies on a spawn or join path: the
// dispatch, a thread-local load and a branch, is paid where a worker starts, idles, sleeps or wakes.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace roost::platform {

struct native_platform {
  using thread_handle = std::uintptr_t;

  // Starts an OS thread running fn; the handle is for join(). With os_cpu >= 0 the thread is created on that
  // CPU (if the OS allows it), so it need not first wait for a time slice wherever the kernel queued it.
  static thread_handle start_thread(std::function<void()> fn, int os_cpu = -1);
  static void join_thread(thread_handle h);

  // Pins the calling thread to one OS CPU; returns false (and leaves it unpinned) if the OS refuses.
  static bool pin_this_thread(int os_cpu);
  // CPUs this process may run on (sched_getaffinity: taskset and cgroup cpusets are respected). A thread
  // that roost pinned answers with what it had before (a worker: what the thread that started it had), so
  // that a runtime made inside a task sees the process's CPUs, not its worker's one.
  static std::vector<int> allowed_cpus();
  // The calling thread's CPU affinity, saved to be given back (a thread that lends itself as a worker).
  struct saved_affinity {
    alignas(8) unsigned char mask[128];  // a cpu_set_t
    bool valid = false;
    bool pinned_by_roost = false;  // the thread was a worker of another runtime, pinned by it
  };
  static saved_affinity save_affinity();
  // The CPU the calling thread runs on now (-1 if unknown); cheap (no system call on Linux).
  static int current_cpu();
  static void restore_affinity(const saved_affinity& a);

  // Monotonic clock, nanoseconds.
  static std::uint64_t now_ns();

  // Sleep/wake on a 32-bit word (futex): wait() returns when *word != expected, on a wake, or spuriously.
  static void wait_on(std::atomic<std::uint32_t>& word, std::uint32_t expected);
  static void wake_one(std::atomic<std::uint32_t>& word);
  static void wake_all(std::atomic<std::uint32_t>& word);

  // Asymmetric fence (Linux membarrier, private expedited): after heavy_barrier() returns, every other
  // running thread of the process has executed a full memory barrier. Lets a hot path use a compiler-only
  // barrier where a rare path pays for both. enable_heavy_barrier() registers once and says if it works.
  static bool enable_heavy_barrier();
  static void heavy_barrier();

  // Polite spinning.
  static inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
  }
  static void yield_cpu();
  // How many cpu_relax() take about `ns` nanoseconds on this CPU (at least 1): a pause costs ~35 ns on
  // the AMD Zen 4 of the figures and a few ns on older cores, so spin loops are sized in time, not in
  // pauses. Measured once per process (the first call takes about 50 us).
  static unsigned relax_count_for_ns(unsigned ns);

  static std::size_t page_size();

  // The main thread's stack below the process's first stack pointer (glibc's __libc_stack_end): [lo, base),
  // lo RLIMIT_STACK below, at most 1 GiB, and not below the end of the mapping under the stack's. The kernel
  // starts that pointer at a random offset in its page, so the frames of main and what it calls lie at a
  // random offset too, the same distance below `base` in every run (the simulated platform numbers them from
  // it: api/simulation.hpp, sim_key).
  struct stack_span {
    std::uintptr_t lo = 0, base = 0;  // {0, 0}: unknown
  };
  static stack_span main_stack();

  // Ends the process with "what: why" on stderr, in one write: for states the runtime cannot leave any other
  // way (a task that must wait and has no stack to wait on), where a hang would be the alternative.
  [[noreturn]] static void fatal(const char* what, const char* why);
};

class sim_platform;
// The simulated platform driving the calling OS thread, or nullptr (sim_platform.hpp, sim_scope).
extern __thread sim_platform* t_sim __attribute__((tls_model("initial-exec")));

struct os {
  using thread_handle = native_platform::thread_handle;
  using saved_affinity = native_platform::saved_affinity;

  static thread_handle start_thread(std::function<void()> fn, int os_cpu = -1);
  static void join_thread(thread_handle h);
  static bool pin_this_thread(int os_cpu);
  static std::vector<int> allowed_cpus();
  static saved_affinity save_affinity();
  static int current_cpu();
  static void restore_affinity(const saved_affinity& a);
  static std::uint64_t now_ns();
  static void wait_on(std::atomic<std::uint32_t>& word, std::uint32_t expected);
  static void wake_one(std::atomic<std::uint32_t>& word);
  static void wake_all(std::atomic<std::uint32_t>& word);
  static bool enable_heavy_barrier();
  static void heavy_barrier();
  static inline void cpu_relax() {
    if (t_sim) [[unlikely]] return sim_relax();
    native_platform::cpu_relax();
  }
  static void yield_cpu();
  static unsigned relax_count_for_ns(unsigned ns);
  static std::size_t page_size() { return native_platform::page_size(); }
  [[noreturn]] static void fatal(const char* what, const char* why) { native_platform::fatal(what, why); }
  // Whether the calling OS thread is driven by a simulated platform.
  static bool simulated() { return t_sim != nullptr; }

 private:
  static void sim_relax();
};

}  // namespace roost::platform
