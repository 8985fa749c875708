# cases.sh - cmocka's lines for a test script, which sources it: case_run
# runs one test case, case_summary prints the totals run-tests.sh counts.

cases_run=0
cases_passed=0
cases_failed=0

# case_run NAME COMMAND...: runs the command as one test case; the command
# says what is wrong when it fails. Returns the command's status.
case_run() {
	c_name=$1
	shift
	cases_run=$((cases_run + 1))
	echo "[ RUN      ] $c_name"
	if "$@"; then
		cases_passed=$((cases_passed + 1))
		echo "[       OK ] $c_name"
		return 0
	fi
	cases_failed=$((cases_failed + 1))
	echo "[  FAILED  ] $c_name"
	return 1
}

# The totals, then exits: 1 if a case failed, else 0.
case_summary() {
	echo "[==========] $cases_run test(s) run."
	echo "[  PASSED  ] $cases_passed test(s)."
	if [ "$cases_failed" -gt 0 ]; then
		echo "[  FAILED  ] $cases_failed test(s)."
		exit 1
	fi
	exit 0
}
