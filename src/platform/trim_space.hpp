// A setting's text without the white space around it: the one rule by which every setting, variable or string
// field, and each `name=value` of a list in one (ROOST_SIM_PARAMS), is read (docs/configuration.md). White
// space is what std::isspace says in the "C" locale: space, \t, \n, \v, \f and \r. Five copies of this
// trimmed three different sets, and a pair of ROOST_SIM_PARAMS with a \v or \f around it was refused where
// every other setting read the same text.
// Shared by the settings (api/options.cpp, api/runtime.cpp, mem/distribution.cpp) and the simulator's
// parameters (api/simulation.cpp, platform/sim_costs.cpp).
#pragma once
#include <cctype>
#include <string>
#include <string_view>

namespace roost::platform {

// The same white space as characters, for a search inside a text (std::string::find_first_of).
inline constexpr const char* kWhiteSpace = " \t\n\v\f\r";

inline std::string trim_space(std::string_view s) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  std::size_t b = 0, e = s.size();
  while (b < e && space(s[b])) ++b;
  while (e > b && space(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace roost::platform
