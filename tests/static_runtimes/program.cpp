// A runtime at namespace scope, made before main and destroyed after it, and a runtime made in a static
// object's destructor during the program's exit: both must work as any other (an outside-user campaign: the
// first crashed before main with ROOST_TRACE or ROOST_SIM_REPORT set, and at exit when simulated or tracing,
// the second crashed at exit; the library's own statics were used outside their lifetime).
//
// STATIC_RUNTIME_OPTIONS chooses how the global runtime is made: "env" (from the environment alone), "trace=PATH"
// (options::trace) or "sim_report=PATH" (simulated, options::sim_report).
#include <roost/roost.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

long fib(int n) {
  if (n < 2) return n;
  long a = 0;
  roost::task_group tg;
  tg.run([&] { a = fib(n - 1); });
  const long b = fib(n - 2);
  tg.wait();
  return a + b;
}

roost::options global_options() {
  roost::options o;
  const char* how = std::getenv("STATIC_RUNTIME_OPTIONS");
  const std::string h = how ? how : "env";
  if (h.rfind("trace=", 0) == 0) {
    o.trace = h.substr(6);
  } else if (h.rfind("sim_report=", 0) == 0) {
    o.platform = "sim";
    o.topology = "pack:2 l3:1(size=1MiB) core:2 pu:1";
    o.sim_report = h.substr(11);
  }
  return o;
}

// Made in its destructor, at the program's exit, after main's runtimes and the global one may be gone.
struct late_runtime {
  ~late_runtime() {
    roost::runtime rt;
    std::printf("late: %ld\n", rt.run([] { return fib(15); }));
    std::fflush(stdout);
  }
};
late_runtime g_late;  // constructed before g_runtime: destroyed after it

roost::runtime g_runtime(global_options());

}  // namespace

int main() {
  std::printf("main: %ld\n", g_runtime.run([] { return fib(15); }));
  std::fflush(stdout);
  return 0;
}
