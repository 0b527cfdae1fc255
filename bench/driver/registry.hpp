// Every benchmark roost ships.
#pragma once
#include <vector>

#include "common/bench.hpp"

namespace bench {

const std::vector<benchmark_def>& registry();
const benchmark_def* find_benchmark(const std::string& name);

}  // namespace bench
