// The simulated platform's watchdog rule. Every simulated worker runs on one OS thread, so a program that
// cannot progress never returns control; a thread of its own (api/simulation.cpp) looks at the sim thread's
// counters every period of real time, and this says what they show:
//  * stalled: no charge at all while a run is under way. A task runs without reaching a runtime operation:
//    it spin-waits, or blocks its thread on a lock or a condition that another task must release.
//  * idling: charges, but only idle ones (failed steal attempts, a poll's pauses), and the virtual clock
//    has run past the end of the last busy one (a task's runtime operation or declared work, a steal) by
//    more than a gap between two tasks. Every worker looks for work and none finds any it can take: work
//    the scheduler holds reaches no worker. Its workers poll for ever, and each poll moved the count the
//    first rule looks at, so such a run hung without a word (adws-ml without stealing, an outside-user
//    campaign). A long kernel is no such gap: its busy charge ends far ahead, and the others wait for it.
//  * declared work only: busy charges, but none of them a runtime operation (no task started, ended,
//    resumed, spawned or was stolen): only roost::compute and roost::touch. A task that polls a flag another
//    task sets, declaring work at each poll, moves only its own clock, and the other task never runs (an
//    outside-user campaign: compute(1) in the loop hung without a word). A long kernel looks the same, so
//    this one is a note, not an end (api/simulation.cpp).
// Each must last `limit_s` of real time. The rule reads numbers only, so tests feed it sequences.
#pragma once
#include <cstdint>

namespace roost::platform {

struct sim_sample {
  bool in_run = false;
  std::uint64_t progress = 0;       // every charge and switch
  std::uint64_t busy_progress = 0;  // busy charges only
  std::uint64_t op_progress = 0;    // busy charges of runtime operations (not declared work)
  double clock = 0;                 // the running sim thread's clock (ns)
  double busy_clock = 0;            // the latest clock a busy charge ended at (ns)
};

class sim_watch {
 public:
  enum class verdict { fine, stalled, idling, declared_only };
  // Idle polls past the last busy end by less than this are a gap between tasks (a wake is 2 us by default).
  static constexpr double kIdlePastBusyNs = 1e6;

  sim_watch(double limit_s, double period_s, const sim_sample& first)
      : limit_s_(limit_s), period_s_(period_s), last_(first) {}

  verdict look(const sim_sample& now) {
    const bool moved = now.progress != last_.progress;
    const bool idle_only = now.in_run && moved && now.busy_progress == last_.busy_progress &&
                           now.clock > now.busy_clock + kIdlePastBusyNs;
    const bool declared_only = now.in_run && now.busy_progress != last_.busy_progress &&
                               now.op_progress == last_.op_progress;
    idle_s_ = idle_only ? idle_s_ + period_s_ : 0;
    still_s_ = now.in_run && !moved ? still_s_ + period_s_ : 0;
    declared_s_ = declared_only ? declared_s_ + period_s_ : 0;
    last_ = now;
    if (still_s_ > 0 && still_s_ >= limit_s_) return verdict::stalled;
    if (idle_s_ > 0 && idle_s_ >= limit_s_) return verdict::idling;
    if (declared_s_ > 0 && declared_s_ >= limit_s_) return verdict::declared_only;
    return verdict::fine;
  }
  double stalled_s() const { return still_s_; }
  double idling_s() const { return idle_s_; }
  double declared_only_s() const { return declared_s_; }
  // A stall the caller knows to be slow, not stuck (a long touch's walk): counted again from here.
  void forgive_stall() { still_s_ = 0; }
  // Declared work only, once noted: counted again from here.
  void forgive_declared_only() { declared_s_ = 0; }

 private:
  double limit_s_, period_s_;
  sim_sample last_;
  double still_s_ = 0, idle_s_ = 0, declared_s_ = 0;
};

}  // namespace roost::platform
