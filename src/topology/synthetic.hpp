// Checks an hwloc synthetic description (ROOST_TOPOLOGY="pack:2 l3:1(size=1MiB) core:1 pu:1") before hwloc
// builds it. hwloc builds whatever its arities multiply to (pack:99999 pu:99999 is 10^10 PUs: minutes of
// work, then out of memory) and reads sizes with strtoull, so size=-5 wraps to 2^64-5, size=0 silently
// becomes a default size and a large size with a unit wraps past 64 bits.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace roost::topo {

// The largest cache a description may declare; bigger is a typo, and keeps the schedulers' arithmetic on
// cache sizes far from overflow.
inline constexpr std::size_t max_cache_bytes = std::size_t{1} << 40;

// Throws roost::config_error, its message starting with `named` (the setting and its value:
// "ROOST_TOPOLOGY='...'"), when `description` makes more than max_pus PUs, or has a cache size (size=)
// outside [1 byte, max_cache_bytes] or a memory size (memory=) of zero, signed or past 64 bits. Other
// syntax errors are left to hwloc, which rejects them without building anything.
// Returns the PUs the description makes (the product of its arities), or 0 where it stopped making sense.
std::uint64_t check_synthetic(const std::string& description, unsigned max_pus, const std::string& named);

// The data and unified cache levels of `description` written without size= ("l3:1", "l2:4(ways=8)"), in
// the order written. hwloc gives such a level a size of its own (16 MiB for an L3, 4 MiB for an L2, ...),
// which nobody described: the simulator refuses it, a native runtime says so (DESIGN §4 asks for sizes).
std::vector<std::string> caches_without_size(const std::string& description);

}  // namespace roost::topo
