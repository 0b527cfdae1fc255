// The simulated platform's cost table: what each runtime operation costs in virtual time (DESIGN §6,
// "runtime operations have fixed costs from a parameter table"). Defaults and where they come from:
// src/platform/README.md. Overridden by ROOST_SIM_PARAMS ("name=value,name=value").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace roost::platform {

struct sim_costs {
  // Runtime operations, ns.
  double spawn_ns = 10;        // a spawn (naming, frame, push)
  double task_start_ns = 10;   // a task begins on a worker (pop or take, switch to it)
  double task_end_ns = 10;     // a task ends (join bookkeeping, switch back)
  double resume_ns = 20;       // a suspended task resumes (a fiber switch)
  double steal_ns = 150;       // a successful steal, same cache (the victim's lines move to the thief)
  double steal_socket_ns = 300;  // ... from another cache of the same socket
  double steal_remote_ns = 600;  // ... from another socket
  double steal_attempt_ns = 30;         // a failed steal attempt: the victim's deque read and found empty, same cache
  double steal_attempt_socket_ns = 60;  // ... a victim under another cache of the same socket
  double steal_attempt_remote_ns = 120; // ... a victim on another socket
  double relax_ns = 25;        // one pause of an idle worker's poll loop (cpu_relax)
  double yield_ns = 1000;      // an idle worker yields the CPU (oversubscribed loop)
  double wake_ns = 2000;       // a sleeping worker is woken (futex wake to running)
  // Kernels: what a task that declares nothing costs beyond the operations above, the compute part of
  // declared data (roost::touch), ns per byte touched, and of declared arithmetic (roost::compute), ns per
  // operation.
  double task_ns = 0;
  double touch_ns_per_byte = 0.05;
  double op_ns = 0.1;
  // Ordering perturbation for replayable tests: each charge is scaled by a factor drawn uniformly from
  // [1 - jitter, 1 + jitter] with the seed's generator. 0 for measurements.
  double jitter = 0;
  // A run that reaches no runtime operation for this many seconds of real time is reported, with the
  // worker and the task (a spin-wait on another task can never progress on one OS thread).
  double stall_wall_s = 10;

  // Applies "name=value,name=value"; throws roost::config_error naming `source` (the variable or field the
  // list came from), the pair and the valid names.
  // Whether `name` (lower case) is one of this table's, and every name it has, comma-separated and as a list:
  // for a list that also holds the memory model's parameters (ROOST_SIM_PARAMS), whose error names both
  // tables and the closest name of either.
  static bool knows(const std::string& name);
  static std::string names();
  static std::vector<std::string> name_list();
  void apply(const std::string& overrides, const std::string& source = "ROOST_SIM_PARAMS");
  // name=value of every parameter, for reports.
  std::vector<std::pair<std::string, double>> all() const;
};

}  // namespace roost::platform
