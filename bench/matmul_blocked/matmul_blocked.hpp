// Blocked matrix multiplication C += A * B (seed 002 Table 4, "Matmul"): N x N floats stored block by block,
// B x B blocks, each block contiguous, blocks in row-major order. One task per block of C, all spawned by one
// task (seed 002's Listing 1 shape); task (i, j) runs the chain k = 0 .. NB-1 of block products
// C(i,j) += A(i,k) * B(k,j) with the leaf kernel of the recursive matmul (the seed calls BLAS there). Each
// task declares A's block row i, B's block column j and its block of C. The matrices' parts are their
// blocks: coarse puts block b on node b mod N (allocation-wise round-robin, seed 002 §3), so with NB a
// multiple of the node count B's column j and C's column j each lie on one node — the locality Fig. 8
// shows numa finding. Every C block adds its products in the order of k, so results are exact. A block
// product does 2 B^3 operations on 3 B^2 floats: it declares them (roost::compute), so that the simulator
// charges its arithmetic, not only its bytes.
#pragma once
#include <cstring>
#include <string>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"
#include "matmul/matmul.hpp"

namespace bench::matmul_blocked {

struct problem_t final : problem {
  long n, bs, nb;  // nb blocks per side
  buffer<float> a, b, c, ref;
  problem_t(long n_, long bs_);
  std::size_t block_bytes() const { return static_cast<std::size_t>(bs * bs) * sizeof(float); }
  float* block(const buffer<float>& m, long i, long j) const { return m.data() + (i * nb + j) * bs * bs; }
  void reset() override { std::memset(c.data(), 0, sizeof(float) * n * n); }
  bool check() const override { return std::memcmp(c.data(), ref.data(), sizeof(float) * n * n) == 0; }
  std::string describe() const override {
    return std::to_string(n) + "x" + std::to_string(n) + " floats in " + std::to_string(bs) + "x" + std::to_string(bs) +
           " blocks, 3 matrices, " + std::to_string(3 * n * n * 4 >> 20) + " MiB";
  }
};

// C(i,j) += sum over k of A(i,k) * B(k,j), k in order.
template <class Touch>
void block_row_col(const problem_t& p, long blk, const Touch& touch) {
  const long i = blk / p.nb, j = blk % p.nb;
  float* c = p.block(p.c, i, j);
  for (long k = 0; k < p.nb; ++k) {
    const float* a = p.block(p.a, i, k);
    const float* b = p.block(p.b, k, j);
    touch(a, p.block_bytes(), false);
    touch(b, p.block_bytes(), false);
    touch(c, p.block_bytes(), true);
    touch.compute(static_cast<std::uint64_t>(2 * p.bs * p.bs * p.bs));  // a multiply and an add per (i, k, j)
    matmul::leaf_kernel(a, b, c, p.bs, p.bs);
  }
}

// What task blk reads and writes: A's block row (contiguous), B's block column (NB blocks, a block row
// apart) and its C block.
inline decl decl_of(const problem_t& p, long blk) {
  const long i = blk / p.nb, j = blk % p.nb;
  const std::size_t bb = p.block_bytes(), nbs = static_cast<std::size_t>(p.nb);
  return decl{}
      .add(p.block(p.a, i, 0), nbs * bb, false)
      .add_rows(p.block(p.b, 0, j), bb, nbs, nbs * bb, false)
      .add(p.block(p.c, i, j), bb, true);
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch& touch) {
  const double bytes = static_cast<double>(2 * p.nb + 1) * static_cast<double>(p.block_bytes());
  iteration([&] {
    spawn_each_declared<FJ>(p.nb * p.nb, bytes, [&](long blk) { return decl_of(p, blk); },
                            [&](long blk) { block_row_col(p, blk, touch); });
  });
}

template <class ForEach>
void run_loops(problem_t& p, ForEach&& for_each) {
  for_each(p.nb * p.nb, [&](long blk) { block_row_col(p, blk, no_touch{}); });
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::matmul_blocked
