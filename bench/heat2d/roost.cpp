#include "common/fj_roost.hpp"
#include "heat2d/heat2d.hpp"

namespace bench::heat2d {
void roost_tasks(problem& p) { run_tasks<roost_fj>(static_cast<problem_t&>(p), roost_iteration{}, roost_touch_rows{}); }

// heat2d-pfor: the loop form, as a user would write it: one roost::parallel_for over the tiles per time
// step, at grain one tile, beside oneTBB's parallel_for and OpenMP's static and dynamic schedules of the
// same loop. Its splits are two-way joins with equal hints: ADWS deals the top ones over the workers, the
// same bands of tile rows every step, and joins the rest inline (roost/detail/fork_join2.hpp).
void roost_pfor(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  run_loops(p, [](long tiles, auto&& body) {
    roost_iteration{}([&] {
      roost::parallel_for(0L, tiles, 1L, [&](long lo, long hi) {
        for (long t = lo; t < hi; ++t) body(t);
      });
    });
  });
  p.result = final_buffer(p);
}
}  // namespace bench::heat2d
