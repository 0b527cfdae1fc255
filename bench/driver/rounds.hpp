// The summary of `roost-bench --rounds N`: every variant measured N times, the rounds interleaved (round 1
// runs each variant once, then round 2 runs each again, ...), so that a slow period of the machine falls on
// every variant alike instead of on whichever ran then.
//
// A round in which any measurement was taken while the CPUs were far apart (machine_state.hpp) is left out
// of the summary, unless every round was; the summary says how many rounds it used. Ratios are taken inside
// each round (time / serial time, time / ws time at the same worker count) and their median over the rounds
// is reported: two variants measured seconds apart share the machine's state, two rounds apart may not.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "common/harness.hpp"

namespace bench {

// `V+trace` is roost scheduler V with a trace written (roost-bench runs it with ROOST_TRACE set): what
// tracing costs. Its "vs ws" ratio is to V itself, untraced, at the same worker count.
constexpr std::string_view kTracedSuffix = "+trace";
inline bool is_traced(const std::string& variant) {
  return variant.size() > kTracedSuffix.size() && variant.ends_with(kTracedSuffix);
}
inline std::string untraced(const std::string& variant) {
  return is_traced(variant) ? variant.substr(0, variant.size() - kTracedSuffix.size()) : variant;
}
// The variant a row's "vs ws" ratio is to: ws, or for `V+trace` V.
inline std::string ratio_reference(const std::string& variant) { return is_traced(variant) ? untraced(variant) : "ws"; }

struct round_summary_row {
  std::string variant;
  unsigned workers = 1;
  double median_s = 0;      // median over the rounds used of the round's median
  double spread = 0;        // the largest of those round medians / the smallest
  double vs_serial = -1;    // median over the rounds used of (time / serial time); < 0: no serial
  double vs_ws = -1;        // median over the rounds used of (time / ratio_reference's time at the same workers); < 0: none
  int rounds_used = 0;      // rounds in which this variant ran and that were used
  bool check_passed = true; // in every round, used or not
  std::string note;         // why it did not run, when it never did
};

struct round_summary {
  std::vector<round_summary_row> rows;  // in the order the variants were first measured
  int rounds = 0, near_rounds = 0;      // near_rounds == 0: every round was far, all were used
};

// `all`: one benchmark's measurements from every round (round 1..rounds); `c2c_best`: the run's best round
// trip (< 0: unknown, then no round counts as far).
round_summary summarize_rounds(const std::vector<measurement>& all, int rounds, double c2c_best);

// The summary as a table on stdout.
void print_round_summary(const std::string& bench, const std::string& size, const round_summary& s);

// The summary as JSON lines, one per row, written after the run's measurements in the --json file:
// {"summary":true, "bench", "size", "variant", "workers", "median" (s), "spread", "vs_serial", "vs_ws" (null
// when there is no reference), "rounds_used", "rounds", "near_rounds", "check", "note"}. roost-report shows
// these rows as they are: the rule lives here only.
std::string round_summary_json(const std::string& bench, const std::string& size, const round_summary& s);

}  // namespace bench
