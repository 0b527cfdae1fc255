#include "common/bench.hpp"

#include <cctype>

namespace bench {

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

}  // namespace bench
