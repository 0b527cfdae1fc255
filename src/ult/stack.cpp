#include "ult/stack.hpp"

#include <signal.h>
#include <sys/auxv.h>
#include <ucontext.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <mutex>
#include <new>

#include "platform/fork_hold.hpp"
#include "platform/platform.hpp"
#include "roost/detail/sanitizers.hpp"

#ifdef ROOST_ASAN
extern "C" void __asan_unpoison_memory_region(void const volatile* addr, std::size_t size);
#endif

namespace roost::ult {

namespace {

// Guard registry read by the signal handler: a fixed array of [lo, hi) ranges; a slot is free when lo == 0.
// Only plain atomic loads happen in the handler (async-signal-safe).
constexpr std::size_t kMaxGuards = 1 << 16;
std::atomic<std::uintptr_t> g_guard_lo[kMaxGuards];
std::atomic<std::uintptr_t> g_guard_hi[kMaxGuards];
std::atomic<std::size_t> g_guard_slots{0};  // high-water mark of used slots
std::mutex g_guard_mutex;                   // serialises register/unregister (never taken in the handler)
// Held across fork() (platform/fork_hold.hpp): every runtime registers its stacks' guards as it is made.
__attribute__((constructor)) void watch_forks_for_guards() { platform::hold_across_forks<g_guard_mutex>(); }

void register_guard(std::uintptr_t lo, std::uintptr_t hi) {
  std::lock_guard<std::mutex> lk(g_guard_mutex);
  std::size_t n = g_guard_slots.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < n; ++i) {
    if (g_guard_lo[i].load(std::memory_order_relaxed) == 0) {
      g_guard_hi[i].store(hi, std::memory_order_relaxed);
      g_guard_lo[i].store(lo, std::memory_order_release);
      return;
    }
  }
  if (n == kMaxGuards) return;  // more stacks than slots: overflow still faults, just without our message
  g_guard_hi[n].store(hi, std::memory_order_relaxed);
  g_guard_lo[n].store(lo, std::memory_order_release);
  g_guard_slots.store(n + 1, std::memory_order_release);
}

void unregister_guard(std::uintptr_t lo) {
  std::lock_guard<std::mutex> lk(g_guard_mutex);
  std::size_t n = g_guard_slots.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < n; ++i)
    if (g_guard_lo[i].load(std::memory_order_relaxed) == lo) {
      g_guard_lo[i].store(0, std::memory_order_release);
      return;
    }
}

// Atomic: runtimes may be constructed on several threads at once (each stores its stack size here); a
// lock-free atomic load is also safe in the signal handler.
std::atomic<std::size_t> g_stack_size_for_message{0};
struct sigaction g_old_segv, g_old_bus;

// The report is built in one buffer and written with one write(2), by the first thread that overflows only:
// two workers overflowing at once used to interleave their three writes into one garbled line.
struct message {
  char buf[512];
  std::size_t len = 0;
  void add(const char* s) {
    while (*s && len < sizeof buf) buf[len++] = *s++;
  }
  void add(std::size_t v) {
    char digits[32];
    int i = 0;
    do { digits[i++] = static_cast<char>('0' + v % 10); v /= 10; } while (v && i < 32);
    while (i > 0 && len < sizeof buf) buf[len++] = digits[--i];
  }
};
std::atomic<bool> g_overflow_reported{false};

// The bytes the kernel needs below a stack pointer to deliver a signal there (its frame, with the FPU and
// vector state: AT_MINSIGSTKSZ), and a page of slack. Read once at install, not in the handler.
std::atomic<std::uintptr_t> g_signal_frame_bytes{0};

// Where the fault points into a guard. An access into one is the usual overflow (si_addr). The other: a
// signal (a preemption tick, SIGURG, runs on the task's own stack) arrived while the stack pointer was
// closer to the guard than a signal frame; the kernel could not push the frame and sent SIGSEGV instead,
// SI_KERNEL with no address (it ended the process as a bare segmentation fault). Then the interrupted stack
// pointer lies in the guard or less than a frame above it. Other SI_KERNEL faults (a general-protection
// fault: a misaligned SSE access, a non-canonical address) are told apart only by that stack pointer, so
// one that strikes a task within a signal frame of its guard is reported as an overflow too: rare, and
// the task was a frame from overflowing. x86-64 only (the stack pointer's register); elsewhere such a fault
// stays a bare SIGSEGV.
std::uintptr_t fault_address(int sig, const siginfo_t* info, const void* ctx, std::uintptr_t& slack) {
  slack = 0;
#if defined(__x86_64__) && defined(REG_RSP)
  if (sig == SIGSEGV && info->si_code == SI_KERNEL && ctx) {
    slack = g_signal_frame_bytes.load(std::memory_order_relaxed);
    return static_cast<std::uintptr_t>(static_cast<const ucontext_t*>(ctx)->uc_mcontext.gregs[REG_RSP]);
  }
#else
  (void)sig;
  (void)ctx;
#endif
  return reinterpret_cast<std::uintptr_t>(info->si_addr);
}

void on_fault(int sig, siginfo_t* info, void* ctx) {
  std::uintptr_t slack = 0;
  const std::uintptr_t addr = fault_address(sig, info, ctx, slack);
  std::size_t n = g_guard_slots.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i) {
    std::uintptr_t lo = g_guard_lo[i].load(std::memory_order_acquire);
    if (lo != 0 && addr >= lo && addr < g_guard_hi[i].load(std::memory_order_relaxed) + slack) {
      if (g_overflow_reported.exchange(true)) {
        for (;;) pause();  // another thread reports and aborts the process
      }
      message m;
      m.add("roost: task stack overflow: a task used more than its stack of ");
      m.add(g_stack_size_for_message.load(std::memory_order_relaxed));
      m.add(" bytes (ROOST_STACK_SIZE). Raise ROOST_STACK_SIZE (e.g. ROOST_STACK_SIZE=64M; stacks are "
            "reserved, not committed) or options::stack_size, or make the task's recursion shallower.\n");
      ssize_t r = ::write(2, m.buf, m.len);
      (void)r;
      signal(SIGABRT, SIG_DFL);
      abort();
    }
  }
  // Not ours: hand the fault to whoever was there before us (default: crash with the original signal).
  const struct sigaction& old = sig == SIGSEGV ? g_old_segv : g_old_bus;
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction) { old.sa_sigaction(sig, info, ctx); return; }
  } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN && old.sa_handler) {
    old.sa_handler(sig);
    return;
  }
  signal(sig, SIG_DFL);  // returning re-executes the faulting access, which now kills the process
}

}  // namespace

namespace {
std::atomic<std::size_t> g_stacks_mapped{0};
std::atomic<std::size_t> g_stacks_ever_mapped{0};

// vm.max_map_count now, or 0 where it cannot be read.
unsigned long read_mapping_limit() {
  unsigned long max_maps = 0;
  if (FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
    if (std::fscanf(f, "%lu", &max_maps) != 1) max_maps = 0;
    std::fclose(f);
  }
  return max_maps;
}

// What an exhausted address space or mapping table looks like to the user: a std::bad_alloc (what they would
// catch), whose what() says which limit and what to do.
class stack_exhausted : public std::bad_alloc {
 public:
  stack_exhausted(std::size_t bytes, int err) {
    const std::size_t mapped = g_stacks_mapped.load();
    const unsigned long max_maps = read_mapping_limit();
    std::string m = "roost: could not map a task stack of " + std::to_string(bytes >> 10) + " KiB (" +
                    std::strerror(err) + ") with " + std::to_string(mapped) +
                    " task stacks mapped. Each live task that waits or is suspended holds a stack, ";
    // Two mappings a stack: far below the kernel's limit, it was the address space that ran out.
    if (max_maps != 0 && 2 * mapped < max_maps / 2) {
      rlimit as{};
      std::string limit = "unlimited";
      if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
        limit = std::to_string(as.rlim_cur >> 20) + " MiB";
      m += "and its size in address space; the kernel's limit on mappings (vm.max_map_count = " +
           std::to_string(max_maps) + ") is far off, so the address space or memory ran out (this process's "
           "limit, RLIMIT_AS or ulimit -v: " + limit + "): nest fewer tasks (run a deep recursion serially "
           "below a cutoff), lower ROOST_STACK_SIZE, or raise that limit";
    } else {
      m += "and each stack takes two of the kernel's memory mappings (vm.max_map_count";
      if (max_maps != 0) m += " = " + std::to_string(max_maps);
      m += "): nest fewer tasks (run a deep recursion serially below a cutoff), or raise vm.max_map_count";
    }
    msg_ = std::make_shared<const std::string>(std::move(m));
  }
  const char* what() const noexcept override { return msg_->c_str(); }

 private:
  std::shared_ptr<const std::string> msg_;
};
}  // namespace

std::size_t stacks_mapped() { return g_stacks_mapped.load(std::memory_order_relaxed); }
std::size_t stacks_ever_mapped() { return g_stacks_ever_mapped.load(std::memory_order_relaxed); }

std::size_t mapping_limit() {
  static const std::size_t limit = [] {
    const unsigned long m = read_mapping_limit();
    return m != 0 ? static_cast<std::size_t>(m) : std::size_t{65530};
  }();
  return limit;
}

stack allocate_stack(std::size_t usable_bytes) {
  const std::size_t page = platform::os::page_size();
  std::size_t usable = (usable_bytes + page - 1) / page * page;
  stack s;
  s.guard = kGuardBytes > page ? (kGuardBytes + page - 1) / page * page : page;
  s.total = usable + s.guard;
  void* p = ::mmap(nullptr, s.total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw stack_exhausted(usable, errno);
  if (::mprotect(p, s.guard, PROT_NONE) != 0) {
    const int err = errno;
    ::munmap(p, s.total);
    throw stack_exhausted(usable, err);
  }
  g_stacks_mapped.fetch_add(1, std::memory_order_relaxed);
  g_stacks_ever_mapped.fetch_add(1, std::memory_order_relaxed);
  s.base = p;
  auto lo = reinterpret_cast<std::uintptr_t>(p);
  register_guard(lo, lo + s.guard);
  return s;
}

void forget_frames(const stack& s) {
#ifdef ROOST_ASAN
  if (s.base) __asan_unpoison_memory_region(static_cast<char*>(s.base) + s.guard, s.total - s.guard);
#else
  (void)s;
#endif
}

void free_stack(const stack& s) {
  if (!s.base) return;
  unregister_guard(reinterpret_cast<std::uintptr_t>(s.base));
  forget_frames(s);  // a parked fiber's frames never returned
  ::munmap(s.base, s.total);
  g_stacks_mapped.fetch_sub(1, std::memory_order_relaxed);
}

// The sanitizers would check the reads against a previous task's frames (ASan's redzones of a fiber that
// parked mid-stack, TSan's history of the thread that last ran it); it is a plain look at the memory.
__attribute__((no_sanitize("address", "thread"))) bool release_deep_pages(const stack& s, const void* top,
                                                                       std::size_t keep_bytes) {
  const std::size_t page = platform::os::page_size();
  const auto lo = reinterpret_cast<std::uintptr_t>(s.base) + s.guard;
  const auto t = reinterpret_cast<std::uintptr_t>(top);
  if (t < lo + keep_bytes + kDeepMarkBytes + page) return false;  // nothing below the kept part
  const std::uintptr_t band_hi = (t - keep_bytes) & ~std::uintptr_t{63};
  const auto* words = reinterpret_cast<const volatile std::uint64_t*>(band_hi - kDeepMarkBytes);
  std::uint64_t any = 0;
  for (std::size_t i = 0; i < kDeepMarkBytes / 8; ++i) any |= words[i];
  if (any == 0) return false;
  const std::uintptr_t hi = band_hi & ~(page - 1);
  return ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED) == 0;
}

void install_overflow_handler(std::size_t stack_size) {
  static std::once_flag once;
  g_stack_size_for_message.store(stack_size, std::memory_order_relaxed);
  std::call_once(once, [] {
    const unsigned long frame = getauxval(AT_MINSIGSTKSZ);
    g_signal_frame_bytes.store((frame ? frame : 16384) + 4096, std::memory_order_relaxed);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = &on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_old_segv);
    sigaction(SIGBUS, &sa, &g_old_bus);
  });
}

void* install_alt_stack() {
  const std::size_t size = 64 * 1024;
  void* mem = std::malloc(size);
  if (!mem) return nullptr;
  stack_t ss;
  ss.ss_sp = mem;
  ss.ss_size = size;
  ss.ss_flags = 0;
  if (sigaltstack(&ss, nullptr) != 0) {
    std::free(mem);
    return nullptr;
  }
  return mem;
}

void release_alt_stack(void* handle) {
  if (!handle) return;
  stack_t ss;
  std::memset(&ss, 0, sizeof ss);
  ss.ss_flags = SS_DISABLE;
  sigaltstack(&ss, nullptr);
  std::free(handle);
}

}  // namespace roost::ult
