// The files a runtime writes for the program (a trace and its timeline, a simulation's report, cats's
// profile) are regular files: a trace is read back to make its timeline, and opening a named pipe for writing
// blocks until a reader comes (a runtime's constructor waited for ever). Checked without blocking.
#pragma once
#include <string>

namespace roost::platform {

// Why `path` cannot be an output file, or an empty string: it names a directory, a device, a named pipe or a
// socket, or it cannot be opened for writing (it is created when absent, as an append would). Never blocks.
std::string output_file_problem(const std::string& path);

// What a path that exists is, when it is not a regular file ("a named pipe"), or an empty string (a regular
// file, or nothing there). No system call but one stat().
std::string not_a_regular_file(const std::string& path);

// The file a write to `path` lands in: absolute, its symbolic links followed (dangling ones too: a write
// makes the link's target), then made canonical as far as it exists. `path` itself when it cannot be made
// absolute. A write beside the path and a rename over it must go to this, or it replaces the link. Links in
// a loop (or a chain of more than 40) set *loop, if given, and give `path` back: no file can be made there.
std::string write_target(const std::string& path, bool* loop = nullptr);

}  // namespace roost::platform
