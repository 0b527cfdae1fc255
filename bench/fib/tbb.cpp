#include <tbb/task_group.h>

#include "fib/fib.hpp"

namespace bench::fib {
long tbb_tasks(int n) {
  if (n < 2) return n;
  long a = 0;
  tbb::task_group tg;
  tg.run([&] { a = tbb_tasks(n - 1); });
  long b = tbb_tasks(n - 2);
  tg.wait();
  return a + b;
}
}  // namespace bench::fib
