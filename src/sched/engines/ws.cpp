#include "sched/engine_of.hpp"
#include "sched/ws.hpp"

ROOST_ENGINE_RUNTIME_TEXT_SPAWN(roost::sched::ws_policy)

template std::unique_ptr<roost::engine::engine_base> roost::sched::make_engine_of<roost::sched::ws_policy>(
    const roost::resolved_options&, std::shared_ptr<const roost::topo::topology>, roost::topo::placement);
