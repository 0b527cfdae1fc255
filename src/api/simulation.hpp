// A runtime made with ROOST_PLATFORM=sim: the simulated platform it runs on (platform/sim_platform.hpp),
// the memory hierarchy of its topology (sim/memory_model.hpp, walked as sim/sharded_model.hpp's shards), the
// kernels' declared data (roost::touch) walked through that hierarchy and charged to the worker that touched
// it, and the report at the end.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>
#include <memory>
#include <string>

#include "engine/engine_base.hpp"
#include "platform/sim_platform.hpp"
#include "sim/shared_bandwidth.hpp"
#include "sim/sharded_model.hpp"
#include "roost/options.hpp"
#include "roost/touch.hpp"
#include "topology/placement.hpp"
#include "topology/topology.hpp"
#include "trace/tracer.hpp"

namespace roost::detail {

// Checks a ROOST_SIM_PARAMS list's names and values against both tables (a config_error naming `source`,
// the variable or field it came from, the pair and what is valid), whatever the platform: a native run
// resolves them too.
void check_sim_params(const std::string& text, const std::string& source = "ROOST_SIM_PARAMS");

class simulation final : public touch_consumer {
 public:
  simulation(const resolved_options& cfg, const topo::topology& tp);
  ~simulation() override;
  // Once the workers are placed: which cache and socket each one's PU belongs to.
  void place(const topo::topology& tp, const topo::placement& pl);
  // The annotations of eng's tasks reach the simulation from attach() to detach() (it becomes eng's first
  // listener, engine_base::set_touch_sink), and then the listener installed before it (the runtime's tracer,
  // installed first). With a tracer, each touch's modelled memory time follows it in the trace
  // (trace_format.hpp, "memory"). detach(): after the runtime took eng's listeners back.
  void attach(engine::engine_base& eng, trace::tracer* tracer = nullptr);
  void detach();
  // Charges the calling sim thread; forwards to the listener installed before (the tracer).
  void on_touch(int worker, const void* base, std::size_t bytes, access mode) override;
  // Checks that rows of a large span are this process's memory, then walks and charges them row by row;
  // forwards them as one call.
  void on_touch_rows(int worker, const void* base, std::size_t row_bytes, std::size_t rows, std::size_t stride,
                     access mode) override;
  // Charges the calling sim thread the operations at op_ns; forwards as on_touch does.
  void on_compute(int worker, std::uint64_t operations) override;
  // The runtime is made: the report's file (emptied by the constructor) is kept for finish() to write.
  void claim_report();
  // Before the runtime is made: removes the report's file if the constructor's check made it (a runtime that
  // fails to be made writes none). Also ~simulation's; runtime.cpp calls it before the file's number is
  // given back, so that another runtime that takes the number meanwhile never finds the file going.
  void drop_unclaimed_report();
  // At the runtime's end: the summary on stderr, and the JSON report if ROOST_SIM_REPORT names a file.
  void finish(const std::string& scheduler, const std::string& topology);

  platform::sim_platform& platform() { return plat_; }
  // Drops from a queue of freed ranges (base, bytes) each one that the ranges before it cover (on_removal).
  using freed_ranges = sim::host_vector<std::pair<std::uintptr_t, std::size_t>>;
  static void drop_covered(freed_ranges& freed);

 private:
  // Ends the process with the worker and the task when a run makes no progress for stall_wall_s seconds
  // of this machine's time (sim_platform::progress).
  void watch();
  std::string memory_json() const;
 public:
  // Misses of the caches of one level so far; -1 when the topology has none at that level.
  long long misses_at_level(int level) const;
  // DRAM lines fetched from another node than the fetching PU's, so far.
  long long dram_remote() const;

 private:
  // The simulated address of a host byte (simulation.cpp, on_touch).
  static constexpr std::uint64_t kPage = 4096;
  // Touches from this size on are checked to lie in this process's memory (on_touch).
  static constexpr std::size_t kCheckMappedBytes = std::size_t{64} << 20;
  // The most virtual time one roost::compute or roost::touch call may charge: what a cost parameter may be at
  // most (sim_costs.cpp); the clock, a double, loses later charges past far more.
  static constexpr double kMostChargeNs = 1e15;
  // The most virtual time a worker's clock may reach through roost::compute and roost::touch: past it a
  // charge of a fraction of a ns is rounded away (1e15 ns: a double's steps are 0.125 ns there). Checked
  // against a call's declared cost (operations, bytes at touch_ns_per_byte); a touch's memory cost and the
  // jitter come after the walk and may take the clock that much further, and the next call is then refused.
  static constexpr double kMostClockNs = platform::sim_platform::kMostClockNs;
  // The usage_error for `call`, whose `ns` more would take the calling worker's clock past kMostClockNs (the
  // callers test that first, so that no name is built on the common path).
  [[noreturn]] void throw_past_clock(const std::string& call, double ns) const;
  static bool mapped(std::uintptr_t host, std::size_t bytes);
  // The usage_error for a touched byte that is not memory of this process (`call`: roost::touch or touch_rows).
  [[noreturn]] static void throw_not_memory(const char* call, std::uintptr_t at);
  // Whether an annotation of `worker` is this simulation's to charge (its platform drives the calling thread).
  bool charges(int worker) const;
  // What one region cost: its lines walked through the model, and the calling sim thread charged for them.
  struct charge {
    std::uint64_t lines = 0, remote_lines = 0;
    double memory_ns = 0;
  };
  // `call`: what its errors name, roost::touch or roost::touch_rows.
  charge walk(int worker, const void* base, std::size_t bytes, access mode, const char* call);
  void record_memory(int worker, const charge& c);
  // pu: the touching PU, which places a first-touch page given out again (sharded_model::place_reused).
  std::uint64_t sim_address(std::uintptr_t host, unsigned pu, const char* call);
  // The address a host byte's simulated page and offset are found by: the byte's own, but for the main
  // thread's stack, its distance below that stack's first pointer, counted down from kStackKeys. The kernel
  // starts that pointer at a random offset in its page (and the environment's length moves it), so an array
  // on main's stack spanned 16 lines in one run and 17 in the next, and reports differed (an outside-user
  // campaign); its distance below the pointer is the same in every run. kStackKeys lies above every user
  // address (x86-64: below 2^47), so no byte's key is another's.
  static constexpr std::uintptr_t kStackKeys = std::uintptr_t{1} << 62;
  std::uintptr_t sim_key(std::uintptr_t host) const {
    return host - main_stack_.lo < main_stack_.base - main_stack_.lo ? kStackKeys - (main_stack_.base - host) : host;
  }
  // The host address where the page of sim_key(host) ends (walk's runs), or the stack's end or start if
  // nearer, where the numbering jumps.
  std::uintptr_t sim_key_page_end(std::uintptr_t host) const;
  platform::native_platform::stack_span main_stack_;
  // The stack's host pages found memory of the process: a page of stack keys covers two host pages, each
  // checked when a touch first reaches it (sim_address checks the first touched byte of a fresh page).
  std::unordered_set<std::uint64_t> stack_pages_mapped_;
  void check_stack_pages_mapped(std::uintptr_t from, std::uintptr_t to, const char* call);
  std::unordered_map<std::uint64_t, std::uint64_t> sim_pages_;
  // data_rank (sim_platform.hpp): distributed memory's allocations by base, ranked as first met.
  std::unordered_map<std::uintptr_t, std::uint64_t> allocation_rank_;
  std::uint64_t next_allocation_rank_ = 0;
  std::deque<std::uint64_t> free_ranks_;  // of freed allocations, oldest first
  // From 0, as the model's pages are: interleaving starts on node 0, and a model page larger than kPage
  // holds the first host pages touched together (from 1, the first sat alone in model page 0). Every
  // sentinel of the model is ~0 (page_map, last_page, cache tags), never page or line 0.
  std::uint64_t next_sim_page_ = 0;
  // Memory roost::numa_free gave back (any thread: page_placement's removal listener) is forgotten before
  // the next touch or page lookup: its host pages lose their simulated pages, which lose their node and are
  // the next ones given out, oldest first. So memory made again at the same host addresses is placed by
  // its new rule or first touch, and which simulated addresses a program's pages get depends on the order
  // of its touches and frees alone, not on where the host's mmap put them (reports of a loop of numa_alloc
  // and numa_free differed from run to run, and a coarse array reusing a fine one's addresses kept the
  // fine one's placement).
  static void on_removal(void* self, std::uintptr_t base, std::size_t bytes);
  void forget_freed();
  static constexpr std::size_t kFreedCompactMin = 1024;
  std::mutex freed_mu_;
  freed_ranges freed_;  // host memory, as the model's (sim/host_memory.hpp): nothing of it on the program's heap
  std::size_t freed_compact_at_ = kFreedCompactMin;  // on_removal drops covered ranges at this length
  std::atomic<bool> has_freed_{false};
  // Freed simulated pages of a model page of kPage (and blocks, below), by the node they lived on
  // (page_map::none, kAnyNode, for one never placed), oldest first: given again only to memory of that node
  // (take_freed).
  using free_lists = std::map<std::uint32_t, std::deque<std::uint64_t>>;
  free_lists free_sim_pages_;
  // With a model page of several kPage (page_size above 4 KiB), a model page's simulated pages are given out
  // again together, once every one given out of it was freed: a block, numbered as the model's pages are.
  // Freed simulated pages were never given out again there, and a program that allocated and freed in a loop
  // grew by about 125 KB a MiB for ever (an outside-user campaign).
  struct block_use {
    std::uint32_t given = 0, freed = 0;
  };
  std::unordered_map<std::uint64_t, block_use> block_use_;
  free_lists free_blocks_;
  static constexpr std::uint32_t kAnyNode = ~std::uint32_t{0};  // sim::page_map::none
  // A first-touch page's block being refilled: [ft_next_, ft_end_) are its simulated pages not given yet.
  std::uint64_t ft_next_ = 0, ft_end_ = 0;
  static constexpr std::uint64_t kNoBlock = ~std::uint64_t{0};
  // A freed unit (a simulated page, or a block) for memory of `node`: one that lived there, else one never
  // placed; node < 0 (interleaving, first touch): one that goes back to the node its number gives it. Only
  // on its own node: its lines may still be cached, as a physical page's reused on its node may be, and a
  // page of node 0's given to a coarse array on node 1 kept them under node 1's name (the same campaign).
  // kNoBlock: none.
  std::uint64_t take_freed(free_lists& lists, int node);
  bool interleaved() const { return model_.geometry().params().numa == sim::numa_policy::interleave; }
  // Counts `n` simulated pages given out of `block`.
  void note_given(std::uint64_t block, std::uint32_t n) { block_use_[block].given += n; }
  // A page of `block` forgotten; the block goes to its node's free list once all it gave out are.
  void note_freed(std::uint64_t block, std::vector<std::uint64_t>& unplaced);
  void recycle_if_done(std::uint64_t block, std::vector<std::uint64_t>& unplaced);

  sim::sharded_model model_;
  // on_touch: a touch's runs of consecutive simulated pages, and what their walk found (also a settled touch's,
  // settle_touch). In host memory: the program's heap is the same whether touches settle lazily or not.
  sim::host_vector<sim::sharded_model::byte_range> runs_;
  sim::host_vector<sim::region_result> run_results_;
  // Lazy settlement (sim_platform::on_touch_deferred): where a touch's cost is needed only to decide which
  // worker runs next, its walk is posted and collected when the platform settles it (settle_touch). Not with
  // a tracer (its memory record carries the cost at the touch) nor with dram.sharing (a stream's rate is
  // read at its start).
  bool lazy_settle_ = false;
  static double settle_touch(void* self, std::uint64_t token);
  // The whole touch's result from its runs' results: their sums, and the slowest line of any.
  static sim::region_result touch_total(const sim::region_result* runs, std::size_t n);
  platform::sim_platform plat_;
  std::vector<unsigned> pu_of_worker_;
  // dram.sharing=nodes: the streams of concurrent touches share the controllers and links (made by place()).
  std::unique_ptr<sim::shared_bandwidth> sharing_;
  std::vector<double> home_lines_;  // scratch: a touch's memory lines per home node
  double memory_rate_cap(int worker, unsigned pu);
  std::string report_path_;
  bool report_made_here_ = false;  // the constructor's check made the file (it did not exist)
  bool report_claimed_ = false;    // claim_report(): the runtime was made
  std::string params_source_;  // ROOST_SIM_PARAMS or options::sim_params: where the watchdog says to raise its limit
  std::mutex watch_mu_;
  std::condition_variable watch_cv_;
  bool stopping_ = false;
  platform::native_platform::thread_handle watchdog_ = 0;
  bool watchdog_started_ = false;
  touch_consumer* next_ = nullptr;
  trace::tracer* tracer_ = nullptr;
  std::chrono::steady_clock::time_point wall_start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration model_time_{};  // in the memory model's walks (on_touch)
  // The bytes of the touch the model is walking now (0: none), for the watchdog's message.
  std::atomic<std::size_t> touch_in_walk_{0};
  // The watchdog asks (declared work only for stall_wall_s, after work_note_s_ seconds); the sim thread says
  // it at its next declared work, once a runtime.
  void note_declared_only(int worker);
  std::atomic<bool> work_note_asked_{false};
  std::atomic<double> work_note_s_{0};
  bool work_note_said_ = false;
};

}  // namespace roost::detail
