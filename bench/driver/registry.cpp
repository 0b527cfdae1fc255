// Compiled twice: into roost-bench by GCC with ROOST_BENCH_FULL (every variant), and into the clang helper
// without it (serial and OpenMP only, so LLVM libomp runs the very same sources). Benchmarks written as
// run_tasks/run_loops use the generic variants (roost_tasks_of<problem_t>, ...), instantiated here.
#include "driver/registry.hpp"

#include "dtree/dtree.hpp"
#include "fib/fib.hpp"
#include "kdtree/kdtree.hpp"
#include "sparselu/sparselu.hpp"
#include "fft/fft.hpp"
#include "knapsack/knapsack.hpp"
#include "rrm/rrm.hpp"
#include "reduction/reduction.hpp"
#include "jacobi/jacobi.hpp"
#include "ge/ge.hpp"
#include "heat2d/heat2d.hpp"
#include "mandelbrot/mandelbrot.hpp"
#include "nest/nest.hpp"
#include "map/map.hpp"
#include "matmul/matmul.hpp"
#include "matmul_blocked/matmul_blocked.hpp"
#include "nqueens/nqueens.hpp"
#include "pfor/pfor.hpp"
#include "quicksort/quicksort.hpp"
#include "stencil/stencil.hpp"
#include "uts/uts.hpp"
#include "vecmul/vecmul.hpp"

#include "common/fj_omp.hpp"
#ifdef ROOST_BENCH_FULL  // roost and oneTBB are not in the clang helper
#include "common/fj_roost.hpp"
#include "common/fj_tbb.hpp"
#define FULL(f) f
#else
#define FULL(f) nullptr
#endif
// The framework variants of a benchmark written as run_tasks (and run_loops, when it is loop-shaped).
#define GENERIC_TASKS(P) FULL(roost_tasks_of<P>), FULL(tbb_tasks_of<P>), nullptr, omp_tasks_of<P>, nullptr, nullptr
#define GENERIC_LOOPS(P)                                                                                   \
  FULL(roost_tasks_of<P>), FULL(tbb_tasks_of<P>), FULL(tbb_pfor_of<P>), omp_tasks_of<P>, omp_static_of<P>, \
      omp_dynamic_of<P>

namespace bench {

namespace st = stencil;

const std::vector<benchmark_def>& registry() {
  static const std::vector<benchmark_def> r{
      {"fib", "003", "fib(n) with no cutoff: spawn overhead", "35", "18", "40",
       [](const std::string& s) { return fib::prepare("fib", s); }, fib::serial, FULL(fib::roost_tasks),
       FULL(fib::tbb_tasks), nullptr, fib::omp_tasks, nullptr, nullptr, FULL(fib::floor_help_first),
       FULL(fib::floor_work_first), FULL(fib::floor_call), FULL(fib::floor_linked)},
      {"fib-invoke", "003", "fib(n) with no cutoff as a two-way join (parallel_invoke): spawn overhead", "35", "18",
       "40", [](const std::string& s) { return fib::prepare("fib-invoke", s); }, fib::serial,
       FULL(fib::roost_invoke), FULL(fib::tbb_invoke), nullptr, nullptr, nullptr, nullptr,
       FULL(fib::floor_invoke), FULL(fib::floor_work_first), FULL(fib::floor_call), FULL(fib::floor_linked_invoke),
       FULL(fib::floor_erased_invoke), FULL(fib::floor_value_invoke),
       FULL(fib::floor_bare_invoke)},
      {"fib-join", "003", "fib(n) with no cutoff as a join returning both results (roost::join): spawn overhead",
       "35", "18", "40", [](const std::string& s) { return fib::prepare("fib-join", s); }, fib::serial,
       FULL(fib::roost_join), FULL(fib::tbb_invoke), nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
       nullptr, nullptr, FULL(fib::floor_value_invoke)},
      {"pfor", "-", "parallel_for over N trivial iterations at grain 1: the cost of a loop's splits", "1048576",
       "4096", "16777216", [](const std::string& s) { return pfor::prepare("pfor", s); }, pfor::serial,
       FULL(pfor::roost_tasks), nullptr, FULL(pfor::tbb_pfor), nullptr, nullptr, nullptr},
      {"nqueens", "000, 003", "n-queens, one task per legal placement", "12", "8", "14",
       [](const std::string& s) { return nqueens::prepare("nqueens", s); }, nqueens::serial,
       FULL(nqueens::roost_tasks), FULL(nqueens::tbb_tasks), nullptr, nqueens::omp_tasks, nullptr, nullptr},
      {"heat", "000", "5-point Jacobi heat, rows split in halves (cutoff 8 rows)", "1024x512x100", "64x32x4",
       "8192x512x100", [](const std::string& s) { return st::prepare(st::kind::heat, st::shape::balanced, "heat", s); },
       st::serial, FULL(st::roost_tasks), FULL(st::tbb_tasks), FULL(st::tbb_pfor), st::omp_tasks, st::omp_static,
       st::omp_dynamic},
      {"heat-ub", "000", "heat split by seed 000's Algorithm 1 (branching 2 and 4)", "1024x512x100", "64x32x4",
       "8192x512x100",
       [](const std::string& s) { return st::prepare(st::kind::heat, st::shape::unbalanced, "heat-ub", s); },
       // The loop forms compute the same grid; only the task versions split it unevenly.
       st::serial, FULL(st::roost_tasks), FULL(st::tbb_tasks), FULL(st::tbb_pfor), st::omp_tasks, st::omp_static,
       st::omp_dynamic},
      {"sor", "000", "red-black successive over-relaxation, rows split in halves", "1024x512x100", "64x32x4",
       "8192x512x100", [](const std::string& s) { return st::prepare(st::kind::sor, st::shape::balanced, "sor", s); },
       st::serial, FULL(st::roost_tasks), FULL(st::tbb_tasks), FULL(st::tbb_pfor), st::omp_tasks, st::omp_static,
       st::omp_dynamic},
      {"sor-ub", "000", "sor split by seed 000's Algorithm 1", "1024x512x100", "64x32x4", "8192x512x100",
       [](const std::string& s) { return st::prepare(st::kind::sor, st::shape::unbalanced, "sor-ub", s); },
       st::serial, FULL(st::roost_tasks), FULL(st::tbb_tasks), FULL(st::tbb_pfor), st::omp_tasks, st::omp_static,
       st::omp_dynamic},
      {"ge", "000", "Gaussian elimination, row blocks per step", "1024", "64", "1024",
       [](const std::string& s) { return ge::prepare(ge::shape::balanced, "ge", s); }, ge::serial,
       FULL(ge::roost_tasks), FULL(ge::tbb_tasks), FULL(ge::tbb_pfor), ge::omp_tasks, ge::omp_static, ge::omp_dynamic},
      {"ge-ub", "000", "Gaussian elimination, row blocks by seed 000's Algorithm 1", "1024", "64", "1024",
       [](const std::string& s) { return ge::prepare(ge::shape::unbalanced, "ge-ub", s); }, ge::serial,
       FULL(ge::roost_tasks), FULL(ge::tbb_tasks), nullptr, ge::omp_tasks, nullptr, nullptr},
      {"heat2d", "003", "5-point float stencil, quadrant recursion to its 64x64 tiles, padded rows", "1024x100",
       "130x3", "4096x1000", [](const std::string& s) { return heat2d::prepare("heat2d", s); }, heat2d::serial,
       FULL(heat2d::roost_tasks), FULL(heat2d::tbb_tasks), FULL(heat2d::tbb_pfor), heat2d::omp_tasks,
       heat2d::omp_static, heat2d::omp_dynamic},
      {"heat2d-pfor", "003", "heat2d as a loop: one parallel_for over the 64x64 tiles per step, grain 1 tile",
       "1024x100", "130x3", "4096x1000", [](const std::string& s) { return heat2d::prepare("heat2d-pfor", s); },
       heat2d::serial, FULL(heat2d::roost_pfor), nullptr, FULL(heat2d::tbb_pfor), nullptr, heat2d::omp_static,
       heat2d::omp_dynamic},
      {"matmul", "001, 003", "cache-oblivious C += A*B, two task groups in sequence, 64x64 leaves", "1024", "128",
       "4096", [](const std::string& s) { return matmul::prepare("matmul", s); }, matmul::serial,
       GENERIC_TASKS(matmul::problem_t)},
      {"matmul-blocked", "002", "blocked C += A*B, blocks stored contiguously, one task per C block", "1024x128",
       "128x32", "4096x128", [](const std::string& s) { return matmul_blocked::prepare("matmul-blocked", s); },
       matmul_blocked::serial, GENERIC_LOOPS(matmul_blocked::problem_t)},
      {"mandelbrot", "000", "escape-time counts, rows halved down to 4 (CPU-bound)", "512x512", "64x64",
       "2048x1024", [](const std::string& s) { return mandelbrot::prepare("mandelbrot", s); }, mandelbrot::serial,
       FULL(mandelbrot::roost_tasks), FULL(mandelbrot::tbb_tasks), nullptr, mandelbrot::omp_tasks, nullptr, nullptr},
      {"quicksort", "003 ch. 5", "quicksort of doubles, parallel double-buffered partition, both sides spawned", "4000000",
       "100000", "134217728", [](const std::string& s) { return quicksort::prepare("quicksort", s); },
       quicksort::serial, GENERIC_TASKS(quicksort::problem_t)},
      {"map", "002", "V vectors scaled in place each step, one task per vector", "48x131072x10", "4x1024x2",
       "48x131072x10", [](const std::string& s) { return map::prepare("map", s); }, map::serial,
       GENERIC_LOOPS(map::problem_t)},
      {"vecmul", "002", "cross products of V pairs of 3-vector arrays, one task per pair", "128x4096x10",
       "4x64x2", "128x4096x10", [](const std::string& s) { return vecmul::prepare("vecmul", s); },
       vecmul::serial, GENERIC_LOOPS(vecmul::problem_t)},
      {"jacobi", "002", "blocked 2-D Jacobi heat solver, one task per block", "2048x256x10", "64x16x2",
       "16384x512x10", [](const std::string& s) { return jacobi::prepare("jacobi", s); }, jacobi::serial,
       GENERIC_LOOPS(jacobi::problem_t)},
      {"reduction", "002", "merge phase of BOTS Sort, level by level, one task per merge", "4194304x10",
       "4096x4", "33554432x10", [](const std::string& s) { return reduction::prepare("reduction", s); },
       reduction::serial, GENERIC_LOOPS(reduction::problem_t)},
      {"rrm", "003 ch. 5", "recursive repeated map: 3 parallel maps per level, halves recursed", "2097152",
       "16384", "134217728", [](const std::string& s) { return rrm::prepare("rrm", s); }, rrm::serial,
       GENERIC_TASKS(rrm::problem_t)},
      {"knapsack", "000", "0-1 knapsack, branch and bound, one spawn per item decision (CPU-bound)", "28", "20",
       "30", [](const std::string& s) { return knapsack::prepare("knapsack", s); }, knapsack::serial,
       GENERIC_TASKS(knapsack::problem_t)},
      {"uts", "-", "BOTS UTS, binomial (T3's shape): one task per node, a deep and very unbalanced tree", "2000x6x16",
       "20x4x1", "2000x6x16", [](const std::string& s) { return uts::prepare("uts", s); }, uts::serial,
       GENERIC_TASKS(uts::problem_t)},
      {"nest", "-", "a chain of nested task groups, one child a level, run RUNS times: the stacks a nest holds",
       "2000x50", "50x3", "2000x50", [](const std::string& s) { return nest::prepare("nest", s); }, nest::serial,
       GENERIC_TASKS(nest::problem_t)},
      {"fft", "000", "radix-2 FFT, halves spawned, butterflies as a parallel loop", "262144", "1024",
       "16777216", [](const std::string& s) { return fft::prepare("fft", s); }, fft::serial,
       GENERIC_TASKS(fft::problem_t)},
      {"sparselu", "002", "BOTS SparseLU: blocked LU with fill-in, one task per block per phase", "32x64", "8x8",
       "32x256", [](const std::string& s) { return sparselu::prepare("sparselu", s); }, sparselu::serial,
       GENERIC_LOOPS(sparselu::problem_t)},
      {"kdtree", "003 ch. 5", "kd-tree build over 3-D points, parallel double-buffered partition", "1000000",
       "20000", "44739242", [](const std::string& s) { return kdtree::prepare("kdtree", s); }, kdtree::serial,
       GENERIC_TASKS(kdtree::problem_t)},
      {"decision-tree", "003 ch. 5", "CART training, histogram Gini splits, parallel loops and partition per node",
       "100000x12", "3000x6", "10500000x17", [](const std::string& s) { return dtree::prepare("decision-tree", s); },
       dtree::serial, GENERIC_TASKS(dtree::problem_t)},
  };
  return r;
}

const benchmark_def* find_benchmark(const std::string& name) {
  for (const auto& b : registry())
    if (name == b.name) return &b;
  return nullptr;
}


}  // namespace bench
