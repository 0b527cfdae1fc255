#include <roost/roost.hpp>

#include "fib/fib.hpp"

namespace bench::fib {
long roost_tasks(int n) {
  if (n < 2) return n;
  long a = 0;
  roost::task_group tg(3);
  tg.run([&] { a = roost_tasks(n - 1); }, 2);
  long b = roost_tasks(n - 2);  // the inline last child; its share (1) is what remains
  tg.wait();
  return a + b;
}
}  // namespace bench::fib
