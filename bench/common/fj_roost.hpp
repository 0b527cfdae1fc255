// roost as a fork-join adapter (common/forkjoin.hpp), the runtime the driver made for this variant, and a
// touch hook that forwards kernel annotations to roost::touch.
#pragma once
#include <roost/roost.hpp>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench {

struct roost_fj {
  using group = roost::task_group;
  static constexpr bool declares = true;
  template <class F>
  static void run(group& g, F&& f, double work, const decl& d) {
    roost::data data;
    for (int i = 0; i < d.n; ++i) {
      const decl::region& r = d.r[i];
      data.add({r.base, r.row_bytes, r.rows, r.stride, r.write ? roost::access::read_write : roost::access::read});
    }
    g.run(std::forward<F>(f), work, data);
  }
};

inline roost::runtime*& current_runtime() {
  static roost::runtime* rt = nullptr;
  return rt;
}

// One time step = one runtime::run (schedulers that learn across iterations count them).
struct roost_iteration {
  template <class F>
  void operator()(F&& body) const { current_runtime()->run(body); }
};

struct roost_touch {
  void operator()(const void* p, std::size_t bytes, bool write) const {
    roost::touch(p, bytes, write ? roost::access::write : roost::access::read);
  }
  // A 2-D block: `rows` rows of `row_bytes`, `stride` bytes apart (one region, as seed 001's KRD counts it).
  void rows(const void* p, std::size_t row_bytes, std::size_t rows, std::size_t stride, bool write) const {
    roost::touch_rows(p, row_bytes, rows, stride, write ? roost::access::write : roost::access::read);
  }
  // A kernel's arithmetic (roost::compute), for kernels whose time is not in proportion to their bytes.
  void compute(std::uint64_t operations) const { roost::compute(operations); }
};

struct roost_touch_rows {
  void operator()(const void* p, std::size_t row_bytes, std::size_t rows, std::size_t stride, bool write) const {
    roost::touch_rows(p, row_bytes, rows, stride, write ? roost::access::write : roost::access::read);
  }
};

template <class P>
void roost_tasks_of(problem& p) { run_tasks<roost_fj>(static_cast<P&>(p), roost_iteration{}, roost_touch{}); }

}  // namespace bench
