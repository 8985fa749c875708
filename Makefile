# Makefile - builds libtriage.so (the public C client library), triaged, triage
# and the tests into build/.
# `make test` is the only command a fresh Debian 12 machine needs: see deps.

# The Debian 12 packages the build needs; `make deps` installs what is missing.
# bash-completion and zsh are for the test that runs triage's completions;
# prometheus (promtool, and the server itself) for the tests of /metrics;
# libcurl is the tests' HTTP client (tests/daemon/thttp.c); chromium is the
# browser of the dashboard's test (tests/daemon/test-dashboard.c, driven
# through tests/daemon/cdp.c). libpq-dev: the cluster's store talks to
# PostgreSQL through libpq; postgresql-15: its tests start a real server
# (initdb and postgres in a temp dir).
DEBIAN_DEPS := gcc make pkg-config libevent-dev libjansson-dev libsqlite3-dev \
	libsystemd-dev libinih-dev libcmocka-dev bash-completion zsh \
	libcurl4-openssl-dev prometheus chromium postgresql-15 libpq-dev python3
# The pkg-config names of the libraries we link against.
PKGS := libevent jansson sqlite3 libsystemd inih libpq
TEST_PKGS := cmocka libcurl

# From glibc: b64_ntop (libresolv), the maths of timeouts, threads in tests.
SYS_LIBS := -lresolv -lm -lpthread

BUILD ?= build
CC ?= cc
CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wcast-qual -Wwrite-strings -Wformat=2 -Wundef \
	-Wvla -Wnull-dereference -Werror
SANITIZE ?=
ALL_CPPFLAGS = -D_GNU_SOURCE -Ilib -Istore -Idaemon $(PKG_CFLAGS) $(CPPFLAGS)
ALL_CFLAGS = -std=c17 $(WARNINGS) $(CFLAGS) $(SANITIZE) -MMD -MP
ALL_LDFLAGS = $(SANITIZE) $(LDFLAGS)

# All of lib/ and store/, in an archive of the build's own that the daemon,
# the CLI, the tests and the benchmarks link: not installed, and not the
# public library below, whence its name.
LIB_SRC := $(wildcard lib/*.c store/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
COMMON_LIB := $(BUILD)/lib/libcommon.a
# libtriage.so.0, the public C client library: <triage/client.h>
# (lib/triage/client.h), libtriage(3), triage.pc. Its two sources, which
# use nothing else of lib/ but caller-env.h's struct, compiled again
# position-independent and with every symbol hidden but those the header
# marks TRIAGE_API; lib/libtriage.map, the version script, gives them the
# version node TRIAGE_0 and hides whatever else the objects would export.
# SOLIB_VERSION is the file's: 0.0.0, its major the SONAME's, to be raised
# only when the ABI breaks.
SOLIB_SRC := lib/client.c lib/client-socket.c
SOLIB_OBJ := $(SOLIB_SRC:%.c=$(BUILD)/pic/%.o)
SONAME := libtriage.so.0
SOLIB_VERSION := 0.0.0
SOLIB := $(BUILD)/lib/libtriage.so.$(SOLIB_VERSION)
SOLIB_LINKS := $(BUILD)/lib/$(SONAME) $(BUILD)/lib/libtriage.so
# The functions of the public header, for the man page's links (install);
# LPAREN, as make would count the parenthesis.
LPAREN := (
LIB_API := $(shell sed -n 's/^TRIAGE_API .*[ *]\(triage_[a-z0-9_]*\)[$(LPAREN)].*/\1/p' \
	lib/triage/client.h)
# The daemon's modules also go into an archive, so that tests can drive its
# parts (the worker pool, say) without its main().
DAEMON_SRC := $(filter-out daemon/main.c,$(wildcard daemon/*.c))
DAEMON_OBJ := $(DAEMON_SRC:%.c=$(BUILD)/obj/%.o)
DAEMON_LIB := $(BUILD)/lib/libtriaged.a
# What tests and benchmarks share (tests/support/: their daemons, PostgreSQL
# servers, temp dirs, clock and /proc), with no cmocka in it: an archive that
# every test and bench program links, its headers found by their code only.
TSUPPORT_SRC := $(wildcard tests/support/*.c)
TSUPPORT_OBJ := $(TSUPPORT_SRC:%.c=$(BUILD)/obj/%.o)
TSUPPORT := $(BUILD)/lib/libtsupport.a
CLIENT_SRC := $(wildcard client/*.c)
CLIENT_OBJ := $(CLIENT_SRC:%.c=$(BUILD)/obj/%.o)
# The CLI as install puts it (see its rule).
INSTALL_CLI := $(BUILD)/install/triage
BINS := $(if $(wildcard daemon/main.c),$(BUILD)/bin/triaged) \
	$(if $(CLIENT_SRC),$(BUILD)/bin/triage)

UNIT_SRC := $(wildcard tests/unit/test-*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
# Tests of the daemon's parts, and of the whole daemon over its socket.
DTEST_SRC := $(wildcard tests/daemon/test-*.c)
DTEST_BIN := $(DTEST_SRC:tests/daemon/%.c=$(BUILD)/tests/%)
# The fuzz targets' replays (see the fuzz section) are tests too.
FUZZ_SRC := $(filter-out tests/fuzz/replay.c,$(wildcard tests/fuzz/*.c))
FUZZ_TARGETS := $(FUZZ_SRC:tests/fuzz/%.c=%)
REPLAY_BIN := $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz-%)
# The chaos test's checker, tested on crafted runs (tests/chaos/): quick, so
# part of make test; the chaos run itself is not (see test-chaos).
CHAOS_CHECK_TEST := $(BUILD)/tests/test-chaos-check
TESTS := $(UNIT_BIN) $(DTEST_BIN) $(REPLAY_BIN) $(CHAOS_CHECK_TEST)

.PHONY: all deps test check asan run clean install uninstall deb test-onenode
.DEFAULT_GOAL := all

# The dashboard's page files, which triaged serves from
# <its own dir>/../share/triage/dashboard unless the config says otherwise:
# copied beside build/bin, so that the built daemon finds them too.
DASHBOARD_SRC := $(wildcard daemon/dashboard/*)
DASHBOARD := $(DASHBOARD_SRC:daemon/dashboard/%=$(BUILD)/share/triage/dashboard/%)

all: $(COMMON_LIB) $(SOLIB_LINKS) $(BINS) $(INSTALL_CLI) $(DASHBOARD)

$(DASHBOARD): $(BUILD)/share/triage/dashboard/%: daemon/dashboard/%
	@mkdir -p $(@D)
	cp $< $@

# Installs the packages in DEBIAN_DEPS that are not installed; quiet and quick
# when nothing is missing. Uses sudo unless already root.
deps:
	@missing=; for p in $(DEBIAN_DEPS); do \
		dpkg-query -W -f='$${db:Status-Status}' $$p 2>/dev/null | grep -qx installed || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "deps: installing$$missing"; \
		$$sudo apt-get update -q && \
		$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends -o DPkg::Lock::Timeout=600 $$missing; \
	fi

# The compiler and linker flags pkg-config gives, asked once and cached. The
# rule runs deps first, so the libraries are there before pkg-config is asked;
# make then restarts with the flags in place.
ifeq ($(filter clean deps uninstall deb,$(MAKECMDGOALS)),)
include $(BUILD)/flags.mk
endif
$(BUILD)/flags.mk: Makefile
	@$(MAKE) --no-print-directory deps
	@mkdir -p $(@D)
	@printf 'PKG_CFLAGS := %s\nPKG_LIBS := %s\nTEST_LIBS := %s\nJANSSON_LIBS := %s\n' \
		"$$(pkg-config --cflags $(PKGS) $(TEST_PKGS))" \
		"$$(pkg-config --libs $(PKGS))" \
		"$$(pkg-config --libs $(TEST_PKGS))" \
		"$$(pkg-config --libs jansson)" > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(COMMON_LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

# --no-undefined: every symbol the library needs is in what it is linked
# with, so that a program using it needs nothing else (jansson and libc).
$(SOLIB): $(SOLIB_OBJ) lib/libtriage.map
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=lib/libtriage.map -Wl,--no-undefined \
		-Wl,--as-needed -o $@ $(SOLIB_OBJ) $(JANSSON_LIBS)

# The names a program finds the library by: at run time the SONAME's, at
# link time (-ltriage) the bare one.
$(SOLIB_LINKS): $(SOLIB)
	ln -sf $(notdir $<) $@

$(DAEMON_LIB): $(DAEMON_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(TSUPPORT): $(TSUPPORT_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^
$(BUILD)/obj/tests/%.o $(BUILD)/obj/bench/%.o: ALL_CPPFLAGS += -Itests/support

$(BUILD)/bin/triaged: $(BUILD)/obj/daemon/main.o $(DAEMON_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) $(SYS_LIBS)

# The CLI is a program built on libtriage.so.0, as anyone's would be: the
# library comes first on the line, so that its functions are taken from it
# and not again from the archive, which gives the rest of lib/ the CLI uses
# (tests/lib-symbols.sh checks that it defines none of the library's). jansson
# is dynamic too, as libtriage.so.0 needs it: a static copy besides would be
# two jansson in one process. libresolv (b64_pton, for the output command)
# stays static: a process per command, and the CLI alone needs it, so the
# dynamic loader need not open it at every start (bench/bench-client.c
# measures the start).
CLIENT_LIBS := $(JANSSON_LIBS) -Wl,-Bstatic -lresolv -Wl,-Bdynamic
CLIENT_LINK = $(CC) $(ALL_LDFLAGS) -Wl,--as-needed -o $@ $(CLIENT_OBJ) \
	$(BUILD)/lib/libtriage.so $(COMMON_LIB) $(CLIENT_LIBS)
# In build/bin it finds the library in build/lib through its RUNPATH,
# $ORIGIN/../lib, so that the tests run it where it is without
# LD_LIBRARY_PATH.
$(BUILD)/bin/triage: $(CLIENT_OBJ) $(COMMON_LIB) $(SOLIB_LINKS)
	@mkdir -p $(@D)
	$(CLIENT_LINK) -Wl,-rpath,'$$ORIGIN/../lib'
# What install puts in BINDIR: the same objects linked again without a
# RUNPATH. An installed program finds libtriage.so.0 where the dynamic
# loader looks (LIBDIR), and Debian's policy and lintian refuse a RUNPATH;
# linking twice needs no chrpath or patchelf, and costs one link. Built by
# all, so that install, as root, only copies.
$(INSTALL_CLI): $(CLIENT_OBJ) $(COMMON_LIB) $(SOLIB_LINKS)
	@mkdir -p $(@D)
	$(CLIENT_LINK)

$(UNIT_BIN): $(BUILD)/tests/test-%: $(BUILD)/obj/tests/unit/test-%.o $(TSUPPORT) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(TSUPPORT) $(COMMON_LIB) $(PKG_LIBS) $(TEST_LIBS) $(SYS_LIBS)

# Daemon tests run the real binaries, so they are built first. Every other
# file of tests/daemon/ (the harness, the fixtures) goes into each of them.
DTEST_COMMON_SRC := $(filter-out $(DTEST_SRC),$(wildcard tests/daemon/*.c))
DTEST_COMMON_OBJ := $(DTEST_COMMON_SRC:%.c=$(BUILD)/obj/%.o)
$(DTEST_BIN): $(BUILD)/tests/test-%: $(BUILD)/obj/tests/daemon/test-%.o $(DTEST_COMMON_OBJ) $(TSUPPORT) $(DAEMON_LIB) $(COMMON_LIB) $(BINS) $(DASHBOARD)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(DTEST_COMMON_OBJ) $(TSUPPORT) $(DAEMON_LIB) $(COMMON_LIB) $(PKG_LIBS) $(TEST_LIBS) $(SYS_LIBS)

# Runs every test binary and script and ends with one "N passed, N failed"
# line over all of them. The library's scripts check what install puts (it
# is all built first, so that their `make install` only copies) and build
# a program against it: with this build's compiler and sanitizers.
# The longest tests first, the scripts among them (they wait for no other
# test), so that the run does not end with one long test alone.
SLOW_TESTS := $(addprefix $(BUILD)/tests/test-,cluster completion load \
	durable dashboard crash)
test: $(TESTS) all
	@BUILD='$(BUILD)' CC='$(CC)' SANITIZE='$(SANITIZE)' \
		sh tests/run-tests.sh $(filter $(SLOW_TESTS),$(TESTS)) \
		tests/python-client.sh tests/lib-symbols.sh \
		tests/lib-install.sh $(filter-out $(SLOW_TESTS),$(TESTS)) \
		tests/check-includes.sh

check: test

# `make test-load`: a real triaged under 1,000 clients at once while it
# runs many jobs of /bin/true end to end (tests/load/); it fails past 3
# minutes. Too heavy for `make test`; .ci/run runs it. The binary also runs
# alone: build/tests/test-loadrun (LOADRUN_JOBS=N for another count). Then
# test-load again, alone on the machine, with its bounds of latency
# asserted (TRIAGE_TEST_LATENCY): `make test` runs it too, but two programs
# at once on shared cores, where only what a load must not change is.
.PHONY: test-load
LOAD_SRC := $(wildcard tests/load/*.c)
LOAD_OBJ := $(LOAD_SRC:%.c=$(BUILD)/obj/%.o)
LOAD_BIN := $(BUILD)/tests/test-loadrun
$(LOAD_OBJ): ALL_CPPFLAGS += -Itests/daemon
$(LOAD_BIN): $(LOAD_OBJ) $(DTEST_COMMON_OBJ) $(TSUPPORT) $(DAEMON_LIB) $(COMMON_LIB) $(BINS)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $(LOAD_OBJ) $(DTEST_COMMON_OBJ) $(TSUPPORT) $(DAEMON_LIB) $(COMMON_LIB) $(PKG_LIBS) $(TEST_LIBS) $(SYS_LIBS)
# `make test-chaos`: three real triaged on a real PostgreSQL primary with a
# synchronous streaming standby, each node through a proxy of its own,
# under steady submission from clients on every node, while faults come one
# at a time: a node killed -9 and restarted, stopped past its lease, cut off
# from PostgreSQL; PostgreSQL restarted -m immediate; the primary killed and
# the standby promoted. Then tests/chaos/chaos-check.c reads the jobs'
# ledger, the clients' records and the final job list, and fails on any
# broken promise. Several rounds of every fault, 10 minutes at most; with
# CHAOS=short one round of each, 3 minutes at most (.ci/run's). Too long for
# make test. The program also runs alone: build/tests/test-chaos, with
# CHAOS_ROUNDS=N for another count of rounds, CHAOS_FAULTS=kill,stop,cut,
# restart,failover (some of them), CHAOS_STANDBY=async for an asynchronous
# standby and CHAOS_LAG_MS=N for the standby N ms behind as the primary dies
# (what an asynchronous one then loses is counted as violations), CHAOS_KEEP=1
# to keep the ledger and the logs, CHAOS_LOG=debug.
.PHONY: test-chaos
CHAOS ?= long
CHAOS_SRC := $(wildcard tests/chaos/*.c)
CHAOS_OBJ := $(CHAOS_SRC:%.c=$(BUILD)/obj/%.o)
# The job the chaos test runs, a program of its own.
CHAOS_JOB := $(BUILD)/tests/chaos-job
CHAOS_BIN := $(BUILD)/tests/test-chaos
CHAOS_RUN_OBJ := $(filter-out %/chaos-job.o %/test-chaos-check.o,$(CHAOS_OBJ))
$(CHAOS_OBJ): ALL_CPPFLAGS += -Itests/daemon
$(CHAOS_JOB): $(BUILD)/obj/tests/chaos/chaos-job.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $<
$(CHAOS_CHECK_TEST): $(BUILD)/obj/tests/chaos/test-chaos-check.o $(BUILD)/obj/tests/chaos/chaos-check.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(TEST_LIBS)
$(CHAOS_BIN): $(CHAOS_RUN_OBJ) $(DTEST_COMMON_OBJ) $(TSUPPORT) $(DAEMON_LIB) $(COMMON_LIB) $(BINS) $(CHAOS_JOB)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $(CHAOS_RUN_OBJ) $(DTEST_COMMON_OBJ) $(TSUPPORT) $(DAEMON_LIB) $(COMMON_LIB) $(PKG_LIBS) $(TEST_LIBS) $(SYS_LIBS)
# The program fails itself past its limit (CHAOS_LIMIT_S in
# tests/chaos/chaos-run.h); the timeout is for a hang.
test-chaos: $(CHAOS_BIN) $(CHAOS_CHECK_TEST)
	@CHAOS=$(CHAOS) TEST_TIMEOUT=$(if $(filter short,$(CHAOS)),240,660) \
		TEST_JOBS=1 sh tests/run-tests.sh $(CHAOS_CHECK_TEST) $(CHAOS_BIN)

# The daemon tests once more, every daemon a one-node cluster in a
# PostgreSQL of the test's own (harness.c, TRIAGE_TEST_CLUSTER): the store's
# two databases keep one contract.
test-onenode: $(DTEST_BIN)
	@TRIAGE_TEST_CLUSTER=1 sh tests/run-tests.sh $(DTEST_BIN)

# The program fails itself past 3 minutes; the timeout is for a hang.
test-load: $(LOAD_BIN) $(BUILD)/tests/test-load
	@TEST_TIMEOUT=200 TEST_JOBS=1 TRIAGE_TEST_LATENCY=1 \
		sh tests/run-tests.sh $(LOAD_BIN) $(BUILD)/tests/test-load

# triage under a real systemd: PID 1 of namespaces of its own, on an overlay
# of the root, so the host's files are never written (tests/systemd/run.sh).
# Needs root; skips, passing, where namespaces are not permitted. Not part
# of `make test`. WATCHDOG_SECS=N shortens the watchdog check (default 60).
.PHONY: test-systemd
# What the systemd test runs besides the build: systemd itself, and jq.
SYSTEMD_TEST_TOOLS := systemd jq util-linux
test-systemd: $(BINS)
	@$(MAKE) --no-print-directory deps \
		DEBIAN_DEPS="$(DEBIAN_DEPS) $(SYSTEMD_TEST_TOOLS)"
	@bash tests/systemd/run.sh

# triage under systemd as PID 1 on Debian 12's own kernel in a QEMU VM (TCG),
# where cgroup v2 is whole (memory, pids, cpu), as it is not on this
# project's machines: the host's / read-only over 9p below a tmpfs overlay,
# so nothing is written to the host but build/vm (tests/vm/run.sh). The
# kernel is downloaded with `apt-get download` into build/vm, never installed.
# Needs root; about 2 minutes. Not part of `make test`.
.PHONY: test-vm
# qemu, a static busybox for the initramfs, and what the guest's checks run
# from the host's /: systemd itself, jq, python3, taskset.
VM_TEST_TOOLS := qemu-system-x86 busybox-static systemd jq python3 util-linux
test-vm: $(BINS)
	@$(MAKE) --no-print-directory deps \
		DEBIAN_DEPS="$(DEBIAN_DEPS) $(VM_TEST_TOOLS)"
	@bash tests/vm/run.sh

# Fails on a circle of includes between the modules of daemon/ and lib/, or on
# a lib/ file including a daemon/ header; `make test` runs it too.
.PHONY: check-includes
check-includes:
	@sh tests/check-includes.sh

# The same tests, built apart under build/asan with ASan and UBSan.
asan:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/asan \
		SANITIZE='-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer' \
		CFLAGS='-O1 -g' test

# The integration tests, those that start a real triaged, under valgrind's
# memcheck, built apart under build/valgrind (-O1, no sanitizers). Both the
# daemon (through the harness, TRIAGE_TEST_WRAPPER) and the test programs
# (through run-tests.sh) run under it; so do the workers, which are forks of
# the daemon, not execs: their errors are reported as they happen, their
# leaks when they end by themselves (retired by a reload), not when the
# daemon's exit kills them. What is exec'd, the jobs' sh and the triage
# command, runs bare (--trace-children=no). Each process writes its report
# to $(VG_LOGS), and tests/valgrind-check.sh, run last, fails naming those
# with an error or a definite leak; a daemon's exit status 99 (memcheck's)
# fails its test too. Suppressions, for other libraries' false positives
# only, are in tests/valgrind.supp.
#
# Under valgrind (twrapped() in the harness) these tests skip, saying why:
#   test-crash  crashes_never_undo_what_clients_were_told and
#   test-durable crash_storm_loses_no_acknowledged_job: kill -9 storms; a
#       daemon killed so writes no report, and the thousands of jobs they
#       queue would take hours there;
#   test-jobs   job_gets_the_limits_the_daemon_started_with and
#   test-fdlimit it_raises_its_limit_and_warns_when_too_low: valgrind keeps
#       the top fds for itself, so the fd limit it shows is not the jobs',
#       and it refuses to move it;
#   test-load   client_not_reading_its_batches_does_not_hold_up_others and
#       list_of_100000_jobs_while_others_are_served: latency and resident
#       size bounds, meaningless many times slower.
# test-faults' no_zombies_after_a_thousand_jobs runs a hundred. The tests of
# the daemon's parts on a bare loop (test-pool, test-run...) are not here.
.PHONY: valgrind
VG_BUILD := $(BUILD)/valgrind
VG_LOGS := $(CURDIR)/$(VG_BUILD)/logs
# The longest first (a stage's last minutes are its longest test's alone
# otherwise), then the rest. Only triaged runs under memcheck: the CLI's
# tests beyond cli and cli-output, and the documents' (their daemons serve
# calls the others make), are left out of it for .ci/run's 30 minutes.
VG_TESTS := $(addprefix $(VG_BUILD)/tests/test-,adopt durable security \
	freeze result key bounds bulk cli cli-output crash faults fdlimit \
	http jobproc jobs lifecycle limits load notify prometheus queue \
	reload rpc sched series cgroups resources)
# --vgdb=no: no gdbserver files in /tmp, where one a root process left
# under the same pid keeps a daemon run as another user from starting.
VALGRIND := valgrind --tool=memcheck --trace-children=no --vgdb=no \
	--leak-check=full --show-leak-kinds=definite \
	--errors-for-leak-kinds=definite --error-exitcode=99 --num-callers=30 \
	--suppressions=$(CURDIR)/tests/valgrind.supp \
	--log-file=$(VG_LOGS)/%q{TRIAGE_TEST_LAUNCH}.%p.log
# How many times longer every wait of the tests may take under valgrind,
# and how many test programs run at once (memcheck keeps a core busy each;
# the tests of timing skip there).
VG_SLOW := 10
VG_JOBS := 2
valgrind:
	@$(MAKE) --no-print-directory deps DEBIAN_DEPS="$(DEBIAN_DEPS) valgrind"
	@$(MAKE) --no-print-directory BUILD=$(VG_BUILD) SANITIZE= \
		CFLAGS='-O1 -g' $(VG_TESTS)
	@rm -rf $(VG_LOGS) && mkdir -p $(VG_LOGS)
	@# Daemons that tests start as another user write their reports too.
	@chmod 1777 $(VG_LOGS)
	@TRIAGE_TEST_WRAPPER='$(VALGRIND)' TRIAGE_TEST_SLOW=$(VG_SLOW) \
		TRIAGE_TEST_VGLOGS=$(VG_LOGS) TEST_JOBS=$(VG_JOBS) \
		sh tests/run-tests.sh $(VG_TESTS) tests/valgrind-check.sh

# The daemon in the foreground on config/dev.conf, socket and state under
# ./run/, after the commands to try from a second terminal.
RUN_SOCKET := $(CURDIR)/run/triage.sock
# The dashboard listens where dev.conf says, with a token made once.
RUN_HTTP := $(shell sed -n "s/^listen *= *//p" config/dev.conf)
run: all
	@mkdir -p run
	@[ -s run/http.token ] || (umask 077; head -c 24 /dev/urandom | \
		base64 > run/http.token)
	@printf '%s\n' \
		'triaged is starting in the foreground (Ctrl-C stops it). In a second terminal:' \
		'' \
		'  export TRIAGE_SOCKET=$(RUN_SOCKET) PATH=$(CURDIR)/$(BUILD)/bin:$$PATH' \
		'  triage submit -p low -- sh -c "sleep 5; echo done slowly"' \
		'  id=$$(triage submit -p high -- sh -c "uname -a; echo to stderr >&2")' \
		'  triage list' \
		'  triage wait $$id; echo "exit code $$?"' \
		'  triage output $$id; triage output --stderr $$id' \
		'  triage priorities' \
		'  triage watch' \
		'  triage stats' \
		'' \
		'The dashboard: http://$(RUN_HTTP)/ (its token is in run/http.token);' \
		'metrics: http://$(RUN_HTTP)/metrics' \
		''
	@exec $(BUILD)/bin/triaged --config config/dev.conf --socket $(RUN_SOCKET)

clean:
	rm -rf $(BUILD)

# `make install`, as root, or into a staging tree with DESTDIR. The systemd
# directories are those systemd.pc names (Debian 12: package systemd), with
# the Debian defaults when pkg-config does not know systemd; the config goes
# to /etc/triage/triage.conf unless one is there already, whatever PREFIX.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
# The library and triage.pc; Debian's package passes its multiarch
# directory, /usr/lib/$(DEB_HOST_MULTIARCH) (debian/rules).
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/triage
SYSCONFDIR ?= /etc
systemd_var = $(or $(shell pkg-config --variable=$(1) systemd 2>/dev/null),$(2))
SYSTEMDUNITDIR ?= $(call systemd_var,systemdsystemunitdir,/lib/systemd/system)
SYSUSERSDIR ?= $(call systemd_var,sysusersdir,/usr/lib/sysusers.d)
# bash-completion reads completions/ under every $XDG_DATA_DIRS directory,
# /usr/local/share included; with PREFIX=/usr this is the directory that
# `pkg-config --variable=completionsdir bash-completion` names.
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# zsh's $fpath holds /usr/local/share/zsh/site-functions, and Debian's zsh
# /usr/share/zsh/vendor-completions, the directory for packages.
ZSHCOMPDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/share/zsh/vendor-completions,$(PREFIX)/share/zsh/site-functions)
# Where triaged looks for the dashboard by default: ../share/triage/dashboard
# from its own directory, which is this one for SBINDIR = $(PREFIX)/sbin.
DASHDIR ?= $(PREFIX)/share/triage/dashboard
INSTALL ?= install

# Every file install puts, but the config, which uninstall leaves.
INSTALLED := $(BINDIR)/triage $(SBINDIR)/triaged \
	$(LIBDIR)/libtriage.so.$(SOLIB_VERSION) $(LIBDIR)/$(SONAME) \
	$(LIBDIR)/libtriage.so $(INCLUDEDIR)/triage/client.h \
	$(PKGCONFIGDIR)/triage.pc $(MANDIR)/man3/libtriage.3 \
	$(LIB_API:%=$(MANDIR)/man3/%.3) \
	$(SYSTEMDUNITDIR)/triage.service $(SYSTEMDUNITDIR)/triage.socket \
	$(SYSUSERSDIR)/triage.conf \
	$(MANDIR)/man1/triage.1 $(MANDIR)/man5/triage.conf.5 \
	$(MANDIR)/man7/triage-protocol.7 \
	$(MANDIR)/man8/triaged.8 $(BASHCOMPDIR)/triage $(ZSHCOMPDIR)/_triage \
	$(DOCDIR)/README.md $(DOCDIR)/examples/sandbox.conf \
	$(DOCDIR)/examples/triage.conf \
	$(addprefix $(DASHDIR)/,$(notdir $(DASHBOARD_SRC)))

# The library: its file, its two names as symbolic links (ldconfig would
# make the SONAME's, but a staged tree is not ldconfig's: packaging runs
# it), the header, triage.pc with this install's directories, and the
# manual, with a link to it for each function's name (man
# triage_client_call). Shared libraries are not executables: mode 0644.
install: all
	$(INSTALL) -d $(addprefix $(DESTDIR),$(BINDIR) $(SBINDIR) \
		$(LIBDIR) $(INCLUDEDIR)/triage $(PKGCONFIGDIR) $(MANDIR)/man3 \
		$(SYSTEMDUNITDIR) $(SYSUSERSDIR) $(MANDIR)/man1 $(MANDIR)/man5 \
		$(MANDIR)/man7 $(MANDIR)/man8 $(BASHCOMPDIR) $(ZSHCOMPDIR) $(DOCDIR)/examples \
		$(DASHDIR) $(SYSCONFDIR)/triage)
	$(INSTALL) -m 0755 $(INSTALL_CLI) $(DESTDIR)$(BINDIR)/triage
	$(INSTALL) -m 0644 $(SOLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SOLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(notdir $(SOLIB)) $(DESTDIR)$(LIBDIR)/libtriage.so
	$(INSTALL) -m 0644 lib/triage/client.h $(DESTDIR)$(INCLUDEDIR)/triage/
	sed -e 's|@prefix@|$(PREFIX)|g' -e 's|@libdir@|$(LIBDIR)|g' \
		-e 's|@includedir@|$(INCLUDEDIR)|g' -e 's|@version@|$(VERSION)|g' \
		lib/triage.pc.in > $(BUILD)/triage.pc
	$(INSTALL) -m 0644 $(BUILD)/triage.pc $(DESTDIR)$(PKGCONFIGDIR)/
	$(INSTALL) -m 0644 man/libtriage.3 $(DESTDIR)$(MANDIR)/man3/
	for f in $(LIB_API); do \
		ln -sf libtriage.3 $(DESTDIR)$(MANDIR)/man3/$$f.3 || exit 1; \
	done
	$(INSTALL) -m 0755 $(BUILD)/bin/triaged $(DESTDIR)$(SBINDIR)/triaged
	sed 's|@sbindir@|$(SBINDIR)|g' systemd/triage.service > $(BUILD)/triage.service
	$(INSTALL) -m 0644 $(BUILD)/triage.service systemd/triage.socket \
		$(DESTDIR)$(SYSTEMDUNITDIR)/
	$(INSTALL) -m 0644 systemd/triage.sysusers $(DESTDIR)$(SYSUSERSDIR)/triage.conf
	$(INSTALL) -m 0644 man/triage.1 $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 0644 man/triage.conf.5 $(DESTDIR)$(MANDIR)/man5/
	$(INSTALL) -m 0644 man/triage-protocol.7 $(DESTDIR)$(MANDIR)/man7/
	$(INSTALL) -m 0644 man/triaged.8 $(DESTDIR)$(MANDIR)/man8/
	$(INSTALL) -m 0644 client/triage.bash-completion $(DESTDIR)$(BASHCOMPDIR)/triage
	$(INSTALL) -m 0644 client/_triage $(DESTDIR)$(ZSHCOMPDIR)/_triage
	$(INSTALL) -m 0644 README.md $(DESTDIR)$(DOCDIR)/
	$(INSTALL) -m 0644 systemd/sandbox.conf config/triage.conf \
		$(DESTDIR)$(DOCDIR)/examples/
	$(INSTALL) -m 0644 $(DASHBOARD_SRC) $(DESTDIR)$(DASHDIR)/
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/triage/triage.conf ]; then \
		echo "install: keeping $(DESTDIR)$(SYSCONFDIR)/triage/triage.conf" \
			"(the new example is $(DESTDIR)$(DOCDIR)/examples/triage.conf)"; \
	else \
		echo "$(INSTALL) -m 0644 config/triage.conf $(DESTDIR)$(SYSCONFDIR)/triage/triage.conf"; \
		$(INSTALL) -m 0644 config/triage.conf $(DESTDIR)$(SYSCONFDIR)/triage/triage.conf; \
	fi
	@# Installed for real, the loader's cache learns of the library (the
	@# installed triage has no RUNPATH), as libtool's installs do.
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then \
		echo ldconfig; ldconfig; \
	fi

# `make deb` builds the packages with dpkg-buildpackage (debian/: debhelper,
# `make install PREFIX=/usr`, pybuild on client/python):
# build/triage_VERSION_ARCH.deb, the library's libtriage0 and libtriage-dev,
# python3-triage_VERSION_all.deb and any other debian/control names, after
# installing the tools it needs as deps does, and runs lintian on each .deb
# the .changes file lists (and on that file). The packages' own build is in
# build/debian. Pass DEB_BUILD_OPTIONS=nocheck to skip the tests.
# dh-python and the rest: python3-triage, built from client/python by pybuild.
DEB_TOOLS := debhelper dpkg-dev fakeroot lintian systemd dh-python \
	python3-all python3-setuptools pybuild-plugin-pyproject
VERSION := $(shell sed -n 's/^\#define TRIAGE_VERSION "\(.*\)"/\1/p' lib/version.h)
# Asked only when a recipe names it, so that make shows the real file names.
DEB_ARCH = $(shell dpkg --print-architecture)
DEB_BASE = $(BUILD)/triage_$(VERSION)_$(DEB_ARCH)
deb:
	@$(MAKE) --no-print-directory deps DEBIAN_DEPS="$(DEBIAN_DEPS) $(DEB_TOOLS)"
	@v=$$(dpkg-parsechangelog -S Version); [ "$$v" = "$(VERSION)" ] || \
		{ echo "deb: debian/changelog is at $$v, lib/version.h at $(VERSION):" \
			"add a changelog entry (dch -v $(VERSION))" >&2; exit 1; }
	@mkdir -p $(BUILD)
	TRIAGE_DEB_DESTDIR=$(CURDIR)/$(BUILD) dpkg-buildpackage -us -uc -b \
		--buildinfo-option=-u$(BUILD) --changes-option=-u$(BUILD) \
		--buildinfo-file=$(DEB_BASE).buildinfo \
		--changes-file=$(DEB_BASE).changes
	lintian $(DEB_BASE).changes

# systemd-analyze verify on the units as installed, with ExecStart= on the
# triaged of build/ and Documentation= on the man pages of man/.
VERIFY := $(BUILD)/verify-units
.PHONY: verify-units
verify-units: all
	rm -rf $(VERIFY) && mkdir -p $(VERIFY)/man/man1 $(VERIFY)/man/man5 \
		$(VERIFY)/man/man7 $(VERIFY)/man/man8
	sed 's|@sbindir@|$(CURDIR)/$(BUILD)/bin|g' systemd/triage.service > $(VERIFY)/triage.service
	cp systemd/triage.socket $(VERIFY)/
	cp man/triage.1 $(VERIFY)/man/man1/ && cp man/triage.conf.5 $(VERIFY)/man/man5/ && \
		cp man/triage-protocol.7 $(VERIFY)/man/man7/ && \
		cp man/triaged.8 $(VERIFY)/man/man8/
	MANPATH=$(CURDIR)/$(VERIFY)/man systemd-analyze verify \
		$(VERIFY)/triage.service $(VERIFY)/triage.socket

# Removes what install put, but /etc/triage/triage.conf, which the admin may
# have changed (remove it by hand), and the directories others share.
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	rmdir $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(DASHDIR) $(DESTDIR)$(dir $(DASHDIR)) \
		$(DESTDIR)$(INCLUDEDIR)/triage 2>/dev/null || true

-include $(patsubst %.c,$(BUILD)/obj/%.d,$(LIB_SRC) $(DAEMON_SRC) daemon/main.c \
	$(CLIENT_SRC) $(UNIT_SRC) $(DTEST_SRC) $(DTEST_COMMON_SRC) $(FUZZ_SRC) \
	$(LOAD_SRC) $(CHAOS_SRC) $(TSUPPORT_SRC))
-include $(SOLIB_OBJ:%.o=%.d)

# ---- bench ----
# `make bench` (under 10 minutes) and `make bench-quick` (under 2) run every
# benchmark through bench/run.sh, which ends with one summary table. Each
# bench/bench-NAME.c without a header of its own is a program,
# build/bin/bench-NAME, linked with the shared bench/*.c that have one, the
# support library of tests/support/ and libcommon.a; each bench/ref-NAME.c is
# a reference program on its own, build/bin/ref-NAME, linked with libc only
# (the floors triage is measured against). BENCH_TOOLS are the alternatives
# it compares with.
# python3-rq and redis-server: bench/bench-python.py's reference, rq's
# Queue.enqueue into a local Redis.
BENCH_TOOLS := task-spooler parallel beanstalkd python3-rq redis-server
BENCH_SHARED_SRC := $(patsubst %.h,%.c,$(wildcard bench/*.h))
BENCH_PROG_SRC := $(filter-out $(BENCH_SHARED_SRC),$(wildcard bench/bench-*.c))
BENCH_REF_SRC := $(wildcard bench/ref-*.c)
BENCH_SHARED_OBJ := $(BENCH_SHARED_SRC:%.c=$(BUILD)/obj/%.o)
BENCH_PROGS := $(BENCH_PROG_SRC:bench/%.c=$(BUILD)/bin/%)
BENCH_REFS := $(BENCH_REF_SRC:bench/%.c=$(BUILD)/bin/%)
BENCH_SRC := $(BENCH_SHARED_SRC) $(BENCH_PROG_SRC) $(BENCH_REF_SRC)
BENCH_ARGS ?=
.PHONY: bench bench-quick bench-build
bench-build: $(BENCH_PROGS) $(BENCH_REFS) $(BINS)
	@$(MAKE) --no-print-directory deps DEBIAN_DEPS="$(DEBIAN_DEPS) $(BENCH_TOOLS)"

bench: bench-build
	bench/run.sh $(BENCH_ARGS)

bench-quick: bench-build
	bench/run.sh --quick $(BENCH_ARGS)

$(BENCH_PROGS): $(BUILD)/bin/%: $(BUILD)/obj/bench/%.o $(BENCH_SHARED_OBJ) $(TSUPPORT) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) $(SYS_LIBS)

$(BENCH_REFS): $(BUILD)/bin/%: $(BUILD)/obj/bench/%.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

-include $(BENCH_SRC:%.c=$(BUILD)/obj/%.d)

# ---- fuzz ----
# libFuzzer targets, tests/fuzz/<target>.c with seeds in
# tests/fuzz/corpus/<target>/, built with Debian's clang 14 into build/fuzz/
# over the code of lib/ and daemon/ compiled again with its coverage
# instrumentation. `make fuzz` runs each for FUZZ_SECONDS from a copy of its
# seeds, FUZZ_JOBS at a time (tests/fuzz/run.sh). `make test` replays the
# seeds and tests/fuzz/regress/<target>/ (crashes found, fixed) through each
# target built with $(CC) and tests/fuzz/replay.c instead of libFuzzer.
FUZZ_TOOLS := clang-14 libclang-rt-14-dev
FUZZ_CC := clang-14
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 2
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
FUZZ_CFLAGS = -std=c17 $(WARNINGS) -O1 -g $(FUZZ_SAN) -MMD -MP
FUZZ_CODE_OBJ := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(LIB_SRC) $(DAEMON_SRC))
FUZZ_BIN := $(FUZZ_TARGETS:%=$(BUILD)/fuzz/%)
.PHONY: fuzz fuzz-build

fuzz-build:
	@$(MAKE) --no-print-directory deps DEBIAN_DEPS="$(DEBIAN_DEPS) $(FUZZ_TOOLS)"
	@$(MAKE) --no-print-directory $(FUZZ_BIN)

fuzz: fuzz-build
	@bash tests/fuzz/run.sh $(BUILD) $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_TARGETS)

# The code under test: edge coverage for libFuzzer, no fuzzer main().
$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(ALL_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(BUILD)/fuzz/obj/tests/fuzz/%.o: tests/fuzz/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(ALL_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -c -o $@ $<

$(FUZZ_BIN): $(BUILD)/fuzz/%: $(BUILD)/fuzz/obj/tests/fuzz/%.o $(FUZZ_CODE_OBJ)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS) $(SYS_LIBS)

# The replays: each target with replay.c's main(), which knows its name.
# A static pattern: a generic one would also "make" the .d files below.
REPLAY_OBJ := $(FUZZ_TARGETS:%=$(BUILD)/obj/tests/fuzz/replay-%.o)
$(REPLAY_OBJ): $(BUILD)/obj/tests/fuzz/replay-%.o: tests/fuzz/replay.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -DFUZZ_TARGET='"$*"' -c -o $@ $<

$(REPLAY_BIN): $(BUILD)/tests/fuzz-%: $(BUILD)/obj/tests/fuzz/%.o $(BUILD)/obj/tests/fuzz/replay-%.o $(DAEMON_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(DAEMON_LIB) $(COMMON_LIB) $(PKG_LIBS) $(SYS_LIBS)

-include $(patsubst %.c,$(BUILD)/fuzz/obj/%.d,$(LIB_SRC) $(DAEMON_SRC) $(FUZZ_SRC))
-include $(REPLAY_OBJ:%.o=%.d)
