// FFT (seed 000's CPU-bound set; the Cilk program's recursion in its simplest form): out-of-place radix-2
// decimation in time on N = 2^k complex doubles. The even and odd halves are transformed by two spawned
// tasks (hints 1 : 1), then combined by butterflies, as a parallel loop above 4096 points. Below 64 points
// the recursion runs serially. The operations on every element are fixed by the recursion, so the result
// equals the serial program's exactly; prepare() also checks some bins against a direct DFT.
#pragma once
#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::fft {

using cplx = std::complex<double>;
constexpr long kSerialBelow = 64;
constexpr long kLoopLeaf = 4096;

struct problem_t final : problem {
  long n;
  buffer<cplx> in, out, ref;
  std::vector<cplx> twiddle;  // exp(-2 pi i k / n), k < n/2
  explicit problem_t(long n_);
  void reset() override { std::memset(static_cast<void*>(out.data()), 0, sizeof(cplx) * n); }
  bool check() const override { return std::memcmp(out.data(), ref.data(), sizeof(cplx) * n) == 0; }
  std::string describe() const override { return std::to_string(n) + " complex doubles, " + std::to_string(n * 32 >> 20) + " MiB in+out"; }
};

// Butterflies k in [lo, hi) of a size-m transform whose halves are in out[0, m/2) and out[m/2, m).
// Compiled once, in kernels.cpp, for every variant: common/forkjoin.hpp says why.
void butterflies(cplx* out, long m, long lo, long hi, const cplx* tw, long tw_step);
// The whole transform of a size below kSerialBelow, serially (the recursion's leaves).
void small_transform(const cplx* in, cplx* out, long m, long s, const cplx* tw, long tw_step);

// out[0, m) = DFT of in[0], in[s], in[2s], ... (m points); tw_step = n / m.
template <class FJ, class Touch>
void transform(const cplx* in, cplx* out, long m, long s, const cplx* tw, long tw_step, const Touch& touch) {
  if (m == 1) {
    out[0] = in[0];
    return;
  }
  if (m < kSerialBelow) {
    small_transform(in, out, m, s, tw, tw_step);
    return;
  }
  {
    typename FJ::group g(2, static_cast<double>(m) * 2 * sizeof(cplx));
    g.run([&] { transform<FJ>(in, out, m / 2, 2 * s, tw, 2 * tw_step, touch); }, 1);
    g.run([&] { transform<FJ>(in + s, out + m / 2, m / 2, 2 * s, tw, 2 * tw_step, touch); }, 1);
    g.wait();
  }
  split_rows<FJ>(0, m / 2, kLoopLeaf, 2 * sizeof(cplx), [&](long lo, long hi) {
    touch(out + lo, static_cast<std::size_t>(hi - lo) * sizeof(cplx), true);
    touch(out + m / 2 + lo, static_cast<std::size_t>(hi - lo) * sizeof(cplx), true);
    butterflies(out, m, lo, hi, tw, tw_step);
  });
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch& touch) {
  iteration([&] { transform<FJ>(p.in.data(), p.out.data(), p.n, 1, p.twiddle.data(), 1, touch); });
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::fft
