# Makefile - builds libtriage.a, triaged, triage and the tests into build/.
# `make test` is the only command a fresh Debian 12 machine needs: see deps.

# The Debian 12 packages the build needs; `make deps` installs what is missing.
DEBIAN_DEPS := gcc make pkg-config libevent-dev libjansson-dev libsqlite3-dev \
	libsystemd-dev libinih-dev libcmocka-dev
# The pkg-config names of the libraries we link against.
PKGS := libevent jansson sqlite3 libsystemd inih
TEST_PKGS := cmocka

# From glibc: b64_ntop (libresolv), the maths of timeouts, threads in tests.
SYS_LIBS := -lresolv -lm -lpthread

BUILD ?= build
CC ?= cc
CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wcast-qual -Wwrite-strings -Wformat=2 -Wundef \
	-Wvla -Wnull-dereference -Werror
SANITIZE ?=
ALL_CPPFLAGS = -D_GNU_SOURCE -Ilib -Idaemon $(PKG_CFLAGS) $(CPPFLAGS)
ALL_CFLAGS = -std=c17 $(WARNINGS) $(CFLAGS) $(SANITIZE) -MMD -MP
ALL_LDFLAGS = $(SANITIZE) $(LDFLAGS)

LIB_SRC := $(wildcard lib/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
LIB := $(BUILD)/lib/libtriage.a
# The daemon's modules also go into an archive, so that tests can drive its
# parts (the worker pool, say) without its main().
DAEMON_SRC := $(filter-out daemon/main.c,$(wildcard daemon/*.c))
DAEMON_OBJ := $(DAEMON_SRC:%.c=$(BUILD)/obj/%.o)
DAEMON_LIB := $(BUILD)/lib/libtriaged.a
CLIENT_SRC := $(wildcard client/*.c)
CLIENT_OBJ := $(CLIENT_SRC:%.c=$(BUILD)/obj/%.o)
BINS := $(if $(wildcard daemon/main.c),$(BUILD)/bin/triaged) \
	$(if $(CLIENT_SRC),$(BUILD)/bin/triage)

UNIT_SRC := $(wildcard tests/unit/test-*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
# Tests of the daemon's parts, and of the whole daemon over its socket.
DTEST_SRC := $(wildcard tests/daemon/test-*.c)
DTEST_BIN := $(DTEST_SRC:tests/daemon/%.c=$(BUILD)/tests/%)
TESTS := $(UNIT_BIN) $(DTEST_BIN)

.PHONY: all deps test check asan run clean
.DEFAULT_GOAL := all

all: $(LIB) $(BINS)

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
		$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

# The compiler and linker flags pkg-config gives, asked once and cached. The
# rule runs deps first, so the libraries are there before pkg-config is asked;
# make then restarts with the flags in place.
ifeq ($(filter clean deps,$(MAKECMDGOALS)),)
include $(BUILD)/flags.mk
endif
$(BUILD)/flags.mk: Makefile
	@$(MAKE) --no-print-directory deps
	@mkdir -p $(@D)
	@printf 'PKG_CFLAGS := %s\nPKG_LIBS := %s\nTEST_LIBS := %s\n' \
		"$$(pkg-config --cflags $(PKGS) $(TEST_PKGS))" \
		"$$(pkg-config --libs $(PKGS))" \
		"$$(pkg-config --libs $(TEST_PKGS))" > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(DAEMON_LIB): $(DAEMON_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/bin/triaged: $(BUILD)/obj/daemon/main.o $(DAEMON_LIB) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) $(SYS_LIBS)

$(BUILD)/bin/triage: $(CLIENT_OBJ) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) $(SYS_LIBS)

$(UNIT_BIN): $(BUILD)/tests/test-%: $(BUILD)/obj/tests/unit/test-%.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(PKG_LIBS) $(TEST_LIBS) $(SYS_LIBS)

# Daemon tests run the real binaries, so they are built first. Every other
# file of tests/daemon/ (the harness, the fixtures) goes into each of them.
DTEST_COMMON_SRC := $(filter-out $(DTEST_SRC),$(wildcard tests/daemon/*.c))
DTEST_COMMON_OBJ := $(DTEST_COMMON_SRC:%.c=$(BUILD)/obj/%.o)
$(DTEST_BIN): $(BUILD)/tests/test-%: $(BUILD)/obj/tests/daemon/test-%.o $(DTEST_COMMON_OBJ) $(DAEMON_LIB) $(LIB) $(BINS)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(DTEST_COMMON_OBJ) $(DAEMON_LIB) $(LIB) $(PKG_LIBS) $(TEST_LIBS) $(SYS_LIBS)

# Runs every test binary and script and ends with one "N passed, N failed"
# line over all of them.
test: $(TESTS)
	@sh tests/run-tests.sh $(TESTS) tests/check-includes.sh

check: test

# triage under a real systemd: PID 1 of namespaces of its own, on an overlay
# of the root, so the host's files are never written (tests/systemd/run.sh).
# Needs root; skips, passing, where namespaces are not permitted. Not part
# of `make test`. WATCHDOG_SECS=N shortens the watchdog check (default 60).
.PHONY: test-systemd
test-systemd: $(BINS)
	@bash tests/systemd/run.sh

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

# The daemon in the foreground on config/dev.conf, socket and state under
# ./run/, after the commands to try from a second terminal.
RUN_SOCKET := $(CURDIR)/run/triage.sock
run: all
	@mkdir -p run
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
		''
	@exec $(BUILD)/bin/triaged --config config/dev.conf --socket $(RUN_SOCKET)

clean:
	rm -rf $(BUILD)

-include $(patsubst %.c,$(BUILD)/obj/%.d,$(LIB_SRC) $(DAEMON_SRC) daemon/main.c \
	$(CLIENT_SRC) $(UNIT_SRC) $(DTEST_SRC) $(DTEST_COMMON_SRC))

# The submit benchmark: bench/*.c make build/bin/bench-submit, which starts
# the triaged beside it on temp dirs. Options through BENCH_ARGS, e.g.
# `make bench BENCH_ARGS=--quick` (see bench-submit --help).
BENCH_SRC := $(wildcard bench/*.c)
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/obj/%.o)
BENCH_ARGS ?=
.PHONY: bench
bench: $(BUILD)/bin/bench-submit $(BUILD)/bin/triaged
	$(BUILD)/bin/bench-submit $(BENCH_ARGS)

$(BUILD)/bin/bench-submit: $(BENCH_OBJ) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) $(SYS_LIBS)

-include $(BENCH_SRC:%.c=$(BUILD)/obj/%.d)
