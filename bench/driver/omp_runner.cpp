#include "driver/omp_runner.hpp"

#include <omp.h>

#include "fib/fib.hpp"
#include "nqueens/nqueens.hpp"

namespace bench {

bool run_omp(const std::string& b, int size, unsigned workers, int warmup, int reps, const std::string& variant,
             measurement& m) {
  omp_set_dynamic(0);
  omp_set_num_threads(static_cast<int>(workers));
  if (b == "fib") {
    m = measure(b, variant, std::to_string(size), workers, warmup, reps, [&] {
      long r = 0;
#pragma omp parallel
#pragma omp single
      r = fib::omp_tasks(size);
      return r == fib::expected(size);
    });
    return true;
  }
  if (b == "nqueens") {
    m = measure(b, variant, std::to_string(size), workers, warmup, reps, [&] {
      long r = 0;
#pragma omp parallel
#pragma omp single
      r = nqueens::omp_tasks(size, 0, nqueens::board{});
      return r == nqueens::expected(size);
    });
    return true;
  }
  return false;
}

}  // namespace bench
