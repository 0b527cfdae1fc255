#include <roost/roost.hpp>

#include <cstdio>

static long fib(int n) {
  if (n < 2) return n;
  long a = 0;
  roost::task_group tg;
  tg.run([&] { a = fib(n - 1); });
  long b = fib(n - 2);
  tg.wait();
  return a + b;
}

int main() {
  roost::runtime rt;
  long r = rt.run([] { return fib(20); });
  std::printf("fib(20) = %ld\n", r);
  return r == 6765 ? 0 : 1;
}
