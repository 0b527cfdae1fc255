#!/usr/bin/env bash
# Installs roost from a build tree into a scratch prefix, then builds and runs a consumer twice:
# with find_package(roost CONFIG) and with pkg-config.
set -euo pipefail
build=$1; src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
# A compiler whose default standard is older than C++20 (clang++ 14's is C++14): the target must bring it.
cmake -S "$src/tests/install" -B "$work/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_FLAGS="-std=gnu++14" >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/consumer"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
c++ -std=c++20 -O2 "$src/tests/install/main.cpp" $(pkg-config --cflags roost) $(pkg-config --libs roost) -o "$work/pc-consumer"
# The same program in a shared object, built with the package's flags and -fPIC: the headers' thread-locals
# are then read initial-exec, not local-exec as in the program above (detail/abi.hpp, ROOST_LINKED_STATIC),
# which the linker refuses in a shared object.
c++ -std=c++20 -O2 -fPIC -shared -Dmain=roost_consumer_main "$src/tests/install/main.cpp" $(pkg-config --cflags roost) \
  $(pkg-config --libs roost) -o "$work/libconsumer.so"
printf 'int roost_consumer_main();\nint main() { return roost_consumer_main(); }\n' > "$work/so-main.cpp"
c++ "$work/so-main.cpp" -L"$work" -lconsumer -Wl,-rpath,"$work" -o "$work/so-consumer"
"$work/so-consumer" >/dev/null
# The program's standard is its own: roost.pc carries no -std (one there, after the program's flags, made a
# C++23 program C++20: an outside-user campaign). Older than C++20, the headers say what is needed.
printf '#include <roost/roost.hpp>\nstatic_assert(__cplusplus > 202002L, "the program asked for C++23");\nint main() {}\n' \
  > "$work/cxx23.cpp"
c++ -std=c++23 -c "$work/cxx23.cpp" $(pkg-config --cflags roost) -o "$work/cxx23.o"
if c++ -std=c++17 -c "$work/cxx23.cpp" $(pkg-config --cflags roost) -o "$work/cxx17.o" 2> "$work/cxx17.err"; then
  echo "install: a C++17 program compiled against roost's headers" >&2
  exit 1
fi
if ! grep -q 'roost needs C++20 or later' "$work/cxx17.err"; then
  echo "install: a C++17 program failed to compile, but not at the standard check:" >&2
  cat "$work/cxx17.err" >&2
  exit 1
fi
# A program's strict warnings, as errors, with each compiler there is: roost's headers compile clean under them.
strict="-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wold-style-cast -Werror"
for cxx in g++ clang++; do
  command -v "$cxx" >/dev/null || continue
  # shellcheck disable=SC2086
  "$cxx" -std=c++20 -O1 $strict "$src/tests/install/main.cpp" $(pkg-config --cflags roost) $(pkg-config --libs roost) \
    -o "$work/strict-consumer"
  "$work/strict-consumer"
done
"$work/pc-consumer"
# A program in libstdc++'s debug mode lays the containers of roost's public types out otherwise than this
# libroost (built without it): it must fail to link, naming the mode it needs (detail/build_mode.hpp), not
# run on corrupted objects. With -D_GLIBCXX_ASSERTIONS, which keeps the layout, it links and runs.
# Also where the linker drops unreferenced sections (a common release setting), which dropped a check that
# lay in an unreferenced object alone.
for gc in "" "-ffunction-sections -fdata-sections -Wl,--gc-sections"; do
  # shellcheck disable=SC2086
  if c++ -std=c++20 -O1 -D_GLIBCXX_DEBUG $gc "$src/tests/install/main.cpp" $(pkg-config --cflags roost) $(pkg-config --libs roost) \
       -o "$work/debug-consumer" 2> "$work/debug-consumer.err"; then
    echo "install: a -D_GLIBCXX_DEBUG program ($gc) linked against a libroost built without it" >&2
    exit 1
  fi
  if ! grep -q 'libroost_built_with_GLIBCXX_DEBUG' "$work/debug-consumer.err"; then
    echo "install: a -D_GLIBCXX_DEBUG program ($gc) failed to build, but not at the mode check:" >&2
    cat "$work/debug-consumer.err" >&2
    exit 1
  fi
done
# A program built with AddressSanitizer or ThreadSanitizer against this libroost (built without them) got
# false reports where roost switches stacks (an outside-user campaign): it must fail to link, naming the
# build it needs.
for san in address:AddressSanitizer thread:ThreadSanitizer; do
  # shellcheck disable=SC2086
  if c++ -std=c++20 -O1 -fsanitize="${san%%:*}" "$src/tests/install/main.cpp" $(pkg-config --cflags roost) \
       $(pkg-config --libs roost) -o "$work/sanitized-consumer" 2> "$work/sanitized-consumer.err"; then
    echo "install: a -fsanitize=${san%%:*} program linked against a libroost built without it" >&2
    exit 1
  fi
  if ! grep -q "libroost_built_without_GLIBCXX_DEBUG_and_with_${san#*:}" "$work/sanitized-consumer.err"; then
    echo "install: a -fsanitize=${san%%:*} program failed to build, but not at the mode check:" >&2
    cat "$work/sanitized-consumer.err" >&2
    exit 1
  fi
done
c++ -std=c++20 -O1 -D_GLIBCXX_ASSERTIONS "$src/tests/install/main.cpp" $(pkg-config --cflags roost) $(pkg-config --libs roost) \
  -o "$work/assertions-consumer"
"$work/assertions-consumer"
echo "install: find_package and pkg-config consumers ran; _GLIBCXX_DEBUG and sanitized ones were refused at link time"
