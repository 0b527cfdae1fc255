#include <roost/roost.hpp>

#include <cstddef>
#include <cstdio>
#include <vector>

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
  // The parallel algorithms, per_worker and touch as well: check.sh builds this file with a program's strict
  // warnings as errors, and roost's headers must compile clean there (-Wsign-conversion broke -Werror builds).
  std::vector<double> v(10000, 1.0);
  roost::per_worker<long> pieces;
  const double sum = rt.run([&] {
    roost::parallel_for(std::size_t{0}, v.size(), std::size_t{100}, [&](std::size_t lo, std::size_t hi) {
      roost::touch(&v[lo], (hi - lo) * sizeof(double), roost::access::read_write);
      for (std::size_t i = lo; i < hi; ++i) v[i] *= 2.0;
      ++pieces.local();
    });
    double left = 0, right = 0;
    roost::parallel_invoke([&] { left = v[0]; }, [&] { right = v[v.size() - 1]; });
    return left + right + roost::parallel_reduce(std::size_t{0}, v.size(), std::size_t{100}, 0.0,
        [&](std::size_t lo, std::size_t hi) { double s = 0; for (std::size_t i = lo; i < hi; ++i) s += v[i]; return s; },
        [](double a, double b) { return a + b; });
  });
  long counted = 0;
  pieces.for_each([&](long n) { counted += n; });
  std::printf("sum = %g, pieces = %ld\n", sum, counted);
  // Halved down to at most 100 elements a piece: 128 pieces of 78 or 79.
  return r == 6765 && sum == 20004.0 && counted >= 100 ? 0 : 1;
}
