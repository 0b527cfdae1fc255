// roost as a fork-join adapter (common/forkjoin.hpp), the runtime the driver made for this variant, and a
// touch hook that forwards kernel annotations to roost::touch.
#pragma once
#include <roost/roost.hpp>

#include "common/bench.hpp"

namespace bench {

struct roost_fj {
  using group = roost::task_group;
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
};

struct roost_touch_rows {
  void operator()(const void* p, std::size_t row_bytes, std::size_t rows, std::size_t stride, bool write) const {
    roost::touch_rows(p, row_bytes, rows, stride, write ? roost::access::write : roost::access::read);
  }
};

template <class P>
void roost_tasks_of(problem& p) { run_tasks<roost_fj>(static_cast<P&>(p), roost_iteration{}, roost_touch{}); }

}  // namespace bench
