// roost-bench-omp-clang: the OpenMP variants built with clang and LLVM libomp from the same sources as
// roost-bench's. roost-bench runs it for the omp-clang* variants; it prints one JSON line.
//   roost-bench-omp-clang BENCH SIZE VARIANT WORKERS WARMUP REPS      (VARIANT: tasks, static, dynamic)
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/harness.hpp"
#include "driver/registry.hpp"

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s BENCH SIZE VARIANT WORKERS WARMUP REPS\n", argv[0]);
    return 2;
  }
  const bench::benchmark_def* b = bench::find_benchmark(argv[1]);
  std::string kind = argv[3];
  bench::variant_fn fn = !b ? nullptr
                         : kind == "tasks" ? b->omp_tasks
                         : kind == "static" ? b->omp_static
                         : kind == "dynamic" ? b->omp_dynamic
                                             : nullptr;
  if (!fn) {
    std::fprintf(stderr, "roost-bench-omp-clang: no OpenMP '%s' version of '%s'\n", argv[3], argv[1]);
    return 2;
  }
  unsigned workers = static_cast<unsigned>(std::atoi(argv[4]));
  omp_set_dynamic(0);
  omp_set_num_threads(static_cast<int>(workers));
  auto p = b->prepare(argv[2]);
  std::string variant = kind == "tasks" ? "omp-clang" : "omp-clang-" + kind;
  auto m = bench::measure(argv[1], variant, argv[2], workers, std::atoi(argv[5]), std::atoi(argv[6]),
                          [&] { p->reset(); }, [&] { fn(*p); }, [&] { return p->check(); });
  std::printf("%s\n", bench::to_json(m).c_str());
  return m.check_passed ? 0 : 1;
}
