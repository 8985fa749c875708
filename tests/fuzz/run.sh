#!/usr/bin/env bash
# run.sh - `make fuzz`: runs each libFuzzer target for SECONDS from a copy
# of its seed corpus, JOBS at a time, and sums up what each did.
#
# Usage: run.sh BUILD SECONDS JOBS TARGET... (the binaries are BUILD/fuzz/T).
# Generated inputs stay in a temporary directory, never in the tree; a crash
# is kept under BUILD/fuzz/crashes/ and its path printed. Fails if any target
# crashed or did not run to its end.

build=$1 seconds=$2 jobs=$3
shift 3
# In memory where there is a tmpfs: the targets write their files (a
# config, a database) under $TMPDIR, here.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	work=$(mktemp -d -p /dev/shm triage-fuzz.XXXXXX) || exit 2
else
	work=$(mktemp -d) || exit 2
fi
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$build/fuzz/crashes" || exit 2

# One target: its log in $work/T.log, its exit status in $work/T.rc.
one() {
	local t=$1
	mkdir -p "$work/$t.corpus" "$work/$t.tmp"
	cp tests/fuzz/corpus/"$t"/* "$work/$t.corpus/"
	TMPDIR=$work/$t.tmp "$build/fuzz/$t" -max_total_time="$seconds" -print_final_stats=1 \
	    -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix="$build/fuzz/crashes/$t-" \
	    "$work/$t.corpus" >"$work/$t.log" 2>&1
	echo $? >"$work/$t.rc"
}

echo "fuzz: $# targets, $seconds s each, $jobs at a time"
for t in "$@"; do
	while [ "$(jobs -pr | wc -l)" -ge "$jobs" ]; do
		wait -n
	done
	echo "fuzz: $t started"
	one "$t" &
done
wait

failed=0 total=0
for t in "$@"; do
	rc=$(cat "$work/$t.rc" 2>/dev/null || echo 1)
	# libFuzzer's final stats; "Done N runs" when it ends normally.
	execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' \
	    "$work/$t.log" | tail -n 1)
	[ -n "$execs" ] || execs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' \
	    "$work/$t.log" | tail -n 1)
	execs=${execs:-0}
	total=$((total + execs))
	if [ "$rc" -eq 0 ]; then
		echo "fuzz: $t: $execs executions, no crash"
	else
		failed=$((failed + 1))
		echo "fuzz: $t: FAILED (exit $rc) after $execs executions"
		sed -n '/^==[0-9]*==ERROR\|fuzz invariant broken\|^SUMMARY/p' \
		    "$work/$t.log" | head -n 5
		crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' \
		    "$work/$t.log" | tail -n 1)
		echo "fuzz: $t: crash input: ${crash:-none written; log follows}"
		[ -n "$crash" ] || tail -n 30 "$work/$t.log"
	fi
done
echo "fuzz: $# targets, $total executions, $failed failed"
[ "$failed" -eq 0 ]
