#!/bin/sh
# valgrind-check.sh - the last program of make valgrind: one test, which fails
# naming memcheck's reports (one a process, in TRIAGE_TEST_VGLOGS) that hold
# an error or a definite leak, and prints them.
#
# A report with an error says so in its ERROR SUMMARY (definite leaks count,
# --errors-for-leak-kinds=definite). A process killed by SIGKILL writes no
# summary, so the errors themselves are looked for too.

dir=${TRIAGE_TEST_VGLOGS:?is not set}
errors='ERROR SUMMARY: [1-9]|^==[0-9]+== (Invalid (read|write|free)|Conditional jump|Use of uninitialised|Syscall param|Mismatched free|Source and destination overlap|Argument .* of function|Jump to the invalid|[0-9,]+ bytes in [0-9,]+ blocks are definitely lost)'
bad=
n=0
for f in "$dir"/*.log; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	grep -Eq "$errors" "$f" && bad="$bad $f"
done

echo "[ RUN      ] memcheck reports"
if [ "$n" -eq 0 ]; then
	echo "valgrind-check: no reports in $dir: did anything run under valgrind?"
	echo "[  FAILED  ] 1 test(s)."
	exit 1
fi
if [ -n "$bad" ]; then
	for f in $bad; do
		echo "---- $f ----"
		cat "$f"
	done
	echo "valgrind-check: errors or definite leaks in:$bad"
	echo "[  FAILED  ] 1 test(s)."
	exit 1
fi
echo "valgrind-check: $n reports, no error, no definite leak"
echo "[       OK ] memcheck reports"
echo "[  PASSED  ] 1 test(s)."
