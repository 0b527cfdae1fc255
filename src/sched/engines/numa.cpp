#include "sched/engine_of.hpp"
#include "sched/numa.hpp"

template std::unique_ptr<roost::engine::engine_base> roost::sched::make_engine_of<roost::sched::numa_policy>(
    const roost::resolved_options&, std::shared_ptr<const roost::topo::topology>, roost::topo::placement);
