#include <cmath>
#include <numbers>

#include "fft/fft.hpp"

namespace bench::fft {

problem_t::problem_t(long n_) : n(n_), in(n_), out(n_), ref(n_), twiddle(static_cast<std::size_t>(n_ / 2 + 1)) {
  for (long i = 0; i < n; ++i) in[i] = cplx(std::sin(0.001 * i) + static_cast<double>(i % 7), std::cos(0.003 * i));
  for (long k = 0; k <= n / 2; ++k) twiddle[k] = std::polar(1.0, -2.0 * std::numbers::pi * k / n);
}

void serial(problem& p) { serial_of<problem_t>(p); }

std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 1, "N complex points, a power of two, e.g. 262144");
  check_fits(name, size, 56.0L * static_cast<long double>(v[0]));
  if (v[0] < 2 || (v[0] & (v[0] - 1)) != 0)
    throw size_error("size '" + size + "' for " + name + ": N must be a power of two >= 2");
  auto p = std::make_unique<problem_t>(v[0]);
  p->reset();
  serial(*p);
  // The serial FFT itself is checked against the definition on a few bins (O(N) each).
  const long bins[] = {0, 1, p->n / 3, p->n / 2, p->n - 1};
  for (long k : bins) {
    cplx sum = 0;
    for (long j = 0; j < p->n; ++j) sum += p->in[j] * std::polar(1.0, -2.0 * std::numbers::pi * double((k * j) % p->n) / p->n);
    if (std::abs(sum - p->out[k]) > 1e-6 * (1.0 + std::abs(sum)) * std::log2(double(p->n)))
      throw std::runtime_error("fft: the serial reference disagrees with the DFT at bin " + std::to_string(k));
  }
  std::memcpy(p->ref.data(), p->out.data(), sizeof(cplx) * p->n);
  p->reset();
  return p;
}

}  // namespace bench::fft
