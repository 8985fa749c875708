#!/bin/sh
# lib-install.sh - libtriage as a user of it gets it: `make install` into a
# staging DESTDIR, tests/lib/example.c built there with only the staged
# header and library (`pkg-config --cflags --libs triage`), run against a
# real triaged of the build; then `make uninstall` takes it all away.
#
# Each step is one test in cmocka's summary lines, for run-tests.sh; a step
# that fails ends the run, as those after it need it. BUILD names the build
# directory (default build); CC and SANITIZE (the Makefile's, under `make
# asan`) build the example: a library built with ASan needs its runtime
# loaded first, that is by a program built with ASan too. The daemon runs in
# a session of its own and is stopped on every way out; its log is printed
# only on failure.

cd "$(dirname "$0")/.." || exit 2
TOP=$PWD
BUILD=${BUILD:-build}
CC=${CC:-cc}
SANITIZE=${SANITIZE:-}
VERSION=$(sed -n 's/^#define TRIAGE_VERSION "\(.*\)"/\1/p' lib/version.h)
# How long the daemon may take to answer, in seconds (the harness's
# TRIAGE_TEST_SLOW stretches it, as it does its own waits).
READY_S=$((20 * ${TRIAGE_TEST_SLOW:-1}))

tmp=$(mktemp -d /tmp/triage-lib-install.XXXXXX) || exit 2
STAGE=$tmp/stage
LIBDIR=/usr/lib
daemon=
show_log=

cleanup() {
	if [ -n "$daemon" ] && kill -0 "$daemon" 2>/dev/null; then
		kill -TERM "$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
	fi
	if [ -n "$show_log" ] && [ -f "$tmp/daemon.log" ]; then
		echo "---- triaged's log ----"
		cat "$tmp/daemon.log"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP

# case_run, case_summary.
. tests/support/cases.sh

# step NAME COMMAND...: one test case; a failed one ends the run, with the
# daemon's log.
step() {
	case_run "$@" && return 0
	show_log=1
	case_summary
}

# make, without the jobserver of a make that runs this script (its fds are
# not ours), the build's flags coming from the environment as they came.
submake() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${MAKE:-make} -s \
	    --no-print-directory BUILD="$BUILD" PREFIX=/usr LIBDIR=$LIBDIR \
	    DESTDIR="$STAGE" "$@" >"$tmp/make.log" 2>&1 && return 0
	cat "$tmp/make.log"
	echo "  make $* failed"
	return 1
}

installs_the_library() {
	submake install || return 1
	rc=0
	for f in $LIBDIR/libtriage.so.0.0.0 $LIBDIR/libtriage.so.0 \
	    $LIBDIR/libtriage.so /usr/include/triage/client.h \
	    $LIBDIR/pkgconfig/triage.pc /usr/share/man/man3/libtriage.3 \
	    /usr/share/man/man3/triage_client_call.3; do
		if [ ! -e "$STAGE$f" ]; then
			echo "  install put no $f"
			rc=1
		fi
	done
	for l in libtriage.so.0 libtriage.so; do
		t=$(readlink "$STAGE$LIBDIR/$l")
		if [ "$t" != libtriage.so.0.0.0 ]; then
			echo "  $LIBDIR/$l links to '$t', not libtriage.so.0.0.0"
			rc=1
		fi
	done
	# An installed program finds the library where ld.so looks: a RUNPATH
	# would be the build tree's, and Debian refuses one.
	if readelf -d "$STAGE/usr/bin/triage" | grep -Eq '\((RPATH|RUNPATH)\)'
	then
		echo "  the installed triage has an RPATH or a RUNPATH"
		rc=1
	fi
	return $rc
}

# The manual's EXAMPLE is the example program, word for word: its .EX block
# after the tab stops, with groff's escapes (\e, \-) read back.
manual_shows_the_example() {
	sed -n '/^\.SH EXAMPLE/,/^\.SH/p' man/libtriage.3 |
	    sed -n '/^\.ta /,/^\.EE/p' | sed '1,2d;$d' |
	    sed -e 's/\\-/-/g' -e 's/\\e/\\/g' >"$tmp/man-example.c"
	diff -u tests/lib/example.c "$tmp/man-example.c" && return 0
	echo "  man/libtriage.3's EXAMPLE and tests/lib/example.c differ"
	return 1
}

# pkg-config as it would be on a system where the staged tree is /: the
# sysroot puts the staged directories in front of -I and -L.
pc() {
	PKG_CONFIG_SYSROOT_DIR=$STAGE PKG_CONFIG_PATH=$STAGE$LIBDIR/pkgconfig \
	    pkg-config "$@"
}

pkg_config_knows_triage() {
	v=$(pc --modversion triage) || return 1
	if [ "$v" != "$VERSION" ]; then
		echo "  pkg-config says version '$v', lib/version.h $VERSION"
		return 1
	fi
	FLAGS=$(pc --cflags --libs triage) || return 1
	echo "  pkg-config --cflags --libs triage: $FLAGS"
	case " $FLAGS " in
	*" -I$STAGE/usr/include "*" -ltriage "*) return 0 ;;
	esac
	echo "  no -I of the staged headers or no -ltriage in it"
	return 1
}

# Built apart from the tree, so that only what was installed can be found:
# no -Ilib, and the source's own directory holds nothing else.
builds_the_example() {
	mkdir "$tmp/src" && cp tests/lib/example.c "$tmp/src/" || return 1
	# The flags are words to split.
	# shellcheck disable=SC2086
	(cd "$tmp/src" && "$CC" -std=c17 -Wall -Wextra -Werror $SANITIZE \
	    -o "$tmp/example" example.c $FLAGS) || return 1
	if ! readelf -d "$tmp/example" | grep -q 'NEEDED.*\[libtriage\.so\.0\]'
	then
		echo "  the example does not need libtriage.so.0"
		return 1
	fi
}

starts_a_daemon() {
	printf '[daemon]\nsocket = %s\nstate_dir = %s\nslots = 1\n' \
	    "$tmp/sock" "$tmp/state" >"$tmp/triage.conf"
	# setsid: a session of its own, as the harness's daemons have, so
	# that a signal for this script's group is not the daemon's.
	env -u TRIAGE_SOCKET setsid "$TOP/$BUILD/bin/triaged" \
	    --config "$tmp/triage.conf" </dev/null >"$tmp/daemon.log" 2>&1 &
	daemon=$!
	# Ready when it answers: polled against a deadline, never a sleep.
	deadline=$(($(date +%s) + READY_S))
	until "$BUILD/bin/triage" --socket "$tmp/sock" stats >/dev/null 2>&1
	do
		if ! kill -0 "$daemon" 2>/dev/null; then
			wait "$daemon"
			echo "  triaged exited with status $? before it answered"
			return 1
		fi
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "  triaged did not answer within $READY_S s"
			return 1
		fi
		sleep 0.05
	done
}

# example [ARG]: runs it on the staged library alone, its stdout into
# $tmp/out, its stderr into $tmp/err; its exit status.
example() {
	LD_LIBRARY_PATH=$STAGE$LIBDIR "$tmp/example" "$@" >"$tmp/out" \
	    2>"$tmp/err"
}

# What the example prints for a job of echo hello.
says_hello() {
	sed -n 1p "$tmp/out" | grep -qx "libtriage $VERSION" &&
	    sed -n 2p "$tmp/out" |
	    grep -Eqx 'job [0-9]+ succeeded, exit code 0' &&
	    sed -n '3,$p' "$tmp/out" | grep -qx 'stdout: hello' &&
	    [ "$(wc -l <"$tmp/out")" -eq 3 ] && return 0
	echo "  the example printed:"
	sed 's/^/    /' "$tmp/out" "$tmp/err"
	return 1
}

runs_the_example_against_the_daemon() {
	if ! LD_LIBRARY_PATH=$STAGE$LIBDIR ldd "$tmp/example" |
	    grep -q "libtriage\.so\.0 => $STAGE$LIBDIR/libtriage\.so\.0 "; then
		echo "  the example would not load the staged library:"
		LD_LIBRARY_PATH=$STAGE$LIBDIR ldd "$tmp/example"
		return 1
	fi
	if ! example "$tmp/sock"; then
		echo "  the example failed: $(cat "$tmp/err")"
		return 1
	fi
	says_hello || return 1
	# The socket from $TRIAGE_SOCKET, as triage_client_socket_path()
	# reads it when given no path.
	if ! TRIAGE_SOCKET=$tmp/sock example; then
		echo "  the example on \$TRIAGE_SOCKET failed: $(cat "$tmp/err")"
		return 1
	fi
	says_hello
}

says_why_it_cannot_connect() {
	if example "$tmp/none.sock"; then
		echo "  the example succeeded without a daemon"
		return 1
	fi
	want="example: cannot connect to $tmp/none.sock: No such file or directory (is triaged running?)"
	[ "$(cat "$tmp/err")" = "$want" ] && return 0
	echo "  it said: $(cat "$tmp/err")"
	echo "  not:     $want"
	return 1
}

# SIGTERM; a daemon that stops so exits with 0 (one that ASan stopped
# would not).
stops_the_daemon() {
	kill -TERM "$daemon" || return 1
	wait "$daemon"
	rc=$?
	daemon=
	if [ "$rc" -ne 0 ]; then
		echo "  triaged exited with status $rc"
		return 1
	fi
}

# Everything install put goes, but the config it leaves by design.
uninstalls_everything() {
	submake uninstall || return 1
	(cd "$STAGE" && find . ! -type d) | sort >"$tmp/left"
	if [ "$(cat "$tmp/left")" = ./etc/triage/triage.conf ]; then
		return 0
	fi
	echo "  make uninstall left (INSTALLED lacks them):"
	grep -vx ./etc/triage/triage.conf "$tmp/left" | sed 's/^/    /'
	return 1
}

step installs_the_library installs_the_library
step manual_shows_the_example manual_shows_the_example
step pkg_config_knows_triage pkg_config_knows_triage
step builds_the_example builds_the_example
step starts_a_daemon starts_a_daemon
step runs_the_example_against_the_daemon runs_the_example_against_the_daemon
step says_why_it_cannot_connect says_why_it_cannot_connect
step stops_the_daemon stops_the_daemon
step uninstalls_everything uninstalls_everything
case_summary
