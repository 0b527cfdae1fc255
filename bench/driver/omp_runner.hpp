// OpenMP variants, compiled into the GCC driver (libgomp) and into the clang helper (LLVM libomp).
#pragma once
#include <string>

#include "common/harness.hpp"

namespace bench {
// Returns false (and leaves m untouched) if `bench_name` has no OpenMP version.
bool run_omp(const std::string& bench_name, int size, unsigned workers, int warmup, int reps,
             const std::string& variant, measurement& m);
}  // namespace bench
