#!/usr/bin/env bash
# Installs what roost needs to build, test and benchmark on Debian 12, only what is missing.
# Run by `make demo` and `make test`; safe to run again (a no-op once everything is there).
set -euo pipefail

# Debian packages: the dependency, and why roost needs it.
PKGS=(
  cmake ninja-build g++ pkg-config   # build
  libhwloc-dev hwloc-nox             # topology (DESIGN §2), lstopo-no-graphics for checks
  libboost-context-dev               # user-level threads (fcontext)
  libnuma-dev                        # page placement (mem layer)
  libgtest-dev                       # unit tests
  libtbb-dev                         # oneTBB peer
  clang libomp-dev                   # LLVM OpenMP peer (GCC's libgomp comes with g++)
  libclang-rt-dev                    # clang's sanitizer runtimes: the ASan+UBSan build of make test
  python3-venv python3-pip           # tools/ venv: numpy, matplotlib
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "bootstrap: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python tools (tools/): a project virtual environment with numpy, matplotlib and pytest, pycachesim (the
# independent cache simulator the memory model is checked against: tools/tests/test_cachesim.py), and
# roost-tools installed editable. Rebuilt only when something is missing.
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"
if ! "$venv/bin/python" -c "import numpy, matplotlib, pytest, cachesim, roost_tools" >/dev/null 2>&1; then
  echo "bootstrap: preparing the Python environment in .venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q numpy matplotlib pytest pycachesim
  "$venv/bin/python" -m pip install -q -e "$root/tools"
fi
