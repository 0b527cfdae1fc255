// Suggestions for a misspelt name: ROOST_SCHED=ws_help, a misspelt ROOST_* variable, a simulator parameter
// or a roost-bench benchmark or variant gets "did you mean ...?".
#pragma once
#include <cstddef>
#include <functional>
#include <string>

namespace roost::detail {

// Edits between two names, a swap of two neighbouring letters counting one (the optimal string alignment
// distance), or limit + 1 when there are more.
std::size_t edit_distance_up_to(const std::string& a, const std::string& b, std::size_t limit);

// The name of `names` within two edits of `text` (the fewest; the first of a tie), or an empty string.
// `name_of` gives an element's name (a const char* or a std::string).
template <class Names, class NameOf = std::identity>
std::string closest_name(const std::string& text, const Names& names, NameOf name_of = {}) {
  std::string best;
  std::size_t best_edits = 3;
  for (const auto& n : names) {
    const std::string name = std::invoke(name_of, n);
    const std::size_t edits = edit_distance_up_to(text, name, 2);
    if (edits < best_edits) {
      best_edits = edits;
      best = name;
    }
  }
  return best;
}

// "did you mean X? " for the closest name, or nothing.
template <class Names, class NameOf = std::identity>
std::string did_you_mean(const std::string& text, const Names& names, NameOf name_of = {}) {
  const std::string best = closest_name(text, names, name_of);
  return best.empty() ? std::string() : "did you mean " + best + "? ";
}

}  // namespace roost::detail
