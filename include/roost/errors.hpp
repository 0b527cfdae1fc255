// Errors roost reports to its users. Every message names the variable or call, the value and what is valid.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <new>
#include <stdexcept>
#include <string>

namespace roost {

// A bad configuration value: an environment variable or an options field.
struct config_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The API was used in a way it does not support (e.g. task_group::run outside runtime::run).
struct usage_error : std::logic_error {
  using std::logic_error::logic_error;
};

// Memory a call could not have (roost::numa_alloc): a std::bad_alloc, as operator new's failure is, so that
// a handler for that catches it, whose what() names the call and the size ("std::bad_alloc" named nothing).
class allocation_error : public std::bad_alloc {
 public:
  explicit allocation_error(const std::string& what) : what_(what) {}
  const char* what() const noexcept override { return what_.what(); }

 private:
  std::runtime_error what_;  // its copy never throws, as an exception's must not
};

}  // namespace roost

#include "roost/detail/min_max_back.hpp"
