#include "roost/preempt.hpp"

#include <atomic>
#include <cstdio>
#include <string>

#include "roost/errors.hpp"

#include "engine/engine_base.hpp"
#include "engine/worker.hpp"
#include "platform/platform.hpp"

namespace roost::detail {

void note_preempt_choice(fiber_abi* f, preemption how) noexcept {
  auto* w = static_cast<engine::worker*>(f->worker);
  if (!w || w->preempt) return;
  static std::atomic<bool> said{false};
  if (said.exchange(true)) return;
  const char* what = how == preemption::klt ? "preemption::klt" : "preemption::signal";
  // Simulated, no setting makes it preempt (ROOST_PREEMPT other than off is a config_error there): the
  // advice to set it misled (an outside-user campaign).
  if (platform::t_sim != nullptr)  // this thread runs a simulated runtime's task
    std::fprintf(stderr,
                 "roost: roost::preempt_as(%s): the simulated platform never preempts, so the task is not "
                 "preempted\n",
                 what);
  else {
    // Named by where the setting came from: the variable, or the field that overrode it (the variable may
    // well say signal; an outside-user campaign was told to set what was set).
    const char* source = w->eng ? w->eng->config().preempt_source.c_str() : "ROOST_PREEMPT";
    std::fprintf(stderr,
                 "roost: roost::preempt_as(%s): this runtime does not preempt (%s is off), so the task is not "
                 "preempted; %s=signal or klt makes its choice take effect\n",
                 what, source, source);
  }
}

void throw_bad_preemption(preemption how) {
  throw usage_error("roost::preempt_as(how): how = " + std::to_string(static_cast<unsigned>(how)) +
                    " is no roost::preemption; valid: preemption::off (0), preemption::signal (1), "
                    "preemption::klt (2)");
}

}  // namespace roost::detail
