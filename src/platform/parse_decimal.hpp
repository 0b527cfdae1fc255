// A decimal number read as std::from_chars reads it (no leading spaces, no '+', no locale), except that one
// too small for a double (1e-400) reads as the nearest double, 0 or a denormal, as strtod gives it, instead of
// failing: such a value is inside every range a setting allows from 0 up, and was refused with a message
// saying it must be in that range (an outside-user campaign). Too large still fails (result_out_of_range).
// Shared by the settings (api/options.cpp) and the simulator's parameters (sim/sim_params.cpp,
// platform/sim_costs.cpp).
#pragma once
#include <charconv>
#include <cmath>
#include <cstring>
#include <system_error>

namespace roost::platform {

inline std::from_chars_result parse_decimal(const char* b, const char* e, double& out) {
  std::from_chars_result r = std::from_chars(b, e, out);
  if (r.ec != std::errc::result_out_of_range) return r;
  // Out of range either way: below the smallest denormal, or above the largest double. long double's range
  // tells the two apart for any numeral of a sane length; one outside it too is an underflow when its
  // exponent is negative.
  long double wide = 0;
  const std::from_chars_result w = std::from_chars(b, e, wide);
  bool tiny;
  if (w.ec == std::errc{}) {
    tiny = std::fabs(wide) < 1;
  } else {
    const void* exp = std::memchr(b, 'e', static_cast<std::size_t>(r.ptr - b));
    if (!exp) exp = std::memchr(b, 'E', static_cast<std::size_t>(r.ptr - b));
    tiny = exp && static_cast<const char*>(exp) + 1 < r.ptr && static_cast<const char*>(exp)[1] == '-';
  }
  if (!tiny) return r;
  out = w.ec == std::errc{} ? static_cast<double>(wide) : (*b == '-' ? -0.0 : 0.0);
  r.ec = std::errc{};
  return r;
}

}  // namespace roost::platform
