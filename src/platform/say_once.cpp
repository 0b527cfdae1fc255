#include "platform/say_once.hpp"
#include "platform/fork_hold.hpp"

#include <mutex>
#include <set>

namespace roost::platform {

namespace {
std::mutex& said_mutex() {
  static std::mutex* mu = new std::mutex;  // never destroyed: runtimes may be made during static destruction
  return *mu;
}
// Held across fork() (fork_hold.hpp): a child forked while another thread said something here hung at its
// own first saying.
__attribute__((constructor)) void watch_forks_for_sayings() { hold_across_forks_of<&said_mutex>(); }
}  // namespace

void say_each_once(const std::vector<std::string>& notes) {
  if (notes.empty()) return;
  static auto* said = new std::set<std::string>;
  std::lock_guard<std::mutex> lk(said_mutex());
  for (const std::string& n : notes)
    if (said->insert(n).second) std::fprintf(stderr, "roost: %s\n", n.c_str());
}

}  // namespace roost::platform
