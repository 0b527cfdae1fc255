#include "common/bench.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <random>

namespace bench {

buffer_placement& current_buffer_placement() {
  static buffer_placement p;
  return p;
}

hint_error& current_hint_error() {
  static hint_error e;
  return e;
}

double distorted_weight(int sibling, int siblings) {
  const hint_error& e = current_hint_error();
  if (e.k == hint_error::kind::none) return 1.0;
  if (e.k == hint_error::kind::deterministic) {
    // Seed 003 Fig. 4.22 for four siblings; other counts spread the same way from 1-a to 1+a.
    static const double four[4] = {-1.0, -0.5, 0.5, 1.0};
    double f = siblings == 4 ? four[sibling] : (siblings > 1 ? -1.0 + 2.0 * sibling / (siblings - 1) : 0.0);
    return 1.0 + f * e.alpha;
  }
  thread_local std::mt19937 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double w = 1.0 + u(rng) * e.alpha;
  return w > 0 ? w : 0.0;
}

std::vector<long> parse_size(const std::string& bench, const std::string& size, std::size_t parts, const char* form) {
  std::vector<long> out;
  std::string cur;
  auto flush = [&] {
    if (cur.empty()) throw size_error("");
    out.push_back(std::stol(cur));
    cur.clear();
  };
  try {
    for (char c : size) {
      if (std::isdigit(static_cast<unsigned char>(c))) cur += c;
      else if (c == 'x' || c == 'X') flush();
      else throw size_error("");
    }
    flush();
  } catch (const std::exception&) {
    out.clear();
  }
  if (out.size() != parts)
    throw size_error("size '" + size + "' for " + bench + ": expected " + form);
  for (long v : out)
    if (v <= 0) throw size_error("size '" + size + "' for " + bench + ": every part must be > 0 (" + form + ")");
  return out;
}

void check_fits(const std::string& bench, const std::string& size, long double bytes) {
  const long double memory = static_cast<long double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<long double>(::sysconf(_SC_PAGESIZE));
  if (memory <= 0 || bytes <= memory) return;
  char gib[160];
  std::snprintf(gib, sizeof gib, "%.3Lg GiB, which does not fit in this machine's memory (%.3Lg GiB)",
                bytes / (1u << 30), memory / (1u << 30));
  throw size_error("size '" + size + "' for " + bench + ": its data takes " + gib + "; give a smaller size");
}

}  // namespace bench
