// A task that overflows its stack ends the program with a message naming the cause and the knob.
#include <gtest/gtest.h>

#include "roost/roost.hpp"

namespace {
// Uses about 1 KiB of stack per level; returns n.
__attribute__((noinline)) int recurse(int n) {
  volatile char pad[1024];
  pad[0] = 1;
  if (n == 0) return 0;
  return recurse(n - 1) + pad[0];
}
}  // namespace

TEST(StackOverflowDeathTest, NamesTheCauseAndTheKnob) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        roost::options o;
        o.workers = 1;
        o.stack_size = 64 * 1024;
        roost::runtime rt(o);
        rt.run([] {
          roost::task_group tg;
          tg.run([] { recurse(1000); });  // ~1 MiB of frames on a 64 KiB stack
          tg.wait();
        });
      },
      "task stack overflow.*ROOST_STACK_SIZE");
}

TEST(StackOverflow, DeepRecursionFitsWhenTheStackIsRaised) {
  roost::options o;
  o.workers = 1;
  o.stack_size = 4 << 20;
  roost::runtime rt(o);
  EXPECT_EQ(rt.run([] {
    int r = 0;
    roost::task_group tg;
    tg.run([&] { r = recurse(1000); });
    tg.wait();
    return r;
  }), 1000);
}
