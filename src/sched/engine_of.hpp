// engine<P> for one policy, built by explicit instantiation in a translation unit of the policy's own
// (sched/engines/<policy>.cpp). GCC's inlining budgets are per unit: with every engine in registry.cpp, a
// change to one policy changed the code of the others (adws-ml's inline join added 12 instructions to each
// of adws's spawns, callgrind fib). registry.cpp sees only the declaration (registry.hpp).
#pragma once
#include <memory>
#include <utility>

#include "engine/engine.hpp"
#include "sched/registry.hpp"

namespace roost::sched {

template <class P>
std::unique_ptr<engine::engine_base> make_engine_of(const resolved_options& cfg,
                                                    std::shared_ptr<const topo::topology> tp, topo::placement pl) {
  return std::make_unique<engine::engine<P>>(cfg, std::move(tp), std::move(pl));
}

}  // namespace roost::sched
