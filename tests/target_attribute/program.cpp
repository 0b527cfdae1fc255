// Functions compiled for another CPU than their translation unit (__attribute__((target("arch=nocona")))) that
// spawn and join with task_group, parallel_invoke, join, parallel_for and parallel_reduce: with
// ROOST_FORCE_INLINE=0 (this program's CMake target defines it) GCC 12 compiles them, where the paths forced
// inline stop it at task_group::wait, the group's destructor, parallel_invoke and join with "inlining failed in
// call to 'always_inline' ...: target specific option mismatch" (detail/spawn_inline.hpp). Each result is
// compared with the serial program's under every scheduler, at one and two workers, and at two workers again
// with each kind of preemption on (the paths' preemption windows then lie in functions of their own).
//
// nocona: an x86-64 CPU with SSE3, a CPU name other than the default x86-64's (GCC's x86-64 is its k8), whose
// code every x86-64 CPU with SSE3 runs; the program says so and skips (77) on one without.
#include <roost/roost.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#define ROOST_TEST_OTHER_CPU __attribute__((target("arch=nocona")))

namespace {

ROOST_TEST_OTHER_CPU long fib_group(int n) {
  if (n < 2) return n;
  long a = 0;
  roost::task_group tg;
  tg.run([&] { a = fib_group(n - 1); });
  long b = fib_group(n - 2);
  tg.wait();
  return a + b;
}

// A group left to its destructor, which waits too.
ROOST_TEST_OTHER_CPU long fib_group_unwaited(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  {
    roost::task_group tg;
    tg.run([&] { a = fib_group_unwaited(n - 1); });
    b = fib_group_unwaited(n - 2);
  }
  return a + b;
}

ROOST_TEST_OTHER_CPU long fib_invoke(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  roost::parallel_invoke([&] { a = fib_invoke(n - 1); }, [&] { b = fib_invoke(n - 2); });
  return a + b;
}

ROOST_TEST_OTHER_CPU long fib_join(int n) {
  if (n < 2) return n;
  auto [a, b] = roost::join([n] { return fib_join(n - 1); }, [n] { return fib_join(n - 2); });
  return a + b;
}

ROOST_TEST_OTHER_CPU long squares(std::vector<long>& v) {
  roost::parallel_for(std::size_t{0}, v.size(), [&](std::size_t i) { v[i] = static_cast<long>(i * i); });
  return roost::parallel_reduce(std::size_t{0}, v.size(), 64, 0L,
                                [&](std::size_t lo, std::size_t hi) {
                                  long s = 0;
                                  for (std::size_t i = lo; i < hi; ++i) s += v[i];
                                  return s;
                                },
                                [](long x, long y) { return x + y; });
}

// A child's exception leaves the targeted function's group as it leaves any other.
ROOST_TEST_OTHER_CPU bool child_exception_arrives() {
  try {
    roost::task_group tg;
    tg.run([] { throw std::runtime_error("child"); });
    tg.wait();
  } catch (const std::runtime_error& e) {
    return std::string(e.what()) == "child";
  }
  return false;
}

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

}  // namespace

int main() {
  if (!__builtin_cpu_supports("sse3")) {
    std::puts("target_attribute: this CPU has no SSE3, which the nocona code needs: skipped");
    return 77;
  }
  constexpr int n = 23;  // 46,367 spawns a run: the 100 us ticks of the preempted runs fall in it
  const long fib = fib_serial(n);
  const std::size_t len = 10000;
  long sum = 0;
  for (std::size_t i = 0; i < len; ++i) sum += static_cast<long>(i * i);
  int failures = 0;
  auto expect = [&](const std::string& what, long got, long want) {
    if (got != want) {
      std::printf("FAIL %s: %ld, the serial program's %ld\n", what.c_str(), got, want);
      ++failures;
    }
  };
  std::size_t schedulers = 0;
  for (const auto& s : roost::schedulers()) {
    if (!s.available) continue;
    ++schedulers;
    // {workers, preemption}: "off" is the default; the interval only makes ticks likely inside the paths, and no
    // result may depend on where they fall.
    const std::pair<unsigned, const char*> runs[] = {{1u, "off"}, {2u, "off"}, {2u, "signal"}, {2u, "klt"}};
    for (const auto& [workers, preempt] : runs) {
      roost::options o;
      o.scheduler = s.name;
      o.workers = workers;
      o.preempt = preempt;
      if (std::string(preempt) != "off") o.preempt_interval = "100us";
      roost::runtime rt(o);
      const std::string at =
          std::string(s.name) + ", " + std::to_string(workers) + " worker(s), preemption " + preempt;
      expect("task_group fib, " + at, rt.run([] { return fib_group(n); }), fib);
      expect("task_group fib left to the destructor, " + at, rt.run([] { return fib_group_unwaited(n); }), fib);
      expect("parallel_invoke fib, " + at, rt.run([] { return fib_invoke(n); }), fib);
      expect("join fib, " + at, rt.run([] { return fib_join(n); }), fib);
      std::vector<long> v(len);
      expect("parallel_for and parallel_reduce, " + at, rt.run([&] { return squares(v); }), sum);
      expect("a child's exception, " + at, rt.run([] { return child_exception_arrives() ? 1L : 0L; }), 1);
    }
  }
  if (failures == 0)
    std::printf("target_attribute: functions built for another CPU (target(\"arch=nocona\")) compute the serial "
                "program's results under %zu schedulers, at 1 and 2 workers, with and without preemption\n",
                schedulers);
  return failures == 0 ? 0 : 1;
}
