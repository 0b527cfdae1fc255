#include "common/machine_state.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace bench {

namespace {
bool pin_to(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  return pthread_setaffinity_np(pthread_self(), sizeof s, &s) == 0;
}
}  // namespace

double core_to_core_round_trip_ns() {
  using clock = std::chrono::steady_clock;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
  int cpus[2], found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; ++c)
    if (CPU_ISSET(c, &allowed)) cpus[found++] = c;
  if (found < 2) return -1;

  cpu_set_t saved;
  if (pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) != 0) return -1;
  // The fastest of many short batches: a batch during which another program's threads held a CPU (an
  // OpenMP team still spinning after its region, say) is slow for that reason, not for the distance.
  constexpr int kBatches = 20, kTrips = 250;
  // Bounded in time: where the two threads cannot run at once (a loaded machine, valgrind's serialised
  // threads) every trip waits for a time slice, and the measurement gives up instead of taking seconds.
  const auto deadline = clock::now() + std::chrono::milliseconds(50);
  // One line, alone (padded: a neighbour on the pinger's stack written in the loop doubled the time): the
  // ping writes odd values, the pong answers with the next even one.
  struct alignas(64) padded_line {
    std::atomic<int> value{0};
    char pad[64 - sizeof(std::atomic<int>)];
  } padded;
  std::atomic<int>& line = padded.value;
  std::atomic<bool> stop{false}, placed{true};
  std::thread pong([&] {
    if (!pin_to(cpus[1])) placed.store(false);
    for (int i = 0; i < kBatches * kTrips; ++i) {
      while (line.load(std::memory_order_acquire) != 2 * i + 1)
        if (stop.load(std::memory_order_relaxed)) return;
      line.store(2 * i + 2, std::memory_order_release);
    }
  });
  if (!pin_to(cpus[0])) placed.store(false);
  std::vector<double> ns;
  for (int b = 0; b < kBatches && !stop.load(std::memory_order_relaxed); ++b) {
    const auto t0 = clock::now();
    bool complete = true;
    for (int k = 0; k < kTrips && complete; ++k) {
      const int i = b * kTrips + k;
      line.store(2 * i + 1, std::memory_order_release);
      for (unsigned spins = 1; line.load(std::memory_order_acquire) != 2 * i + 2; ++spins)
        if (spins % 4096 == 0 && clock::now() > deadline) {
          stop.store(true, std::memory_order_relaxed);
          complete = false;
          break;
        }
    }
    if (complete) ns.push_back(std::chrono::duration<double, std::nano>(clock::now() - t0).count() / kTrips);
    if (clock::now() > deadline) stop.store(true, std::memory_order_relaxed);
  }
  stop.store(true, std::memory_order_relaxed);
  pong.join();
  pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
  if (!placed.load() || ns.empty()) return -1;
  return *std::min_element(ns.begin(), ns.end());
}

}  // namespace bench
