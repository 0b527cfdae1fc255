#include "sched/registry.hpp"

#include "roost/errors.hpp"
#include "sched/adws.hpp"
#include "sched/adws_ml.hpp"
#include "sched/cab.hpp"
#include "sched/cats.hpp"
#include "sched/hws.hpp"
#include "sched/numa.hpp"
#include "sched/ws.hpp"
#include "sched/ws_help.hpp"

namespace roost::sched {

const std::vector<entry>& registry() {
  // Never destroyed: a runtime may be made in a static object's destructor (an outside-user campaign).
  static const std::vector<entry>& r = *new std::vector<entry>{
      {"ws", "random work stealing, work-first (Cilk-a)", true, ""},
      {"ws-help", "random work stealing, help-first", true, ""},
      {"hws", "hierarchical work stealing: nearest shared cache first", true, ""},
      {"cab", "cache-aware bi-tier stealing, boundary level from ROOST_CAB_LEVEL or the topology (seed 000)", true, ""},
      {"cats", "cache-aware bi-tier stealing, tiers from a profile of the first iteration (seed 000)", true, ""},
      {"adws", "almost deterministic work stealing: work hints deal groups over workers (seed 003 ch. 4)", true, ""},
      {"adws-ml", "multi-level ADWS: groups dealt per memory level, one cache-sized root per cache (seed 003 ch. 5)", true, ""},
      {"numa", "NUMA-aware work dealing by declared data, stealing by distance (seed 002)", true, ""},
  };
  return r;
}

std::string available_names() {
  std::string s;
  for (const auto& e : registry())
    if (e.available) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

std::unique_ptr<engine::engine_base> make_engine(const resolved_options& cfg,
                                                 std::shared_ptr<const topo::topology> tp, topo::placement pl) {
  const std::string& n = cfg.scheduler;
  if (n == ws_policy::name) return make_engine_of<ws_policy>(cfg, std::move(tp), std::move(pl));
  if (n == ws_help_policy::name) return make_engine_of<ws_help_policy>(cfg, std::move(tp), std::move(pl));
  if (n == hws_policy::name) return make_engine_of<hws_policy>(cfg, std::move(tp), std::move(pl));
  if (n == cats_policy::name) return make_engine_of<cats_policy>(cfg, std::move(tp), std::move(pl));
  if (n == cab_policy::name) return make_engine_of<cab_policy>(cfg, std::move(tp), std::move(pl));
  if (n == adws_policy::name) return make_engine_of<adws_policy>(cfg, std::move(tp), std::move(pl));
  if (n == adws_ml_policy::name) return make_engine_of<adws_ml_policy>(cfg, std::move(tp), std::move(pl));
  if (n == numa_policy::name) return make_engine_of<numa_policy>(cfg, std::move(tp), std::move(pl));
  throw config_error("ROOST_SCHED='" + n + "': no such scheduler in this build; available: " + available_names());
}

}  // namespace roost::sched
