#include "platform/sim_costs.hpp"

#include <cctype>

#include <charconv>
#include <cmath>
#include <utility>

#include "platform/parse_decimal.hpp"
#include "platform/trim_space.hpp"
#include "roost/errors.hpp"

namespace roost::platform {

namespace {
struct entry {
  const char* name;
  double sim_costs::*field;
};
constexpr entry kEntries[] = {
    {"spawn_ns", &sim_costs::spawn_ns},
    {"task_start_ns", &sim_costs::task_start_ns},
    {"task_end_ns", &sim_costs::task_end_ns},
    {"resume_ns", &sim_costs::resume_ns},
    {"steal_ns", &sim_costs::steal_ns},
    {"steal_socket_ns", &sim_costs::steal_socket_ns},
    {"steal_remote_ns", &sim_costs::steal_remote_ns},
    {"steal_attempt_ns", &sim_costs::steal_attempt_ns},
    {"steal_attempt_socket_ns", &sim_costs::steal_attempt_socket_ns},
    {"steal_attempt_remote_ns", &sim_costs::steal_attempt_remote_ns},
    {"relax_ns", &sim_costs::relax_ns},
    {"yield_ns", &sim_costs::yield_ns},
    {"wake_ns", &sim_costs::wake_ns},
    {"task_ns", &sim_costs::task_ns},
    {"touch_ns_per_byte", &sim_costs::touch_ns_per_byte},
    {"op_ns", &sim_costs::op_ns},
    {"jitter", &sim_costs::jitter},
    {"stall_wall_s", &sim_costs::stall_wall_s},
};

std::string valid_names() {
  std::string s;
  for (const auto& e : kEntries) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

}  // namespace

bool sim_costs::knows(const std::string& name) {
  for (const auto& e : kEntries)
    if (name == e.name) return true;
  return false;
}
std::string sim_costs::names() { return valid_names(); }
std::vector<std::string> sim_costs::name_list() {
  std::vector<std::string> v;
  for (const auto& e : kEntries) v.push_back(e.name);
  return v;
}

void sim_costs::apply(const std::string& overrides, const std::string& source) {
  std::size_t pos = 0;
  while (pos <= overrides.size()) {
    std::size_t comma = overrides.find(',', pos);
    if (comma == std::string::npos) comma = overrides.size();
    const std::string pair = trim_space(std::string_view(overrides).substr(pos, comma - pos));
    pos = comma + 1;
    if (pair.empty()) {
      if (comma == overrides.size()) break;
      throw config_error(source + "='" + overrides + "': an empty pair; must be name=value pairs "
                         "separated by commas, names: " + valid_names());
    }
    const std::size_t eq = pair.find('=');
    const std::string name = trim_space(std::string_view(pair).substr(0, eq));
    std::string key = name;  // names are case-insensitive, as the memory model's (configuration.md)
    for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const entry* found = nullptr;
    for (const auto& e : kEntries)
      if (key == e.name) found = &e;
    if (!found)
      throw config_error(source + ": unknown parameter '" + name + "'; valid: " + valid_names());
    if (eq == std::string::npos)
      throw config_error(source + ": '" + pair + "' has no value; must be " + name + "=NUMBER");
    const std::string text = trim_space(std::string_view(pair).substr(eq + 1));
    double v = 0;
    auto [end, ec] = parse_decimal(text.data(), text.data() + text.size(), v);
    const std::string field = found->name;  // the table's spelling
    const double hi = field == "jitter" ? 0.5 : 1e15;
    // An idle worker's poll (and yield) must move its clock: at no cost it stays the earliest worker for ever
    // and the one holding the work never runs (adws, adws-ml and cab hung with relax_ns=0, the watchdog
    // seeing each poll as progress). At least 1 ns, so that the polls of a long run still move a clock of
    // doubles and an idle worker cannot poll a thousand times for each ns of a task.
    const bool idle_poll = field == "relax_ns" || field == "yield_ns";
    const double lo = idle_poll ? 1.0 : 0.0;
    // "-0" is refused, as every setting whose range has no negative value refuses it (options.cpp).
    const bool signed_zero = ec == std::errc{} && v == 0 && std::signbit(v);
    if (ec != std::errc{} || end != text.data() + text.size() || !(v >= lo) || v > hi || signed_zero)
      throw config_error(source + ": " + name + "='" + text + "': must be a number in [" + (idle_poll ? "1" : "0") +
                         ", " + (hi == 0.5 ? std::string("0.5") : std::string("1e15")) + "]" +
                         (signed_zero ? ", written without a sign" : "") +
                         (idle_poll ? " (an idle worker's poll that costs no virtual time keeps it the earliest "
                                      "worker, and the workers holding the work never run)"
                                    : ""));
    this->*(found->field) = v;
  }
}

std::vector<std::pair<std::string, double>> sim_costs::all() const {
  std::vector<std::pair<std::string, double>> v;
  for (const auto& e : kEntries) v.emplace_back(e.name, this->*(e.field));
  return v;
}

}  // namespace roost::platform
