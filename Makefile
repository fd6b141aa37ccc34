# rocke — thin wrapper over CMake. `make run` and `make test` do all set-up.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps build run test test-asan test-tsan fuzz fuzz-long gpu-check bench install deb clean

all: build

deps:
	@scripts/install-deps.sh

# after deps: under `make -jN` the configure would otherwise race the install
$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DROCKE_WERROR=ON $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

# The main job: build, compile a kernel and run it on the best device present.
run: build
	@scripts/main-job.sh $(BUILD)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

# The same tests under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan:
	$(MAKE) test BUILD=build-asan CMAKE_FLAGS="-DROCKE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug"

# Every device self-check on the best device present (CUDA, then HIP, else the
# emulator), one table; exits 1 when a check fails. GPU_CHECK_FLAGS passes
# options (--device emu, --only vector_add, --no-time). On a GPU machine
# without the build dependencies, run a carried build: build/rocke gpu-check.
# Then every family's default instance on the GPU against the emulator
# (rocke run --check-emu; skipped with a message when there is no GPU,
# GPU_CHECK_EMU_DEVICE=emu runs it emulator against emulator).
gpu-check: build
	$(BUILD)/rocke gpu-check $(GPU_CHECK_FLAGS)
	scripts/gpu-check-emu.sh $(BUILD)

# The threads test (two users building, compiling and running at once, a
# shared compile cache) under ThreadSanitizer: a separate small build of the
# library and that one test (docs/embedding.md).
test-tsan:
	cmake -S . -B build-tsan -DROCKE_WERROR=ON -DROCKE_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-tsan -j$(JOBS) --target runtime_test_threads
	ctest --test-dir build-tsan --output-on-failure -R '^runtime/test_threads$$'

# libFuzzer targets (clang-22); see tests/fuzz/README.md.
fuzz:
	ROCKE_WITH_FUZZ=1 scripts/install-deps.sh
	cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang-22 -DROCKE_FUZZ=ON -DROCKE_TESTS=OFF
	cmake --build build-fuzz -j$(JOBS)

# Every fuzz target for FUZZ_SECONDS each (default an hour: four hours in all),
# random seeds, corpus kept in build-fuzz/corpus-<target>; findings land in
# build-fuzz/findings/ and, once fixed, in tests/fuzz/corpus/<target>/.
FUZZ_SECONDS ?= 3600
fuzz-long: fuzz
	tests/fuzz/run_fuzzers.sh build-fuzz $(FUZZ_SECONDS) long

# Install the libraries, headers, CLI, pkg-config file and CMake package
# under PREFIX (DESTDIR stages, as for packaging); see docs/install.md.
PREFIX ?= /usr/local
install: build
	@scripts/check-install-prefix.sh "$(DESTDIR)" "$(PREFIX)"
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

# A Debian package of the same files (prefix /usr) in $(BUILD)/.
deb: build
	cd $(BUILD) && cpack -G DEB

clean:
	rm -rf build build-asan build-tsan build-fuzz
