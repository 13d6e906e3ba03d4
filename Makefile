# famfs front door. Every target installs what it needs first (scripts/deps.sh).
#
#   make            build the tools and the daemon (build/)
#   make demo       make a file-backed famfs and show the tools on it
#   make check      every test tier; ends with "N passed, N failed, N skipped"
#   make vm-test    the kernel module in QEMU guests (trixie kernel; root)
#   make vm-test-7.3  the same on trixie-backports' 7.3 kernel (tests/vm-7.3)
#   make vm-test-debug  the same on a debug build of that kernel (KASAN,
#                   lockdep; built once and cached: over an hour cold)
#   make vm-test-debug-7.3  the 7.3 tier on a debug build of 7.3
#   make vm-test-alone  both VM tiers with every case in a guest of its own
#                   (no case may lean on what another left; ~30 boots)
#   make e2e        packages installed and used in booted trixie images, all
#                   cases (~30 min; make check runs the fast subset)
#   make bench      benchmarks, one run (guests on 6.12 and 7.3): table,
#                   build-bench/bench.json, plots
#   make fuzz       each libFuzzer harness for 10 minutes
#   make deb, rpm   packages from the committed tree, into build-pkg/
#   make install    install the build (prefix /usr/local; DESTDIR honoured)
#   make clean      remove the build directories

BUILD      ?= build
TESTBUILD  ?= build-test
FUZZBUILD  ?= build-fuzz
CHECK_TIERS ?= unit fuzz host cli units vm vm-7.3 e2e
FUZZ_SECONDS ?= 20

PREFIX     ?= /usr/local

.PHONY: all deps deps-kernel build install demo check test-builds vm-test vm-test-7.3 vm-test-debug vm-test-debug-7.3 vm-test-alone e2e bench fuzz deb rpm clean

all: build

deps:
	@scripts/deps.sh

deps-kernel:
	@DEPS_KERNEL=1 scripts/deps.sh

# meson setup only once per directory; ninja rebuilds what changed.
$(BUILD)/build.ninja:
	meson setup --prefix=$(PREFIX) $(BUILD)

$(TESTBUILD)/build.ninja:
	meson setup $(TESTBUILD) -Db_sanitize=address,undefined -Db_lundef=false

$(FUZZBUILD)/build.ninja:
	CC=clang meson setup $(FUZZBUILD) -Dfuzz=true -Dtests=false \
		-Db_sanitize=address,undefined -Db_lundef=false \
		-Dc_args=-fsanitize=fuzzer-no-link

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

test-builds: build $(TESTBUILD)/build.ninja $(FUZZBUILD)/build.ninja
	ninja -C $(TESTBUILD)
	ninja -C $(FUZZBUILD)

# Tools, daemon and mount helpers (mount.famfs in /sbin for a prefix other
# than /usr: mount(8) looks only there), units, udev rule, man pages, and
# /etc/famfs/famfs.conf unless one exists.
install: build
	meson configure -Dprefix=$(PREFIX) $(BUILD)
	ninja -C $(BUILD)
	meson install -C $(BUILD) --no-rebuild

demo: build
	scripts/demo.sh $(BUILD)

# Strict: a skip of anything this machine can run fails (tests/run-all.sh).
# The e2e tier's fast subset (install, fstab mount, systemctl status,
# daemon restart, rpm);
# make e2e runs all of it.
check: test-builds deps-kernel
	@DEPS_PACKAGE=1 scripts/deps.sh
	FAMFS_NO_SKIP=1 FUZZ_SECONDS=$(FUZZ_SECONDS) E2E_CASES=check tests/run-all.sh $(CHECK_TIERS)

vm-test: deps-kernel
	tests/run-all.sh vm

vm-test-7.3: deps-kernel
	tests/run-all.sh vm-7.3

# Not part of check: a cold build of the debug kernel takes well over an
# hour on 2 cores; warm, a run takes about 5 minutes (tests/vm/README.md).
vm-test-debug: deps-kernel
	VM_DEBUG=1 tests/run-all.sh vm

vm-test-debug-7.3: deps-kernel
	VM_DEBUG=1 tests/run-all.sh vm-7.3

# Not part of check: one boot per case instead of one for all.
vm-test-alone: deps-kernel
	VM_ALONE=1 tests/run-all.sh vm vm-7.3

e2e: deps-kernel
	@DEPS_PACKAGE=1 scripts/deps.sh
	E2E_CASES=all tests/run-all.sh e2e

# Not part of check: benchmarks measure, tests assert (bench/README.md).
bench: build deps-kernel
	@DEPS_BENCH=1 scripts/deps.sh
	bench/run.sh

fuzz: test-builds
	FUZZ_SECONDS=600 tests/run-all.sh fuzz

deb rpm:
	@DEPS_PACKAGE=1 scripts/deps.sh
	scripts/build-packages.sh $@

clean:
	rm -rf $(BUILD) $(TESTBUILD) $(FUZZBUILD) build-pkg build-vm build-bench
