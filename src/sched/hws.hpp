// hws — hierarchical work stealing, work-first. An idle worker steals from the workers that share its
// smallest shared-cache domain first; after a round of failures there it widens to the next level of the
// topology's sharing levels (e.g. L3 -> package -> machine), and it narrows again after a success. This is
// the locality-aware random stealing that seed 003 §2 calls hierarchical and seed 002 calls steal vicinities.
#pragma once
#include <string>
#include <vector>

#include "sched/policy.hpp"

namespace roost::sched {

class hws_policy : public policy_base {
 public:
  static constexpr const char* name = "hws";
  static constexpr bool inline_join = true;  // its own deque, its own order (policy.hpp)
  static constexpr bool reads_task_sched_state = false;
  static constexpr bool plain_spawns = true;  // every spawn: order() below
  using runtime_text_spawn = hws_policy;  // its spawn is work-first, all inline (policy.hpp)
  explicit hws_policy(engine::engine_base& e);

  spawn_order order(engine::worker&, const detail::task_frame&) const { return spawn_order::child_first; }
  bool order_plain(engine::worker&, detail::group_state&, detail::task_frame&, bool) const noexcept { return true; }
  detail::job* steal(engine::worker& w);
  std::string notes() const;

  // Victim tiers of worker w: tier 0 is its smallest sharing domain, the last is every worker.
  const std::vector<std::vector<unsigned>>& tiers(unsigned w) const { return tiers_[w]; }

 private:
  std::vector<std::vector<std::vector<unsigned>>> tiers_;  // worker -> tier -> victims (excluding itself)
  struct alignas(64) cursor {
    unsigned tier = 0;
    unsigned fails = 0;
  };
  std::vector<cursor> cursors_;
};

}  // namespace roost::sched
