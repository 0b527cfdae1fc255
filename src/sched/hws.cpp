#include "sched/hws.hpp"

#include <sstream>

namespace roost::sched {

hws_policy::hws_policy(engine::engine_base& e) : policy_base(e) {
  const auto& tp = e.topology();
  const unsigned n = e.num_workers();
  tiers_.resize(n);
  cursors_.resize(n);
  for (unsigned w = 0; w < n; ++w) {
    unsigned pu_w = e.placement().pu_of_worker[w];
    std::size_t last_size = 0;
    for (const auto& level : tp.sharing_levels()) {
      std::vector<unsigned> victims;
      for (unsigned v = 0; v < n; ++v) {
        unsigned pu_v = e.placement().pu_of_worker[v];
        if (v != w && level.domain_of_pu[pu_v] == level.domain_of_pu[pu_w]) victims.push_back(v);
      }
      if (!victims.empty() && victims.size() != last_size) {
        last_size = victims.size();
        tiers_[w].push_back(std::move(victims));
      }
    }
    // Workers beyond the PUs (oversubscription) share PUs: the widest tier must hold everyone.
    std::vector<unsigned> all;
    for (unsigned v = 0; v < n; ++v)
      if (v != w) all.push_back(v);
    if (!all.empty() && (tiers_[w].empty() || tiers_[w].back().size() != all.size()))
      tiers_[w].push_back(std::move(all));
  }
}

detail::job* hws_policy::steal(engine::worker& w) {
  auto& tiers = tiers_[w.id];
  if (tiers.empty()) return nullptr;
  cursor& c = cursors_[w.id];
  const auto& victims = tiers[c.tier];
  // One round: as many attempts as the tier has victims.
  for (std::size_t i = 0; i < victims.size(); ++i) {
    if (detail::job* j = steal_one_of(w, static_cast<unsigned>(victims.size()),
                                      [&](unsigned k) { return victims[k]; })) {
      c.tier = 0;
      c.fails = 0;
      return j;
    }
  }
  // Widen after two failed rounds in this tier; wrap to the innermost after the widest.
  if (++c.fails >= 2) {
    c.fails = 0;
    c.tier = (c.tier + 1) % static_cast<unsigned>(tiers.size());
  }
  return nullptr;
}

std::string hws_policy::notes() const {
  std::ostringstream os;
  if (!tiers_.empty()) {
    os << "victim tiers of worker 0:";
    for (const auto& t : tiers_[0]) os << ' ' << t.size();
  }
  return os.str();
}

}  // namespace roost::sched
