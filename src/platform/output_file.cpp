#include "platform/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace roost::platform {

namespace {
const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a named pipe";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}
}  // namespace

std::string not_a_regular_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return {};
  return kind_of(st.st_mode);
}

std::string output_file_problem(const std::string& path) {
  if (std::string kind = not_a_regular_file(path); !kind.empty()) return "not a regular file: " + kind;
  // O_NONBLOCK: a named pipe made since the stat fails (no reader) instead of blocking; a file ignores it.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0) return std::strerror(errno);
  struct stat st;
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  ::close(fd);
  return regular ? std::string() : "not a regular file: " + std::string(kind_of(st.st_mode));
}

std::string write_target(const std::string& path, bool* loop) {
  namespace fs = std::filesystem;
  if (loop) *loop = false;
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) return path;
  int links = 0;
  for (; links <= 40; ++links) {  // a missing path is no link, and no error here
    std::error_code missing;
    if (!fs::is_symlink(fs::symlink_status(p, missing))) break;
    const fs::path to = fs::read_symlink(p, missing);
    if (missing) break;
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  const fs::path real = fs::weakly_canonical(p, ec);
  // A loop (the kernel's limit is 40 links): no target, and a rename over the path would replace the link
  // (a review). A loop in a directory above shows as ELOOP from weakly_canonical.
  if (links > 40 || ec == std::errc::too_many_symbolic_link_levels) {
    if (loop) *loop = true;
    return path;
  }
  return ec ? p.string() : real.string();
}

}  // namespace roost::platform
