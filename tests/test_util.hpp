// Helpers shared by the tests.
#pragma once
#include <gtest/gtest.h>
#include <dirent.h>
#include <malloc.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include "roost/detail/sanitizers.hpp"
#include "roost/roost.hpp"

#if defined(ROOST_TSAN) || defined(ROOST_ASAN)
// The sanitizer runtimes' allocator statistics (sanitizer/allocator_interface.h, which GCC does not install).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace roost::sim {
std::size_t host_memory_in_use();  // the simulator's memory, off the malloc heap (src/sim/host_memory.hpp)
}

namespace roost_test {

// The allocator's own count of bytes in use (mallinfo2, or the sanitizer allocator's), and the simulator's
// memory beside it, for tests that memory stays flat: it moves by exactly what the program keeps, unlike
// RSS, and does not depend on timing.
inline std::size_t bytes_in_use() {
#if defined(ROOST_TSAN) || defined(ROOST_ASAN)
  const std::size_t heap = __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 m = mallinfo2();
  const std::size_t heap = m.uordblks + m.hblkhd;  // hblkhd: blocks large enough to be mmapped on their own
#endif
  return heap + roost::sim::host_memory_in_use();
}

// Makes the object at `p` reachable from code the compiler cannot see, as if another thread held it: a spin on
// an atomic flag that nothing sets stays a spin. Otherwise the loop is one with no side effect, which the
// compiler may assume ends (clang removed one, and the task ran on into whatever code followed).
inline void escape(const void* p) { asm volatile("" : : "g"(p) : "memory"); }

// Sanitizer builds run the same tests at reduced sizes.
constexpr bool under_sanitizer() {
#if defined(ROOST_TSAN) || defined(ROOST_ASAN)
  return true;
#else
  return false;
#endif
}

constexpr bool under_tsan() {
#if defined(ROOST_TSAN)
  return true;
#else
  return false;
#endif
}

constexpr bool under_asan() {
#if defined(ROOST_ASAN)
  return true;
#else
  return false;
#endif
}

// The schedulers this build has, for tests parameterised over them.
inline std::vector<std::string> available_schedulers() {
  std::vector<std::string> v;
  for (const auto& s : roost::schedulers())
    if (s.available) v.push_back(s.name);
  return v;
}

inline roost::options opts(const std::string& sched, unsigned workers) {
  roost::options o;
  o.scheduler = sched;
  o.workers = workers;
  return o;
}

// A test name from a scheduler's (gtest names allow no '-').
inline std::string scheduler_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& ch : n)
    if (ch == '-') ch = '_';
  return n;
}

// Busy for d (a task that must stay running, not sleep).
inline void spin(std::chrono::microseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

// An observer that records the spawn path of every task start (any thread).
struct start_paths : roost::task_observer {
  std::mutex m;
  std::multiset<std::string> starts;
  void on_task_start(const roost::task_event& e) override {
    std::lock_guard<std::mutex> lk(m);
    starts.insert(e.path_string());
  }
};

// Waits, sleeping 1 ms between looks, until ready() holds or 5 s have passed; false if it gave up. A fixed
// sleep left a window of tens of milliseconds, which a loaded machine (sanitizers, CI, nice 19) can miss
// with nothing wrong; 5 s cannot be missed that way.
template <class Ready>
bool wait_until(Ready&& ready) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// wait_until from inside a task that waits for another worker to take its work: between looks it spawns and
// joins an empty task, as a leaf of a real program would now and then, since a split deque shares private
// work only at its owner's pushes and pops (ws_deque.hpp). Without that, a thief's request made after the
// owner's last push waits for the whole 5 s.
template <class Ready>
bool wait_in_task_until(Ready&& ready) {
  return wait_until([&] {
    if (ready()) return true;
    roost::task_group tick;
    tick.run([] {});
    tick.wait();
    return false;
  });
}

// For tests that another worker must take part: the first task that calls this (on the worker that
// spawned) waits until `count` (tasks run elsewhere) is positive, and records in `late` whether it gave up.
inline void wait_for_another_worker(const std::atomic<int>& count, std::atomic<bool>& waited_once,
                                    std::atomic<bool>& late) {
  if (waited_once.exchange(true)) return;
  if (!wait_until([&] { return count.load() != 0; })) late = true;
}

// The probe of a test that another worker must take part: each task calls take_part(me), `me` being the
// worker the spawner ran on; the first task there waits (above) until a task ran elsewhere.
struct another_worker_probe {
  std::atomic<int> elsewhere{0};
  std::atomic<bool> waited{false}, late{false};
  void take_part(int me) {
    if (roost::this_worker_id() != me) elsewhere.fetch_add(1);
    else wait_for_another_worker(elsewhere, waited, late);
  }
};

// Options for a test in which the root's children must be able to run on another worker. cab keeps the
// tasks above its boundary level on the socket's head core by design (seed 000 §3.1, §3.3), so there the
// root itself is made the leaf inter-socket task (ROOST_CAB_LEVEL=0): its children form an intra-socket
// subtree, which the other cores of the socket steal from, as any policy's thieves do.
inline roost::options opts_sharing_the_root(const std::string& sched, unsigned workers) {
  roost::options o = opts(sched, workers);
  if (sched == "cab") o.cab_level = 0;
  return o;
}

// The message of the exception of type E that f() throws, or "" when it throws none.
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}
template <class F>
std::string config_error_of(F&& f) {
  return message_of<roost::config_error>(std::forward<F>(f));
}
template <class F>
std::string usage_error_of(F&& f) {
  return message_of<roost::usage_error>(std::forward<F>(f));
}

// msg is an error message that names every one of parts.
inline void expect_mentions(const std::string& msg, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(msg.empty()) << "expected a config_error";
  for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' missing in: " << msg;
}

// fib through task_group, the plainest spawn-heavy program (no hints).
inline long fib_tasks(int n) {
  if (n < 2) return n;
  long a = 0;
  roost::task_group tg;
  tg.run([&a, n] { a = fib_tasks(n - 1); });
  long b = fib_tasks(n - 2);
  tg.wait();
  return a + b;
}

// A path in the tests' temporary folder, unique to this process: ctest runs cases in parallel, and another
// checkout's suite may run on the same machine. The process id goes before the extension, which stays last:
// "roost_report.json" -> "<TempDir>roost_report.<pid>.json".
inline std::string temp_path(const std::string& name) {
  const std::string pid = "." + std::to_string(::getpid());
  const std::size_t slash = name.rfind('/');
  const std::size_t dot = name.find('.', slash == std::string::npos ? 0 : slash + 1);
  return ::testing::TempDir() + (dot == std::string::npos ? name + pid : name.substr(0, dot) + pid + name.substr(dot));
}

// A temp_path that is removed when it leaves scope, with what a runtime derives from it (a trace's PATH.json,
// a later runtime's PATH.2 and PATH.2.json, ...), so a test that stops at a failed ASSERT leaves nothing there.
class temp_file {
 public:
  explicit temp_file(const std::string& name) : path_(temp_path(name)) {}
  ~temp_file() {
    for (const std::string& p : {path_, path_ + ".json"}) std::remove(p.c_str());
    // The numbered ones run without a gap unless a runtime failed to be made between two others: look a little past.
    for (int n = 2, missing = 0; missing < 4; ++n) {
      const std::string numbered = path_ + "." + std::to_string(n);
      const bool had = std::remove(numbered.c_str()) == 0;
      std::remove((numbered + ".json").c_str());
      missing = had ? 0 : missing + 1;
    }
  }
  temp_file(const temp_file&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The exit status of a child of fork() that ran `body` (its return value; 1 for an exception, 128 + the signal
// for a child killed by one), and in `pid` the child's process id.
template <class Body>
int in_child(Body&& body, pid_t* pid = nullptr) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::alarm(60);  // bounds a hang only: the answer is the status
    int code = 1;
    try {
      code = body();
    } catch (...) {
      code = 2;
    }
    ::_exit(code);
  }
  if (pid) *pid = child;
  int status = 0;
  if (child < 0 || ::waitpid(child, &status, 0) != child) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Sets an environment variable (unsets it, for a null value) for one scope and restores what was there.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) {
      had_ = true;
      old_ = old;
    }
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~scoped_env() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }
  scoped_env(const scoped_env&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// The CPUs each thread of this process named `name` may run on (/proc/self/task/*/comm, sched_getaffinity):
// how a test finds a thread roost starts (roost-monitor, roost-simwatch, roost-simmodel).
inline std::vector<cpu_set_t> cpus_of_threads_named(const std::string& name) {
  std::vector<cpu_set_t> found;
  DIR* d = ::opendir("/proc/self/task");
  if (!d) return found;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string line;
    std::getline(comm, line);
    if (line != name) continue;
    cpu_set_t cpus;
    if (sched_getaffinity(std::stoi(e->d_name), sizeof(cpus), &cpus) == 0) found.push_back(cpus);
  }
  ::closedir(d);
  return found;
}

}  // namespace roost_test
