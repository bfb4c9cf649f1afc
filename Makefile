# Thin driver over CMake. `make run` and `make test` are the Quick start.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
PREFIX ?= /usr/local

.PHONY: all build run test test-quick test-asan test-tsan test-clang fuzz install clean bench deps check-deps python install-python test-llama

all: build

# Build dependencies: tools/setup/deps.sh installs what is missing on Debian and Ubuntu
# (apt-get, through sudo when not root) or stops with the command to run; the package
# list is tools/setup/packages.txt. NEXTOK_NO_INSTALL=1 only checks. Every build checks
# first (a few `command -v` and pkg-config calls, no apt when nothing is missing); the
# test targets also need what the tests use (python3).
DEPS_SH = sh tools/setup/deps.sh --cache $(DEPS_CACHE)
DEPS_FOR = build
DEPS_CACHE = $(BUILD)/CMakeCache.txt
test test-asan test-tsan: DEPS_FOR = test
test-asan: DEPS_CACHE = build-asan/CMakeCache.txt
test-tsan: DEPS_CACHE = build-tsan/CMakeCache.txt

deps:
	@$(DEPS_SH) --for test -- $(CMAKE_FLAGS)

check-deps:
	@$(DEPS_SH) --quiet --for $(DEPS_FOR) -- $(CMAKE_FLAGS)

# A failed first configure leaves a cache behind; remove it so the next make configures
# again instead of building from a half-made tree.
$(BUILD)/CMakeCache.txt: | check-deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS) \
	    || { rm -f $@; exit 1; }

build: check-deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The Python package (bindings/python) in $(BUILD)/python: `make` builds it too
# (CMake target nextok_python); this builds only it and what it links.
python: check-deps $(BUILD)/CMakeCache.txt
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	cmake --build $(BUILD) -j $(JOBS) --target nextok_python

# Install it for the current user: the package folder into the user site-packages
# of /usr/bin/python3 (PYTHON=... for another interpreter built against).
PYTHON ?= /usr/bin/python3
install-python: python
	@site=$$($(PYTHON) -m site --user-site) && mkdir -p "$$site" && rm -rf "$$site/nextok" && \
	    cp -r $(BUILD)/python/nextok "$$site/" && echo "installed nextok in $$site"

# The main job: the whole loop on the built-in demo model (prompt -> ids -> model
# logits -> sampling chain -> detokenizer -> stop rules -> streamed text).
RUN_PROMPT ?= It is a truth universally acknowledged, that
run: build
	./$(BUILD)/nextok generate --echo --prompt "$(RUN_PROMPT)" --temp 0.8 --top-k 40 --top-p 0.95 \
	    --min-p 0.02 --repeat-penalty 1.1 --seed 42 --max-tokens 120

# Every test is labelled quick or full (tests/README.md): `make test` runs
# both tiers, `make test-quick` everything not labelled full (under 30 s).
# ctest lists the tests it skipped (exit 77) at the end of its summary.
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-quick: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE full

# The llama.cpp adapter (adapters/llama.cpp) against real llama.cpp: builds llama.cpp once
# under build/llama.cpp (bench/llama_cpp/build.sh: npm pack node-llama-cpp@3.21.1, about
# 5 min on 2 cores, then cached), then the adapter's tests and example. Needs npm, git
# and g++. Under ASan+UBSan: tests/llama/run.sh build-asan (after make test-asan).
test-llama: check-deps $(BUILD)/CMakeCache.txt
	JOBS=$(JOBS) tests/llama/run.sh $(BUILD)

test-asan: check-deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DNEXTOK_SANITIZE=ON $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

test-tsan: check-deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNEXTOK_TSAN=ON $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && ctest --output-on-failure -j $(JOBS) -R 'thread|batch|pool'

# The quick tier built by clang with ASan+UBSan: clang's UBSan also checks
# pointer arithmetic (NULL + 0), which gcc's does not (test-asan runs the
# whole suite under gcc's). CLANG_TIER=full runs every tier.
CLANG_TIER ?= quick
test-clang: check-deps
	cmake -S . -B build-clang -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNEXTOK_SANITIZE=ON $(CMAKE_FLAGS)
	cmake --build build-clang -j $(JOBS)
	cd build-clang && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    ctest --output-on-failure -j $(JOBS) $(if $(filter quick,$(CLANG_TIER)),-LE full)

# Every fuzz target under libFuzzer for FUZZ_SECONDS each (.ci/fuzz).
FUZZ_SECONDS ?= 180
fuzz:
	.ci/fuzz $(FUZZ_SECONDS)

install: build
	DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-clang build-fuzz
