// A recursion written with parallel_invoke, the way users write one (fib_invoke in bench/fib/fib.hpp): the
// closures write through references, the leaf case returns early. check.sh looks in this program's symbols
// for the clone GCC makes when it splits fib off its leaf test (ipa-split: each caller tests `n < 2` itself
// and calls the rest only when that fails). The two-way join keeps its exception handler out of the caller
// until that split (fork_join2.hpp, run_guarded); had it one in the caller from the start, GCC would refuse
// ("Cannot split: resx") and every leaf would cost a call (src/engine/README.md, "The leaf test in the
// caller"). The program also checks the recursion's results under the join's two inline paths.
//
// fib_group is the same recursion with a task_group (fib in bench/fib/fib.hpp). A task group's destructor is an
// exception cleanup in the caller, so GCC splits nothing there; check.sh counts the registers the function
// saves at its entry instead, which its leaves pay too. One is needed (the other half's result, across the
// join's call of the child); a second came back where the group's address was kept for the cleanup's
// out-of-line destructor (task_group's destructor is inlined) or the inline frame's address across the calls
// between push and pop (the join calls the frame its pop loaded: abi.hpp, pop_group_first_child):
// src/engine/README.md, "One register at a task group's entry". Built with -fomit-frame-pointer, so that a
// build that keeps frame pointers does not count rbp (tests/CMakeLists.txt).
//
// fib_join is the recursion with roost::join, which returns both results: GCC makes a loop of the call of the
// half the join pops back, as it does of Lace's fib, since nothing whose address the deque saw is live across
// that call (detail/join_values.hpp). check.sh finds the loop: one call of itself on each of the join's two
// inline paths instead of two, with the handler's function inlined.
#include <cstdio>

#include "roost/parallel.hpp"
#include "roost/runtime.hpp"
#include "roost/task_group.hpp"

namespace {
// A template, as the benchmark's is (bench/fib/fib.hpp): the shape whose split the README's figures measured.
template <int Tag>
long fib_invoke(int n) {
  if (n < 2) return n;
  long a, b;
  roost::parallel_invoke([&a, n] { a = fib_invoke<Tag>(n - 1); }, [&b, n] { b = fib_invoke<Tag>(n - 2); });
  return a + b;
}

template <int Tag>
long fib_join(int n) {
  if (n < 2) return n;
  auto [a, b] = roost::join([n] { return fib_join<Tag>(n - 1); }, [n] { return fib_join<Tag>(n - 2); });
  return a + b;
}

template <int Tag>
long fib_group(int n) {
  if (n < 2) return n;
  long a = 0;
  roost::task_group g(3);  // with fib's hints (bench/fib/fib.hpp), the benchmark's shape
  g.run([&a, n] { a = fib_group<Tag>(n - 1); }, 2);
  long b = fib_group<Tag>(n - 2);
  g.wait();
  return a + b;
}
}  // namespace

int main() {
  for (const char* sched : {"ws-help", "ws"}) {
    roost::options o;
    o.scheduler = sched;
    o.workers = 2;
    roost::runtime rt(o);
    const long r = rt.run([] { return fib_invoke<0>(24); });
    if (r != 46368) {
      std::fprintf(stderr, "FAIL: fib(24) under %s gave %ld, not 46368\n", sched, r);
      return 1;
    }
    const long rj = rt.run([] { return fib_join<0>(24); });
    if (rj != 46368) {
      std::fprintf(stderr, "FAIL: fib(24) with roost::join under %s gave %ld, not 46368\n", sched, rj);
      return 1;
    }
    const long rg = rt.run([] { return fib_group<0>(24); });
    if (rg != 46368) {
      std::fprintf(stderr, "FAIL: fib(24) with a task group under %s gave %ld, not 46368\n", sched, rg);
      return 1;
    }
  }
  return 0;
}
