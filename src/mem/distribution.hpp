// What the allocator's default distribution (roost/memory.hpp) tells the rest of the library.
#pragma once
#include <cstdint>

namespace roost::detail {

// Whether the program set the process's default distribution in code (set_default_distribution, or a
// runtime made with options::data_distribution): ROOST_DATA_DISTRIBUTION is then not read, and a runtime
// made later does not refuse it when it is not valid (it says so, as for a variable a field overrides).
bool default_distribution_set_in_code();

// Parts the coarse distribution counted outside every runtime's tasks so far: where a new runtime's own count
// starts (engine_base::coarse_parts).
std::uint64_t coarse_parts_counted_outside_runtimes();

}  // namespace roost::detail
