// A chain of nested task groups: each level's task spawns the next level and waits for it, DEPTH levels, and
// the chain runs RUNS times, each one runtime::run. It measures what a level of nesting costs where the
// runtime must hold every level at once: under the child-first schedulers (ws, hws, cab, cats, adws,
// adws-ml) each level's child runs on a stack of its own while its parent waits, so the chain holds DEPTH
// stacks; under ws-help and numa the children run on the waiting parent's stack. Whether the stacks of one
// run are there for the next (src/engine/fiber.hpp, stacks_to_keep) decides its time: a kept level costs a
// spawn, one beyond what is kept maps and unmaps a stack at every run (docs/user-guide.md, "Stacks"). No
// work hints and no data: the chain is all spawn and wait. BOTS UTS (`uts`) nests its groups 1,599 deep.
#pragma once
#include <string>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::nest {

struct problem_t final : problem {
  long depth;  // levels of nested groups below each run's root
  long runs;   // runtime::run calls per repetition
  long result = -1;  // the sum over the runs of the levels each counted
  problem_t(long d, long r) : depth(d), runs(r) {}
  void reset() override { result = -1; }
  bool check() const override { return result == runs * (depth + 1); }
  std::string describe() const override;
};

// The levels below and at `level`: one group and one child a level, the count passed back up.
template <class FJ>
__attribute__((noinline)) long chain(long level) {
  if (level == 0) return 1;
  long below = 0;
  typename FJ::group g;
  g.run([&below, level] { below = chain<FJ>(level - 1); });
  g.wait();
  return below + 1;
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch&) {
  long total = 0;
  for (long r = 0; r < p.runs; ++r) iteration([&] { total += chain<FJ>(p.depth); });
  p.result = total;
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::nest
