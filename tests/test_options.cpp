// Configuration: every bad value is an error naming the variable, the value and what is valid.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "roost/errors.hpp"
#include "roost/options.hpp"
#include "roost/runtime.hpp"

namespace {

using roost_test::scoped_env;

using roost_test::expect_mentions;

std::string error_of(const roost::options& o) {
  return roost_test::config_error_of([&] { roost::resolve(o); });
}

}  // namespace

// Every setting, and each name=value of a list in one, is trimmed by one rule (platform/trim_space.hpp): the
// simulator's lists trimmed " \t\n\r" only, and refused a pair with a \v or \f around it that every other
// setting read.
TEST(Options, EachPairOfAListIsTrimmedAsEverySettingIs) {
  roost::options o;
  o.workers = 2;
  o.sim_params = "\vspawn_ns=5\f, task_ns =\v2\r\n, l3.ways=\f8 ";
  EXPECT_EQ(error_of(o), "");
  scoped_env e("ROOST_WORKERS", "\v\f 3\r\n");
  EXPECT_EQ(roost::resolve({}).workers, 3u);
  o.sim_params = "spawn_ns=5,\v,task_ns=2";  // a pair of white space alone is an empty one, as " " is
  expect_mentions(error_of(o), {"options::sim_params", "an empty pair"});
  o.sim_params = "spawn_ns=5\v6";  // inside a value it separates two pairs
  expect_mentions(error_of(o), {"options::sim_params", "is not one name=value pair"});
}

TEST(Options, DefaultsAreSane) {
  roost::resolved_options r = roost::resolve({});
  EXPECT_EQ(r.scheduler, "ws");
  EXPECT_EQ(r.workers, 0u);  // one per PU, decided with the topology
  EXPECT_EQ(r.stack_size, 8u << 20);  // a thread's, reserved lazily (docs/user-guide.md, "Stacks")
  EXPECT_TRUE(r.bind);
}

TEST(Options, UnknownSchedulerListsValidNames) {
  scoped_env e("ROOST_SCHED", "fastest");
  expect_mentions(error_of({}), {"ROOST_SCHED", "fastest", "ws", "ws-help", "hws", "cats", "adws"});
}

// A misspelt scheduler named the valid ones and suggested none, where a misspelt variable gets one (an
// outside-user campaign); a name nowhere near one gets the list alone.
TEST(Options, AMisspeltSchedulerGetsTheClosestNameSuggested) {
  for (const auto& [typed, meant] : {std::pair<const char*, const char*>{"ws_help", "ws-help"}, {"adwsml", "adws-ml"},
                                     {"wss", "ws"}, {"NUMA2", "numa"}, {"cast", "cats"}}) {
    roost::options o;
    o.scheduler = typed;
    expect_mentions(error_of(o), {std::string("unknown scheduler; did you mean ") + meant + "? valid names"});
  }
  roost::options far;
  far.scheduler = "openmp";
  const std::string e = error_of(far);
  EXPECT_EQ(e.find("did you mean"), std::string::npos) << e;
  expect_mentions(e, {"unknown scheduler; valid names: ws, ws-help"});
}

// A misspelt simulator parameter gets the closest name of either table, the runtime's costs or the memory
// model's, in the environment and in a field; one nowhere near any gets the lists alone.
TEST(Options, AMisspeltSimParameterGetsTheClosestNameSuggested) {
  for (const auto& [typed, meant] : {std::pair<const char*, const char*>{"stel_ns=3", "steal_ns"},
                                     {"l3.way=16", "l3.ways"}, {"Host_Thread=1", "host_threads"},
                                     {"dram.local_n=50", "dram.local_ns"}}) {
    scoped_env e("ROOST_SIM_PARAMS", typed);
    expect_mentions(error_of({}), {"ROOST_SIM_PARAMS", std::string("; did you mean ") + meant + "? valid: the runtime's costs"});
    roost::options o;
    o.sim_params = typed;
    expect_mentions(error_of(o), {"options::sim_params", std::string("; did you mean ") + meant + "? valid:"});
  }
  scoped_env far("ROOST_SIM_PARAMS", "bandwidth=9");
  const std::string e = error_of({});
  EXPECT_EQ(e.find("did you mean"), std::string::npos) << e;
  expect_mentions(e, {"unknown parameter 'bandwidth'; valid: the runtime's costs (spawn_ns"});
}

// A field holding a byte that is not printable: a NUL cut what() there, and the reason and the valid
// names were lost (an outside-user campaign). Bytes are written as \xNN. -0.0 in a field is refused too.
TEST(Options, AValueWithUnprintableBytesIsQuotedWhole) {
  roost::options o;
  o.scheduler = std::string("ws\x01x", 4);
  expect_mentions(error_of(o), {"options::scheduler='ws\\x01x'", "unknown scheduler; did you mean ws? valid names",
                                "ws-help"});
  roost::options c;
  c.cats_min_intensity = -0.0;
  expect_mentions(error_of(c), {"options::cats_min_intensity", "must be a number in [0, 1e9]", "-0.0 is not 0"});
}

// A NUL inside a text field: every reader takes the text as a C string, so a topology or a file's path ran as
// its part before the NUL without a word, and messages quoting the value were cut there (an outside-user
// campaign). Refused, whatever the field, with the value written whole.
TEST(Options, ATextFieldHoldingANulIsRefused) {
  const std::string nul("\0", 1);
  const std::string dir = ::testing::TempDir();
  struct field_case {
    std::optional<std::string> roost::options::*field;
    const char* name;
    std::string value, quoted;
  };
  const field_case cases[] = {
      {&roost::options::scheduler, "options::scheduler", "ws" + nul + "hws", "ws\\x00hws"},
      {&roost::options::topology, "options::topology", "pack:2 pu:1" + nul + "x", "pack:2 pu:1\\x00x"},
      {&roost::options::trace, "options::trace", dir + "t.trace" + nul + "x", "t.trace\\x00x"},
      {&roost::options::cats_profile, "options::cats_profile", dir + "c.prof" + nul + "x", "c.prof\\x00x"},
      {&roost::options::sim_params, "options::sim_params", "spawn_ns=1" + nul + "x", "spawn_ns=1\\x00x"}};
  for (const field_case& c : cases) {
    roost::options o;
    o.*c.field = c.value;
    expect_mentions(error_of(o), {c.name, c.quoted, "': holds a NUL byte; must be "});
  }
}

// Another scheduler's knob, set: nobody reads it (documented), and ROOST_VERBOSE says so (an outside-user
// campaign set ROOST_CAB_LEVEL under ws and saw nothing).
TEST(Options, KnobsOfAnotherSchedulerAreListedAsUnread) {
  scoped_env level("ROOST_CAB_LEVEL", "3");
  roost::options o;
  o.scheduler = "ws";
  o.cats_min_intensity = 0.5;
  const roost::resolved_options r = roost::resolve(o);
  ASSERT_EQ(r.unread_knobs.size(), 2u);
  EXPECT_EQ(r.unread_knobs[0], "ROOST_CAB_LEVEL (read by cab only)");
  EXPECT_EQ(r.unread_knobs[1], "options::cats_min_intensity (read by cats only)");
  o.scheduler = "cab";
  o.cats_min_intensity.reset();
  EXPECT_TRUE(roost::resolve(o).unread_knobs.empty());
  o.scheduler = "ws";
  roost::runtime rt(o);
  EXPECT_NE(rt.describe().find("set but not read by ws: ROOST_CAB_LEVEL (read by cab only)"), std::string::npos)
      << rt.describe();
}

TEST(Options, NumaKnobsAreCheckedAndNamed) {
  {
    scoped_env e("ROOST_NUMA_VICINITY", "0");
    expect_mentions(error_of({}), {"ROOST_NUMA_VICINITY='0'", "[1, 4096]", "all"});
  }
  {
    scoped_env e("ROOST_NUMA_VICINITY", "All");
    EXPECT_EQ(roost::resolve({}).numa_vicinity, 0u);
  }
  {
    scoped_env e("ROOST_DATA_DISTRIBUTION", "interleave");
    expect_mentions(error_of({}), {"ROOST_DATA_DISTRIBUTION='interleave'", "standard", "fine", "coarse"});
  }
  {
    scoped_env e("ROOST_NUMA_DEAL", "output");
    expect_mentions(error_of({}), {"ROOST_NUMA_DEAL='output'", "footprint", "writes"});
  }
  {
    scoped_env e("ROOST_NUMA_DEAL", "Writes");
    EXPECT_TRUE(roost::resolve({}).numa_deal_writes);
  }
  roost::options o;
  o.numa_deal = "footprint";
  EXPECT_FALSE(roost::resolve(o).numa_deal_writes);
  o.data_distribution = "Coarse";
  EXPECT_EQ(roost::resolve(o).data_distribution, "coarse");
  o.numa_vicinity = 5000;
  expect_mentions(error_of(o), {"options::numa_vicinity='5000'", "or options::numa_vicinity_all"});
  EXPECT_EQ(error_of(o).find(") or all"), std::string::npos) << "the field does not take the text all: " << error_of(o);
  // "all" in code, over a variable that says otherwise (an unset field could not: an audit).
  scoped_env e("ROOST_NUMA_VICINITY", "2");
  o.numa_vicinity = roost::options::numa_vicinity_all;
  EXPECT_EQ(roost::resolve(o).numa_vicinity, 0u);
}

TEST(Options, ExplicitOptionWinsOverEnvironment) {
  scoped_env e("ROOST_SCHED", "fastest");
  roost::options o;
  o.scheduler = "ws-help";
  EXPECT_EQ(roost::resolve(o).scheduler, "ws-help");
  o.scheduler = "bogus";
  expect_mentions(error_of(o), {"options::scheduler", "bogus"});
}

TEST(Options, WorkersMustBeAPositiveInteger) {
  for (const char* bad : {"0", "-1", "two", "", "3.5", "99999"}) {
    scoped_env e("ROOST_WORKERS", bad);
    expect_mentions(error_of({}), {"ROOST_WORKERS", "[1, 4096]"});
  }
  scoped_env ok("ROOST_WORKERS", "3");
  EXPECT_EQ(roost::resolve({}).workers, 3u);
  roost::options o;
  o.workers = 0;
  expect_mentions(error_of(o), {"options::workers", "0"});
}

TEST(Options, StackSizeTakesSuffixesAndRange) {
  {
    scoped_env e("ROOST_STACK_SIZE", "8M");
    EXPECT_EQ(roost::resolve({}).stack_size, 8u << 20);
  }
  {
    scoped_env e("ROOST_STACK_SIZE", "256k");
    EXPECT_EQ(roost::resolve({}).stack_size, 256u << 10);
  }
  for (const char* bad : {"1K", "2G", "lots", "12Q", "M"}) {
    scoped_env e("ROOST_STACK_SIZE", bad);
    expect_mentions(error_of({}), {"ROOST_STACK_SIZE", bad, "64K"});
  }
}

TEST(Options, BooleansAreStrict) {
  scoped_env e("ROOST_BIND", "maybe");
  expect_mentions(error_of({}), {"ROOST_BIND", "maybe", "true", "false"});
  scoped_env v("ROOST_BIND", "OFF");
  EXPECT_FALSE(roost::resolve({}).bind);
}

TEST(Options, TraceMustBeAFile) {
  scoped_env e("ROOST_TRACE", "/tmp/");
  expect_mentions(error_of({}), {"ROOST_TRACE", "/tmp/", "a file path"});
  scoped_env ok("ROOST_TRACE", "/tmp/x.trace");
  EXPECT_EQ(roost::resolve({}).trace, "/tmp/x.trace");
}

TEST(Options, BadTopologyIsAClearErrorFromTheRuntime) {
  roost::options o;
  o.topology = "pack:two core:lots";
  try {
    roost::runtime rt(o);
    FAIL() << "expected config_error";
  } catch (const roost::config_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("options::topology"), std::string::npos) << m;
    EXPECT_NE(m.find("pack:two core:lots"), std::string::npos) << m;
    EXPECT_NE(m.find("synthetic"), std::string::npos) << m;
  }
}

// An error names where the value came from: the field when the program set it, the variable otherwise
// (configuration.md, "How values are read"); the topology's and the simulator's parameters named the
// variables even for a field.
TEST(Options, TopologyAndSimParamsErrorsNameTheFieldOrTheVariable) {
  auto runtime_error_of = [](const roost::options& o) {
    return roost_test::config_error_of([&] { roost::runtime rt(o); });
  };
  roost::options o;
  o.topology = "pack:2 l3:1(size=0) core:1 pu:1";  // checked before hwloc
  expect_mentions(runtime_error_of(o), {"options::topology='pack:2 l3:1(size=0) core:1 pu:1'", "size=0"});
  o.topology = "pack:2 l3:1 core:1 pu:1";  // no cache size: the simulator's model refuses it
  o.platform = "sim";
  expect_mentions(runtime_error_of(o), {"options::topology='pack:2 l3:1 core:1 pu:1'", "has no size"});
  {
    scoped_env e("ROOST_TOPOLOGY", "pack:2 l3:1(size=0) core:1 pu:1");
    const std::string m = runtime_error_of({});
    expect_mentions(m, {"ROOST_TOPOLOGY='pack:2 l3:1(size=0) core:1 pu:1'"});
    EXPECT_EQ(m.find("options::"), std::string::npos) << m;
  }
  roost::options p;
  p.sim_params = "spawn_ns=inf";
  expect_mentions(error_of(p), {"options::sim_params", "spawn_ns", "inf"});
  p.sim_params = "x=1";
  expect_mentions(error_of(p), {"options::sim_params", "unknown parameter", "'x'"});
  p.sim_params = "l3.ways=0";
  expect_mentions(error_of(p), {"options::sim_params", "l3.ways"});
  p.sim_params = "spawn_ns=1, SPAWN_NS=2";
  expect_mentions(error_of(p), {"options::sim_params", "twice"});
  // The remote latency below the local one, on every platform where the given values decide it (it was
  // checked only when simulated): both given, or one against a named preset's.
  for (const char* below : {"dram.local_ns=100,dram.remote_ns=50", "preset=opteron-8380,dram.remote_ns=50"}) {
    p.sim_params = below;
    expect_mentions(error_of(p), {"options::sim_params", "dram.remote_ns=50", "below dram.local_ns"});
  }
  p.sim_params = "dram.remote_ns=50";  // against whichever preset the simulated machine selects: checked there
  EXPECT_NO_THROW(roost::resolve(p));
  {
    scoped_env e("ROOST_SIM_PARAMS", "spawn_ns=inf");
    const std::string m = error_of({});
    expect_mentions(m, {"ROOST_SIM_PARAMS", "spawn_ns"});
    EXPECT_EQ(m.find("options::"), std::string::npos) << m;
  }
}

// "name=value pairs separated by commas": a pair with nothing in it is an error wherever it stands, as an
// empty value is (the parser took "spawn_ns=1,," and ",").
TEST(Options, SimParamsWithAnEmptyPairAreAnError) {
  for (const char* bad : {"spawn_ns=1,,", ",", "spawn_ns=1,", ",spawn_ns=1", "spawn_ns=1, ,l3.ways=8"}) {
    roost::options o;
    o.sim_params = bad;
    expect_mentions(error_of(o), {"options::sim_params", bad, "empty pair"});
  }
  roost::options o;
  o.sim_params = " spawn_ns=1 , l3.ways=8 ";
  EXPECT_NO_THROW(roost::resolve(o));
}

// From a campaign on the simulated platform: pairs separated by spaces gave errors that depended on which
// table's name came first (or were taken), the cost table's names were case-sensitive unlike the memory
// model's, and a size that no number of ways divides was told to change its ways.
TEST(Options, SimParamsAreCommaSeparatedAndTheirNamesAnyCase) {
  roost::options o;
  for (const char* spaced : {"l2.ways=16 spawn_ns=5", "spawn_ns=5 l2.ways=16", "l2.ways=16 l3.ways=8"}) {
    o.sim_params = spaced;
    expect_mentions(error_of(o), {"options::sim_params", "separated by commas"});
  }
  o.sim_params = "Spawn_ns=5, Jitter=0.1, L2.WAYS=16";
  EXPECT_NO_THROW(roost::resolve(o));
  // Spaces and line breaks around a pair or its '=' are no separators: let through, as before.
  for (const char* loose : {"spawn_ns=5,\njitter=0.1", "spawn_ns=5,\r\njitter=0.1", "spawn_ns = 5, preset = generic"}) {
    o.sim_params = loose;
    EXPECT_NO_THROW(roost::resolve(o)) << loose;
  }
  o.sim_params = "dram.local_ns=200";
  o.platform = "sim";
  o.topology = "pack:1 l2:1(size=64KiB) core:1 pu:1";
  expect_mentions(roost_test::config_error_of([&] { roost::runtime rt(o); }),
                  {"options::sim_params", "dram.remote_ns=", "(the preset's)", "dram.local_ns=200"});
  o.sim_params.reset();
  o.topology = "pack:2 l3:1(size=1000) core:2 pu:1";
  expect_mentions(roost_test::config_error_of([&] { roost::runtime rt(o); }),
                  {"not a whole number of 64 B lines", "multiple of the line size"});
}

// A simulated worker is one of the machine's PUs, with a clock of its own: 64 workers on 4 PUs ran 21
// cores' work in a core's time.
TEST(Options, SimulatedWorkersAreAtMostThePus) {
  roost::options o;
  o.platform = "sim";
  o.topology = "pack:1 l3:1(size=2MiB) l2:4(size=256KiB) core:1 pu:1";
  o.workers = 8;
  expect_mentions(roost_test::config_error_of([&] { roost::runtime rt(o); }),
                  {"options::workers='8'", "has 4", "at most 4 workers"});
  o.workers = 4;
  roost::runtime rt(o);
  EXPECT_EQ(rt.workers(), 4u);
}

// An enum field set by a cast to a value it does not name is refused, as every other bad field value is.
TEST(Options, AnAdwsStealValueOutsideItsEnumIsAnError) {
  roost::options o;
  o.adws_steal = static_cast<roost::adws_stealing>(7);
  expect_mentions(error_of(o), {"options::adws_steal='7'", "adws_stealing::adaptive"});
  for (auto v : {roost::adws_stealing::off, roost::adws_stealing::on, roost::adws_stealing::adaptive}) {
    o.adws_steal = v;
    EXPECT_EQ(roost::resolve(o).adws_steal, v);
  }
}

TEST(Options, SchedulerTableSaysWhatExists) {
  int available = 0, planned = 0;
  for (const auto& s : roost::schedulers()) (s.available ? available : planned)++;
  EXPECT_EQ(available, 8);  // ws, ws-help, hws, adws, adws-ml, cab, cats, numa
  EXPECT_EQ(planned, 0);
}

TEST(Options, SchedulerKnobsHaveFieldsThatWinOverTheEnvironment) {
  scoped_env a("ROOST_ADWS_STEAL", "false");
  scoped_env l("ROOST_CAB_LEVEL", "5");
  scoped_env s("ROOST_CAB_SUBTREES", "many");
  scoped_env c("ROOST_CATS_MIN_INTENSITY", "0.5");
  roost::resolved_options r = roost::resolve({});
  EXPECT_EQ(r.adws_steal, roost::adws_stealing::off);
  EXPECT_EQ(r.cab_level, 5u);
  EXPECT_FALSE(r.cab_one_subtree);
  EXPECT_DOUBLE_EQ(r.cats_min_intensity, 0.5);
  roost::options o;
  o.adws_steal = roost::adws_stealing::adaptive;
  o.cab_level = 1;
  o.cab_one_subtree = true;
  o.cats_min_intensity = 0.0;
  r = roost::resolve(o);
  EXPECT_EQ(r.adws_steal, roost::adws_stealing::adaptive);
  EXPECT_EQ(r.cab_level, 1u);
  EXPECT_TRUE(r.cab_one_subtree);
  EXPECT_DOUBLE_EQ(r.cats_min_intensity, 0.0);
  o.cab_level = 65;
  expect_mentions(error_of(o), {"options::cab_level", "65", "[0, 64]"});
  o.cab_level = 1;
  o.cats_min_intensity = -1;
  expect_mentions(error_of(o), {"options::cats_min_intensity", "-1"});
}

// A field set in code wins and its variable is not used; an invalid variable was then passed over without a
// word (ROOST_WORKERS=garbage beside options::workers). It is reported, not thrown: every variable with a
// field, each with a value that is invalid, beside the field; and a valid variable is not reported.
TEST(Options, AnInvalidVariableThatAFieldOverridesIsReported) {
  roost::options o;
  o.scheduler = "ws";
  o.workers = 2;
  o.stack_size = 1 << 20;
  o.verbose = false;
  o.cab_level = 1;
  o.cats_min_intensity = 0.5;
  o.numa_vicinity = 2;
  o.data_distribution = "fine";
  o.sim_seed = 3;
  o.preempt = "off";
  o.preempt_interval = "2ms";
  o.trace_depth = "auto";
  const std::vector<std::pair<const char*, const char*>> bad = {
      {"ROOST_SCHED", "nosuch"},        {"ROOST_WORKERS", "garbage"},     {"ROOST_STACK_SIZE", "-5"},
      {"ROOST_VERBOSE", "maybe"},       {"ROOST_CAB_LEVEL", "99"},        {"ROOST_CATS_MIN_INTENSITY", "x"},
      {"ROOST_NUMA_VICINITY", "0"},     {"ROOST_DATA_DISTRIBUTION", "z"}, {"ROOST_SIM_SEED", "-1"},
      {"ROOST_PREEMPT", "sometimes"},   {"ROOST_PREEMPT_INTERVAL", "0"},  {"ROOST_TRACE_DEPTH", "deep"}};
  for (const auto& [name, value] : bad) {
    scoped_env e(name, value);
    const roost::resolved_options r = roost::resolve(o);  // the field wins: no error
    ASSERT_EQ(r.overridden_env_errors.size(), 1u) << name;
    expect_mentions(r.overridden_env_errors[0], {name, value, "not used: the program sets its options:: field"});
  }
  scoped_env fine("ROOST_WORKERS", "3");
  EXPECT_TRUE(roost::resolve(o).overridden_env_errors.empty());
  EXPECT_EQ(roost::resolve(o).workers, 2u);
}

// ROOST_TOPOLOGY is checked by loading it, which resolve() did not do for a variable its field overrides:
// garbage beside options::topology went unsaid (an outside-user campaign). A valid one is not reported.
TEST(Options, AnInvalidTopologyThatTheFieldOverridesIsReported) {
  roost::options o;
  o.topology = "pack:2 core:1 pu:1";
  // Named trimmed, as the runtime names the value it loads.
  for (const char* value : {"garbage", "pack:1 pu:5000", "/nonexistent.xml", "pack:2 l3:1(size=0) pu:1", " junk "}) {
    scoped_env e("ROOST_TOPOLOGY", value);
    const roost::resolved_options r = roost::resolve(o);
    ASSERT_EQ(r.overridden_env_errors.size(), 1u) << value;
    const std::string named = std::string(value) == " junk " ? "'junk'" : value;
    expect_mentions(r.overridden_env_errors[0],
                    {"ROOST_TOPOLOGY", named, "not used: the program sets its options:: field"});
    EXPECT_EQ(r.topology, "pack:2 core:1 pu:1");
  }
  // Trimmed, as the runtime reads it: a padded valid value is no error, an empty one is reported once.
  for (const char* fine : {"pack:4 core:1 pu:1", "  pack:4 core:1 pu:1\t"}) {
    scoped_env e("ROOST_TOPOLOGY", fine);
    EXPECT_TRUE(roost::resolve(o).overridden_env_errors.empty()) << fine;
  }
  scoped_env blank("ROOST_TOPOLOGY", "   ");
  EXPECT_EQ(roost::resolve(o).overridden_env_errors.size(), 1u);
}

// A decimal too small for a double is inside every range from 0 up: it reads as the nearest double (0 or a
// denormal), as the long form 0.000...01 did; 1e-400 was refused as 'must be a number in [0, 1e9]' (an
// outside-user campaign). Too large is still refused, and so is a sign where no negative value is valid.
TEST(Options, ADecimalTooSmallForADoubleReadsAsZero) {
  const std::string long_tiny = "0." + std::string(5000, '0') + "1";
  const std::string long_huge = "1" + std::string(6000, '0') + "e-1000";  // 1e5000
  for (const char* tiny : {"1e-400", "1e-5000", "0.5e-330", long_tiny.c_str()}) {
    scoped_env e("ROOST_CATS_MIN_INTENSITY", tiny);
    const roost::resolved_options r = roost::resolve(roost::options{});
    EXPECT_GE(r.cats_min_intensity, 0.0) << tiny;
    EXPECT_LT(r.cats_min_intensity, 1e-300) << tiny;
  }
  for (const char* bad : {"1e400", "-1e-400", "1e-400x", long_huge.c_str()}) {
    scoped_env e("ROOST_CATS_MIN_INTENSITY", bad);
    expect_mentions(error_of(roost::options{}), {"ROOST_CATS_MIN_INTENSITY", bad});
  }
  roost::options o;
  o.sim_params = "spawn_ns=1e-400";
  EXPECT_NO_THROW((void)roost::resolve(o));
  o.sim_params = "spawn_ns=1e400";
  expect_mentions(error_of(o), {"spawn_ns", "1e400"});
  // The memory model's parameters, the other parser: 0 is in link.bw's range, not in a latency's.
  o.sim_params = "link.bw=1e-400";
  EXPECT_NO_THROW((void)roost::resolve(o));
  o.sim_params = "l2.latency_ns=1e-400";
  expect_mentions(error_of(o), {"l2.latency_ns", "(0, 1e6]"});
}

// Issue #23 (10): one whitespace rule for every value. Surrounding whitespace is trimmed, for every variable
// and every string field; " 3" was rejected by ROOST_WORKERS while strtod let " 0.5" through.
TEST(Options, SurroundingWhitespaceIsTrimmedForEveryVariable) {
  scoped_env sch("ROOST_SCHED", " ws-help\t");
  scoped_env wk("ROOST_WORKERS", " 3 ");
  scoped_env tp("ROOST_TOPOLOGY", "  pack:2 core:1 pu:1\n");
  scoped_env bd("ROOST_BIND", " false");
  scoped_env st("ROOST_STACK_SIZE", "8M ");
  scoped_env vb("ROOST_VERBOSE", "\ttrue");
  scoped_env tr("ROOST_TRACE", " /tmp/x.trace ");
  scoped_env as("ROOST_ADWS_STEAL", " on ");
  scoped_env cl("ROOST_CAB_LEVEL", " 4");
  scoped_env cs("ROOST_CAB_SUBTREES", "many ");
  scoped_env ci("ROOST_CATS_MIN_INTENSITY", " 0.5 ");
  roost::resolved_options r = roost::resolve({});
  EXPECT_EQ(r.scheduler, "ws-help");
  EXPECT_EQ(r.workers, 3u);
  EXPECT_EQ(r.topology, "pack:2 core:1 pu:1");
  EXPECT_FALSE(r.bind);
  EXPECT_EQ(r.stack_size, 8u << 20);
  EXPECT_TRUE(r.verbose);
  EXPECT_EQ(r.trace, "/tmp/x.trace");
  EXPECT_EQ(r.adws_steal, roost::adws_stealing::on);
  EXPECT_EQ(r.cab_level, 4u);
  EXPECT_FALSE(r.cab_one_subtree);
  EXPECT_DOUBLE_EQ(r.cats_min_intensity, 0.5);
  roost::options o;
  o.scheduler = " cab ";
  o.topology = " pack:1 core:2 pu:1 ";
  o.trace = "\t/tmp/y.trace";
  r = roost::resolve(o);
  EXPECT_EQ(r.scheduler, "cab");
  EXPECT_EQ(r.topology, "pack:1 core:2 pu:1");
  EXPECT_EQ(r.trace, "/tmp/y.trace");
}

// Issue #23 (10): an empty value is an error for every variable (an empty ROOST_TOPOLOGY silently meant
// this machine while " " was an error); the message says to unset the variable for the default.
TEST(Options, EmptyValueIsAnErrorForEveryVariable) {
  const std::vector<const char*> variables = {
      "ROOST_SCHED",      "ROOST_WORKERS",    "ROOST_TOPOLOGY",  "ROOST_BIND",
      "ROOST_STACK_SIZE", "ROOST_VERBOSE",    "ROOST_TRACE",     "ROOST_ADWS_STEAL",
      "ROOST_CAB_LEVEL",  "ROOST_CAB_SUBTREES", "ROOST_CATS_MIN_INTENSITY", "ROOST_NUMA_VICINITY",
      "ROOST_DATA_DISTRIBUTION"};
  for (const char* name : variables) {
    for (const char* blank : {"", "  ", "\t\n"}) {
      scoped_env e(name, blank);
      expect_mentions(error_of({}), {name, "empty", "unset"});
    }
  }
  roost::options o;
  o.scheduler = "";
  expect_mentions(error_of(o), {"options::scheduler", "empty"});
  o = {};
  o.topology = " ";
  expect_mentions(error_of(o), {"options::topology", "empty"});
  o = {};
  o.trace = "";
  expect_mentions(error_of(o), {"options::trace", "empty"});
}

// Issue #23 (10): a number's error states its range; -0.1 is a number, below the range, not "not a number".
TEST(Options, NumberErrorsStateTheRange) {
  // "-0": refused as the integer settings refuse it (it resolved to -0; an outside-user campaign).
  for (const char* bad : {"-0.1", "1e10", "nan", "inf", "0.5x", "0,5", "-0", "-0.0"}) {
    scoped_env e("ROOST_CATS_MIN_INTENSITY", bad);
    const std::string m = error_of({});
    expect_mentions(m, {"ROOST_CATS_MIN_INTENSITY='", bad, "must be a number in [0, 1e9]"});
    EXPECT_EQ(m.find("not a number"), std::string::npos) << m;
    // 0 is in the range: a refused "-0" says what is wrong with it (an outside-user campaign).
    EXPECT_EQ(m.find("without a sign") != std::string::npos, std::string(bad).rfind("-0", 0) == 0 &&
                                                                  std::string(bad).find_first_not_of("-0.") ==
                                                                      std::string::npos)
        << m;
  }
  // The simulator's parameters refuse it too (they took it for 0; the same campaign).
  for (const char* params : {"spawn_ns=-0", "jitter=-0.0", "l2.shared_bw=-0"}) {
    roost::options o;
    o.platform = "sim";
    o.topology = "pack:1 l2:1(size=256KiB) core:1 pu:1";
    o.sim_params = params;
    const std::string m = error_of(o);
    EXPECT_NE(m.find("-0"), std::string::npos) << params << ": " << m;
  }
  {
    scoped_env e("ROOST_CATS_MIN_INTENSITY", "1e9");
    EXPECT_DOUBLE_EQ(roost::resolve({}).cats_min_intensity, 1e9);
  }
  for (const char* bad : {"+3", "0x10", "4097", "3 4", "99999999999999999999999"}) {
    scoped_env e("ROOST_WORKERS", bad);
    expect_mentions(error_of({}), {"ROOST_WORKERS='", bad, "must be an integer in [1, 4096]"});
  }
  {
    scoped_env e("ROOST_CAB_LEVEL", "65");
    expect_mentions(error_of({}), {"ROOST_CAB_LEVEL='65'", "must be an integer in [0, 64]"});
  }
  roost::options o;
  o.cats_min_intensity = -0.1;
  expect_mentions(error_of(o), {"options::cats_min_intensity='-0.1'", "must be a number in [0, 1e9]"});
  o = {};
  o.workers = 4097;
  expect_mentions(error_of(o), {"options::workers='4097'", "must be an integer in [1, 4096]"});
  o = {};
  o.stack_size = 1000;
  expect_mentions(error_of(o), {"options::stack_size='1000'", "[64K, 1G]"});
  EXPECT_EQ(error_of(o).find("suffix"), std::string::npos) << "a byte count has no suffixes: " << error_of(o);
}

// Words (booleans, auto, one/many, scheduler names) are case-insensitive for every variable, as the
// booleans always were.
TEST(Options, WordsAreCaseInsensitiveForEveryVariable) {
  scoped_env sch("ROOST_SCHED", "WS-Help");
  scoped_env as("ROOST_ADWS_STEAL", "Auto");
  scoped_env cs("ROOST_CAB_SUBTREES", "MANY");
  roost::resolved_options r = roost::resolve({});
  EXPECT_EQ(r.scheduler, "ws-help");
  EXPECT_EQ(r.adws_steal, roost::adws_stealing::adaptive);
  EXPECT_FALSE(r.cab_one_subtree);
}

TEST(Options, TraceMayNotNameAnExistingDirectory) {
  std::string dir = testing::TempDir();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  scoped_env e("ROOST_TRACE", dir.c_str());
  expect_mentions(error_of({}), {"ROOST_TRACE", dir.c_str(), "directory", "a file path"});
}

// A file the runtime would write, in a directory that does not exist, is a start-up error for every such
// setting and whatever the scheduler: ROOST_SIM_REPORT was accepted on the native platform and
// ROOST_CATS_PROFILE under every scheduler but cats.
TEST(Options, FilesToWriteMustLieInAnExistingDirectory) {
  for (const char* var : {"ROOST_TRACE", "ROOST_SIM_REPORT", "ROOST_CATS_PROFILE"}) {
    scoped_env e(var, "/nonexistent-roost-dir/out.json");
    expect_mentions(error_of({}), {var, "/nonexistent-roost-dir/out.json", "does not exist", "a file path"});
  }
  // A regular file where the directory should be is said to be one (it was said not to exist), and a path
  // through it says why it cannot be used.
  const roost_test::temp_file not_a_dir("roost_not_a_dir");
  { std::ofstream(not_a_dir.path()) << "x"; }
  for (const char* var : {"ROOST_TRACE", "ROOST_SIM_REPORT", "ROOST_CATS_PROFILE"}) {
    const std::string under = not_a_dir.path() + "/out.json";
    scoped_env e(var, under.c_str());
    expect_mentions(error_of({}), {var, under.c_str(), "'" + not_a_dir.path() + "', where its directory should be, is not a directory"});
    const std::string deeper = not_a_dir.path() + "/sub/out.json";
    scoped_env d(var, deeper.c_str());
    expect_mentions(error_of({}), {var, "cannot be used (Not a directory)"});
  }
  // A name ending in '/' is a directory's, whether or not one exists there.
  for (const char* var : {"ROOST_TRACE", "ROOST_SIM_REPORT", "ROOST_CATS_PROFILE"}) {
    scoped_env e(var, "no-such-roost-dir/");
    expect_mentions(error_of({}), {std::string(var) + "='no-such-roost-dir/': ends in '/', a directory's name; must be"});
    scoped_env d(var, testing::TempDir().c_str());
    expect_mentions(error_of({}), {"': a directory; must be"});
  }
  scoped_env ok("ROOST_SIM_REPORT", "relative-report.json");  // the working directory
  EXPECT_EQ(roost::resolve({}).sim_report, "relative-report.json");
}

// ROOST_SIM_PARAMS is checked on the native platform too (it was only where a simulation read it), and a
// parameter given twice is an error rather than the last one silently winning.
TEST(Options, SimParamsAreCheckedWhateverThePlatform) {
  {
    scoped_env e("ROOST_SIM_PARAMS", "x=1");
    expect_mentions(error_of({}), {"ROOST_SIM_PARAMS", "unknown parameter", "'x'", "spawn_ns"});
  }
  {
    scoped_env e("ROOST_SIM_PARAMS", "spawn_ns=-5");
    expect_mentions(error_of({}), {"ROOST_SIM_PARAMS", "spawn_ns", "-5"});
  }
  {
    scoped_env e("ROOST_SIM_PARAMS", "l3.ways=0");
    expect_mentions(error_of({}), {"ROOST_SIM_PARAMS", "l3.ways", "[1, 1024]"});
  }
  roost::options o;
  o.sim_params = "spawn_ns=1, SPAWN_NS=2";
  expect_mentions(error_of(o), {"options::sim_params", "SPAWN_NS", "twice"});
  o.sim_params = "spawn_ns=5, l3.ways=8";
  EXPECT_EQ(roost::resolve(o).sim_params, "spawn_ns=5, l3.ways=8");
}

// Issue #23 (10): a virtual topology may not describe more PUs than the worker limit; it started 6000
// workers. The runtime refuses it before starting any.
TEST(Options, TopologyAboveTheWorkerLimitIsRefusedByTheRuntime) {
  roost::options o;
  o.topology = "pack:4097 pu:1";
  try {
    roost::runtime rt(o);
    FAIL() << "expected config_error";
  } catch (const roost::config_error& e) {
    expect_mentions(e.what(), {"options::topology='pack:4097 pu:1'", "4097 PUs", "at most 4096"});
  }
}

TEST(Options, PreemptionIsOffByDefaultAndItsSettingsAreChecked) {
  roost::resolved_options r = roost::resolve({});
  EXPECT_FALSE(r.preempt);
  EXPECT_EQ(r.preempt_interval_ns, 1'000'000u);
  EXPECT_EQ(r.preempt_timer, roost::preempt_timer_design::aligned);
  EXPECT_FALSE(r.preempt_klt);
  {
    scoped_env e("ROOST_PREEMPT", "Signal");
    EXPECT_TRUE(roost::resolve({}).preempt);
    EXPECT_FALSE(roost::resolve({}).preempt_klt);
  }
  {
    scoped_env e("ROOST_PREEMPT", "KLT");
    EXPECT_TRUE(roost::resolve({}).preempt);
    EXPECT_TRUE(roost::resolve({}).preempt_klt);
  }
  {
    scoped_env e("ROOST_PREEMPT", "always");
    expect_mentions(error_of({}), {"ROOST_PREEMPT='always'", "off", "signal", "klt"});
  }
  for (const char* mode : {"signal", "klt"}) {
    scoped_env e("ROOST_PREEMPT", mode);
    {
      scoped_env p("ROOST_PLATFORM", "sim");
      expect_mentions(error_of({}), {"ROOST_PREEMPT='" + std::string(mode) + "'", "native platform (ROOST_PLATFORM=native)"});
    }
    // The platform set in code is what the error names: the variable would not change it (the field wins).
    roost::options sim;
    sim.platform = "sim";
    expect_mentions(error_of(sim), {"ROOST_PREEMPT='" + std::string(mode) + "'", "(options::platform=native)"});
  }
  for (const char* bad : {"0", "0ms", "-1ms", "1", "ms", "abc", "10us", "50us", "99us", "11s", "1 ms", "1.5.2ms", "1msx", "1e3", "e3us", "1e3xs", "1e99s"}) {
    scoped_env e("ROOST_PREEMPT_INTERVAL", bad);
    expect_mentions(error_of({}), {"ROOST_PREEMPT_INTERVAL='" + std::string(bad) + "'", "[100us, 10s]", "ns, us, ms, s"});
  }
  const std::pair<const char*, std::uint64_t> good[] = {
      {"1ms", 1'000'000}, {"250us", 250'000}, {" 2.5MS ", 2'500'000}, {"100us", 100'000}, {"10s", 10'000'000'000}, {"100000ns", 100'000},
      // Exponents, as numbers take them where fractions are allowed (configuration.md, "How values are read").
      {"1e3us", 1'000'000}, {"1e-1ms", 100'000}, {"2E0S", 2'000'000'000}};
  for (const auto& [text, ns] : good) {
    scoped_env e("ROOST_PREEMPT_INTERVAL", text);
    EXPECT_EQ(roost::resolve({}).preempt_interval_ns, ns) << text;
  }
  {
    scoped_env e("ROOST_PREEMPT_TIMER", "per-process");
    expect_mentions(error_of({}), {"ROOST_PREEMPT_TIMER='per-process'", "aligned", "naive", "chained", "cputime", "monitor"});
  }
  {
    scoped_env e("ROOST_PREEMPT_TIMER", "monitor");
    EXPECT_EQ(roost::resolve({}).preempt_timer, roost::preempt_timer_design::monitor);
  }
  {
    scoped_env e("ROOST_PREEMPT_TIMER", "Chained");
    EXPECT_EQ(roost::resolve({}).preempt_timer, roost::preempt_timer_design::chained);
  }
  {
    scoped_env e("ROOST_PREEMPT_TIMER", "cputime");
    EXPECT_EQ(roost::resolve({}).preempt_timer, roost::preempt_timer_design::cputime);
  }
  roost::options o;
  o.preempt_timer = "Naive";
  EXPECT_EQ(roost::resolve(o).preempt_timer, roost::preempt_timer_design::naive);
  o.preempt_interval = "";
  expect_mentions(error_of(o), {"options::preempt_interval", "empty", "1ms"});
}

// Whether one of `notes` holds `text`.
static bool has_note(const std::vector<std::string>& notes, const std::string& text) {
  return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

// A misspelt variable was ignored without a word (ROOST_SCHEDULER=ws-help ran ws; an outside-user
// campaign): one that looks like a setting is named with the likely one; other ROOST_ variables (roost's
// tools', a program's own) are not.
TEST(Options, AVariableThatLooksLikeAMisspeltSettingIsNamed) {
  roost_test::scoped_env a("ROOST_SCHEDULER", "ws-help"), b("ROOST_NUM_WORKERS", "1"), c("ROOST_WROKERS", "1"),
      d("ROOST_BENCH", "/x/roost-bench"), e("ROOST_MY_PROGRAMS_OWN", "1"), f("ROOST_BINDING", "false"),
      g("ROOST_workers", "1"), h("roost_sched", "adws");
  const roost::resolved_options r = roost::resolve(roost::options{});
  const auto has = [&](const std::string& text) { return has_note(r.unknown_env_notes, text); };
  EXPECT_TRUE(has("ROOST_SCHEDULER is not a roost setting and is not read; did you mean ROOST_SCHED?"));
  EXPECT_TRUE(has("ROOST_NUM_WORKERS is not a roost setting and is not read; did you mean ROOST_WORKERS?"));
  EXPECT_TRUE(has("ROOST_WROKERS is not a roost setting and is not read; did you mean ROOST_WORKERS?"));
  // A short name held at the start, and names in the wrong case (both passed without a note before).
  EXPECT_TRUE(has("ROOST_BINDING is not a roost setting and is not read; did you mean ROOST_BIND?"));
  EXPECT_TRUE(has("ROOST_workers is not a roost setting and is not read; did you mean ROOST_WORKERS?"));
  EXPECT_TRUE(has("roost_sched is not a roost setting and is not read; did you mean ROOST_SCHED?"));
  EXPECT_FALSE(has("ROOST_BENCH"));
  EXPECT_FALSE(has("ROOST_MY_PROGRAMS_OWN"));
}

// The names an OpenMP or oneTBB user types, which no edit distance leads to roost's (ROOST_NUM_THREADS=1 ran
// on every CPU without a word: an outside-user campaign).
TEST(Options, AnOpenMpStyleNameIsNamedWithRoostsSetting) {
  roost_test::scoped_env a("ROOST_NUM_THREADS", "1"), b("ROOST_CPUS", "1"), c("ROOST_NPROCS", "1"),
      d("ROOST_PROC_BIND", "true"), e("ROOST_SCHEDULE", "static"), f("ROOST_PROGRAM_OWN", "1"),
      g("ROOST_SPIN_COUNT", "1"), h("ROOST_SCORE", "1");
  const roost::resolved_options r = roost::resolve(roost::options{});
  const auto has = [&](const std::string& text) { return has_note(r.unknown_env_notes, text); };
  EXPECT_TRUE(has("ROOST_NUM_THREADS is not a roost setting and is not read; did you mean ROOST_WORKERS?"));
  EXPECT_TRUE(has("ROOST_CPUS is not a roost setting and is not read; did you mean ROOST_WORKERS?"));
  EXPECT_TRUE(has("ROOST_NPROCS is not a roost setting and is not read; did you mean ROOST_WORKERS?"));
  EXPECT_TRUE(has("ROOST_PROC_BIND is not a roost setting and is not read; did you mean ROOST_BIND?"));
  EXPECT_TRUE(has("ROOST_SCHEDULE is not a roost setting and is not read; did you mean ROOST_SCHED?"));
  EXPECT_FALSE(has("ROOST_PROGRAM_OWN"));
  EXPECT_FALSE(has("ROOST_SPIN_COUNT"));
  EXPECT_FALSE(has("ROOST_SCORE"));
}

// The simulated platform's variables were checked and then ignored by a native runtime without a word (an
// audit: no report was written, nothing said why); a field set in code is the program's own choice.
TEST(Options, SimulatorVariablesOfANativeRuntimeAreNamedAsUnused) {
  roost_test::scoped_env a("ROOST_SIM_REPORT", "/tmp/roost_unused_report.json"), b("ROOST_SIM_SEED", "7"),
      c("ROOST_PLATFORM", nullptr), d("ROOST_SIM_PARAMS", nullptr);
  roost::resolved_options r = roost::resolve(roost::options{});
  ASSERT_EQ(r.unused_env_notes.size(), 2u);
  EXPECT_NE(r.unused_env_notes[0].find("ROOST_SIM_SEED='7' is not used: this runtime runs natively"), std::string::npos)
      << r.unused_env_notes[0];
  EXPECT_NE(r.unused_env_notes[1].find("ROOST_SIM_REPORT='/tmp/roost_unused_report.json' is not used"),
            std::string::npos) << r.unused_env_notes[1];
  roost::options o;
  o.sim_seed = 3;
  EXPECT_EQ(roost::resolve(o).unused_env_notes.size(), 1u);  // the seed is the program's: only the report
  o.platform = "sim";
  EXPECT_TRUE(roost::resolve(o).unused_env_notes.empty());
}

// A trace depth with no trace to apply it to passed without a word (an outside-user campaign); with a trace
// from the environment or from code, or a depth set in code, there is nothing to say.
TEST(Options, ATraceDepthWithoutATraceIsNamedAsUnused) {
  roost_test::scoped_env a("ROOST_TRACE_DEPTH", "all"), b("ROOST_TRACE", nullptr), c("ROOST_SIM_SEED", nullptr),
      d("ROOST_SIM_REPORT", nullptr), e("ROOST_SIM_PARAMS", nullptr);
  roost::resolved_options r = roost::resolve(roost::options{});
  ASSERT_EQ(r.unused_env_notes.size(), 1u);
  EXPECT_EQ(r.unused_env_notes[0], "ROOST_TRACE_DEPTH='all' is not used: this runtime writes no trace (ROOST_TRACE "
                                   "or options::trace names its file)");
  roost::options o;
  o.trace = "/tmp/roost_unused_depth.trace";
  EXPECT_TRUE(roost::resolve(o).unused_env_notes.empty());
  roost::options depth_in_code;
  depth_in_code.trace_depth = "3";
  EXPECT_TRUE(roost::resolve(depth_in_code).unused_env_notes.empty());
  {
    roost_test::scoped_env t("ROOST_TRACE", "/tmp/roost_unused_depth.trace");
    EXPECT_TRUE(roost::resolve(roost::options{}).unused_env_notes.empty());
  }
  roost_test::scoped_env bad("ROOST_TRACE_DEPTH", "deep");  // still checked
  EXPECT_THROW(roost::resolve(roost::options{}), roost::config_error);
}

// The same of preemption's interval and timer while preemption is off (ROOST_PREEMPT=off preempts no task,
// not even in a preempt_as scope).
TEST(Options, PreemptionsIntervalAndTimerWithPreemptionOffAreNamedAsUnused) {
  roost_test::scoped_env a("ROOST_PREEMPT_INTERVAL", "2ms"), b("ROOST_PREEMPT_TIMER", "naive"),
      c("ROOST_PREEMPT", "off"), d("ROOST_SIM_SEED", nullptr), e("ROOST_SIM_REPORT", nullptr),
      f("ROOST_SIM_PARAMS", nullptr), g("ROOST_TRACE_DEPTH", nullptr);
  roost::resolved_options r = roost::resolve(roost::options{});
  ASSERT_EQ(r.unused_env_notes.size(), 2u);
  EXPECT_EQ(r.unused_env_notes[0], "ROOST_PREEMPT_INTERVAL='2ms' is not used: preemption is off (ROOST_PREEMPT is "
                                   "signal or klt where a task may be preempted)");
  EXPECT_EQ(r.unused_env_notes[1].rfind("ROOST_PREEMPT_TIMER='naive' is not used", 0), 0u) << r.unused_env_notes[1];
  roost::options timer_in_code;
  timer_in_code.preempt_timer = "chained";
  EXPECT_EQ(roost::resolve(timer_in_code).unused_env_notes.size(), 1u);  // the interval only
  {
    roost_test::scoped_env on("ROOST_PREEMPT", "signal");
    EXPECT_TRUE(roost::resolve(roost::options{}).unused_env_notes.empty());
  }
  roost::options on_in_code;
  on_in_code.preempt = "klt";
  EXPECT_TRUE(roost::resolve(on_in_code).unused_env_notes.empty());
}

// Misspellings outside the ROOST_ prefix, and the closest name suggested where a variable also holds a
// shorter one (an outside-user campaign: the first four passed without a note, the last two were told
// ROOST_TRACE). A variable of the program's own that only shares a word passes.
TEST(Options, MisspellingsOfThePrefixAreNamedAndTheClosestNameSuggested) {
  roost_test::scoped_env a("ROST_WORKERS", "2"), b("XROOST_WORKERS", "2"), c("ROOTS_WORKERS", "2"),
      d("MY_ROOST_WORKERS", "2"), e("ROOST_TRACE_DEPHT", "all"), f("ROOST_TRACE_DPETH", "all"),
      g("MY_WORKERS", "2"), h("TRACE_DEPTH", "3"), i("HOST_TRACE", "1"), j("GHOST_TRACE", "1"),
      k("POST_WORKERS", "1");
  const roost::resolved_options r = roost::resolve(roost::options{});
  const auto note = [&](const std::string& name) -> std::string {
    for (const std::string& n : r.unknown_env_notes)
      if (n.rfind(name + " is not a roost setting", 0) == 0) return n;
    return "";
  };
  for (const char* name : {"ROST_WORKERS", "XROOST_WORKERS", "ROOTS_WORKERS", "MY_ROOST_WORKERS"})
    EXPECT_NE(note(name).find("did you mean ROOST_WORKERS?"), std::string::npos) << name << ": " << note(name);
  for (const char* name : {"ROOST_TRACE_DEPHT", "ROOST_TRACE_DPETH"})
    EXPECT_NE(note(name).find("did you mean ROOST_TRACE_DEPTH?"), std::string::npos) << name << ": " << note(name);
  // A program's own names two edits from one (a review found these named).
  for (const char* name : {"MY_WORKERS", "TRACE_DEPTH", "HOST_TRACE", "GHOST_TRACE", "POST_WORKERS"})
    EXPECT_EQ(note(name), "") << name;
}
