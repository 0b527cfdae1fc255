// Every benchmark roost ships, and the seeds' programs not written yet (listed as such, never faked).
#pragma once
#include <vector>

#include "common/bench.hpp"

namespace bench {

const std::vector<benchmark_def>& registry();
const benchmark_def* find_benchmark(const std::string& name);

struct planned_def {
  const char* name;
  const char* seed;
  const char* what;
};
const std::vector<planned_def>& planned();

}  // namespace bench
