#include "sparselu/sparselu.hpp"

namespace bench::sparselu {

// BOTS genmat: the empty-block pattern and the values of its linear congruential stream.
problem_t::problem_t(long nb_, long bs_)
    : nb(nb_), bs(bs_), blocks(nb_ * nb_ * bs_ * bs_, nb_ * nb_), init(nb_ * nb_ * bs_ * bs_), ref(nb_ * nb_ * bs_ * bs_),
      present(nb_ * nb_), init_present(nb_ * nb_) {
  long seed = 1325;
  for (long i = 0; i < nb; ++i)
    for (long j = 0; j < nb; ++j) {
      bool empty = (i < j && i % 3 != 0) || (i > j && j % 3 != 0) || i % 2 == 1 || j % 2 == 1;
      if (i == j || i == j - 1 || i - 1 == j) empty = false;
      init_present[i * nb + j] = empty ? 0 : 1;
      if (empty) continue;
      float* b = init.data() + (i * nb + j) * bs * bs;
      for (long x = 0; x < bs * bs; ++x) {
        seed = (3125 * seed) % 65536;
        b[x] = static_cast<float>((seed - 32768.0) / 16384.0);
      }
    }
}

step_lists lists_of(const problem_t& p, long k) {
  step_lists l;
  for (long j = k + 1; j < p.nb; ++j)
    if (p.has(k, j)) l.edge.push_back(j);
  for (long i = k + 1; i < p.nb; ++i)
    if (p.has(i, k)) l.edge.push_back(-1 - i);
  for (long i = k + 1; i < p.nb; ++i)
    if (p.has(i, k))
      for (long j = k + 1; j < p.nb; ++j)
        if (p.has(k, j)) l.inner.emplace_back(i, j);
  return l;
}

void serial(problem& p) { serial_of<problem_t>(p); }

std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 2, "NBxBS (blocks per side x block side), e.g. 32x64");
  check_fits(name, size, 3 * 4.0L * static_cast<long double>(v[0]) * static_cast<long double>(v[0]) * static_cast<long double>(v[1]) * static_cast<long double>(v[1]));
  auto p = std::make_unique<problem_t>(v[0], v[1]);
  p->reset();
  serial(*p);
  std::memcpy(p->ref.data(), p->blocks.data(), sizeof(float) * p->nb * p->nb * p->bs * p->bs);
  p->ref_present.assign(p->present.data(), p->present.data() + p->nb * p->nb);
  p->reset();
  return p;
}

}  // namespace bench::sparselu
