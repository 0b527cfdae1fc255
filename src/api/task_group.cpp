// The out-of-line parts of the task_group ABI: the errors user code throws, and the thread-local fiber
// pointer. Spawns and joins reach engine<Policy> through the worker's entry points (detail/abi.hpp).
#include <cmath>
#include <sstream>

#include "engine/engine_base.hpp"
#include "roost/errors.hpp"
#include "roost/task_group.hpp"

namespace roost::detail {

__thread fiber_abi* t_running_fiber __attribute__((tls_model("initial-exec"))) = nullptr;

void throw_outside_task(const char* call) {
  throw usage_error(std::string(call) + " called outside roost::runtime::run: spawn tasks from inside a task "
                    "(rt.run([&] { ... tg.run(...); ... }))");
}

std::exception_ptr g_exception_lost_to_oom;

void rethrow_group_error(std::exception_ptr* e) {
  if (e == &g_exception_lost_to_oom)
    throw std::bad_alloc();  // a child threw, and there was no memory left to keep its exception
  std::exception_ptr x = std::move(*e);
  delete e;
  std::rethrow_exception(x);
}


void throw_bad_hint(const char* what, double value) {
  std::ostringstream os;
  os << what << " = " << value << ": a hint must be a finite number >= 0 (it is relative work or bytes)";
  throw std::invalid_argument(os.str());
}

}  // namespace roost::detail
