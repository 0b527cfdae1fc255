// Cache-oblivious matrix multiplication C += A * B on N x N floats (seed 001's and seed 003 §4.5's
// MatMul): split each matrix in 2 x 2 quadrants; the first task group computes the four C quadrants with
// the first half of k, the second group the same quadrants, in the same order, with the second half (two
// groups in sequence: a "complex DAG", so the same worker updates the same part of C in both). Leaves are
// 64 x 64. Work hints 4 : 1 each; a group's data-size hint is the half of A and B it reads plus C.
// The order of additions into every C element is fixed by the recursion, so results are exact.
#pragma once
#include <cstring>
#include <string>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::matmul {

constexpr long kLeaf = 64;
constexpr long kPad = 16;

struct problem_t final : problem {
  long n, ld;
  buffer<float> a, b, c, ref;
  problem_t(long n_) : n(n_), ld(n_ + kPad), a(n_ * ld), b(n_ * ld), c(n_ * ld), ref(n_ * ld) {
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) {
        a[i * ld + j] = static_cast<float>((i * 3 + j * 5) % 11) * 0.25f - 1.0f;
        b[i * ld + j] = static_cast<float>((i * 7 + j * 2) % 13) * 0.125f - 0.5f;
      }
  }
  void reset() override { std::memset(c.data(), 0, sizeof(float) * n * ld); }
  bool check() const override {
    for (long i = 0; i < n; ++i)
      if (std::memcmp(c.data() + i * ld, ref.data() + i * ld, sizeof(float) * n) != 0) return false;
    return true;
  }
  std::string describe() const override {
    return std::to_string(n) + "x" + std::to_string(n) + " floats, 3 matrices, " + std::to_string(3 * n * ld * 4 >> 20) + " MiB";
  }
};

// Compiled once, in kernels.cpp, for every variant: common/forkjoin.hpp says why.
void leaf_kernel(const float* __restrict a, const float* __restrict b, float* __restrict c, long ld, long m);

template <class Touch>
void kernel(const float* __restrict a, const float* __restrict b, float* __restrict c, long ld, long m, Touch&& touch) {
  // Each m x m block as one 2-D region: one declaration a block, not one a row (a traced run recorded 192 a
  // leaf, and KRD, seed 001 §3, counts a kernel's regions, not its rows).
  const auto row = static_cast<std::size_t>(m) * sizeof(float), stride = static_cast<std::size_t>(ld) * sizeof(float);
  touch.rows(a, row, static_cast<std::size_t>(m), stride, false);
  touch.rows(b, row, static_cast<std::size_t>(m), stride, false);
  touch.rows(c, row, static_cast<std::size_t>(m), stride, true);
  leaf_kernel(a, b, c, ld, m);
}

template <class FJ, class Touch>
void mm(const float* a, const float* b, float* c, long ld, long m, const Touch& touch) {
  if (m <= kLeaf) {
    kernel(a, b, c, ld, m, touch);
    return;
  }
  const long h = m / 2;
  auto A = [&](int i, int j) { return a + i * h * ld + j * h; };
  auto B = [&](int i, int j) { return b + i * h * ld + j * h; };
  auto C = [&](int i, int j) { return c + i * h * ld + j * h; };
  const double group_bytes = static_cast<double>(h * m + h * m + m * m) * sizeof(float);
  for (int kk = 0; kk < 2; ++kk) {  // two groups in sequence, C quadrants in the same order
    typename FJ::group g(4, group_bytes);
    g.run([&] { mm<FJ>(A(0, kk), B(kk, 0), C(0, 0), ld, h, touch); }, 1);
    g.run([&] { mm<FJ>(A(1, kk), B(kk, 0), C(1, 0), ld, h, touch); }, 1);
    g.run([&] { mm<FJ>(A(0, kk), B(kk, 1), C(0, 1), ld, h, touch); }, 1);
    g.run([&] { mm<FJ>(A(1, kk), B(kk, 1), C(1, 1), ld, h, touch); }, 1);
    g.wait();
  }
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch& touch) {
  iteration([&] { mm<FJ>(p.a.data(), p.b.data(), p.c.data(), p.ld, p.n, touch); });
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::matmul
