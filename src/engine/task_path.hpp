// A task's spawn path: the child indices from its root down to it, the name under which observers, CATS's
// profile and the tests know a task ("0.2.1"). A task_id holds only its own index and its parent, so the
// path is built by walking up (only where hooks or profiling ask for it, never on a spawn's fast path).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "roost/detail/task_frame.hpp"

namespace roost::engine {

std::vector<std::uint32_t> spawn_path(const detail::task_id& id);
std::string format_spawn_path(const std::vector<std::uint32_t>& path);  // "0.2.1"

}  // namespace roost::engine
