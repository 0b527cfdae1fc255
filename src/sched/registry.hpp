// Scheduler names and the factory that instantiates engine<Policy> for one of them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "engine/engine_base.hpp"

namespace roost::sched {

struct entry {
  const char* name;
  const char* summary;
  bool available;
  const char* planned_in;  // where an unavailable one is coming from
};

const std::vector<entry>& registry();
std::string available_names();  // "ws, ws-help, hws"

std::unique_ptr<engine::engine_base> make_engine(const resolved_options& cfg,
                                                 std::shared_ptr<const topo::topology> tp, topo::placement pl);

// engine<P>, instantiated for each policy in a unit of its own (engine_of.hpp, engines/*.cpp).
template <class P>
std::unique_ptr<engine::engine_base> make_engine_of(const resolved_options& cfg,
                                                    std::shared_ptr<const topo::topology> tp, topo::placement pl);

}  // namespace roost::sched
