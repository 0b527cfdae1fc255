// C benchmark headers (BOTS's among them) define function-like macros min and max; roost's public headers
// must compile after them. This file, as such a program does, includes C headers only, defines both macros,
// then includes roost and uses the API: every standard header roost includes comes after the macros, and
// roost's headers set them aside around their own text (roost/detail/min_max_aside.hpp) and give them back.
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#include "roost/roost.hpp"

#if !defined(min) || !defined(max)
#error "a roost header undefined min or max: this test would no longer test them"
#endif

namespace {
// Uses every public header's templates with the macros still defined (they are expanded here, too).
long use_the_api(int n) {
  long a = 0;
  roost::task_group tg(2.0);
  tg.run([&a, n] { a = n > 1 ? use_the_api(n - 1) : 1; }, 1.0);
  tg.run_if(false, [] {}, 1.0);
  tg.wait();
  roost::per_worker<long> pw;
  roost::parallel_for(0, n, 1, [&](int lo, int hi) { pw.local() += hi - lo; });
  const long r = roost::parallel_reduce(0, n, 1, 0L, [](int lo, int hi) { return long(max(lo, hi) - min(lo, hi)); },
                                        [](long x, long y) { return x + y; });
  roost::parallel_invoke([] {}, [] {});
  return a + r + pw.combine([](long x, long y) { return x + y; }) + roost::run_final([] { return 0L; });
}
long run_it(int n) {
  roost::options o;
  o.workers = 2;
  roost::runtime rt(o);
  return rt.run([n] { return use_the_api(n); });
}
}  // namespace

// GoogleTest's own headers use std::numeric_limits<T>::max(): the macros end here.
#undef min
#undef max
#include <gtest/gtest.h>

TEST(CMacros, RoostHeadersCompileAndRunAfterMinAndMaxMacros) {
  // use_the_api(n) = use_the_api(n - 1) + 2n (parallel_reduce's n and per_worker's n), use_the_api(1) = 1 + 2.
  long expect = 3;
  for (int n = 2; n <= 6; ++n) expect = expect + 2 * n;
  EXPECT_EQ(run_it(6), expect);
}
