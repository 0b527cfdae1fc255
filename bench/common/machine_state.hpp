// How far apart, right now, the CPUs are that the benchmarks run on.
//
// On the 2-vCPU VM these figures are taken on, the host sometimes places the two vCPUs far apart for
// seconds to minutes: a cache line then takes 300-350 ns instead of ~55 ns to travel from one core to the
// other and back, and task-parallel runtimes (roost, oneTBB) run heat2d 2-3x slower while OpenMP's static
// loops barely change. Timings from such a period are not comparable with the others, so the driver
// measures this around every measurement, writes it to the JSON and flags the outliers in its table.
#pragma once

namespace bench {

// Round trip of one cache line between the first two CPUs this process may use, in nanoseconds (the
// fastest of 20 short batches, about a millisecond in all, never more than 50 ms); negative when the
// process may use fewer than two CPUs, a thread cannot be placed, or no batch finished in time (the two
// threads could not run at once). The calling thread's affinity is restored.
double core_to_core_round_trip_ns();

// A measurement taken while the CPUs were far apart: its round trip above twice the best seen in the run
// and above 120 ns (this VM's normal is ~55-80 ns). roost-report applies the same rule
// (tools/roost_tools/report.py, far_apart).
inline bool far_apart(double c2c_ns, double best_ns) { return best_ns > 0 && c2c_ns > 2 * best_ns && c2c_ns > 120; }

}  // namespace bench
