#!/bin/sh
# run-tests.sh - runs each test program given, shows its output, and ends with
# one "N passed, N failed" line that totals the tests of every program.
#
# A program is a cmocka binary (its "[  PASSED  ]"/"[  FAILED  ]" summary is
# counted) or a script printing the same summary lines. A program that dies or
# exits non-zero without reporting a failure counts as one failed test, so a
# crash can never pass silently.

passed=0
failed=0
skipped=0
broken=

for prog in "$@"; do
	out=$(mktemp)
	"$prog" >"$out" 2>&1
	rc=$?
	cat "$out"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	rm -f "$out"
	p=${p:-0} f=${f:-0} s=${s:-0}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
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
