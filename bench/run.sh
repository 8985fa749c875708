#!/usr/bin/env bash
# run.sh - `make bench`: runs every benchmark in build/bin (each measures triage
# and its references side by side), then prints one table of their summaries.
#
# A benchmark program prints what it measures as it goes, and one line per
# target on stdout, tab-separated:
#   SUMMARY <TAB> benchmark <TAB> measure <TAB> triage <TAB> reference
#           <TAB> target <TAB> verdict (met, MISSED, or - when no target)
# Usage: bench/run.sh [--quick] [name...]   (names: dispatch submit scale
#        scale-res ... python; scale-res is bench-scale --resources, python
#        is bench/bench-python.py run by Debian's python3)
set -uo pipefail
cd "$(dirname "$0")/.."

BIN=${BUILD:-build}/bin
ALL=(dispatch submit scale scale-res latency idle client cluster python)
quick=
names=()
for a in "$@"; do
	case $a in
	--quick) quick=--quick ;;
	-h|--help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "bench/run.sh: unknown option $a" >&2; exit 2 ;;
	*) names+=("$a") ;;
	esac
done
[ ${#names[@]} -gt 0 ] || names=("${ALL[@]}")

summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
start=$(date +%s)

# The host's cost of one job, fork+exec+exit+reap of /bin/true one at a
# time (ref-floor one: posix_spawn and waitpid, the median), so that a slow
# host is told from a slow daemon.
forkexec() {
	local us
	if us=$("$BIN/ref-floor" one 200 /bin/true 2>/dev/null); then
		echo "${us%% *} us (median of 200)"
	else
		echo "unknown (no $BIN/ref-floor)"
	fi
}

machine() {
	local model
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	echo "machine: $(nproc) CPUs (${model:-unknown}), $(uname -srm)," \
		"$(awk 'NR == 1 {printf "%.0f MiB", $2/1024}' /proc/meminfo) RAM," \
		"/tmp on $(stat -f -c %T /tmp), load $(cut -d' ' -f1-3 /proc/loadavg)," \
		"fork+exec of /bin/true $(forkexec)"
}

echo "triage benchmarks${quick:+ (quick)}, $(date -u '+%Y-%m-%d %H:%M UTC')"
machine
failed=0
for n in "${names[@]}"; do
	prog=$BIN/bench-$n
	args=()
	# scale-res: the scale benchmark with jobs that ask for resources.
	if [ "$n" = scale-res ]; then
		prog=$BIN/bench-scale
		args=(--resources)
	fi
	# python: enqueueing from Python (the triage package, raw JSON-RPC,
	# rq), a script rather than a program of build/bin.
	if [ "$n" = python ]; then
		prog=/usr/bin/python3
		args=(bench/bench-python.py --bin "$BIN")
	fi
	echo
	echo "=== $n"
	if [ ! -x "$prog" ]; then
		printf 'SUMMARY\t%s\t(not built)\t-\t-\t-\tMISSED\n' "$n" >>"$summary"
		failed=1
		continue
	fi
	t0=$(date +%s)
	# The program's own lines go to the terminal as they come; its
	# summary lines are kept for the table.
	"$prog" "${args[@]}" $quick | tee >(grep '^SUMMARY	' >>"$summary") | grep -v '^SUMMARY	'
	rc=${PIPESTATUS[0]}
	echo "($n: $(( $(date +%s) - t0 )) s)"
	if [ "$rc" != 0 ]; then
		printf 'SUMMARY\t%s\t(failed: exit %s)\t-\t-\t-\tMISSED\n' "$n" "$rc" >>"$summary"
		failed=1
	fi
done
# tee's process substitution may still be writing
wait

echo
echo "=== summary${quick:+ (quick)}: $(( $(date +%s) - start )) s"
machine
awk -F'\t' '
	{ for (i = 2; i <= 7; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } }
	END {
		split("benchmark measure triage reference target verdict", h, " ")
		for (i = 2; i <= 7; i++) if (length(h[i-1]) > w[i]) w[i] = length(h[i-1])
		for (i = 2; i <= 7; i++) printf "%-*s%s", w[i], h[i-1], i < 7 ? "  " : "\n"
		for (r = 1; r <= NR; r++)
			for (i = 2; i <= 7; i++)
				printf "%-*s%s", w[i], c[r, i], i < 7 ? "  " : "\n"
	}' "$summary"
missed=$(awk -F'\t' '$7 == "MISSED"' "$summary" | wc -l)
met=$(awk -F'\t' '$7 == "met"' "$summary" | wc -l)
echo "$met targets met, $missed missed"
exit $failed
