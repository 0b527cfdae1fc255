// A decimal number read as std::from_chars reads it (no leading spaces, no '+', no locale), except that one
// too small for a double (1e-400, or 0. and 400 zeros and 1) reads as 0, the nearest double, as strtod gives
// it, instead of failing: such a value is inside every range a setting allows from 0 up, and was refused with
// a message saying it must be in that range (an outside-user campaign). Too large still fails
// (result_out_of_range), however its numeral is written.
// Shared by the settings (api/options.cpp) and the simulator's parameters (sim/sim_params.cpp,
// platform/sim_costs.cpp).
#pragma once
#include <charconv>
#include <system_error>

namespace roost::platform {

// Whether the numeral at [b, e), which from_chars read as out of a double's range, is below 1 in magnitude
// (an underflow) rather than above it: its decimal order, the exponent plus the place of its first nonzero
// digit. Its syntax was read already: [-]digits[.digits][(e|E)[+|-]digits].
inline bool below_one(const char* b, const char* e) {
  const char* p = b;
  if (p < e && *p == '-') ++p;
  long long order = 0;  // the power of ten of the first nonzero digit, before the exponent
  bool found = false;
  long long int_digits = 0, leading_zeros_after_point = 0;
  for (; p < e && *p >= '0' && *p <= '9'; ++p) {
    if (found || *p != '0') {
      found = true;
      ++int_digits;
    }
  }
  if (found) order = int_digits - 1;
  if (p < e && *p == '.') {
    for (++p; p < e && *p >= '0' && *p <= '9'; ++p) {
      if (!found && *p == '0') ++leading_zeros_after_point;
      else if (!found) found = true;
    }
    if (int_digits == 0) order = -leading_zeros_after_point - 1;
  }
  long long exp = 0;
  if (p < e && (*p == 'e' || *p == 'E')) {
    ++p;
    const bool neg = p < e && *p == '-';
    if (p < e && (*p == '-' || *p == '+')) ++p;
    for (; p < e && *p >= '0' && *p <= '9'; ++p) exp = exp < 1000000000 ? exp * 10 + (*p - '0') : exp;
    if (neg) exp = -exp;
  }
  return order + exp < 0;
}

inline std::from_chars_result parse_decimal(const char* b, const char* e, double& out) {
  std::from_chars_result r = std::from_chars(b, e, out);
  if (r.ec != std::errc::result_out_of_range || !below_one(b, r.ptr)) return r;
  out = *b == '-' ? -0.0 : 0.0;
  r.ec = std::errc{};
  return r;
}

}  // namespace roost::platform
