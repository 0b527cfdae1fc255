// Start-up configuration. Every field has an environment variable (OpenMP style); a field set in code wins
// over the environment. Unset fields fall back to the environment, then to the documented default.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace roost {

// ROOST_ADWS_STEAL: whether adws and adws-ml repair imbalance by stealing. adaptive ("auto") measures the
// program's iterations with and without and keeps the faster (src/sched/steal_tuner.hpp).
enum class adws_stealing { off, on, adaptive };

struct options {
  // ROOST_SCHED: scheduler name (see scheduler_names()). Default "ws".
  std::optional<std::string> scheduler;
  // ROOST_WORKERS: number of workers, >= 1. Default: one per PU of the topology.
  std::optional<unsigned> workers;
  // ROOST_TOPOLOGY: hwloc synthetic description ("pack:2 l3:1(size=1MiB) core:1 pu:1") or a path to an
  // hwloc XML file. Default: the real machine, restricted to the process affinity mask.
  std::optional<std::string> topology;
  // ROOST_BIND: pin each worker to its PU (true/false). Default true; ignored when oversubscribed.
  std::optional<bool> bind;
  // ROOST_STACK_SIZE: bytes per task stack (suffix K, M or G allowed), 64 KiB .. 1 GiB. Default 1 MiB.
  std::optional<std::size_t> stack_size;
  // ROOST_VERBOSE: print the resolved configuration on stderr at start-up (true/false). Default false.
  std::optional<bool> verbose;
  // ROOST_TRACE: write a trace of this runtime to this file as it runs (binary, see src/trace/trace_format.hpp),
  // and FILE.json (Chrome/Perfetto timeline) when the runtime is destroyed. A file that cannot be written is
  // a config_error at construction; a write that fails later is thrown from the next run() (std::system_error)
  // or printed by the destructor. Default: no trace.
  std::optional<std::string> trace;

  // Scheduler knobs (read only by their scheduler, validated always).
  // ROOST_ADWS_STEAL: adws and adws-ml repair imbalance by stealing: true (on, seed 003's ADWS), false
  // ("ADWS (no steal)"), or auto (adaptive: keep whichever makes the iterations faster). Default auto.
  std::optional<adws_stealing> adws_steal;
  // ROOST_CAB_LEVEL: cab's boundary level, the spawn depth of leaf inter-socket tasks, 0..64. Default: from
  // the topology, the least depth at which a binary task tree has a task for every socket (0 on one socket,
  // 1 on two, 2 on three or four, ...).
  std::optional<unsigned> cab_level;
  // ROOST_CAB_SUBTREES: "one" intra-socket subtree per socket at a time (true, default) or "many" (false).
  std::optional<bool> cab_one_subtree;
  // ROOST_CATS_MIN_INTENSITY: bytes per ns of the profiled iteration below which cats runs as ws. 0.05.
  std::optional<double> cats_min_intensity;
};

// The configuration after options, environment and defaults are merged and validated.
struct resolved_options {
  std::string scheduler;
  unsigned workers = 0;
  std::string topology;  // empty: the real machine
  bool bind = true;
  std::size_t stack_size = 0;
  bool verbose = false;
  std::string trace;  // empty: no trace
  adws_stealing adws_steal = adws_stealing::adaptive;
  std::optional<unsigned> cab_level;  // unset: from the topology (cab_policy)
  bool cab_one_subtree = true;
  double cats_min_intensity = 0.05;
};

// Merges `opts` with the environment and validates. Throws roost::config_error naming the variable, the
// value and the valid values.
resolved_options resolve(const options& opts);

// Scheduler names roost knows, and which of them are implemented in this build.
struct scheduler_info {
  const char* name;
  const char* summary;
  bool available;
};
const std::vector<scheduler_info>& schedulers();

}  // namespace roost
