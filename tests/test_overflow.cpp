// Task stacks: a task that overflows its stack ends the program with one message naming the cause and the
// knob; the default stack is as deep as a thread's, under every scheduler; what deep tasks touched is given
// back.
#include <csignal>
#include <pthread.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "roost/roost.hpp"
#include "test_util.hpp"
#include "engine/fiber.hpp"
#include "ult/stack.hpp"

// Allocation failure on demand: the next operator new of 4096 bytes on a thread that set t_fail_4k throws
// std::bad_alloc. 4096 bytes are the 512 slots a task deque's first growth allocates (ws_deque.hpp), and
// nothing else a spawn allocates. Not under clang's ThreadSanitizer, whose runtime is linked whole and
// static, its operator new included (its shared runtime does not start in a program): the one test that
// fails an allocation, on one worker, runs in the other builds.
#if defined(__clang__) && defined(ROOST_TSAN)
#define ROOST_TEST_FAILS_ALLOCATIONS 0
#else
#define ROOST_TEST_FAILS_ALLOCATIONS 1
#endif
namespace {
thread_local bool t_fail_4k = false;
}  // namespace
#if ROOST_TEST_FAILS_ALLOCATIONS
void* operator new(std::size_t n) {
  if (n == 4096 && t_fail_4k) {
    t_fail_4k = false;
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// Every other form too: the sanitizers' runtimes define their own, which would neither call the one above
// nor pair with its delete, and clang's static runtimes define all of them in one object, which the link
// pulls in (and then finds defined twice) for any form left out here.
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return std::malloc(n ? n : 1); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return std::malloc(n ? n : 1); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
namespace {
void* aligned_or_null(std::size_t n, std::align_val_t a) noexcept {
  const auto al = static_cast<std::size_t>(a);
  return std::aligned_alloc(al, (n + al - 1) / al * al);  // a size that is a multiple of the alignment
}
void* aligned_or_throw(std::size_t n, std::align_val_t a) {
  if (void* p = aligned_or_null(n ? n : 1, a)) return p;
  throw std::bad_alloc();
}
}  // namespace
void* operator new(std::size_t n, std::align_val_t a) { return aligned_or_throw(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return aligned_or_throw(n, a); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return aligned_or_null(n ? n : 1, a);
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return aligned_or_null(n ? n : 1, a);
}
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
#endif  // ROOST_TEST_FAILS_ALLOCATIONS

namespace {
// Caps this process's address space `above` bytes over what it maps now (RLIMIT_AS): its next mappings fail
// soon, where the kernel's own limits are thousands away. For child processes (death tests).
void cap_address_space(long above) {
  long pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  rlimit lim{};
  lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(pages) * sysconf(_SC_PAGESIZE) + static_cast<rlim_t>(above);
  setrlimit(RLIMIT_AS, &lim);
}

// Uses about 1 KiB of stack per level; returns n.
__attribute__((noinline)) int recurse(int n) {
  char pad[1024];
  roost_test::escape(pad);  // all of it, before and after the call: a frame of 1 KiB that lives across it
  if (n == 0) return 0;     // (a volatile pad[0], read after it, was one byte and a loop to clang)
  const int below = recurse(n - 1);
  roost_test::escape(pad);
  return below + 1;
}
}  // namespace

TEST(StackOverflowDeathTest, NamesTheCauseAndTheKnob) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        roost::options o;
        o.workers = 1;
        o.stack_size = 64 * 1024;
        roost::runtime rt(o);
        rt.run([] {
          roost::task_group tg;
          tg.run([] { recurse(1000); });  // ~1 MiB of frames on a 64 KiB stack
          tg.wait();
        });
      },
      "task stack overflow.*ROOST_STACK_SIZE");
}

// With preemption on, a tick (a signal delivered on the task's own stack) that arrives while the stack pointer
// is closer to the guard than a signal frame cannot be delivered: the kernel sends SIGSEGV with no address
// instead, and the process ended as a bare segmentation fault (8 of 8 runs of a slow recursion under 50 us
// ticks; an outside-user campaign). It is reported as the overflow it is. Deterministically: each level of
// the recursion sends its thread the preemption signal itself (SIGURG, the handler roost installed), so a
// level within a signal frame of the guard always meets the failed delivery before its frame reaches it.
__attribute__((noinline)) int descent_with_ticks(int n) {
  volatile char pad[48];
  pad[0] = static_cast<char>(n);
  pthread_kill(pthread_self(), SIGURG);
  return descent_with_ticks(n + 1) + pad[0];
}

TEST(StackOverflowDeathTest, APreemptionTickAtTheGuardGetsTheReport) {
  // The sanitizers intercept signals and run their own handlers first, on the task's stack: the kernel's
  // failed delivery is theirs to meet (the process ended without a word under TSan).
  if (roost_test::under_sanitizer()) GTEST_SKIP() << "the sanitizers' signal interceptors handle the tick";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const char* preempt : {"signal", "klt"}) {
    EXPECT_DEATH(
        {
          roost::options o;
          o.workers = 1;
          o.stack_size = 64 * 1024;
          o.preempt = preempt;
          roost::runtime rt(o);
          rt.run([] {
            roost::task_group tg;
            tg.run([] { descent_with_ticks(0); });
            tg.wait();
          });
        },
        "task stack overflow.*ROOST_STACK_SIZE")
        << "ROOST_PREEMPT=" << preempt;
  }
}

// A function whose frame is larger than a page moves the stack pointer past a one-page guard in one step:
// 8 KiB and 64 KiB frames crashed with a bare SIGSEGV instead of the report. The guard is 1 MiB now
// (stack.hpp): frames up to that size overflow into it.
__attribute__((noinline)) int big_frames(int n, std::size_t bytes) {
  volatile char* pad = static_cast<volatile char*>(__builtin_alloca(bytes));
  pad[0] = 1;  // the lowest byte: the first store of the frame below the stack pointer's step
  if (n == 0) return pad[bytes - 1];
  return big_frames(n - 1, bytes) + pad[0];
}

TEST(StackOverflowDeathTest, AFrameLargerThanAPageStillGetsTheReport) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (std::size_t frame : {std::size_t{8} << 10, std::size_t{64} << 10, std::size_t{512} << 10}) {
    EXPECT_DEATH(
        {
          roost::options o;
          o.workers = 1;
          o.stack_size = 256 * 1024;
          roost::runtime rt(o);
          rt.run([frame] {
            roost::task_group tg;
            tg.run([frame] { big_frames(100, frame); });
            tg.wait();
          });
        },
        "task stack overflow.*ROOST_STACK_SIZE")
        << frame << "-byte frames";
  }
}

// Two workers whose tasks overflow at once: one report, whole (they used to interleave into one garbled
// line). Which worker reports first is up to the machine; the report is the same.
TEST(StackOverflowDeathTest, TwoOverflowingWorkersGiveOneWholeMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        roost::options o;
        o.workers = 2;
        o.stack_size = 64 * 1024;
        roost::runtime rt(o);
        rt.run([] {
          roost::task_group tg;
          for (int i = 0; i < 8; ++i) tg.run([] { recurse(1000); });
          tg.wait();
        });
      },
      "^roost: task stack overflow: a task used more than its stack of 65536 bytes \\(ROOST_STACK_SIZE\\)\\. "
      "Raise ROOST_STACK_SIZE[^\n]*shallower\\.\n$");
}

TEST(StackOverflow, DeepRecursionFitsWhenTheStackIsRaised) {
  roost::options o;
  o.workers = 1;
  o.stack_size = 4 << 20;
  roost::runtime rt(o);
  EXPECT_EQ(rt.run([] {
    int r = 0;
    roost::task_group tg;
    tg.run([&] { r = recurse(1000); });
    tg.wait();
    return r;
  }), 1000);
}

namespace {

long nest(int depth) {
  if (depth == 0) return 1;
  long r = 0;
  roost::task_group tg;
  tg.run([&r, depth] { r = nest(depth - 1); });
  tg.wait();
  return r + 1;
}

class DefaultStack : public ::testing::TestWithParam<std::string> {};

// 5,000 nested groups run serially on a thread's 8 MiB stack. ws-help and cats run a waiter's children on
// its own stack (their joins pop them back), so the nesting adds up there: at the old 1 MiB default they
// aborted where every other scheduler, OpenMP and oneTBB ran it.
TEST_P(DefaultStack, FiveThousandNestedGroupsRun) {
  // Sanitizers' frames are several times larger; under TSan each level's new fiber is a thread of its own to
  // TSan, whose making took 3-4 s a scheduler at 1,000 levels.
  const int depth = roost_test::under_tsan() ? 300 : roost_test::under_sanitizer() ? 1000 : 5000;
  for (unsigned workers : {1u, 2u}) {
    roost::runtime rt(roost_test::opts(GetParam(), workers));
    EXPECT_EQ(rt.config().stack_size, std::size_t{8} << 20);
    EXPECT_EQ(rt.run([depth] { return nest(depth); }), depth + 1) << workers << " workers";
  }
}

// A chain of nested tasks that runs out of stacks is an error that reaches run()'s caller, under every
// scheduler: a std::bad_alloc whose what() names the limit. adws, hws and ws used to count the child whose
// spawn failed and wait for it for ever. Run in a child process with its address space capped 256 MiB above
// what it uses, so that the stacks run out after a few dozen instead of the kernel's 32,000; an alarm ends
// a hang as a failure. The runtime stays usable: the next run computes its result. (With every mapping
// taken, the shared pool of spare fibers could not grow its vector while it finished a switch: the
// std::bad_alloc left the switch half done, and adws's next run crashed.) One end is not an exception: a
// wait whose children were taken by another worker must suspend, and without a stack for the worker's
// scheduling loop the process ends with the reason (engine.hpp, fiber_to_suspend_to) — an abort, with that
// message, is accepted; a crash, a hang or a wrong result is not.
TEST_P(DefaultStack, RunningOutOfStacksIsAnErrorNotAHang) {
  if (roost_test::under_sanitizer()) GTEST_SKIP() << "sanitizers reserve their shadow memory as address space";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string sched = GetParam();
  for (unsigned workers : {1u, 2u})
  EXPECT_EXIT(
      {
        alarm(60);
        roost::runtime rt(roost_test::opts(sched, workers));
        cap_address_space(256L << 20);
        try {
          long r = rt.run([] { return nest(10000); });
          // ws-help and cats nest this chain on one stack (10,000 levels fit 8 MiB): no stack runs out.
          std::fprintf(stderr, "completed %ld\n", r);
          if (r != 10001) std::exit(2);
        } catch (const std::bad_alloc& e) {
          std::fprintf(stderr, "threw: %s\n", e.what());
        }
        // Within the stacks the cap allowed; another worker's pool may still hold them (it trims when it
        // sleeps), and then this run's error is as clean as the first's.
        try {
          const long again = rt.run([] { return nest(10); });
          std::fprintf(stderr, "then %ld\n", again);
          std::exit(again == 11 ? 0 : 3);
        } catch (const std::bad_alloc& e) {
          std::fprintf(stderr, "then threw: %s\n", e.what());
          std::exit(0);
        }
      },
      [](int status) {
        return (WIFEXITED(status) && WEXITSTATUS(status) == 0) || (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
      },
      "(completed 10001|threw: (roost: could not map a task stack .*RLIMIT_AS or ulimit -v: [0-9]+ MiB|std::bad_alloc))(.|\n)*then (11|threw: roost: could not map a task stack)|"
      "a task must wait for its children, and no stack is left for the worker to run others meanwhile")
      << workers << " workers";
}

// A runtime whose workers cannot all get a stack or a thread (64 workers in an address space capped 200 MiB
// above what the process uses; each worker's scheduling loop needs an 8 MiB stack) is an error from its
// constructor, and the process goes on: another runtime runs. The stacks were mapped by the workers' own
// threads, and the exception that left the first one to fail ended the process (std::terminate); a thread
// the system refused left the ones started before it running while the runtime was destroyed. Traced, so
// that the runtime's listeners are taken back too. In a child process; an alarm ends a hang as a failure.
TEST(OutOfMemory, ARuntimeWhoseWorkersCannotStartIsAnErrorFromItsConstructor) {
  if (roost_test::under_sanitizer()) GTEST_SKIP() << "sanitizers reserve their shadow memory as address space";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string trace = testing::TempDir() + "roost_start_fail.trace." + std::to_string(::getpid());
  EXPECT_EXIT(
      {
        alarm(60);
        cap_address_space(200L << 20);
        roost::options o;
        o.workers = 64;
        o.trace = trace;
        try {
          roost::runtime rt(o);
          std::fprintf(stderr, "made\n");
        } catch (const std::exception& e) {
          std::fprintf(stderr, "error: %s\n", e.what());
        }
        roost::runtime one(roost_test::opts("ws", 1));
        std::exit(one.run([] { return 2; }) == 2 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0),
      "error: roost: (could not map a task stack .*RLIMIT_AS|cannot start a worker thread)");
  std::remove(trace.c_str());
  std::remove((trace + ".json").c_str());
}

// What a deep nest mapped is given back when the run ends: the stacks of 3,000 nested waits (two kernel
// mappings each) stayed in the runtime's pools, and after a nest that ran out of stacks the program was left
// at the kernel's limit (vm.max_map_count) for its own allocations and threads. One worker: worker 0 trims
// at the end of a run; the others when they go to sleep, which no test can wait for without a clock.
TEST_P(DefaultStack, ADeepNestsStacksAreUnmappedWhenTheRunEnds) {
  // TSan keeps shadow mappings of memory that was unmapped (8,205 more after a nest of 1,000 here, none of
  // them roost's); ASan does not, and runs this test.
  if (roost_test::under_tsan()) GTEST_SKIP() << "TSan keeps the shadow mappings of unmapped stacks";
  const auto mappings = [] {
    long n = 0;
    if (FILE* f = std::fopen("/proc/self/maps", "r")) {
      for (int c; (c = std::fgetc(f)) != EOF;) n += c == '\n';
      std::fclose(f);
    }
    return n;
  };
  // What the runtime keeps at one worker (engine/fiber.hpp, stacks_to_keep): the shared spares and the worker's
  // free stacks, and its own idle fibers (kLocalMax). A nest deeper than all of them leaves stacks to unmap in
  // every build under every scheduler whose nest takes a stack a level. Where a wait runs its children in place
  // (ws-help, numa) the nest lies on one stack, at the default size, and a shallower one is enough.
  const roost::engine::stacks_kept k = roost::engine::stacks_to_keep(roost::ult::mapping_limit(), 1);
  const std::size_t kept = k.spares + k.free_stacks_each + roost::engine::fiber_pool::kLocalMax;
  const bool one_stack = GetParam() == "ws-help" || GetParam() == "numa";
  const int depth = one_stack ? 1500 : static_cast<int>(kept) + 1000;
  roost::options o = roost_test::opts(GetParam(), 1);
  // Small stacks for a stack a level: AddressSanitizer clears the shadow of each stack mapped and unmapped
  // (ult::forget_frames), 13 s for this test's 4,000 stacks of the default 8 MiB.
  if (!one_stack) o.stack_size = std::size_t{256} << 10;
  roost::runtime rt(o);
  rt.run([] { return nest(10); });
  const long before = mappings();
  EXPECT_EQ(rt.run([depth] { return nest(depth); }), depth + 1);
  const long after = mappings();
  EXPECT_LT(after - before, static_cast<long>(2 * kept) + 64) << "mappings before " << before << ", after " << after;
  EXPECT_LE(roost::ult::stacks_mapped(), kept + 64) << "stacks mapped after the run";
}

// A nest up to what the runtime keeps maps no stack when it runs again: the stacks of its nested child-first
// children stay on the worker's list between runs (under ThreadSanitizer, which switches to each child on an
// idle fiber, in the worker's pool and the shared spares). 32 were kept, and every run of a chain of 100
// nested task groups under ws mapped 68 stacks and unmapped them again at its end: 12-20 us a level against
// 0.06.
TEST_P(DefaultStack, ANestRunAgainMapsNoStack) {
  const roost::engine::stacks_kept k = roost::engine::stacks_to_keep(roost::ult::mapping_limit(), 1);
  // A shallower second nest under TSan, whose fibers are slower to make and switch to (each child-first child
  // switches to a fiber there: FiveThousandNestedGroupsRun takes 0.4-0.6 s a scheduler).
  const int deep = std::min<int>(roost_test::under_tsan() ? 400 : 1000,
                                 static_cast<int>(std::min(k.free_stacks_each, k.spares)));
  roost::options o = roost_test::opts(GetParam(), 1);
  // Off whatever ROOST_PREEMPT says: a tick that finds no idle fiber has one made (fiber_pool::reserve_idle),
  // a stack no nest maps (a review saw one more under ASan with ROOST_PREEMPT=signal at 100 us ticks).
  o.preempt = "off";
  roost::runtime rt(o);
  for (int depth : {100, deep}) {
    // Twice first: cats profiles a program's first run through the engine, whose spawns are not all child-first.
    for (int i = 0; i < 2; ++i) EXPECT_EQ(rt.run([depth] { return nest(depth); }), depth + 1);
    const std::size_t ever = roost::ult::stacks_ever_mapped();
    for (int i = 0; i < 3; ++i) EXPECT_EQ(rt.run([depth] { return nest(depth); }), depth + 1);
    EXPECT_EQ(roost::ult::stacks_ever_mapped(), ever) << "stacks mapped by 3 more runs of a nest of " << depth;
  }
}

// The same for a nest deeper than a worker's share of free stacks, up to what the shared spares hold besides:
// the trim at the end of a run makes the free stacks beyond the share fresh fibers among the spares
// (fiber.hpp, trim_free_stacks), where it unmapped them, and every run of such a nest (uts at one worker: 1,599
// levels against 1,024 kept) mapped a stack for each level beyond the share.
TEST_P(DefaultStack, ANestDeeperThanAWorkersShareMapsNoStackWhenRunAgain) {
  // ThreadSanitizer's build switches each child-first child to an idle fiber, which spills to the spares anyway.
  if (roost_test::under_tsan()) GTEST_SKIP() << "no free stacks under TSan: each child switches to an idle fiber";
  const roost::engine::stacks_kept k = roost::engine::stacks_to_keep(roost::ult::mapping_limit(), 1);
  // Beyond the share by less than the spares hold, less the worker's idle fibers that the nest takes as well.
  const int depth = static_cast<int>(k.free_stacks_each + std::min<std::size_t>(k.spares / 2, 1000));
  roost::options o = roost_test::opts(GetParam(), 1);
  // Small stacks: ASan clears the shadow of each stack it renews (ult::forget_frames). Where a wait runs its
  // children in place (ws-help, numa), the nest lies on one stack, at the default size.
  if (GetParam() != "ws-help" && GetParam() != "numa") o.stack_size = std::size_t{256} << 10;
  o.preempt = "off";  // as in the test above
  roost::runtime rt(o);
  // Twice first: cats profiles a program's first run through the engine, whose spawns are not all child-first.
  for (int i = 0; i < 2; ++i) EXPECT_EQ(rt.run([depth] { return nest(depth); }), depth + 1);
  const std::size_t ever = roost::ult::stacks_ever_mapped();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(rt.run([depth] { return nest(depth); }), depth + 1);
  EXPECT_EQ(roost::ult::stacks_ever_mapped(), ever) << "stacks mapped by 3 more runs of a nest of " << depth;
}

// What the nest tests above cannot see: a free stack that a trim made a spare (fiber_pool::renew) is switched
// to as a fresh fiber, at its entry, in every build (a nest at one worker only calls children on the spares it
// takes, and never enters their contexts). Beyond the spares' bound the trim unmaps.
namespace {
roost::ult::context g_test_thread;  // where the fiber switches back to
void* g_entered_with = nullptr;
roost::ult::eh_state* test_eh() { return roost::ult::thread_eh_state(); }
void enter_and_switch_back(roost::ult::transfer t) {
  roost::ult::entered_new_context(test_eh());
  g_entered_with = t.data;
  g_test_thread.fctx = t.fctx;
  // For good: the context stays where it stands, and the test unmaps its stack.
  roost::ult::switch_to(g_test_thread, nullptr, test_eh(), [](roost::ult::transfer) { return test_eh(); });
}
}  // namespace

TEST(FiberPool, AFreeStackATrimMakesASpareRunsFromItsEntry) {
  namespace eng = roost::engine;
  static const int home = 0;
  eng::fiber_overflow spares;
  spares.keep(1);
  eng::fiber_pool pool;
  pool.attach(&spares);
  pool.configure(std::size_t{64} << 10, &enter_and_switch_back, false, nullptr, &home);
  pool.keep_free_stacks(1);
  // Three stacks on the list, each used once as a child's (its epoch moved as resume_parent_after_call moves it).
  eng::fiber* used[3];
  for (auto*& f : used) f = pool.get_free_stack();
  std::uint64_t epochs[3];
  for (int i = 2; i >= 0; --i) {
    // What a child's use leaves: its task, preempt_off at 0 inside its body, its frames just below the record,
    // where the context create() made lay (a child is called on the stack, never switched to).
    used[i]->task = reinterpret_cast<roost::detail::task_id*>(used[i]);
    used[i]->preempt_off.store(0);
    std::memset(reinterpret_cast<char*>(used[i]) - 1024, 0xab, 1024);
    used[i]->ctx.fctx = nullptr;
    epochs[i] = ++used[i]->epoch;
    pool.put_free_stack(used[i]);
  }
  const std::size_t mapped = roost::ult::stacks_mapped();
  // The list's head stays; of the two below it, one goes to the spares (room for one) and one is unmapped.
  EXPECT_EQ(pool.trim_free_stacks(), 1u);
  EXPECT_EQ(roost::ult::stacks_mapped(), mapped - 1);
  eng::fiber* spare = spares.take();
  ASSERT_NE(spare, nullptr);
  EXPECT_EQ(spares.take(), nullptr);
  EXPECT_EQ(spare, used[1]) << "the first below the head, renewed where its record was";
  EXPECT_EQ(spare->epoch, epochs[1] + 1) << "the epoch goes on";
  EXPECT_EQ(spare->task, nullptr);
  EXPECT_EQ(spare->preempt_off.load(), 1u) << "a fresh fiber starts in the runtime";
  roost::ult::adopt_thread_context(g_test_thread);
  int token = 0;
  roost::ult::switch_to(spare->ctx, &token, test_eh(), [](roost::ult::transfer) { return test_eh(); });
  EXPECT_EQ(g_entered_with, &token) << "the spare's context entered the pool's entry function";
  eng::fiber_pool::destroy(spare);
}

// The look at idle fibers (fiber_pool::release_deep_pages) reaches every fiber used since the last look, however
// far down the pool's list, and stops at the first one not used since. Worker 0 looked at its 4 most recent
// only, and a deep task that a preemption tick had left on an idle fiber further down kept its pages
// (WhatADeepTaskAtTheEndOfANestTouchedIsGivenBack failed under ROOST_PREEMPT=signal). The list can hold more
// than kLocalMax, which a tick's put_in_handler may exceed.
namespace {
// Writes into the 4 KiB band just below the kept part of f's stack (ult/stack.hpp: the mark of a task that
// went deeper than kKeepBytes).
void touch_deep(roost::engine::fiber* f) {
  const auto band_hi = (reinterpret_cast<std::uintptr_t>(f) - roost::engine::fiber_pool::kKeepBytes) &
                       ~std::uintptr_t{63};
  *reinterpret_cast<volatile char*>(band_hi - 8) = 1;
}
}  // namespace

TEST(FiberPool, TheLookAtIdleFibersReachesEveryOneUsedSinceTheLast) {
  namespace eng = roost::engine;
  static const int home = 0;
  eng::fiber_pool pool;
  pool.configure(std::size_t{1} << 20, &enter_and_switch_back, false, nullptr, &home);
  constexpr int kFibers = 2 * static_cast<int>(eng::fiber_pool::kLocalMax);
  std::vector<eng::fiber*> fibers;
  for (int i = 0; i < kFibers; ++i) fibers.push_back(pool.get());
  // The first one parked, at the bottom of the list, ran a deep task; each was switched away from once.
  touch_deep(fibers[0]);
  for (eng::fiber* f : fibers) {
    ++f->epoch;
    pool.put_in_handler(f);
  }
  EXPECT_EQ(pool.release_deep_pages(), 1u) << "the deep fiber, " << kFibers << " down";
  // Unused since: not looked at again, though its mark is written anew.
  touch_deep(fibers[0]);
  EXPECT_EQ(pool.release_deep_pages(), 0u);
  // Used again (taken, switched away from, parked): looked at, wherever it was.
  eng::fiber* again = pool.get();
  ASSERT_EQ(again, fibers.back());
  touch_deep(again);
  ++again->epoch;
  pool.put_in_handler(again);
  EXPECT_EQ(pool.release_deep_pages(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, DefaultStack, ::testing::ValuesIn(roost_test::available_schedulers()),
                         roost_test::scheduler_test_name);

long resident_bytes() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * sysconf(_SC_PAGESIZE);
}

}  // namespace

// A task that used 6 MiB of its stack leaves no 6 MiB resident for long: the pages below the fiber's kept
// 256 KiB are given back (ult/stack.hpp), by a worker that goes to sleep, and by worker 0 at the end of
// every 256th run() (engine_base.cpp).
TEST(StackPages, WhatADeepTaskTouchedIsGivenBack) {
  if (roost_test::under_sanitizer()) GTEST_SKIP() << "sanitizers keep shadow pages for the stack";
  roost::options o;
  o.workers = 1;
  roost::runtime rt(o);
  rt.run([] {});
  const long before = resident_bytes();
  EXPECT_EQ(rt.run([] {
    int r = 0;
    roost::task_group tg;
    tg.run([&] { r = recurse(6000); });  // ~6 MiB of frames
    tg.wait();
    return r;
  }), 6000);
  for (int i = 0; i < 256; ++i) rt.run([] {});
  const long after = resident_bytes();
  EXPECT_LT(after - before, 1L << 20) << "resident before " << before << ", after " << after;
}

// The same for a deep task at the end of a nest: under the child-first schedulers its stack lies 200 down the
// worker's list of free stacks, which keeps them between runs (fiber.hpp, kFreeStacksKept), and every stack
// used since its last look is looked at.
namespace {
int nest_then_deep(int depth) {
  if (depth == 0) return recurse(6000);  // ~6 MiB of frames
  int r = 0;
  roost::task_group tg;
  tg.run([&r, depth] { r = nest_then_deep(depth - 1); });
  tg.wait();
  return r;
}
}  // namespace

TEST_P(DefaultStack, WhatADeepTaskAtTheEndOfANestTouchedIsGivenBack) {
  if (roost_test::under_sanitizer()) GTEST_SKIP() << "sanitizers keep shadow pages for the stack";
  roost::runtime rt(roost_test::opts(GetParam(), 1));
  rt.run([] {});
  const long before = resident_bytes();
  EXPECT_EQ(rt.run([] { return nest_then_deep(200); }), 6000);
  for (int i = 0; i < 256; ++i) rt.run([] {});
  const long after = resident_bytes();
  // The 200 stacks kept hold a page or two each (their fiber's record and their child's frames).
  EXPECT_LT(after - before, 4L << 20) << "resident before " << before << ", after " << after;
}

// A spawn that finds no memory to queue its child (the deque must grow) throws std::bad_alloc, and the
// child's closure is destroyed exactly once, by whoever holds it: the spawner for a frame the engine had
// moved to its pool (it was destroyed there twice, and its pool copy never), the runtime for one in the
// group's inline slot, which the group then does not count (its destructor waited for it for ever). The
// group goes on: its other children run at its wait.
namespace {
struct probe {
  static inline int destroyed_twice = 0;
  std::shared_ptr<int> token;
  volatile unsigned magic = 0x600d;  // volatile: the destructor's store is not a dead one to the compiler
  explicit probe(std::shared_ptr<int> t) : token(std::move(t)) {}
  probe(const probe& o) : token(o.token) {}
  probe(probe&& o) noexcept : token(std::move(o.token)) {}
  ~probe() {
    if (magic != 0x600d) ++destroyed_twice;  // the storage outlives the object: a union member of its frame
    magic = 0xdead;
  }
  void operator()() const {}
};
}  // namespace

TEST(OutOfMemory, ASpawnThatCannotBeQueuedLeavesNoClosureBehind) {
  if (!ROOST_TEST_FAILS_ALLOCATIONS) GTEST_SKIP() << "operator new is clang's ThreadSanitizer's here";
  for (bool inline_slot : {false, true}) {
    SCOPED_TRACE(inline_slot ? "the group's inline slot" : "a frame moved to the pool");
    probe::destroyed_twice = 0;
    auto token = std::make_shared<int>(1);
    roost::runtime rt(roost_test::opts("ws-help", 1));
    int spawned = 0;
    bool threw = false;
    rt.run([&] {
      roost::task_group g;
      for (int i = 0; i < 255; ++i, ++spawned) g.run(probe(token));  // the deque holds 255 of its 256
      t_fail_4k = true;
      try {
        if (inline_slot) {
          g.run(probe(token));  // the 256th
          ++spawned;
          roost::task_group first;
          first.run(probe(token));  // a new group's first child: its inline slot, pushed by user code
        } else {
          for (int i = 0; i < 1000; ++i, ++spawned) g.run(probe(token));
        }
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      t_fail_4k = false;
      g.wait();
    });
    EXPECT_TRUE(threw);
    EXPECT_EQ(spawned, 256) << "the push that had to grow the deque threw";
    EXPECT_EQ(probe::destroyed_twice, 0);
    EXPECT_EQ(token.use_count(), 1) << "a closure was left in a frame nobody runs";
  }
}

// A work-first child whose parent cannot be published (the deque could not grow) still runs, where it was
// spawned, and the parent goes on after it: nobody can take the parent, and nothing is thrown. Under `ws`
// each level of a nested recursion leaves its continuation in the deque, so the 257th level's publication
// needs the deque's first growth. Plain (no hook, no preemption: engine.hpp, run_child_first's plain path,
// whose failed publication runs the child out of line) and observed (an observer installed: run_observed).
namespace {
// Levels 0 .. 255 leave 256 continuations, which fill the deque's first array (ws_deque.hpp, 256 slots).
constexpr int kFullDepth = 256;
void nest_to_full_deque(int depth, int& ran, bool& failed) {
  roost::task_group g;
  if (depth == kFullDepth) {  // the continuations fill the deque: the next publication has to grow it
    t_fail_4k = true;
    g.run([&] { ++ran; });
    failed = !t_fail_4k;  // consumed: that publication's allocation threw
    t_fail_4k = false;
  } else {
    g.run([&, depth] { nest_to_full_deque(depth + 1, ran, failed); });
  }
  g.wait();
}
struct counting_observer final : roost::task_observer {
  std::atomic<int> started{0}, ended{0};
  void on_task_start(const roost::task_event&) override { started.fetch_add(1, std::memory_order_relaxed); }
  void on_task_end(const roost::task_event&) override { ended.fetch_add(1, std::memory_order_relaxed); }
};
}  // namespace

TEST(OutOfMemory, AWorkFirstChildWhoseParentCannotBePublishedRunsInPlace) {
  if (!ROOST_TEST_FAILS_ALLOCATIONS) GTEST_SKIP() << "operator new is clang's ThreadSanitizer's here";
  for (bool observed : {false, true}) {
    SCOPED_TRACE(observed ? "observed" : "plain");
    counting_observer obs;
    if (observed) roost::set_task_observer(&obs);
    int ran = 0;
    bool failed = false;
    {
      roost::runtime rt(roost_test::opts("ws", 1));
      EXPECT_NO_THROW(rt.run([&] { nest_to_full_deque(0, ran, failed); }));
    }
    if (observed) roost::set_task_observer(nullptr);
    EXPECT_TRUE(failed) << "the publication did not need the deque's growth: the test no longer reaches its path";
    EXPECT_EQ(ran, 1);
    if (observed) {
      // The root and a child a level, each seen to start and end (an observer is not told of a root's end).
      EXPECT_EQ(obs.started.load(), kFullDepth + 2);
      EXPECT_EQ(obs.ended.load(), kFullDepth + 1);
    }
  }
}
