// Linux implementation of the platform layer.
#include "platform/platform.hpp"
#include "platform/page_placement.hpp"

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <system_error>

// The process's first stack pointer, set by the dynamic loader (glibc, GLIBC_2.1; used by its own
// pthread_getattr_np for the main thread).
extern "C" void* __libc_stack_end;

namespace roost::platform {

namespace {
// What a thread that roost pinned (a worker, or a caller lent as worker 0) could use before: a worker's is
// what the thread that started it could use. A runtime made inside a task asked the worker's thread, pinned
// to one CPU, for the CPUs of the process: "this process may use 1 CPU", and it ran oversubscribed, its
// unpinned workers inheriting that one CPU. Null while roost has not pinned the thread. On the heap: the
// library's thread-local variables are static TLS, of which a process has little for every library it
// loads (tests/plugins/host.cpp), and a cpu_set_t is 128 bytes.
thread_local cpu_set_t* t_cpus_before_pinning = nullptr;

// The calling thread's CPUs as its process gave them; empty if the OS does not say.
cpu_set_t cpus_before_pinning() {
  if (t_cpus_before_pinning) return *t_cpus_before_pinning;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) CPU_ZERO(&set);
  return set;
}

// Marks the calling thread pinned by roost, remembering `before`; or unpinned, with nullptr.
void set_cpus_before_pinning(const cpu_set_t* before) {
  if (before && !t_cpus_before_pinning) t_cpus_before_pinning = new cpu_set_t(*before);
  else if (before) *t_cpus_before_pinning = *before;
  else {
    delete t_cpus_before_pinning;
    t_cpus_before_pinning = nullptr;
  }
}

struct thread_start {
  std::function<void()> fn;
  cpu_set_t cpus_before_pinning;  // the starting thread's
  bool pinned = false;            // started on one CPU
};

void* thread_trampoline(void* p) {
  std::unique_ptr<thread_start> start(static_cast<thread_start*>(p));
  if (start->pinned) set_cpus_before_pinning(&start->cpus_before_pinning);
  start->fn();
  set_cpus_before_pinning(nullptr);  // the thread ends: its copy goes
  return nullptr;
}
long futex(std::atomic<std::uint32_t>* addr, int op, std::uint32_t val) {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), op, val, nullptr, nullptr, 0);
}
}  // namespace

native_platform::thread_handle native_platform::start_thread(std::function<void()> fn, int os_cpu) {
  auto* start = new thread_start{std::move(fn), cpus_before_pinning()};
  // Created with its affinity: on its CPU, since a thread that pins itself as its first act must first run
  // wherever the kernel queued it, and there it waited a time slice behind the busy caller (0.75-5 ms here);
  // unpinned, on the CPUs its starter had before roost pinned it, not on the one CPU of a worker it inherits.
  pthread_t t{};
  auto create = [&](const cpu_set_t& set) {
    pthread_attr_t attr;
    int rc = pthread_attr_init(&attr);
    if (rc != 0) return rc;
    rc = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
    if (rc == 0) rc = pthread_create(&t, &attr, &thread_trampoline, start);
    pthread_attr_destroy(&attr);
    return rc;
  };
  int rc = EINVAL;
  if (os_cpu >= 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(os_cpu, &one);
    start->pinned = true;
    rc = create(one);
  }
  if (rc != 0 && CPU_COUNT(&start->cpus_before_pinning) > 0) {  // unpinned, or the CPU refused
    start->pinned = false;
    rc = create(start->cpus_before_pinning);
  }
  if (rc != 0) {
    start->pinned = false;
    rc = pthread_create(&t, nullptr, &thread_trampoline, start);
  }
  if (rc != 0) {
    delete start;
    throw std::system_error(rc, std::generic_category(), "roost: cannot start a worker thread");
  }
  return static_cast<thread_handle>(t);
}

void native_platform::join_thread(thread_handle h) { pthread_join(static_cast<pthread_t>(h), nullptr); }

bool native_platform::pin_this_thread(int os_cpu) {
  const cpu_set_t before = cpus_before_pinning();
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(os_cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) return false;
  set_cpus_before_pinning(&before);
  return true;
}

native_platform::saved_affinity native_platform::save_affinity() {
  static_assert(sizeof(cpu_set_t) <= sizeof(saved_affinity::mask));
  saved_affinity a;
  auto* set = reinterpret_cast<cpu_set_t*>(a.mask);
  CPU_ZERO(set);
  a.valid = pthread_getaffinity_np(pthread_self(), sizeof(cpu_set_t), set) == 0;
  a.pinned_by_roost = t_cpus_before_pinning != nullptr;
  return a;
}

int native_platform::current_cpu() { return sched_getcpu(); }

void native_platform::restore_affinity(const saved_affinity& a) {
  if (a.valid && pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), reinterpret_cast<const cpu_set_t*>(a.mask)) == 0 &&
      !a.pinned_by_roost)  // a lent thread pinned by another runtime stays its
    set_cpus_before_pinning(nullptr);
}

std::vector<int> native_platform::allowed_cpus() {
  const cpu_set_t set = cpus_before_pinning();
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::uint64_t native_platform::now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void native_platform::wait_on(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  futex(&word, FUTEX_WAIT_PRIVATE, expected);  // EAGAIN / EINTR: the caller re-checks its condition
}
void native_platform::wake_one(std::atomic<std::uint32_t>& word) { futex(&word, FUTEX_WAKE_PRIVATE, 1); }
void native_platform::wake_all(std::atomic<std::uint32_t>& word) { futex(&word, FUTEX_WAKE_PRIVATE, INT_MAX); }

void native_platform::yield_cpu() { sched_yield(); }

unsigned native_platform::relax_count_for_ns(unsigned ns) {
  // The fastest of a few batches: a batch the OS interrupted is slower for that reason alone. In integers
  // (picoseconds a pause): every runtime's construction asks, and a division in double raised the inexact
  // exception there, so a program that unmasks FE_INEXACT (feenableexcept) could make no runtime at all (an
  // outside-user campaign: SIGFPE under every scheduler).
  static const std::uint64_t ps_per_relax = [] {
    constexpr std::uint64_t kBatches = 5, kPerBatch = 256;
    std::uint64_t best = ~std::uint64_t{0};
    for (std::uint64_t b = 0; b < kBatches; ++b) {
      const std::uint64_t t0 = now_ns();
      for (std::uint64_t i = 0; i < kPerBatch; ++i) cpu_relax();
      best = std::min(best, (now_ns() - t0) * 1000 / kPerBatch);
    }
    return std::max<std::uint64_t>(best, 500);
  }();
  const std::uint64_t n = std::uint64_t{ns} * 1000 / ps_per_relax;
  return static_cast<unsigned>(std::clamp<std::uint64_t>(n, 1, 65536));
}

bool native_platform::enable_heavy_barrier() {
  static const bool ok = [] {
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  }();
  return ok;
}

void native_platform::heavy_barrier() { syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0); }

namespace {
// The probes a process makes once, each a function-local static made at its first use, while a runtime is
// made: fork() copies one that another thread is making "in progress", and the child's first use of it waits
// for ever (__cxa_guard_acquire; an outside-user campaign: a child forked while another thread made the
// process's first runtime hung in enable_heavy_barrier). Finished before every fork instead: a probe in
// progress on another thread is waited for, one nobody made yet is made here (once; the membarrier
// registration and libnuma's look at the machine are all it costs a program that forks). After this no
// thread can be making one, so the child finds each made or untouched.
void finish_probes_before_fork() {
  (void)native_platform::enable_heavy_barrier();
  (void)native_platform::relax_count_for_ns(1);
  (void)native_platform::page_size();
  (void)page_placement::native_nodes();
}
// Before main, so that registering is no window of its own.
__attribute__((constructor)) void watch_forks_for_probes() { ::pthread_atfork(&finish_probes_before_fork, nullptr, nullptr); }
}  // namespace

std::size_t native_platform::page_size() {
  static const std::size_t ps = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return ps;
}

native_platform::stack_span native_platform::main_stack() {
  const auto base = reinterpret_cast<std::uintptr_t>(__libc_stack_end);
  if (base == 0) return {};
  rlimit rl{};
  std::uintptr_t depth = std::uintptr_t{1} << 30;
  if (::getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) depth = std::min<std::uintptr_t>(depth, rl.rlim_cur);
  std::uintptr_t lo = base > depth ? base - depth : 0;
  // Not below the mapping under the stack's, as glibc's pthread_getattr_np bounds the main thread's stack:
  // memory mapped there is no stack.
  if (FILE* maps = std::fopen("/proc/self/maps", "r")) {
    char line[512];
    std::uintptr_t below = 0;
    while (std::fgets(line, sizeof line, maps)) {
      unsigned long from = 0, to = 0;
      if (std::sscanf(line, "%lx-%lx", &from, &to) != 2) continue;
      if (from <= base && base < to) {
        lo = std::max(lo, below);
        break;
      }
      if (to <= base) below = to;
    }
    std::fclose(maps);
  }
  return {lo, base};
}

}  // namespace roost::platform

namespace roost::platform {

void native_platform::fatal(const char* what, const char* why) {
  char m[2048];
  const int n = std::snprintf(m, sizeof m, "%s: %s\n", what, why);
  ssize_t r = ::write(2, m, n < 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(n), sizeof m - 1));
  (void)r;
  std::abort();
}

}  // namespace roost::platform
