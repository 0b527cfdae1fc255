// roost-bench-omp-clang: the OpenMP variants built with clang and LLVM libomp. roost-bench runs it for the
// omp-clang variant; it prints one JSON line per measurement.
//   roost-bench-omp-clang BENCH SIZE WORKERS WARMUP REPS
#include <cstdio>
#include <cstdlib>
#include <string>

#include "driver/omp_runner.hpp"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s BENCH SIZE WORKERS WARMUP REPS\n", argv[0]);
    return 2;
  }
  bench::measurement m;
  if (!bench::run_omp(argv[1], std::atoi(argv[2]), static_cast<unsigned>(std::atoi(argv[3])), std::atoi(argv[4]),
                      std::atoi(argv[5]), "omp-clang", m)) {
    std::fprintf(stderr, "roost-bench-omp-clang: no OpenMP version of '%s'\n", argv[1]);
    return 2;
  }
  std::printf("%s\n", bench::to_json(m).c_str());
  return m.check_passed ? 0 : 1;
}
