#include "api/simulation.hpp"

#include <cstdio>
#include <fstream>

#include "engine/engine_base.hpp"
#include "engine/task_path.hpp"
#include "roost/errors.hpp"

namespace roost::detail {

namespace {
platform::sim_costs costs_of(const resolved_options& cfg) {
  platform::sim_costs c;
  if (!cfg.sim_params.empty()) c.apply(cfg.sim_params);
  return c;
}
}  // namespace

simulation::simulation(const resolved_options& cfg, const topo::topology& tp)
    : plat_(tp.num_pus(), cfg.sim_seed, costs_of(cfg)), report_path_(cfg.sim_report) {
  plat_.set_engine_tls(engine::sim_thread_locals());
  // Checked now, not when the report is due: a path that cannot be written is a start-up error.
  if (!report_path_.empty()) {
    std::ofstream probe(report_path_, std::ios::app);
    if (!probe) throw config_error("ROOST_SIM_REPORT='" + report_path_ + "': cannot be opened for writing");
  }
  watchdog_ = std::thread([this] { watch(); });
}

void simulation::attach() { next_ = set_touch_consumer(this); }

void simulation::detach() {
  touch_consumer* now = set_touch_consumer(next_);
  if (now != this) set_touch_consumer(now);  // someone else took it since: leave theirs
}

void simulation::watch() {
  const auto period = std::chrono::milliseconds(250);
  const double limit_s = plat_.costs().stall_wall_s;
  std::uint64_t last = plat_.progress();
  double still_s = 0;
  std::unique_lock<std::mutex> lk(watch_mu_);
  while (!watch_cv_.wait_for(lk, period, [this] { return stopping_; })) {
    const std::uint64_t now = plat_.progress();
    if (now != last || !plat_.in_run()) {
      last = now;
      still_s = 0;
      continue;
    }
    still_s += 0.25;
    if (still_s < limit_s) continue;
    std::string task = "?";
    if (const void* t = plat_.running_task())
      task = engine::format_spawn_path(engine::spawn_path(*static_cast<const task_id*>(t)));
    char why[512];
    std::snprintf(why, sizeof why,
                  "worker %u has run task %s for %.0f s of real time without reaching a runtime operation "
                  "(virtual time %.0f ns, seed %llu). A task that spin-waits for another task can never see it "
                  "progress here: every simulated worker runs on this one OS thread, and only a runtime "
                  "operation lets another run. Wait with a task_group instead (stall_wall_s in ROOST_SIM_PARAMS "
                  "sets this limit).",
                  plat_.running_thread(), task.c_str(), still_s, plat_.running_clock(),
                  static_cast<unsigned long long>(plat_.seed()));
    platform::os::fatal("roost: simulated platform: no progress", why);
  }
}

simulation::~simulation() {
  {
    std::lock_guard<std::mutex> lk(watch_mu_);
    stopping_ = true;
  }
  watch_cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

void simulation::place(const topo::topology& tp, const topo::placement& pl) {
  std::vector<platform::sim_platform::worker_place> places(pl.pu_of_worker.size());
  const auto& levels = tp.sharing_levels();
  const bool shared_cache = !levels.empty() && levels[0].cache_bytes > 0;
  for (std::size_t w = 0; w < places.size(); ++w) {
    const unsigned pu = pl.pu_of_worker[w];
    places[w].cache = shared_cache ? static_cast<int>(levels[0].domain_of_pu[pu]) : static_cast<int>(pu);
    places[w].socket = static_cast<int>(tp.pu(pu).package);
  }
  plat_.set_places(std::move(places));
}

void simulation::on_touch(int worker, const void* base, std::size_t bytes, access mode) {
  if (platform::t_sim == &plat_) plat_.on_touch(bytes, 0);
  if (next_) next_->on_touch(worker, base, bytes, mode);
}

void simulation::finish(const std::string& scheduler, const std::string& topology) {
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
  std::fprintf(stderr, "%s\n", plat_.summary().c_str());
  if (report_path_.empty()) return;
  std::ofstream out(report_path_, std::ios::trunc);
  out << plat_.report_json(scheduler, topology, wall);
  if (!out) std::fprintf(stderr, "roost: ROOST_SIM_REPORT='%s': the report could not be written\n", report_path_.c_str());
}

}  // namespace roost::detail
