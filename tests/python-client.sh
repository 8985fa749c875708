#!/bin/sh
# python-client.sh - the Python client's unittest suite (client/python/tests)
# against the build's triaged, its counts in cmocka's summary lines for
# run-tests.sh: passed, failed (failures and errors), skipped.
#
# BUILD names the build directory (default build); Debian's python3 runs it,
# the one the python3-triage package is for.

cd "$(dirname "$0")/.." || exit 2
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT
trap 'exit 2' INT TERM HUP

TRIAGED=${BUILD:-build}/bin/triaged
case $TRIAGED in
/*) ;;
*) TRIAGED=$PWD/$TRIAGED ;;
esac
export TRIAGED
/usr/bin/python3 -m unittest discover -s client/python/tests -v >"$out" 2>&1
rc=$?
cat "$out"

# unittest's last lines: "Ran N tests in ...", then "OK" or
# "FAILED (failures=F, errors=E, skipped=S)", "OK (skipped=S)".
ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$out" | tail -n 1)
failures=$(sed -n 's/^FAILED (.*failures=\([0-9]*\).*/\1/p' "$out" | tail -n 1)
errors=$(sed -n 's/^FAILED (.*errors=\([0-9]*\).*/\1/p' "$out" | tail -n 1)
skipped=$(sed -n 's/^\(OK\|FAILED\) (.*skipped=\([0-9]*\).*/\2/p' "$out" |
    tail -n 1)
failed=$(( ${failures:-0} + ${errors:-0} ))
if [ -z "$ran" ]; then
	# It never got as far as running tests (an import error): one failure.
	echo "[==========] 0 test(s) run."
	echo "[  FAILED  ] 1 test(s)."
	exit 1
fi
passed=$(( ran - failed - ${skipped:-0} ))
echo "[==========] $ran test(s) run."
echo "[  PASSED  ] $passed test(s)."
[ "${skipped:-0}" -gt 0 ] && echo "[  SKIPPED ] $skipped test(s)."
if [ "$failed" -gt 0 ] || [ "$rc" -ne 0 ]; then
	[ "$failed" -gt 0 ] || failed=1
	echo "[  FAILED  ] $failed test(s)."
	exit 1
fi
exit 0
