# Thin driver over CMake. `make run` and `make test` are the Quick start.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
PREFIX ?= /usr/local

.PHONY: all build run test test-asan test-tsan test-clang fuzz install clean bench

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/nextok explain --logits examples/logits-example.npy --vocab examples/gpt2-tokenizer.json --temp 0.8 --top-k 40 --top-p 0.9 --seed 42

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan:
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DNEXTOK_SANITIZE=ON $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

test-tsan:
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNEXTOK_TSAN=ON $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && ctest --output-on-failure -j $(JOBS) -R 'thread|batch|pool'

# The whole suite built by clang with ASan+UBSan: clang's UBSan also checks
# pointer arithmetic (NULL + 0), which gcc's does not. .ci/ubsan.supp lists
# the known, reported defects it tolerates (see that file).
# CLANG_EXCLUDE: test_fused draws its random chains inside argument lists
# (unspecified evaluation order: gcc and clang draw different chains), and
# under clang's order one flat min-p row misses the dense route that
# test_fused_min_p_dense_readers requires (the result itself is right). Its
# owner, the fused-path rewrite (issue 14 item 1), is to sequence the draws;
# then set CLANG_EXCLUDE empty. The gcc tiers run test_fused as before.
UBSAN_CLANG = print_stacktrace=1:halt_on_error=1:suppressions=$(CURDIR)/.ci/ubsan.supp
CLANG_EXCLUDE ?= ^test_fused
test-clang:
	cmake -S . -B build-clang -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNEXTOK_SANITIZE=ON $(CMAKE_FLAGS)
	cmake --build build-clang -j $(JOBS)
	cd build-clang && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=$(UBSAN_CLANG) ctest --output-on-failure -j $(JOBS) $(if $(CLANG_EXCLUDE),-E '$(CLANG_EXCLUDE)')

# Every fuzz target under libFuzzer for FUZZ_SECONDS each (.ci/fuzz).
FUZZ_SECONDS ?= 180
fuzz:
	.ci/fuzz $(FUZZ_SECONDS)

install: build
	DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-clang build-fuzz
