// ws-help — random work stealing, help-first: the child is pushed and the parent goes on; at wait the
// parent runs its unstolen children inline. No stack switch per spawn, so the cheapest spawn roost has.
#pragma once
#include "sched/policy.hpp"

namespace roost::sched {

class ws_help_policy : public random_victims {
 public:
  static constexpr const char* name = "ws-help";
  static constexpr bool inline_help_first = true;
  static constexpr bool reads_task_sched_state = false;
  using random_victims::random_victims;
  spawn_order order(engine::worker&, const detail::task_frame&) const { return spawn_order::parent_first; }
};

}  // namespace roost::sched
