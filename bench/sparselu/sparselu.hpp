// SparseLU (seed 002 Table 4, derived from BOTS SparseLU): LU factorisation without pivoting of an
// NB x NB matrix of BS x BS float blocks, some of them empty (BOTS's genmat pattern). Step k factors the
// diagonal block (lu0), then updates row k (fwd) and column k (bdiv) as one group of tasks, then every
// inner block (bmod) as a second group, allocating blocks that fill in. One task per block, equal work
// hints, the group's block bytes as its data-size hint. Every block is updated by one task per step in a
// fixed order, so the result equals the serial program's exactly.
#pragma once
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::sparselu {

struct problem_t final : problem {
  long nb, bs;
  buffer<float> blocks, init, ref;           // block (i, j) at (i * nb + j) * bs * bs; storage for all
  buffer<unsigned char> present, init_present;  // block (i, j) is not empty
  std::vector<unsigned char> ref_present;
  problem_t(long nb_, long bs_);
  float* at(long i, long j) const { return blocks.data() + (i * nb + j) * bs * bs; }
  bool has(long i, long j) const { return present[i * nb + j] != 0; }
  void reset() override {
    std::memcpy(blocks.data(), init.data(), sizeof(float) * nb * nb * bs * bs);
    std::memcpy(present.data(), init_present.data(), static_cast<std::size_t>(nb * nb));
  }
  bool check() const override {
    for (long b = 0; b < nb * nb; ++b) {
      if (present[b] != ref_present[b]) return false;
      if (present[b] && std::memcmp(blocks.data() + b * bs * bs, ref.data() + b * bs * bs, sizeof(float) * bs * bs) != 0)
        return false;
    }
    return true;
  }
  std::string describe() const override {
    return std::to_string(nb) + "x" + std::to_string(nb) + " blocks of " + std::to_string(bs) + "x" + std::to_string(bs) +
           " floats, " + std::to_string(nb * nb * bs * bs * 4 >> 20) + " MiB if dense";
  }
};

// The four BOTS kernels.
void lu0(float* diag, long bs);
void fwd(const float* diag, float* col, long bs);
void bdiv(const float* diag, float* row, long bs);
void bmod(const float* row, const float* col, float* inner, long bs);

// The work of step k: row k's and column k's non-empty blocks, and the inner pairs (i, j) whose row and
// column blocks are both non-empty. Read before the phase they feed starts; a phase never writes what its
// own list was built from.
struct step_lists {
  std::vector<long> edge;                        // j >= 0: fwd on (k, j); -1 - i: bdiv on (i, k)
  std::vector<std::pair<long, long>> inner;      // bmod on (i, j)
};
step_lists lists_of(const problem_t& p, long k);

template <class Touch>
void edge_task(problem_t& p, long k, long e, const Touch& touch) {
  const std::size_t bytes = static_cast<std::size_t>(p.bs * p.bs) * sizeof(float);
  float* blk = e >= 0 ? p.at(k, e) : p.at(-1 - e, k);
  touch(p.at(k, k), bytes, false);
  touch(blk, bytes, true);
  if (e >= 0) fwd(p.at(k, k), blk, p.bs);
  else bdiv(p.at(k, k), blk, p.bs);
}

template <class Touch>
void inner_task(problem_t& p, long k, long i, long j, const Touch& touch) {
  const std::size_t bytes = static_cast<std::size_t>(p.bs * p.bs) * sizeof(float);
  float* blk = p.at(i, j);
  if (!p.has(i, j)) {  // fill-in: one task per (i, j) per step, so no one else touches this block now
    std::memset(blk, 0, bytes);
    p.present[i * p.nb + j] = 1;
  }
  touch(p.at(i, k), bytes, false);
  touch(p.at(k, j), bytes, false);
  touch(blk, bytes, true);
  bmod(p.at(i, k), p.at(k, j), blk, p.bs);
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch& touch) {
  const double block_bytes = static_cast<double>(p.bs * p.bs) * sizeof(float);
  const std::size_t bytes = static_cast<std::size_t>(p.bs * p.bs) * sizeof(float);
  iteration([&] {
    for (long k = 0; k < p.nb; ++k) {
      lu0(p.at(k, k), p.bs);
      step_lists l = lists_of(p, k);
      {
        typename FJ::group g(static_cast<double>(l.edge.size()), 2.0 * block_bytes * static_cast<double>(l.edge.size()));
        // Each task declares its blocks (BOTS's depend clauses), for the numa scheduler.
        for (long e : l.edge)
          run_declared<FJ>(g, [&p, k, e, &touch] { edge_task(p, k, e, touch); }, 1, [&] {
            return decl{}.add(p.at(k, k), bytes, false).add(e >= 0 ? p.at(k, e) : p.at(-1 - e, k), bytes, true);
          });
        g.wait();
      }
      typename FJ::group g(static_cast<double>(l.inner.size()), 3.0 * block_bytes * static_cast<double>(l.inner.size()));
      for (auto [i, j] : l.inner)
        run_declared<FJ>(g, [&p, k, i = i, j = j, &touch] { inner_task(p, k, i, j, touch); }, 1, [&, i = i, j = j] {
          return decl{}.add(p.at(i, k), bytes, false).add(p.at(k, j), bytes, false).add(p.at(i, j), bytes, true);
        });
      g.wait();
    }
  });
}

// Loop form: lu0 as a one-iteration loop (one thread, then the loop's barrier), then the two phases.
template <class ForEach>
void run_loops(problem_t& p, ForEach&& for_each) {
  for (long k = 0; k < p.nb; ++k) {
    for_each(1, [&](long) { lu0(p.at(k, k), p.bs); });
    const step_lists l = lists_of(p, k);  // each OpenMP thread builds its own copy; nothing writes them now
    for_each(static_cast<long>(l.edge.size()), [&](long x) { edge_task(p, k, l.edge[x], no_touch{}); });
    for_each(static_cast<long>(l.inner.size()),
             [&](long x) { inner_task(p, k, l.inner[x].first, l.inner[x].second, no_touch{}); });
  }
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::sparselu
