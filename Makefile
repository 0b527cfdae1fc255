# roost — the two commands a new machine needs:
#   make demo   builds roost and runs the benchmark comparison (the main job)
#   make test   builds everything and runs every test: unit, stress, sanitizers (TSan, ASan+UBSan), install
# Both install what is missing first through scripts/bootstrap.sh.

JOBS       ?= $(shell nproc)
BUILD      ?= build
CMAKE_ARGS ?=

.PHONY: all bootstrap build build-tsan build-asan test test-release test-tsan test-asan test-install demo reproduce bench clean

all: build

bootstrap:
	@bash scripts/bootstrap.sh

$(BUILD)/build.ninja: | bootstrap
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

build: bootstrap $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

build-tsan: bootstrap
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROOST_SANITIZE=thread -DROOST_BUILD_BENCH=OFF
	cmake --build build-tsan -j $(JOBS)

# ASan+UBSan by clang: GCC's UBSan checks took 2.6x as long to compile (tests/test_join.cpp: 61 s against
# 34 s) and made this build a third of make test's time; and a second compiler sees what the first lets pass.
# TSan stays GCC's: clang's links its interceptors into the program, where preemption's checks of the C
# library's sleep calls (platform/sleep_calls.cpp) find them, and its shared runtime does not start.
# A build-asan configured by another compiler is made afresh: cmake, told of a new compiler, wipes the cache
# and configures again without the other -D values, a plain build that make test took for ASan's (a review).
build-asan: bootstrap
	@if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' build-asan/CMakeCache.txt; then \
	  echo "build-asan was configured with another compiler than clang++: configuring it afresh"; rm -rf build-asan; fi
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROOST_SANITIZE=address -DROOST_BUILD_BENCH=OFF \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
	cmake --build build-asan -j $(JOBS)

test-release: build
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure

# Sanitizer builds run the same tests; sizes shrink automatically under a sanitizer (see tests/).
test-tsan: build-tsan
	cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest -j $(JOBS) --output-on-failure -E "Install|Docs"

test-asan: build-asan
	cd build-asan && ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1" \
	  ctest -j $(JOBS) --output-on-failure -E "Install|Docs"

test: test-release test-tsan test-asan
	@echo "make test: release, TSan and ASan+UBSan suites all passed"

# The curated comparison: fib, fib-invoke, heat, heat-ub, heat2d, heat2d-pfor and matmul under every roost scheduler and the peers
# (a variant a benchmark lacks is named once below its table), then the table and out/report.md with charts.
demo: build
	$(BUILD)/bench/roost-bench --demo
	.venv/bin/roost-report out/bench.jsonl --out out
	@# Why one schedule beats another: heat2d traced under ws and adws; KRD, mapping and timelines into the
	@# report. Each core's private 1 MiB L2 is declared as its socket's cache (DESIGN §4), so that KRD sees
	@# one cache domain per core; the two grids (1.5 MiB) fit the two domains when each core keeps its half.
	@# ROOST_TRACE_DEPTH=all: mapping compares every leaf across steps (auto's depths follow what records cost).
	@printf '\n## Locality of heat2d under ws and adws (440x440 floats, 100 steps, 2 workers, each core its own 1 MiB cache domain, traced)\n\nWith two workers ws has one victim, and a thief takes the oldest continuation, the same half of the grid every step: random stealing is then almost as deterministic as adws, and both keep their tiles in their own cache. The next section shows the difference where there are more caches.\n\n' >> out/report.md
	@for s in ws adws; do \
	  ROOST_TOPOLOGY="pack:2 l3:1(size=1MiB) core:1 pu:1" ROOST_TRACE=out/heat2d-$$s.trace ROOST_TRACE_DEPTH=all \
	    $(BUILD)/bench/roost-bench --bench heat2d --size 440x100 --variants $$s --workers 2 --reps 1 --warmup 0 > /dev/null && \
	  .venv/bin/roost-analyze markdown out/heat2d-$$s.trace --name heat2d-$$s --out-dir out >> out/report.md && \
	  .venv/bin/roost-analyze krd out/heat2d-$$s.trace && .venv/bin/roost-analyze mapping out/heat2d-$$s.trace; \
	done
	@# The same on a simulated 4-socket machine, two workers per 1 MiB socket cache (--platform sim: every
	@# worker a user-level thread in virtual time, src/platform/README.md). Natively these 8 workers would
	@# oversubscribe the 2 CPUs and lose them for whole time slices; simulated, each has a core of its own.
	@printf '\n## Locality of heat2d under ws and adws on a simulated 4-socket machine (8 workers, two per 1 MiB socket cache, virtual time)\n\nws deals the tiles anew every step; adws deals them by the same ranges every step (seed 003 section 4.2) and repairs imbalance by stealing from nearby workers first. The machine is simulated (roost-bench --platform sim): the real schedulers run, every worker on a core of its own in virtual time, so the schedule is the one this machine shape gives. *Leaves in another cache domain* counts the tiles whose data stayed behind in another cache. KRD (seed 001) measures reuse per cache from that cache'"'"'s own accesses only: a tile that goes back and forth between two caches still counts as a close reuse, though the other cache'"'"'s writes invalidated its copy in between; *written elsewhere* counts those reuses.\n\n' >> out/report.md
	@for s in ws adws; do \
	  ROOST_TRACE=out/heat2d-4sockets-$$s.trace $(BUILD)/bench/roost-bench --platform sim \
	    --topology "pack:4 l3:1(size=1MiB) core:2 pu:1" --bench heat2d --size 440x100 --variants $$s --workers 8 \
	    --reps 1 --warmup 0 > /dev/null && \
	  .venv/bin/roost-analyze markdown out/heat2d-4sockets-$$s.trace --name heat2d-4sockets-$$s --out-dir out >> out/report.md && \
	  .venv/bin/roost-analyze krd out/heat2d-4sockets-$$s.trace && .venv/bin/roost-analyze mapping out/heat2d-4sockets-$$s.trace; \
	done
	@echo "make demo: wrote out/report.md, out/*.png"

# The seeds' headline results beside roost's (docs/reproductions.md, regenerated): multi-socket rows on the
# simulated seed machines. A row that fails says why there; the others still run, and the target fails.
reproduce: build
	.venv/bin/python -m roost_tools.reproduce --build $(BUILD) --out docs/reproductions.md --work out/reproduce $(if $(ROWS),--only $(ROWS))

bench: build
	$(BUILD)/bench/roost-bench $(ARGS)

clean:
	rm -rf $(BUILD) build-tsan build-asan out
