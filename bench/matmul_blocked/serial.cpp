#include "matmul_blocked/matmul_blocked.hpp"

namespace bench::matmul_blocked {

// The inputs are the recursive matmul's, element (r, c) at its place in the blocked layout.
problem_t::problem_t(long n_, long bs_)
    : n(n_), bs(bs_), nb(n_ / bs_), a(n_ * n_, nb * nb), b(n_ * n_, nb * nb), c(n_ * n_, nb * nb), ref(n_ * n_) {
  for (long r = 0; r < n; ++r)
    for (long col = 0; col < n; ++col) {
      const long at = ((r / bs) * nb + col / bs) * bs * bs + (r % bs) * bs + col % bs;
      a[at] = static_cast<float>((r * 3 + col * 5) % 11) * 0.25f - 1.0f;
      b[at] = static_cast<float>((r * 7 + col * 2) % 13) * 0.125f - 0.5f;
    }
}

void serial(problem& p) { serial_of<problem_t>(p); }

std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 2, "NxBLOCK, BLOCK a multiple of 32 dividing N, e.g. 1024x128");
  check_fits(name, size, 4 * 4.0L * static_cast<long double>(v[0]) * static_cast<long double>(v[0]));
  // A block of a multiple of 32 x 32 floats is whole 4 KiB pages: coarse can put each block on its node.
  if (v[1] % 32 != 0 || v[0] % v[1] != 0)
    throw size_error("size '" + size + "' for " + name + ": BLOCK (" + std::to_string(v[1]) +
                     ") must be a multiple of 32 that divides N (" + std::to_string(v[0]) + "), e.g. 1024x128");
  auto p = std::make_unique<problem_t>(v[0], v[1]);
  p->reset();
  serial(*p);
  std::memcpy(p->ref.data(), p->c.data(), sizeof(float) * p->n * p->n);
  p->reset();
  return p;
}

}  // namespace bench::matmul_blocked
