// Configuration: every bad value is an error naming the variable, the value and what is valid.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include <stdlib.h>

#include <string>

#include "roost/errors.hpp"
#include "roost/options.hpp"
#include "roost/runtime.hpp"

namespace {

using roost_test::scoped_env;

std::string error_of(const roost::options& o) {
  try {
    roost::resolve(o);
  } catch (const roost::config_error& e) {
    return e.what();
  }
  return "";
}

void expect_mentions(const std::string& msg, std::initializer_list<const char*> parts) {
  ASSERT_FALSE(msg.empty()) << "expected a config_error";
  for (const char* p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' missing in: " << msg;
}

}  // namespace

TEST(Options, DefaultsAreSane) {
  roost::resolved_options r = roost::resolve({});
  EXPECT_EQ(r.scheduler, "ws");
  EXPECT_EQ(r.workers, 0u);  // one per PU, decided with the topology
  EXPECT_EQ(r.stack_size, 1u << 20);
  EXPECT_TRUE(r.bind);
}

TEST(Options, UnknownSchedulerListsValidNames) {
  scoped_env e("ROOST_SCHED", "fastest");
  expect_mentions(error_of({}), {"ROOST_SCHED", "fastest", "ws", "ws-help", "hws", "cats", "adws"});
}

TEST(Options, PlannedSchedulerSaysItIsNotBuiltYet) {
  scoped_env e("ROOST_SCHED", "numa");
  expect_mentions(error_of({}), {"ROOST_SCHED", "numa", "not implemented yet", "ws-help"});
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
    expect_mentions(error_of({}), {"ROOST_WORKERS", "1 to 4096"});
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
    EXPECT_NE(m.find("ROOST_TOPOLOGY"), std::string::npos) << m;
    EXPECT_NE(m.find("pack:two core:lots"), std::string::npos) << m;
    EXPECT_NE(m.find("synthetic"), std::string::npos) << m;
  }
}

TEST(Options, SchedulerTableSaysWhatExists) {
  int available = 0, planned = 0;
  for (const auto& s : roost::schedulers()) (s.available ? available : planned)++;
  EXPECT_EQ(available, 7);  // ws, ws-help, hws, adws, adws-ml, cab, cats
  EXPECT_EQ(planned, 1);    // numa
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
  expect_mentions(error_of(o), {"options::cab_level", "65", "0 to 64"});
  o.cab_level = 1;
  o.cats_min_intensity = -1;
  expect_mentions(error_of(o), {"options::cats_min_intensity", "-1"});
}
