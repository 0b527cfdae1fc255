#include "roost/preempt.hpp"

#include <atomic>
#include <cstdio>

#include "engine/worker.hpp"

namespace roost::detail {

void note_preempt_choice(fiber_abi* f, preemption how) noexcept {
  auto* w = static_cast<engine::worker*>(f->worker);
  if (!w || w->preempt) return;
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    std::fprintf(stderr,
                 "roost: roost::preempt_as(%s): this runtime does not preempt (ROOST_PREEMPT=off), so the task is not "
                 "preempted; ROOST_PREEMPT=signal or klt makes its choice take effect\n",
                 how == preemption::klt ? "preemption::klt" : "preemption::signal");
}

}  // namespace roost::detail
