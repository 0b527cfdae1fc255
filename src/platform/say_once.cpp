#include "platform/say_once.hpp"

#include <mutex>
#include <set>

namespace roost::platform {

void say_each_once(const std::vector<std::string>& notes) {
  if (notes.empty()) return;
  static std::mutex* mu = new std::mutex;  // never destroyed: runtimes may be made during static destruction
  static auto* said = new std::set<std::string>;
  std::lock_guard<std::mutex> lk(*mu);
  for (const std::string& n : notes)
    if (said->insert(n).second) std::fprintf(stderr, "roost: %s\n", n.c_str());
}

}  // namespace roost::platform
