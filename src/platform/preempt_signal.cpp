#include "platform/preempt_signal.hpp"
#include "platform/fork_hold.hpp"
#include "roost/detail/fp_control.hpp"

#include <dlfcn.h>
#include <linux/futex.h>
#include <link.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

#include <cxxabi.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include "roost/detail/sanitizers.hpp"
#include "roost/errors.hpp"

namespace roost::platform::preempt {

namespace {

// The system libraries' executable segments, read by the handler and by the wrapped calls of every thread
// (sleep_calls.cpp, after_call: a thread's mark outlives the run that left it). Append-only: an install adds
// the segments of libraries loaded since, and an entry, once counted in, never changes, so a reader needs no
// lock. Rewritten from the start at each first install, the table was torn under a wrapped read() of hwloc on
// a thread making one runtime while another thread installed another runtime's handler (TSan; an
// outside-user campaign of concurrent runtimes). A segment of a system library that was unloaded stays in:
// ticks are deferred there, which is always safe.
struct code_range {
  std::uintptr_t lo, hi;
  bool cxx_runtime;   // libstdc++'s or libc++'s (sleep_calls.cpp: their sleep_for may be preempted at its call)
  bool tsan_runtime;  // libtsan's: the frames that call a handler TSan delivers late (late_delivery_call_site)
};
constexpr int kMaxRanges = 256;
code_range g_ranges[kMaxRanges];
std::atomic<int> g_range_count{0};  // written by install only, under g_install_mu
bool g_ranges_full = false;         // a segment found no room (said once by install)

// Whether the file name of `path` (its part after the last '/') begins with one of `prefixes`.
bool file_name_starts_with(const char* path, std::initializer_list<const char*> prefixes) {
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  for (const char* p : prefixes)
    if (std::strncmp(base, p, std::strlen(p)) == 0) return true;
  return false;
}

// Prefixes of the file names of the libraries whose code is never preempted (see the header): the C
// library (which static_system_libraries requires as a shared object), the C++ runtime (which
// static_cxx_runtime looks for), and the rest.
constexpr std::initializer_list<const char*> kCLibrary = {"libc.so", "libc.musl", "ld-musl"};
constexpr std::initializer_list<const char*> kCxxRuntime = {"libstdc++", "libc++"};
bool is_system_library(const char* path) {
  return file_name_starts_with(path, kCLibrary) || file_name_starts_with(path, kCxxRuntime) ||
         file_name_starts_with(path, {"ld-linux", "ld64.so", "libgcc_s", "libpthread", "libdl.so", "librt.so",
                                      "libasan", "libtsan", "libubsan", "liblsan", "libunwind"});
}

// The addresses of the allocator's entry points as the program resolves them (the first definition in the
// loader's search order: a preloaded or linked jemalloc's, else the C library's), and as the objects after
// the program resolve them (RTLD_NEXT from roost's code, which is the program's: a program that takes &free
// in a non-PIE executable makes RTLD_DEFAULT give its own PLT stub).
struct allocator_entries {
  std::uintptr_t at[6] = {};
  bool in_program = false;  // malloc and free both lie in the program's own executable segments
};

bool executable_segment_holds(const struct dl_phdr_info* info, std::uintptr_t pc) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (pc >= lo && pc < lo + ph.p_memsz) return true;
  }
  return false;
}

bool provides_allocator(const struct dl_phdr_info* info, allocator_entries& a) {
  for (std::uintptr_t pc : a.at)
    if (pc && executable_segment_holds(info, pc)) return true;
  return false;
}

int collect(struct dl_phdr_info* info, std::size_t, void* allocator) {
  auto& a = *static_cast<allocator_entries*>(allocator);
  const bool program = !info->dlpi_name || !*info->dlpi_name;
  const bool holds_allocator = provides_allocator(info, a);
  if (program) {
    // Not operator new alone: a program may replace it with a thin wrapper over malloc (to count
    // allocations), which holds no lock of its own.
    a.in_program = executable_segment_holds(info, a.at[0]) && executable_segment_holds(info, a.at[1]);
    return 0;
  }
  if (!is_system_library(info->dlpi_name) && !holds_allocator) return 0;
  int n = g_range_count.load(std::memory_order_relaxed);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const code_range r{info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz,
                       file_name_starts_with(info->dlpi_name, kCxxRuntime),
                       file_name_starts_with(info->dlpi_name, {"libtsan"})};
    bool known = false;
    for (int k = 0; k < n && !known; ++k) known = g_ranges[k].lo == r.lo && g_ranges[k].hi == r.hi;
    if (known) continue;
    if (n == kMaxRanges) {
      g_ranges_full = true;
      break;
    }
    g_ranges[n++] = r;  // filled before the count that lets readers see it
  }
  g_range_count.store(n, std::memory_order_release);
  return 0;
}

int collect_names(struct dl_phdr_info* info, std::size_t, void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name ? info->dlpi_name : "");
  return 0;
}

bool any_named(const std::vector<std::string>& loaded, std::initializer_list<const char*> prefixes) {
  for (const std::string& path : loaded)
    if (file_name_starts_with(path.c_str(), prefixes)) return true;
  return false;
}

std::mutex g_install_mu;
int g_installs = 0;
tick_fn g_on_tick = nullptr;
struct sigaction g_previous;

// Held across fork() (fork_hold.hpp): a child forked while another thread made or destroyed a runtime with
// preemption (install, uninstall) hung making a runtime of its own (4 children of 100). The child keeps the
// parent's count: the parent's runtimes are copies there that are never destroyed, and the handler, which a
// child inherits, stays.
__attribute__((constructor)) void watch_forks_for_installs() { hold_across_forks<g_install_mu>(); }

// The calling thread's lingering timer (preempt_signal.hpp, linger). `owner` is its exchange with the handler,
// which runs on the same thread: an atomic exchange on both sides, so that exactly one of them ends it. The
// id and tid are written before owner, and read after it, with signal fences between (same thread).
struct linger_slot {
  std::atomic<std::uint64_t> owner{0};
  timer_t id{};
  long tid = 0;
};
thread_local constinit linger_slot t_linger __attribute__((tls_model("initial-exec")));
// Whether g_lingering may hold an entry of this thread's slot: only then do resume_lingering and destroy take
// the lock, so that a KLT-switching resumption, which serves again inside a tick's handler, takes none.
thread_local constinit bool t_linger_listed __attribute__((tls_model("initial-exec"))) = false;
// Every lingering slot of the process, for end_lingering on other threads and destroy. An entry may
// outlive its lingering (the handler ended it and cannot take the lock): the slot's owner then says so. The
// pid tells a forked child the parent's entries (timers are not inherited, and their ids are reused).
struct linger_entry {
  linger_slot* slot;
  timer_t id;
  std::uint64_t owner;
  pid_t pid;
};
std::mutex g_linger_mu;
std::vector<linger_entry> g_lingering;

void disarm_id(timer_t id) {
  itimerspec off;
  std::memset(&off, 0, sizeof off);
  timer_settime(id, 0, &off, nullptr);
}

// Ends the lingering of this thread's timer if a tick finds it: the thread serves no worker.
bool tick_ended_lingering() {
  if (t_linger.owner.load(std::memory_order_relaxed) == 0) return false;
  if (t_linger.owner.exchange(0, std::memory_order_relaxed) == 0) return false;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  const int saved_errno = errno;
  disarm_id(t_linger.id);
  errno = saved_errno;
  return true;
}

void handler(int, siginfo_t*, void* uc) {
  if (tick_ended_lingering()) return;
  if (tick_fn f = g_on_tick) f(uc);
}

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

}  // namespace

std::string static_system_libraries(const std::vector<std::string>& loaded) {
  return any_named(loaded, kCLibrary) ? "" : "the C library";
}

bool static_cxx_runtime(const std::vector<std::string>& loaded) { return !any_named(loaded, kCxxRuntime); }

namespace {
// Finds the object whose thread-local block holds `address` (the calling thread's blocks).
struct tls_owner {
  std::uintptr_t address = 0;
  bool found = false;
  std::string name;
};
int find_tls_owner(struct dl_phdr_info* info, std::size_t size, void* data) {
  auto& o = *static_cast<tls_owner*>(data);
  // A loader too old to report the thread-local block (glibc before 2.12) passes a smaller struct.
  if (size < offsetof(struct dl_phdr_info, dlpi_tls_data) + sizeof info->dlpi_tls_data) return 0;
  if (!info->dlpi_tls_data) return 0;
  const auto base = reinterpret_cast<std::uintptr_t>(info->dlpi_tls_data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_TLS && o.address >= base && o.address < base + ph.p_memsz) {
      o.found = true;
      o.name = info->dlpi_name ? info->dlpi_name : "";
      return 1;  // found: dl_iterate_phdr stops
    }
  }
  return 0;
}
}  // namespace

// The C++ runtime this code calls keeps each thread's exception state (__cxa_get_globals) in its own
// thread-local block: the program's where -static-libstdc++ linked it in, even with a shared libstdc++
// loaded beside it for a shared library's sake (libboost_context's), which the loader's list alone took
// for the program's (an outside-user campaign: the notice never appeared for a program built that way).
bool cxx_runtime_in_program() {
  tls_owner o;
  o.address = reinterpret_cast<std::uintptr_t>(abi::__cxa_get_globals());
  dl_iterate_phdr(&find_tls_owner, &o);
  return o.found && !file_name_starts_with(o.name.c_str(), kCxxRuntime);
}

void install(tick_fn on_tick, const std::string& setting) {
  std::lock_guard<std::mutex> lk(g_install_mu);
  if (g_installs++ > 0) return;
  std::vector<std::string> loaded;
  dl_iterate_phdr(&collect_names, &loaded);
  if (const std::string linked_in = static_system_libraries(loaded); !linked_in.empty()) {
    --g_installs;
    throw config_error(setting + ": this program has " + linked_in + " linked into it (-static), where "
                       "roost cannot tell its code from the program's, so a tick could land inside its locks "
                       "(stdio's, malloc's) and let the next task of the thread in; link it dynamically (the "
                       "default), or turn preemption off (ROOST_PREEMPT=off)");
  }
  // The C++ runtime linked in (-static-libstdc++): its own locks are few (once-initialisations, the
  // emergency exception pool) and its stdio and malloc calls reach the shared C library, so this is told,
  // not refused.
  static bool told_cxx = false;
  if ((static_cxx_runtime(loaded) || cxx_runtime_in_program()) && !told_cxx) {
    told_cxx = true;
    std::fprintf(stderr, "roost: %s: the C++ runtime is linked into this program (-static-libstdc++), where a "
                 "tick is not deferred as it is in a shared libstdc++; its own locks (once-initialisations, the "
                 "emergency exception pool) are not protected from preemption\n", setting.c_str());
  }
  struct sigaction now;
  sigaction(kSignal, nullptr, &now);
  const bool theirs = (now.sa_flags & SA_SIGINFO) ? now.sa_sigaction != nullptr
                                                   : now.sa_handler != SIG_DFL && now.sa_handler != SIG_IGN;
  if (theirs) {
    --g_installs;
    throw config_error(setting + ": the program has its own handler for SIGURG, the signal roost's preemption "
                       "ticks with (its own, or another copy of roost's: a shared library that links roost into "
                       "itself); remove it, or turn preemption off (ROOST_PREEMPT=off)");
  }
  allocator_entries allocator;
  const char* const entries[3] = {"malloc", "free", "_Znwm"};  // _Znwm: operator new(size_t)
  for (int i = 0; i < 3; ++i) {
    allocator.at[i] = reinterpret_cast<std::uintptr_t>(::dlsym(RTLD_DEFAULT, entries[i]));
    allocator.at[3 + i] = reinterpret_cast<std::uintptr_t>(::dlsym(RTLD_NEXT, entries[i]));
  }
  dl_iterate_phdr(&collect, &allocator);
  static bool told_full = false;
  if (g_ranges_full && !told_full) {
    told_full = true;
    std::fprintf(stderr, "roost: %s: more than %d code segments of system libraries were loaded in this "
                 "process's life; ticks inside the later ones are not deferred, so a task preempted there may "
                 "hold a lock of theirs\n", setting.c_str(), kMaxRanges);
  }
  // A sanitizer's runtime linked into the program (clang's default) defines malloc, free and the sleeping calls
  // there itself: the warnings below name it, not an allocator or a plugin the program does not have (an
  // outside-user campaign found both under TSan).
  const char* sanitizer = ::dlsym(RTLD_DEFAULT, "__tsan_init")   ? "ThreadSanitizer's runtime"
                          : ::dlsym(RTLD_DEFAULT, "__asan_init") ? "AddressSanitizer's runtime"
                          : ::dlsym(RTLD_DEFAULT, "__msan_init") ? "MemorySanitizer's runtime"
                                                                  : nullptr;
  static bool told_allocator = false;
  if (allocator.in_program && !told_allocator) {
    told_allocator = true;
    if (sanitizer)
      std::fprintf(stderr, "roost: %s: %s, linked into this program, defines malloc and free, so roost cannot tell "
                   "its code from the program's: a tick inside it is not deferred (a sanitizer build's tasks may "
                   "stall on its locks under preemption); a release build has no such allocator\n",
                   setting.c_str(), sanitizer);
    else
      std::fprintf(stderr, "roost: %s: this program defines malloc and free itself (an allocator "
                   "linked into it), whose code roost cannot tell from the program's, so a tick inside it is not "
                   "deferred and a task preempted holding one of its locks would stop the next task of its thread; "
                   "link the allocator as a shared library, or turn preemption off (ROOST_PREEMPT=off)\n",
                   setting.c_str());
  }
  if (!sleep_calls_bound_here()) {
    static bool told_sleep_calls = false;
    if (!told_sleep_calls) {
      told_sleep_calls = true;
      const std::string why = sanitizer ? std::string(sanitizer) + ", linked into this program, defines them"
                                        : "libroost is linked into a shared object, not into the executable, or the "
                                          "program defines one of them itself";
      std::fprintf(stderr, "roost: %s: this program's nanosleep, clock_nanosleep, usleep, sleep and "
                   "sched_yield are not all roost's (%s), so a task that waits for another by sleeping or yielding "
                   "in a loop is preempted only when a tick lands in its own code (under "
                   "ROOST_PREEMPT_TIMER=monitor, never)%s\n",
                   setting.c_str(), why.c_str(), sanitizer ? "" : "; link libroost into the executable");
    }
  }
  g_on_tick = on_tick;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = &handler;
  sigemptyset(&sa.sa_mask);
  // Not SA_ONSTACK: the handler must run on the task's own stack, where the task's frames are, since it
  // switches away from there and the task resumes by returning from it (digest §4.2).
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(kSignal, &sa, &g_previous);
}

void check_installed(const std::string& setting) {
  struct sigaction now;
  sigaction(kSignal, nullptr, &now);
  if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == &handler) return;
  throw usage_error(setting + ": the program changed the handler of SIGURG, the signal roost's preemption "
                    "ticks with, after the runtime was made; no task would be preempted again (a task that "
                    "spin-waits would hang). Leave SIGURG to roost, or turn preemption off (ROOST_PREEMPT=off)");
}

void uninstall() {
  std::lock_guard<std::mutex> lk(g_install_mu);
  if (g_installs == 0 || --g_installs > 0) return;
  sigaction(kSignal, &g_previous, nullptr);
}

namespace {
// The signals the calling thread blocks while it serves a worker (note_serving_mask); initial-exec, so that
// the handler reads it with one segment-relative load.
__thread sigset_t t_serving_mask __attribute__((tls_model("initial-exec")));
}  // namespace

const void* thread_tag() { return &t_serving_mask; }

void adopt_thread_state(void* ucontext, const void* interrupted_on) {
  auto* uc = static_cast<ucontext_t*>(ucontext);
  stack_t here;
  if (sigaltstack(nullptr, &here) == 0) uc->uc_stack = here;
  if (interrupted_on == thread_tag()) return;  // its own thread: the mask it was interrupted with is its own
  // Signal by signal, 1 .. 64: the kernel's frame holds 64 bits of mask, and what follows them in it is the
  // signal's siginfo, not the rest of glibc's sigset_t (sigaddset and sigdelset are async-signal-safe).
  for (int sig = 1; sig < 65; ++sig) {
    if (sigismember(&t_serving_mask, sig) == 1) sigaddset(&uc->uc_sigmask, sig);
    else sigdelset(&uc->uc_sigmask, sig);
  }
}

namespace {
const code_range* range_of(std::uintptr_t pc);  // the system library whose code holds pc, if one does (below)

// TSan delivers most signals late: its own handler notes the signal and returns, and at the thread's next
// atomic operation or intercepted call its runtime calls the program's handler with a copy of the context it
// saved when the signal came (interrupted_with_more_blocked). What that copy says of the interrupted code is
// stale by then: its registers are those of the instruction the signal hit (often inside TSan's own atomic
// functions), and its fpregs still points into the kernel's frame, long gone (a tick's handler took the
// floating-point state from there, and TSan's FpEnvPreempt.ChildrenRunWhileTheirSpawnerIsPreemptedGetItsState
// failed once so). The kernel puts that image just above the context in its frame; a copy lies elsewhere.
// Never true outside TSan's builds.
bool delivered_late(const ucontext_t* uc) {
#if defined(ROOST_TSAN) && defined(__x86_64__)
  const auto distance =
      reinterpret_cast<std::uintptr_t>(uc->uc_mcontext.fpregs) - reinterpret_cast<std::uintptr_t>(uc);
  return distance > 64 * 1024;
#else
  (void)uc;
  return false;
#endif
}
#ifdef ROOST_TSAN
// Where the task is when a late delivery runs its handler: at a call into TSan's runtime (an atomic
// operation, an intercepted function), whose return address is the first on the stack above the handler's
// own frames and the TSan runtime's frames that called it; less one, the call itself, so that a call ending a
// critical window counts as inside it. That caller may be a system library (TSan runs the handler when any
// intercepted call returns, one that the C library or the C++ runtime made with a lock of theirs held too):
// then in_system_library defers the tick, as for a tick that came there. 0 where no frame of a shared libtsan
// called the handler (clang links TSan's runtime into the program, where its frames cannot be told from
// the program's): the caller then goes by the context's registers, as before. TSan calls the handler outside
// any asynchronous signal, at a point where its runtime calls back into the program.
struct call_site_search {
  std::uintptr_t pc = 0;
  bool in_tsan = false;  // passed the handler's frames into TSan's
};
_Unwind_Reason_Code find_call_site(_Unwind_Context* c, void* arg) {
  auto* s = static_cast<call_site_search*>(arg);
  const std::uintptr_t ip = _Unwind_GetIP(c);
  if (ip == 0) return _URC_END_OF_STACK;
  const code_range* r = range_of(ip);
  if (r && r->tsan_runtime) {
    s->in_tsan = true;
    return _URC_NO_REASON;
  }
  if (!s->in_tsan) return _URC_NO_REASON;  // the handler's own frames, below TSan's
  s->pc = ip - 1;
  return _URC_END_OF_STACK;
}
std::uintptr_t late_delivery_call_site() {
  call_site_search s;
  _Unwind_Backtrace(&find_call_site, &s);
  return s.pc;
}
#else
std::uintptr_t late_delivery_call_site() { return 0; }
#endif
}  // namespace

std::uint64_t interrupted_fp_state(const void* ucontext) {
#if defined(__x86_64__)
  const auto* uc = static_cast<const ucontext_t*>(ucontext);
  const auto* fp = uc->uc_mcontext.fpregs;  // the FXSAVE image of the signal frame
  if (!fp) return 0;
  // Delivered late (TSan), the handler runs on the task's thread with the task's own state still loaded.
  if (delivered_late(uc)) return detail::fp_control::capture();
  return detail::fp_control::pack(fp->mxcsr, fp->cwd);
#else
  (void)ucontext;
  return 0;
#endif
}

std::uintptr_t interrupted_pc(const void* ucontext) {
  const auto* uc = static_cast<const ucontext_t*>(ucontext);
#if defined(__x86_64__)
  if (delivered_late(uc))
    if (const std::uintptr_t pc = late_delivery_call_site()) return pc;
  return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
#else
#error "roost's preemption reads the interrupted instruction pointer: add this architecture"
#endif
}

namespace {
const code_range* range_of(std::uintptr_t pc) {
  const int n = g_range_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (pc >= g_ranges[i].lo && pc < g_ranges[i].hi) return &g_ranges[i];
  return nullptr;
}
}  // namespace

bool in_system_library(std::uintptr_t pc) { return range_of(pc) != nullptr; }

bool in_system_library_but_cxx_runtime(std::uintptr_t pc) {
  const code_range* r = range_of(pc);
  return r && !r->cxx_runtime;
}

void note_serving_mask() { pthread_sigmask(SIG_BLOCK, nullptr, &t_serving_mask); }
bool blocked_while_serving() { return sigismember(&t_serving_mask, kSignal) == 1; }

namespace {
// Whether `mask` blocks a signal that the calling thread does not block while it serves a worker. The
// kernel writes the first _NSIG bits of a handler frame's mask (64 on Linux), not the whole of glibc's
// sigset_t: only those are compared. sigismember is async-signal-safe (POSIX.1-2008). Unused in TSan's builds
// (below).
[[maybe_unused]] bool blocks_more_than_serving(const sigset_t& mask) {
  for (int sig = 1; sig < 65; ++sig)
    if (sigismember(&mask, sig) == 1 && sigismember(&t_serving_mask, sig) != 1) return true;
  return false;
}
}  // namespace

bool interrupted_with_more_blocked(const void* ucontext) {
#ifdef ROOST_TSAN
  // TSan delivers most signals late, from its own code, with a context whose mask blocks signals the
  // interrupted code did not (SIGHUP, in every tick a test looked at): the test would defer every tick and
  // no task would be preempted. Off under TSan: its builds cannot tell a program's handler this way.
  (void)ucontext;
  return false;
#else
  return blocks_more_than_serving(static_cast<const ucontext_t*>(ucontext)->uc_sigmask);
#endif
}

bool blocked_here() {
  sigset_t cur;
  pthread_sigmask(SIG_BLOCK, nullptr, &cur);
  return sigismember(&cur, kSignal) == 1;
}

void unblock_here() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, kSignal);
  pthread_sigmask(SIG_UNBLOCK, &s, nullptr);
}

void unblock_for_other_tasks() {
#ifdef ROOST_TSAN
  pthread_sigmask(SIG_SETMASK, &t_serving_mask, nullptr);
#else
  unblock_here();
#endif
}

void block_here() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, kSignal);
  pthread_sigmask(SIG_BLOCK, &s, nullptr);
}

bool more_blocked_here() {
#ifdef ROOST_TSAN
  return false;  // as interrupted_with_more_blocked: TSan runs late-delivered handlers with every signal blocked
#else
  sigset_t cur;
  pthread_sigmask(SIG_BLOCK, nullptr, &cur);
  return blocks_more_than_serving(cur);
#endif
}

unsigned long lower_timer_slack(std::uint64_t at_most_ns) {
  const int now = ::prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  if (now <= 0 || static_cast<std::uint64_t>(now) <= at_most_ns || at_most_ns == 0) return 0;
  if (::prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(at_most_ns), 0, 0, 0) != 0) return 0;
  return static_cast<unsigned long>(now);
}

void restore_timer_slack(unsigned long before) {
  if (before != 0) (void)::prctl(PR_SET_TIMERSLACK, before, 0, 0, 0);
}

long this_thread_id() { return static_cast<long>(::syscall(SYS_gettid)); }

void signal_thread(long tid) {
  // getpid and tgkill are system calls, safe in a handler. A thread that ended since its id was read makes
  // this fail with ESRCH, harmlessly; the caller's errno is the handler's to keep (engine/preemption.cpp).
  ::syscall(SYS_tgkill, static_cast<long>(::getpid()), tid, kSignal);
}

void block_all_signals_here() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

void wait_word(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::uint64_t deadline_ns) {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  struct timespec until;
  until.tv_sec = static_cast<time_t>(deadline_ns / 1'000'000'000ull);
  until.tv_nsec = static_cast<long>(deadline_ns % 1'000'000'000ull);
  // FUTEX_WAIT_BITSET takes an absolute deadline on CLOCK_MONOTONIC; a spurious or early return is the
  // caller's to look again (EINTR, EAGAIN: the word changed, ETIMEDOUT).
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_BITSET_PRIVATE, expected,
            deadline_ns ? &until : nullptr, nullptr, FUTEX_BITSET_MATCH_ANY);
}

void wake_word(std::atomic<std::uint32_t>& word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

thread_timer create_for_this_thread(bool cpu_time) {
  thread_timer t;
  t.cpu_time = cpu_time;
  struct sigevent ev;
  std::memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = kSignal;
  t.tid = this_thread_id();
  ev._sigev_un._tid = static_cast<pid_t>(t.tid);
  if (timer_create(cpu_time ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ev, &t.id) != 0)
    throw_errno("roost: preemption: timer_create");
  t.valid = true;
  return t;
}

namespace {
timespec to_timespec(std::uint64_t ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000ull);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000ull);
  return ts;
}
}  // namespace

void arm(const thread_timer& t, std::uint64_t first_ns, std::uint64_t interval_ns) {
  if (!t.valid) return;
  itimerspec its;
  its.it_value = to_timespec(t.cpu_time ? interval_ns : first_ns);
  its.it_interval = to_timespec(interval_ns);
  timer_settime(t.id, t.cpu_time ? 0 : TIMER_ABSTIME, &its, nullptr);
}

namespace {
// fork(): the child has none of the parent's timers and only the forking thread, so it starts with no
// lingering at all; the lock is held across the fork so that the child never inherits it taken (a run's end
// on another thread, in linger, would otherwise leave the child's first run waiting for ever: a review).
// The tick's signal is blocked from before the lock until after it is given back: a task that forks is not
// preempted while it holds the lock, which another task of its thread could then wait for for ever (a
// review). Registered at the first install, before any run can linger; registered after runtime.cpp's
// handlers, these run first before the fork and last after it, so the signal covers theirs too.
thread_local sigset_t t_mask_before_fork;
void linger_before_fork() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, kSignal);
  pthread_sigmask(SIG_BLOCK, &s, &t_mask_before_fork);
  preemption_off_for_fork();  // as for every lock held across fork (fork_hold.hpp)
  g_linger_mu.lock();
}
void linger_after_fork_in_parent() {
  g_linger_mu.unlock();
  preemption_back_after_fork();
  pthread_sigmask(SIG_SETMASK, &t_mask_before_fork, nullptr);
}
void linger_after_fork_in_child() {
  g_lingering.clear();
  t_linger.owner.store(0, std::memory_order_relaxed);
  t_linger_listed = false;
  g_linger_mu.unlock();
  preemption_back_after_fork();
  pthread_sigmask(SIG_SETMASK, &t_mask_before_fork, nullptr);
}
// Registered before main: registered at the first install, a fork during it could copy the list's lock held.
__attribute__((constructor)) void watch_forks_for_lingering() {
  ::pthread_atfork(&linger_before_fork, &linger_after_fork_in_parent, &linger_after_fork_in_child);
}
}  // namespace

void linger(const thread_timer& t, std::uint64_t owner) {
  if (!t.valid) return;
  std::lock_guard<std::mutex> lock(g_linger_mu);
  try {
    g_lingering.push_back({&t_linger, t.id, owner, ::getpid()});
  } catch (const std::bad_alloc&) {
    disarm(t);  // no room to list it: not left to linger
    return;
  }
  t_linger.id = t.id;
  t_linger.tid = t.tid;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_linger.owner.store(owner, std::memory_order_relaxed);
  t_linger_listed = true;
}

namespace {
// This thread's entries out of the list, if it may have any.
void unlist_this_thread() {
  if (!t_linger_listed) return;
  std::lock_guard<std::mutex> lock(g_linger_mu);
  std::erase_if(g_lingering, [](const linger_entry& e) { return e.slot == &t_linger; });
  t_linger_listed = false;
}
}  // namespace

bool resume_lingering(const thread_timer& t, std::uint64_t owner) {
  // Before the exchange: an end_lingering of the owner on another thread, under the lock, either ended it
  // (the exchange below then finds 0 and the caller arms) or finds no entry left.
  unlist_this_thread();
  const std::uint64_t was = t_linger.owner.exchange(0, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // The tid: a forked child's thread keeps its parent's thread-local record, not the parent's timer.
  return was == owner && t.valid && t_linger.tid == t.tid && t_linger.id == t.id;
}

void end_lingering(std::uint64_t owner) {
  std::lock_guard<std::mutex> lock(g_linger_mu);
  const pid_t pid = ::getpid();
  std::erase_if(g_lingering, [&](const linger_entry& e) {
    if (e.owner != owner && e.pid == pid) return false;
    std::uint64_t expected = owner;
    // The slot's thread is alive (its destroy at its end removes its entries first) and lingers for `owner` still,
    // unless its handler or its own resume ended it.
    if (e.pid == pid && e.slot->owner.compare_exchange_strong(expected, 0, std::memory_order_relaxed))
      disarm_id(e.id);
    return true;
  });
}

linger_state linger_state_here() {
  linger_state st;
  st.lingering = t_linger.owner.load(std::memory_order_relaxed) != 0;
  itimerspec its;
  if (t_linger.tid == this_thread_id() && timer_gettime(t_linger.id, &its) == 0) {
    st.armed = its.it_value.tv_sec != 0 || its.it_value.tv_nsec != 0;
    st.interval_ns = static_cast<std::uint64_t>(its.it_interval.tv_sec) * 1'000'000'000ull +
                     static_cast<std::uint64_t>(its.it_interval.tv_nsec);
  }
  return st;
}

void disarm(const thread_timer& t) {
  if (t.valid) disarm_id(t.id);
}

void destroy(thread_timer& t) {
  if (!t.valid) return;
  if (t_linger.tid == t.tid && t_linger.id == t.id) {  // the calling thread's timer: its lingering ends
    unlist_this_thread();
    t_linger.owner.exchange(0, std::memory_order_relaxed);
  }
  timer_delete(t.id);
  t.valid = false;
}

}  // namespace roost::platform::preempt
