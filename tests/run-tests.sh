#!/bin/sh
# run-tests.sh - runs each test program given, shows its output, and ends with
# one "N passed, N failed" line that totals the tests of every program (after
# a "slowest:" line naming the five programs that took longest).
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
#
# TEST_JOBS=N (default 1) runs N programs at once; their output still comes
# in the order given, each program's whole. A script (*.sh) runs like a
# program, but never under the wrapper; a checking script (*-check.sh) runs
# alone, once everything before it has ended: it checks what they left
# (valgrind's reports).

limit=${TEST_TIMEOUT:-300}
slow=${TRIAGE_TEST_SLOW:-1}
jobs_max=${TEST_JOBS:-1}
for v in "TEST_TIMEOUT=$limit" "TRIAGE_TEST_SLOW=$slow" "TEST_JOBS=$jobs_max"; do
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
[ "$jobs_max" -ge 1 ] || jobs_max=1

# The sum of the numbers read, one a line.
sum_lines() {
	awk '{ n += $1 } END { print n + 0 }'
}

passed=0
failed=0
skipped=0
broken=
# "SECONDS PROGRAM" per line, for the slowest at the end.
took=
# The programs under way, oldest first: "pid|start|output|program " each.
running=
nrunning=0

# Ctrl-C or a kill of make reaches this shell, not the tests: timeout runs
# each in a process group of its own. So pass the signal on, which timeout
# forwards to its test's group, and stop.
stop() {
	for s_entry in $running; do
		kill -TERM "${s_entry%%|*}" 2>/dev/null
		s_entry=${s_entry#*|}
		s_entry=${s_entry#*|}
		rm -f "${s_entry%%|*}"
	done
	exit "$1"
}
trap 'stop 130' INT
trap 'stop 143' TERM
trap 'stop 129' HUP

# Starts program $1 in the background, its output into a file of its own.
# (sh has no locals: the functions' variables are named apart from the
# main loop's.)
launch() {
	l_out=$(mktemp)
	l_wrapper=
	case $1 in
	*.sh) ;;
	*) l_wrapper=${TRIAGE_TEST_WRAPPER:-} ;;
	esac
	# The wrapper's words are split on blanks, as the harness splits them.
	# shellcheck disable=SC2086
	TRIAGE_TEST_LAUNCH=${1##*/} timeout -k 10 "$limit" $l_wrapper "$1" \
	    >"$l_out" 2>&1 &
	running="$running$!|$(date +%s)|$l_out|$1 "
	nrunning=$((nrunning + 1))
}

# Waits for the oldest program under way, shows its output, and counts it.
finish() {
	f_entry=${running%% *}
	running=${running#* }
	nrunning=$((nrunning - 1))
	f_pid=${f_entry%%|*}
	f_entry=${f_entry#*|}
	f_start=${f_entry%%|*}
	f_entry=${f_entry#*|}
	f_out=${f_entry%%|*}
	f_prog=${f_entry#*|}
	wait "$f_pid"
	f_rc=$?
	f_elapsed=$(($(date +%s) - f_start))
	# With others at once, it may have ended well before its turn here:
	# its output's last write is when it ended.
	f_took=$f_elapsed
	if f_end=$(stat -c %Y "$f_out" 2>/dev/null) &&
	    [ "$f_end" -ge "$f_start" ]; then
		f_took=$((f_end - f_start))
	fi
	took="$took$f_took ${f_prog##*/}
"
	cat "$f_out"
	# A program of several groups (cmocka_run_group_tests more than
	# once) prints a summary for each: they add up.
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$f_out" | sum_lines)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$f_out" | sum_lines)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$f_out" | sum_lines)
	rm -f "$f_out"
	p=${p:-0} f=${f:-0} s=${s:-0}
	# timeout says 124 after its SIGTERM, 137 when SIGKILL was needed; the
	# clock tells these from a test that exits so itself.
	if [ "$limit" -gt 0 ] && [ "$f_elapsed" -ge "$limit" ] &&
	    { [ "$f_rc" -eq 124 ] || [ "$f_rc" -eq 137 ]; }; then
		echo "run-tests: $f_prog timed out after $limit s"
		[ "$f" -gt 0 ] || f=1
	elif [ "$f_rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "run-tests: $f_prog exited with status $f_rc without reporting a failure"
		f=1
	fi
	[ "$f" -eq 0 ] || broken="$broken $f_prog"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
}

for prog in "$@"; do
	case $prog in
	*-check.sh)
		while [ "$nrunning" -gt 0 ]; do finish; done
		launch "$prog"
		finish
		;;
	*)
		launch "$prog"
		while [ "$nrunning" -ge "$jobs_max" ]; do finish; done
		;;
	esac
done
while [ "$nrunning" -gt 0 ]; do finish; done

[ -z "$broken" ] || echo "failing:$broken"
printf '%s' "$took" | sort -rn | head -n 5 |
    awk '{ s = s (NR > 1 ? ", " : "") $2 " " $1 " s" } END { if (s != "") print "slowest: " s }'
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
