#include "topology/synthetic.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <strings.h>

#include "roost/errors.hpp"

namespace roost::topo {

namespace {

constexpr const char* kSizeSyntax = "an integer with an optional unit kB, KiB, MB, MiB, GB, GiB, TB or TiB";

[[noreturn]] void reject(const std::string& named, const std::string& why) { throw config_error(named + ": " + why); }

// A size attribute's value at `p` (after "size=" or "memory="), read as hwloc 2.x reads it
// (topology-synthetic.c, hwloc_synthetic_parse_memory_attr: strtoull base 0, then an optional unit), but
// refusing what hwloc wraps silently: a sign, zero, or a value that the unit carries past 64 bits.
// Returns the bytes, or 0 for a value that is not valid.
std::uint64_t size_attribute(const char* p) {
  if (*p < '0' || *p > '9') return 0;  // strtoull would accept " 5" and "-5" (as 2^64-5)
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(p, &end, 0);
  if (errno == ERANGE) return 0;
  struct unit {
    const char* name;
    std::uint64_t bytes;
  };
  static constexpr unit units[] = {{"TB", 1000000000000ull}, {"TiB", 1ull << 40}, {"GB", 1000000000ull},
                                   {"GiB", 1ull << 30},      {"MB", 1000000ull},    {"MiB", 1ull << 20},
                                   {"kB", 1000ull},          {"kiB", 1ull << 10}};
  std::uint64_t mult = 1;
  for (const unit& u : units) {
    if (::strncasecmp(end, u.name, std::strlen(u.name)) == 0) {  // hwloc's order and case rule
      mult = u.bytes;
      break;
    }
  }
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(x), mult, &bytes)) return 0;
  return bytes;
}

// The attributes of one level, from just after '(' to the first ')' (hwloc takes the first), space-separated.
void check_attributes(const std::string& named, const char* p, const char* close) {
  while (p < close) {
    const char* next = p;
    while (next < close && *next != ' ') ++next;
    std::string attr(p, next);
    if (attr.rfind("size=", 0) == 0) {
      std::uint64_t b = size_attribute(p + 5);
      if (b == 0 || b > max_cache_bytes)
        reject(named, attr + ": must be a cache size from 1 byte to 1 TiB: " + kSizeSyntax);
    } else if (attr.rfind("memory=", 0) == 0) {
      if (size_attribute(p + 7) == 0)
        reject(named, attr + ": must be a memory size of at least 1 byte that fits in 64 bits: " + kSizeSyntax);
    }
    p = next + 1;
  }
}

}  // namespace

std::uint64_t check_synthetic(const std::string& description, unsigned max_pus, const std::string& named) {
  // The grammar of hwloc 2.x (topology-synthetic.c, hwloc_backend_synthetic_init): optional root
  // attributes "(...)", then levels separated by spaces or newlines, each "[type:]arity[(attributes)]",
  // with NUMA nodes attached to the level before as "[numa(...)]". The PUs are the product of the arities.
  // Where the text stops making sense, counting stops: hwloc rejects it without building anything.
  const char* p = description.c_str();
  std::uint64_t pus = 1;
  bool past_64_bits = false;
  bool counted = true;  // false where counting stopped before the end
  std::vector<std::string> cache_levels;  // "l3", "l1i", ... as named so far
  if (*p == '(') {
    const char* close = std::strchr(p, ')');
    if (!close) return 0;
    check_attributes(named, p + 1, close);
    p = close + 1;
  }
  while (*p) {
    while (*p == ' ' || *p == '\n') ++p;
    if (!*p) break;
    if (*p == '[') {  // an attached NUMA node: adds memory, not PUs
      const char* close = std::strchr(p, ']');
      if (!close) return 0;
      const char* open = std::strchr(p, '(');
      if (open && open < close) {
        const char* attr_close = std::strchr(open, ')');
        if (!attr_close) return 0;
        check_attributes(named, open + 1, attr_close);
      }
      p = close + 1;
      continue;
    }
    if (*p < '0' || *p > '9') {  // "type:"; hwloc looks for the first ':' after it, as here
      const char* colon = std::strchr(p, ':');
      if (!colon) {
        counted = false;
        break;
      }
      // A cache level named twice on the path: hwloc merges the two into one cache of no size, and the error
      // that followed named a size nobody wrote (an outside-user campaign: 'l3:1(size=1MiB) l3:1(size=512KiB)').
      std::string type(p, colon);
      for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (type.size() >= 2 && type[0] == 'l' && type[1] >= '1' && type[1] <= '9') {
        std::string level = type.substr(0, 2);
        std::string rest = type.substr(2);
        if (rest.size() >= 5 && rest.compare(rest.size() - 5, 5, "cache") == 0) rest.resize(rest.size() - 5);
        if (rest == "i") level += "i";  // an instruction cache is a level of its own; d and u are the data one
        if (std::find(cache_levels.begin(), cache_levels.end(), level) != cache_levels.end())
          reject(named, "names cache level " + level + " twice; each cache level appears once from the machine "
                        "down to its PUs (hwloc merges two into one cache of no size)");
        // Nearer the PUs, smaller numbers: an l3 under an l2 was taken as written, and the simulator walked the
        // l2 first, as the nearest cache (an outside-user campaign). An instruction cache beside its level's
        // data cache is no step.
        for (const std::string& above : cache_levels)
          if (above[1] < level[1])
            reject(named, "puts cache level " + level + " under " + above + "; levels go down from the machine to "
                          "its PUs, the largest number first (l3 above l2 above l1)");
        cache_levels.push_back(level);
      }
      p = colon + 1;
    }
    char* end = nullptr;
    errno = 0;
    unsigned long arity = std::strtoul(p, &end, 0);  // base 0 as hwloc: "0x10" is 16, "010" is 8
    if (end == p || arity == 0 || arity > 0xffffffffu || errno == ERANGE) {  // hwloc rejects these
      counted = false;
      break;
    }
    std::uint64_t product = 0;
    if (__builtin_mul_overflow(pus, static_cast<std::uint64_t>(arity), &product)) past_64_bits = true;
    pus = past_64_bits ? UINT64_MAX : product;
    p = end;
    if (*p == '(') {
      const char* close = std::strchr(p, ')');
      if (!close) {
        counted = false;
        break;
      }
      check_attributes(named, p + 1, close);
      p = close + 1;
    }
  }
  if (past_64_bits || pus > max_pus) {
    std::string count = past_64_bits ? "more than 2^64" : std::to_string(pus);
    reject(named, "describes " + count + " PUs (the product of its arities); must describe at most " +
                            std::to_string(max_pus) + " PUs, roost's worker limit");
  }
  return counted ? pus : 0;
}

namespace {

// The levels of an hwloc synthetic description, split at the spaces outside parentheses and brackets
// ("l3:1(size=1MiB linesize=64)" is one level).
std::vector<std::string> synthetic_levels(const std::string& d) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : d) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if ((c == ' ' || c == '\n' || c == '\t') && depth <= 0) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

std::vector<std::string> caches_without_size(const std::string& description) {
  std::vector<std::string> unsized;
  for (const std::string& level : synthetic_levels(description)) {
    if (level.empty() || level[0] == '(' || level[0] == '[') continue;  // root attributes, attached NUMA node
    std::string type = level.substr(0, level.find(':'));
    std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::tolower(c); });
    const bool cache = type.size() >= 2 && type[0] == 'l' && std::isdigit(static_cast<unsigned char>(type[1]));
    if (!cache || type.find('i') != std::string::npos) continue;  // not a cache, or an instruction cache
    // size= as an attribute of its own: linesize= ends in it too.
    bool sized = false;
    for (std::size_t at = level.find("size="); at != std::string::npos && !sized; at = level.find("size=", at + 1))
      sized = at > 0 && (level[at - 1] == '(' || level[at - 1] == ' ' || level[at - 1] == ',');
    if (!sized) unsized.push_back(level);
  }
  return unsized;
}

}  // namespace roost::topo
