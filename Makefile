# keylane developer entry points. The README documents two: `make run` and
# `make test`. Each target installs missing Debian packages first
# (scripts/deps.sh, a fast no-op when all are present: `make run` the
# library's and the ledger's lists of scripts/packages/, the others every
# list), then configures and builds with CMake; re-running only rebuilds
# what changed.
#
#   make run             build and run the ledger example (ARGS="--json" to pass args)
#   make test            build everything, run the whole CTest suite (what CI runs first)
#   make test-sanitize   same suite under AddressSanitizer + UBSan in build-asan/, built with
#                        clang at -O1 -g1 (SANITIZE_CXX, SANITIZE_OPT; CI runs it second)
#   make test-tsan       same suite under ThreadSanitizer in build-tsan/ (extra; Debian's CAF
#                        is not instrumented, so expect reports from inside CAF)
#   make bench           build and run the benchmark (docs/performance.md)
#   make bench-record    the same, once, into a result file the docs' tables are rendered
#                        from (RESULT=bench/results/<date>.json, ARGS=the run's options;
#                        bench/record.sh), then `make tables` renders them
#   make tables          rewrite the docs' benchmark tables from their result files
#   make fuzz            build the libFuzzer targets with clang in build-fuzz/ and run each
#                        for FUZZ_SECONDS (default 60; tests/fuzz/run.sh); CI runs it last
#   make clean           remove every build directory
#   make mutation-check  plant each bug of tests/mutation/ in a scratch copy, expect the
#                        suite to fail within a bound (slow; not in CI; see tests/mutation/run.sh)
#   make soak            build and run the soak ([.soak]; SOAK_EVENTS=... to size it)

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
# cmake --build runs make again; spare every line its "Entering directory".
MAKEFLAGS += --no-print-directory

# The machines have 2 cores; override with `make test JOBS=8`.
JOBS       ?= 2
BUILD_TYPE ?= RelWithDebInfo
CMAKE      ?= cmake
CTEST      ?= ctest

BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
TSAN_DIR  ?= build-tsan

# Extra `ctest` arguments, e.g. `make test CTEST_ARGS='-R unit'`. The sanitizer
# runs exclude nothing by default; SANITIZE_EXCLUDE is a ctest -E regex.
CTEST_ARGS       ?=
SANITIZE_EXCLUDE ?=

RUN_TARGET ?= ledger
RUN_BIN    ?= $(BUILD_DIR)/examples/ledger/ledger
ARGS       ?=
BENCH_BIN  ?= $(BUILD_DIR)/bench/keylane_bench

# halt_on_error turns the first report into a failing test instead of a log line.
ASAN_OPTIONS  ?= halt_on_error=1:detect_leaks=1
UBSAN_OPTIONS ?= halt_on_error=1:print_stacktrace=1
TSAN_OPTIONS  ?= halt_on_error=1:second_deadlock_stack=1

CTEST_RUN = $(CTEST) --output-on-failure --no-tests=error -j$(JOBS) $(CTEST_ARGS)

# Each step runs as a named phase: with KEYLANE_PHASE_LOG set (.ci/run sets
# it) its seconds are logged, and .ci/run prints them at its end.
PHASE = bash scripts/phase.sh

# ccache, when installed (scripts/deps.sh installs it), for every build. The
# base directory makes paths inside this tree relative in the hashes, and
# NOHASHDIR keeps the build directory that -g writes into the objects out of
# them, so a fresh clone in another folder hits the cache of this one. A
# miss only compiles as before. NO_CCACHE=1 turns it off.
NO_CCACHE ?=
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1
CCACHE_FLAG = -DCMAKE_CXX_COMPILER_LAUNCHER=$(if $(NO_CCACHE),,$$(command -v ccache))

# Sanitized builds: no benchmarks (slow, meaningless numbers) and no mimalloc
# (it replaces malloc, which the sanitizers must intercept themselves). They
# compile at -O1 with line tables only (-g1), as ASan's docs suggest: reports
# keep function, file and line, and the build takes a third of -O2 -g's time
# (config_loader.cpp under ASan + UBSan: 44 s at -O2 -g, 16 s at -O1 -g1);
# and with clang, the sanitizers' home compiler, which builds them in two
# thirds of g++'s time (supervisor.cpp: 20 s against 29 s). SANITIZE_CXX=g++
# builds them with GCC.
SANITIZE_OPT    ?= -O1 -g1 -DNDEBUG
SANITIZE_CXX    ?= clang++
SANITIZED_FLAGS = -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DKEYLANE_BUILD_TESTS=ON \
                  -DCMAKE_CXX_COMPILER=$(SANITIZE_CXX) \
                  -DKEYLANE_BUILD_BENCH=OFF -DKEYLANE_USE_MIMALLOC=OFF \
                  $(if $(filter RelWithDebInfo,$(BUILD_TYPE)),-DCMAKE_CXX_FLAGS_RELWITHDEBINFO='$(SANITIZE_OPT)')

.PHONY: all deps deps-run configure configure-run run test test-sanitize test-tsan bench bench-record tables fuzz clean mutation-check soak

all: test

# Every package list (scripts/packages/*.txt); `make run` installs only the
# library's and the ledger's (RUN_DEPS).
RUN_DEPS ?= library ledger
deps:
	@$(PHASE) deps bash scripts/deps.sh

deps-run:
	@$(PHASE) deps bash scripts/deps.sh $(RUN_DEPS)

# Configuring every time is cheap (cached) and keeps the options in force.
# `make run` configures the same build directory without the tests, so it
# needs neither Catch2 nor the packages of examples it does not build (the
# exchange without QuickFIX and the benchmarks without Boost are left out,
# with a message); everything else configures the whole suite, Kafka
# included, and then every package is required.
CONFIGURE = $(CMAKE) -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CCACHE_FLAG)
configure: deps
	$(CONFIGURE) -DKEYLANE_BUILD_TESTS=ON -DKEYLANE_BUILD_BENCH=ON -DKEYLANE_BUILD_KAFKA=ON

configure-run: deps-run
	$(CONFIGURE) -DKEYLANE_BUILD_TESTS=OFF

run: configure-run
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS) --target $(RUN_TARGET)
	@test -x $(RUN_BIN) || { echo "make run: $(RUN_BIN) was not built" >&2; exit 1; }
	$(RUN_BIN) $(ARGS)

test: configure
	$(PHASE) "build (plain)" $(CMAKE) --build $(BUILD_DIR) -j$(JOBS)
	$(PHASE) "tests (plain)" $(CTEST_RUN) --test-dir $(BUILD_DIR)

test-sanitize: deps
	$(CMAKE) -S . -B $(ASAN_DIR) $(SANITIZED_FLAGS) -DKEYLANE_SANITIZERS=address,undefined $(CCACHE_FLAG)
	$(PHASE) "build (asan+ubsan)" $(CMAKE) --build $(ASAN_DIR) -j$(JOBS)
	ASAN_OPTIONS='$(ASAN_OPTIONS)' UBSAN_OPTIONS='$(UBSAN_OPTIONS)' \
	  $(PHASE) "tests (asan+ubsan)" \
	  $(CTEST_RUN) --test-dir $(ASAN_DIR) $(if $(SANITIZE_EXCLUDE),-E '$(SANITIZE_EXCLUDE)')

test-tsan: deps
	$(CMAKE) -S . -B $(TSAN_DIR) $(SANITIZED_FLAGS) -DKEYLANE_SANITIZERS=thread $(CCACHE_FLAG)
	$(CMAKE) --build $(TSAN_DIR) -j$(JOBS)
	TSAN_OPTIONS='$(TSAN_OPTIONS)' \
	  $(CTEST_RUN) --test-dir $(TSAN_DIR) $(if $(SANITIZE_EXCLUDE),-E '$(SANITIZE_EXCLUDE)')

# The full benchmark (about 15 minutes on 2 cores): table on stdout, JSON and
# plots in results/. ARGS are passed on, e.g. ARGS=--quick.
bench: configure
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS) --target keylane_bench
	$(BENCH_BIN) $(ARGS)

RESULT ?= bench/results/$(shell date -u +%Y-%m-%d).json
bench-record: configure
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS) --target keylane_bench
	BENCH_BIN=$(BENCH_BIN) bash bench/record.sh $(RESULT) $(ARGS)

tables:
	$(CMAKE) -DSOURCE_DIR=$(CURDIR) -DMODE=write -P bench/render_tables.cmake

fuzz: deps
	JOBS=$(JOBS) NO_CCACHE=$(NO_CCACHE) bash tests/fuzz/run.sh

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR) build-fuzz

# Developer command, not CI: one build and suite run per mutation.
mutation-check: deps
	JOBS=$(JOBS) bash tests/mutation/run.sh $(MUTATIONS)

# The soak alone ([.soak]: 1,000,000 events by default, SQLite variant too).
SOAK_EVENTS ?=
soak: configure
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS) --target keylane_tests
	$(if $(SOAK_EVENTS),KEYLANE_SOAK_EVENTS=$(SOAK_EVENTS)) $(BUILD_DIR)/tests/keylane_tests "[.soak]" --durations yes
