// ws — random work stealing, work-first: the child runs at once and the parent's continuation is what
// thieves take. The seeds' "Cilk-a" baseline (seed 000 §5; seed 003 §4.4 "random WS").
#pragma once
#include "sched/policy.hpp"

namespace roost::sched {

class ws_policy : public random_victims {
 public:
  static constexpr const char* name = "ws";
  static constexpr bool inline_join = true;  // its own deque, its own order (policy.hpp)
  static constexpr bool reads_task_sched_state = false;
  static constexpr bool plain_spawns = true;  // every spawn: order() below
  using runtime_text_spawn = ws_policy;  // its spawn is work-first, all inline (policy.hpp)
  using random_victims::random_victims;
  spawn_order order(engine::worker&, const detail::task_frame&) const { return spawn_order::child_first; }
  bool order_plain(engine::worker&, detail::group_state&, detail::task_frame&, bool) const noexcept { return true; }
};

}  // namespace roost::sched
