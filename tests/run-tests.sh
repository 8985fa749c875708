#!/bin/sh
# run-tests.sh - runs each test program given, shows its output, and ends with
# one "N passed, N failed" line that totals the tests of every program.
#
# A program is a cmocka binary (its "[  PASSED  ]"/"[  FAILED  ]" summary is
# counted) or a script printing the same summary lines. A program that dies or
# exits non-zero without reporting a failure counts as one failed test, so a
# crash can never pass silently.
#
# Each program has TEST_TIMEOUT seconds (default 300; 0 for no limit). A hung
# one is killed with its whole process group by coreutils timeout (SIGTERM,
# SIGKILL 10 s later) and counts as one failed test: the daemons it started
# sit in process groups of their own, but die with it (PR_SET_PDEATHSIG).
#
# For slow runs (make valgrind): TRIAGE_TEST_SLOW=N multiplies that limit,
# as the harness does its waits (tslow), and TRIAGE_TEST_WRAPPER, a command
# such as "valgrind --log-file=...", runs each program that is not a .sh
# script, with TRIAGE_TEST_LAUNCH set to the program's name for its logs.

limit=${TEST_TIMEOUT:-300}
slow=${TRIAGE_TEST_SLOW:-1}
for v in "TEST_TIMEOUT=$limit" "TRIAGE_TEST_SLOW=$slow"; do
	case ${v#*=} in
	'' | *[!0-9]*)
		echo "run-tests: ${v%%=*} must be a whole number, not '${v#*=}'"
		exit 2
		;;
	esac
done
if [ "$slow" -gt 1 ]; then
	limit=$((limit * slow))
fi

passed=0
failed=0
skipped=0
broken=
pid=
out=

# Ctrl-C or a kill of make reaches this shell, not the test: timeout runs it
# in a process group of its own. So pass the signal on, which timeout
# forwards to the test's group, and stop.
stop() {
	[ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null
	[ -z "$out" ] || rm -f "$out"
	exit "$1"
}
trap 'stop 130' INT
trap 'stop 143' TERM
trap 'stop 129' HUP

for prog in "$@"; do
	out=$(mktemp)
	start=$(date +%s)
	# In the background and waited for, so that the traps above run at
	# once rather than when the test ends.
	wrapper=
	case $prog in
	*.sh) ;;
	*) wrapper=${TRIAGE_TEST_WRAPPER:-} ;;
	esac
	# The wrapper's words are split on blanks, as the harness splits them.
	# shellcheck disable=SC2086
	TRIAGE_TEST_LAUNCH=${prog##*/} timeout -k 10 "$limit" $wrapper "$prog" \
	    >"$out" 2>&1 &
	pid=$!
	wait "$pid"
	rc=$?
	pid=
	elapsed=$(($(date +%s) - start))
	cat "$out"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	rm -f "$out"
	out=
	p=${p:-0} f=${f:-0} s=${s:-0}
	# timeout says 124 after its SIGTERM, 137 when SIGKILL was needed; the
	# clock tells these from a test that exits so itself.
	if [ "$limit" -gt 0 ] && [ "$elapsed" -ge "$limit" ] &&
	    { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; }; then
		echo "run-tests: $prog timed out after $limit s"
		[ "$f" -gt 0 ] || f=1
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "run-tests: $prog exited with status $rc without reporting a failure"
		f=1
	fi
	[ "$f" -eq 0 ] || broken="$broken $prog"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
done

[ -z "$broken" ] || echo "failing:$broken"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
