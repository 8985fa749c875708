#!/bin/bash
# checks.sh OUT INSTALL - the guest side of `make test-vm`: run by systemd
# (PID 1 of the VM that tests/vm/run.sh boots) as triage-vm-checks.service.
# Installs triage from INSTALL (a `make install DESTDIR=` tree, the shipped
# triage.service in it), starts the service with a config of its own, and
# checks what cgroup v2 under systemd gives triage (issue 24): the daemon in
# a leaf of the unit's delegated cgroup, each job in a cgroup of its own in
# triage-jobs.scope, nothing of a job outliving it, running jobs taken over
# across systemctl restart and systemctl kill -s KILL (issue 26), freeze,
# the OOM killer's order, its memory limit, pids_max, cpu_weight and
# peak_memory.
#
# Results go to OUT/results (the host's build/vm/out over 9p), one line
# each: "ok - name [time]", "not ok - name: why [time]", "skip - ..." and
# notes "# ..."; the time is how long the check had taken. OUT/stage gets
# "checks UPTIME", "check NAME" as each begins, and "done" at the end, so
# that the host can tell which step hung. Every wait has a deadline.
set -u

OUT=$1
INST=$2
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export TRIAGE_SOCKET=/run/triage/triage.sock TRIAGE_RECONNECT=30 LC_ALL=C
echo "checks $(cut -d' ' -f1 /proc/uptime)" >> "$OUT/stage"
cd /

MiB=$((1 << 20))
passed=0 failed=0 skipped=0
CHECK_T0=0
ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
took() { local d=$(($(ms) - CHECK_T0)); printf '[%d.%01ds]' $((d / 1000)) $((d % 1000 / 100)); }
say() { printf '%s\n' "$*" >> "$OUT/results"; printf '%s\n' "$*"; }
ok() { passed=$((passed + 1)); say "ok - $1 $(took)"; }
notok() { failed=$((failed + 1)); say "not ok - $1: $2 $(took)"; }
skip() { skipped=$((skipped + 1)); say "skip - $1: $2"; }
note() { say "# $*"; }
# check NAME FUNC: runs one check, telling the host which one runs.
check() {
	echo "check $1" >> "$OUT/stage"
	CHECK_T0=$(ms)
	"$2"
}
oneline() { tr '\n' ' ' | sed 's/ *$//'; }

# until_ SECS CMD...: polls CMD every 0.1s until it succeeds; fails at the
# deadline.
until_() {
	local end=$(($(ms) + $1 * 1000)); shift
	while ! "$@" >/dev/null 2>&1; do
		[ "$(ms)" -ge "$end" ] && return 1
		sleep 0.1
	done
}

# --- triage ---------------------------------------------------------------
tr_() { timeout 60 triage "$@"; }
job() { tr_ --json status "$1" 2>/dev/null; }
field() { job "$1" | jq -r ".$2"; }
# A job's state, read by bash: jq takes half a second a run under TCG, too
# long for a poll.
state_of() {
	local j
	j=$(job "$1")
	[[ $j =~ \"state\":\ ?\"([a-z_]+)\" ]] && echo "${BASH_REMATCH[1]}"
}
state_is() { [ "$(state_of "$1")" = "$2" ]; }
ended() { case $(state_of "$1") in succeeded|failed|timed_out|canceled|lost) return 0 ;; esac; return 1; }
daemon_up() { tr_ stats >/dev/null 2>&1; }
mainpid() { systemctl show -p MainPID --value triage.service; }
unit_cgroup() { systemctl show -p ControlGroup --value triage.service; }
# Where the workers and the jobs are: a scope of their own, which outlives
# the unit.
scope_cgroup() { systemctl show -p ControlGroup --value triage-jobs.scope; }
# The cgroup of a process, as /proc/PID/cgroup says (the v2 line).
cgroup_of() { sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null; }
cgdir() { echo "/sys/fs/cgroup/${1#/}"; }
# Pids of the processes whose argv, joined by spaces, is the arguments
# (read by bash itself: a fork per process is slow under TCG).
pids_of() {
	local want="$*" p a
	for p in /proc/[0-9]*; do
		mapfile -d '' a < "$p/cmdline" 2>/dev/null || continue
		[ "${a[*]}" = "$want" ] && echo "${p#/proc/}"
	done
}
running_argv() { [ -n "$(pids_of "$@")" ]; }
gone_argv() { [ -z "$(pids_of "$@")" ]; }
# Where a process is, for a failure message.
where() { local p; for p in "$@"; do echo "pid $p in $(cgroup_of "$p")"; done | oneline; }
# left N...: which of the processes "sleep N" still run, and where; kills them.
left() {
	local n p
	for n in "$@"; do
		for p in $(pids_of sleep "$n"); do
			echo "sleep $n (pid $p in $(cgroup_of "$p"))"
			kill -KILL "$p" 2>/dev/null
		done
	done | paste -sd, | sed 's/,/, /g'
}
wait_ended() { until_ "${2:-60}" ended "$1"; }
cancel_wait() { tr_ cancel "$1" >/dev/null 2>&1; wait_ended "$1" 30; }

# submit_mem BYTES PRIO ARGV...: a job with `memory`. Prints its id.
submit_mem() {
	local bytes=$1 prio=$2; shift 2
	tr_ submit --memory "$bytes" -p "$prio" -- "$@"
}

# --- install ----------------------------------------------------------------
# The config: two priorities for most jobs, and one each for the pids and
# cpu limits of protocol 1.2.
CONF='# triage.conf of the VM test (tests/vm/checks.sh)
[daemon]
socket = /run/triage/triage.sock
socket_group = triage
state_dir = /var/lib/triage
slots = 8
kill_grace = 2s
log_level = info

[priority.high]
rank = 0

[priority.normal]
rank = 10

[priority.bomb]
rank = 20
pids_max = 50

[priority.cpulow]
rank = 30
cpu_weight = 100

[priority.cpuhigh]
rank = 31
cpu_weight = 300'

check_install() {
	local out unit top
	# What the host may hold of an earlier triage (its state, its config)
	# is not this test's: gone, from the overlay only.
	rm -rf /var/lib/triage /etc/triage
	# /lib, /bin, /sbin are links into /usr on Debian 12: their files go
	# there (as dpkg would put them).
	for top in "$INST"/*; do
		case ${top##*/} in
		lib|lib64|bin|sbin) out=$(cp -a "$top/." "/usr/${top##*/}/" 2>&1) ;;
		*) out=$(cp -a "$top" / 2>&1) ;;
		esac || { notok "install" "copying $top of the make install tree into / failed: $out"; return 1; }
	done
	# The CLI's libtriage.so.0, in /usr/local/lib: the loader's cache
	# learns of it, as make install's ldconfig does on a real host.
	if ! out=$(ldconfig 2>&1); then
		notok "install" "ldconfig: $out"; return 1
	fi
	unit=$(systemctl cat triage.service 2>/dev/null | sed -n 's/^ExecStart=//p')
	if ! out=$(systemd-sysusers 2>&1) || ! getent group triage >/dev/null; then
		notok "install" "systemd-sysusers made no group triage: $out"; return 1
	fi
	mkdir -p /etc/triage
	printf '%s\n' "$CONF" > /etc/triage/triage.conf
	if ! out=$(triaged --config /etc/triage/triage.conf --check-config 2>&1); then
		notok "install" "triaged --check-config refuses the test's config: $(echo "$out" | oneline)"; return 1
	fi
	systemctl daemon-reload
	if ! out=$(timeout 60 systemctl start triage.service 2>&1); then
		notok "install" "systemctl start triage.service: $out; $(journalctl -u triage.service -n 5 -o cat --no-pager 2>&1 | oneline)"
		return 1
	fi
	if ! until_ 20 daemon_up; then
		notok "install" "triage.service is $(systemctl is-active triage.service) but triage stats does not answer after 20s: $(tr_ stats 2>&1 | oneline)"
		return 1
	fi
	ok "install: make install's tree in /, the shipped triage.service (ExecStart=$unit) active, MainPID $(mainpid)"
	note "triage.service: $(systemctl show -p Delegate -p DelegateControllers -p ProtectControlGroups -p KillMode triage.service | oneline)"
}

check_plain_job() {
	local out rc
	out=$(tr_ submit --wait -- true 2>&1)
	rc=$?
	if [ "$rc" = 0 ]; then
		ok "a plain job: triage submit --wait -- true exits 0"
	else
		notok "a plain job" "triage submit --wait -- true exited $rc: $out"
	fi
}

# What the daemon said at start about cgroups, as notes.
check_cgroup_log() {
	local lines
	lines=$(journalctl -u triage.service -o cat --no-pager 2>/dev/null | grep -i 'cgroup')
	if [ -n "$lines" ]; then
		echo "$lines" | head -5 | while IFS= read -r l; do note "triaged's log: $l"; done
	else
		note "triaged's log says nothing about cgroups: $(journalctl -u triage.service -o cat --no-pager 2>/dev/null | head -3 | oneline)"
	fi
}

check_stats() {
	local s
	s=$(tr_ --json stats 2>&1 | jq -r '.cgroups // "(no cgroups member)"' 2>&1)
	if [ "$s" = v2 ]; then
		ok "triage stats --json says \"cgroups\": \"v2\""
	else
		notok "triage stats: cgroups" "\"cgroups\" is $s, not \"v2\" (the guest has $(cat /sys/fs/cgroup/cgroup.controllers))"
	fi
}

check_daemon_leaf() {
	local pid cg ucg deleg kids
	pid=$(mainpid)
	cg=$(cgroup_of "$pid")
	ucg=$(unit_cgroup)
	deleg=$(systemctl show -p Delegate --value triage.service)
	if [ -z "$cg" ] || [ -z "$ucg" ]; then
		notok "the daemon's cgroup" "cannot tell: MainPID $pid in '$cg', the unit's cgroup '$ucg'"
	elif [ "${cg#"$ucg"/}" = "$cg" ]; then
		notok "the daemon in a leaf beneath the unit's cgroup" "triaged (pid $pid) is in $cg, not in a leaf beneath the unit's cgroup $ucg (Delegate=$deleg)"
	elif kids=$(find "$(cgdir "$cg")" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | oneline) && [ -n "$kids" ]; then
		notok "the daemon in a leaf beneath the unit's cgroup" "its cgroup $cg has children: $kids"
	else
		ok "the daemon in a leaf beneath the unit's cgroup: $cg (Delegate=$deleg)"
	fi
}

# The cgroups beneath CG and how many processes each holds ("daemon 9, ...").
cgtree() {
	local base d p
	base=$(cgdir "$1")
	find "$base" -mindepth 1 -maxdepth 3 -type d 2>/dev/null | head -12 | while IFS= read -r d; do
		mapfile -t p < "$d/cgroup.procs"
		echo "${d#"$base"/} ${#p[@]}"
	done | paste -sd, | sed 's/,/, /g; s/^$/(no cgroup)/'
}

# A job in a cgroup of its own beneath the jobs' scope, holding the job's
# pid; removed at its end.
check_job_cgroup() {
	local id pid cg ucg dcg
	id=$(tr_ submit -p normal -- sleep 3001) || { notok "a job's cgroup" "submit failed"; return; }
	if ! until_ 30 state_is "$id" running; then
		notok "a job's cgroup" "job $id is $(field "$id" state) after 30s, not running"; cancel_wait "$id"; return
	fi
	until_ 10 running_argv sleep 3001
	pid=$(field "$id" pid)
	cg=$(field "$id" cgroup)
	ucg=$(scope_cgroup)
	dcg=$(cgroup_of "$(mainpid)")
	if [ "$cg" = null ] || [ -z "$cg" ]; then
		notok "a job's cgroup" "job $id (pid $pid, $(where "$pid")) has no \"cgroup\" field"
	elif [ "${cg#"$ucg"/}" = "$cg" ] || [ "$cg" = "$dcg" ]; then
		notok "a job's cgroup" "job $id's cgroup $cg is not one of its own beneath triage-jobs.scope's '$ucg' (the daemon's: $dcg)"
	elif ! grep -qx "$pid" "$(cgdir "$cg")/cgroup.procs" 2>/dev/null; then
		notok "a job's cgroup" "$cg's cgroup.procs does not hold the job's pid $pid ($(where "$pid"); it holds: $(oneline < "$(cgdir "$cg")/cgroup.procs" 2>&1))"
	else
		ok "a job in a cgroup of its own beneath triage-jobs.scope, apart from the unit: job $id in $cg, whose cgroup.procs holds its pid $pid"
	fi
	note "beneath $ucg, with job $id running: $(cgtree "$ucg")"
	cancel_wait "$id"
	if [ -n "$cg" ] && [ "$cg" != null ] && [ "${cg#"$ucg"/}" != "$cg" ]; then
		if until_ 10 test ! -d "$(cgdir "$cg")"; then
			ok "the job's cgroup is removed once the job has ended ($(field "$id" state))"
		else
			notok "the job's cgroup removed at its end" "$cg still there 10s after the job ended $(field "$id" state)"
		fi
	fi
}

# systemctl restart with a job running that daemonised a child: the new
# daemon takes the job over as the same attempt, both of its processes as
# they were; a cancel then kills the whole job, its daemonised child too.
# The markers carry the attempt (TRIAGE_ATTEMPT): sleep 30A1 the
# daemonised child, sleep 30A2 the main.
check_restart() {
	local id pid1 out p1 p2
	id=$(tr_ submit -p normal -- sh -c 'm=30$TRIAGE_ATTEMPT; setsid sh -c "sleep ${m}1 &"; exec sleep ${m}2') ||
		{ notok "restart" "submit failed"; return; }
	if ! until_ 30 running_argv sleep 3011 || ! until_ 10 running_argv sleep 3012; then
		notok "systemctl restart adopts" "job $id ($(field "$id" state)) did not start both sleep 3011 and 3012 in 30s"
		cancel_wait "$id"; return
	fi
	pid1=$(mainpid) p1=$(pids_of sleep 3011) p2=$(pids_of sleep 3012)
	note "before the restart: sleep 3011 ($(where "$p1")), sleep 3012 ($(where "$p2"))"
	if ! out=$(timeout 90 systemctl restart triage.service 2>&1); then
		notok "systemctl restart" "failed: $out"; cancel_wait "$id"; return
	fi
	until_ 20 daemon_up
	if [ "$(pids_of sleep 3011)" = "$p1" ] && [ "$(pids_of sleep 3012)" = "$p2" ] &&
	    state_is "$id" running && [ "$(field "$id" attempt)" = 1 ]; then
		ok "systemctl restart with a job running that daemonised a child: the new daemon (MainPID $pid1 -> $(mainpid)) took it over as attempt 1, both processes as they were ($(where "$p2"))"
	else
		notok "systemctl restart adopts" "job $id is $(field "$id" state), attempt $(field "$id" attempt); sleep 3011: '$p1' -> '$(pids_of sleep 3011)', sleep 3012: '$p2' -> '$(pids_of sleep 3012)'; $(journalctl -u triage.service -n 5 -o cat --no-pager 2>&1 | oneline)"
	fi
	cancel_wait "$id"
	if until_ 5 gone_argv sleep 3011 && gone_argv sleep 3012 && gone_argv sleep 3021; then
		ok "cancel of the job taken over kills the whole job, its daemonised child too (job $id $(field "$id" state))"
	else
		notok "cancel kills the whole job" "job $id is $(field "$id" state) but left: $(left 3011 3012 3021 3022)"
	fi
}

# What a job leaves behind when its main process ends is killed.
check_leftovers() {
	local id
	id=$(tr_ submit -p normal -- sh -c 'setsid sh -c "sleep 3031 &"; exit 0') ||
		{ notok "leftovers" "submit failed"; return; }
	if ! wait_ended "$id" 30; then
		notok "what a job leaves is killed" "job $id not ended after 30s: $(field "$id" state)"; cancel_wait "$id"; return
	fi
	if until_ 5 gone_argv sleep 3031; then
		ok "what a job leaves running is killed when it ends (job $id $(field "$id" state), reason: $(field "$id" reason))"
	else
		notok "what a job leaves is killed" "job $id ended $(field "$id" state) but left: $(left 3031)"
	fi
}

# The daemon killed outright with a job running (systemctl kill -s KILL
# triage: SIGKILL to everything in the unit's cgroup, which holds the
# daemon alone): systemd starts it again (Restart=on-failure), and the new
# daemon takes the job over, attempt 1 in jobs/ID.1 of the scope; the job
# ends as it would have, and nothing of it runs twice.
check_crash() {
	local id pid1 pid2 t p
	id=$(tr_ submit -p normal -- sh -c 'setsid sh -c "sleep 306$TRIAGE_ATTEMPT &"; sleep 307$TRIAGE_ATTEMPT; exit 7') ||
		{ notok "crash" "submit failed"; return; }
	if ! until_ 30 running_argv sleep 3071; then
		notok "crash" "job $id did not start"; cancel_wait "$id"; return
	fi
	pid1=$(mainpid) p=$(pids_of sleep 3071)
	systemctl kill -s KILL triage.service
	t=$(ms)
	if ! until_ 60 eval '[ "$(mainpid)" != 0 ] && [ "$(mainpid)" != "$pid1" ] && daemon_up'; then
		notok "crash" "systemd did not start the daemon again within 60s: $(systemctl is-active triage.service); $(journalctl -u triage.service -n 5 -o cat --no-pager 2>&1 | oneline)"
		return
	fi
	pid2=$(mainpid)
	if [ "$(pids_of sleep 3071)" = "$p" ] && running_argv sleep 3061 &&
	    [ "$(cgroup_of "$p")" = "$(scope_cgroup)/jobs/$id.1" ] &&
	    state_is "$id" running && [ "$(field "$id" attempt)" = 1 ]; then
		ok "systemctl kill -s KILL triage: systemd starts it again (MainPID $pid1 -> $pid2, $(($(ms) - t)) ms), which took the job over as attempt 1 in jobs/$id.1 of the scope"
	else
		notok "crash adopts" "job $id is $(field "$id" state), attempt $(field "$id" attempt); sleep 3071 '$p' -> '$(pids_of sleep 3071)' ($(where $(pids_of sleep 3071)))"
	fi
	# Its end is the one it would have had: its main process's, 7.
	kill -KILL $(pids_of sleep 3061) 2>/dev/null
	kill -KILL $(pids_of sleep 3071) 2>/dev/null
	if wait_ended "$id" 30 && [ "$(field "$id" state)" = failed ] &&
	    [ "$(field "$id" exit_code)" = 7 ] && [ "$(field "$id" attempt)" = 1 ] &&
	    gone_argv sleep 3062 && gone_argv sleep 3072; then
		ok "the job taken over ends with its own exit code (7) as attempt 1, and never ran again"
	else
		notok "the end of the job taken over" "job $id is $(field "$id" state), exit code $(field "$id" exit_code), attempt $(field "$id" attempt); left: $(left 3062 3072)"
		cancel_wait "$id"
	fi
}

# triage freeze: the job's cgroup frozen whole (a forked child too), its
# state running and frozen; thaw lets it go on.
check_freeze() {
	local id pid cg ev
	id=$(tr_ submit -p normal -- sh -c 'sleep 3041 & exec sleep 3042') ||
		{ notok "freeze" "submit failed"; return; }
	if ! until_ 30 running_argv sleep 3042; then
		notok "freeze" "job $id did not start"; cancel_wait "$id"; return
	fi
	pid=$(pids_of sleep 3042)
	cg=$(cgroup_of "$pid")
	tr_ freeze "$id" >/dev/null 2>&1 || { notok "freeze" "triage freeze $id failed"; cancel_wait "$id"; return; }
	ev=$(cgdir "$cg")/cgroup.events
	if ! until_ 10 grep -qx 'frozen 1' "$ev"; then
		notok "freeze" "job $id: $ev says $(oneline < "$ev")"; cancel_wait "$id"; return
	fi
	if [ "$(field "$id" frozen)" != true ] || ! state_is "$id" running; then
		notok "freeze" "job $id: frozen $(field "$id" frozen), state $(state_of "$id")"; cancel_wait "$id"; return
	fi
	tr_ thaw "$id" >/dev/null 2>&1
	if until_ 10 grep -qx 'frozen 0' "$ev" && [ "$(field "$id" frozen)" = false ]; then
		ok "freeze and thaw: job $id's cgroup $cg frozen whole, then thawed"
	else
		notok "thaw" "job $id: $ev says $(oneline < "$ev"), frozen $(field "$id" frozen)"
	fi
	cancel_wait "$id"
}

# The OOM killer's last choice: the daemon and its workers at -900, a job
# back at what the daemon started with (systemd's default, 0).
check_oom_score() {
	local id pid worker d w j
	id=$(tr_ submit -p normal -- sleep 3051) || { notok "oom_score_adj" "submit failed"; return; }
	if ! until_ 30 running_argv sleep 3051; then
		notok "oom_score_adj" "job $id did not start"; cancel_wait "$id"; return
	fi
	pid=$(pids_of sleep 3051)
	worker=$(awk '{print $4}' "/proc/$pid/stat")
	d=$(cat "/proc/$(mainpid)/oom_score_adj") w=$(cat "/proc/$worker/oom_score_adj") j=$(cat "/proc/$pid/oom_score_adj")
	if [ "$d" = -900 ] && [ "$w" = -900 ] && [ "$j" = 0 ]; then
		ok "oom_score_adj: daemon $d, worker $w, job $j"
	else
		notok "oom_score_adj" "daemon $d, worker $w, job $j; not -900, -900, 0"
	fi
	cancel_wait "$id"
}

# 64 MiB for a job that wants 256: it alone fails, oom, its peak at the
# limit; a sibling running beside it, and the daemon, are untouched.
check_memory() {
	local sib id pid1 j st oom peak mem why=
	rm -f /tmp/vmtest-sibling-go
	sib=$(tr_ submit -p normal -- sh -c 'until [ -e /tmp/vmtest-sibling-go ]; do sleep 0.1; done; echo sibling') ||
		{ notok "memory" "submit of the sibling failed"; return; }
	until_ 30 state_is "$sib" running
	pid1=$(mainpid)
	if ! id=$(submit_mem $((64 * MiB)) normal python3 -c \
		'b = bytearray(256 << 20); [b.__setitem__(i, 1) for i in range(0, len(b), 4096)]' 2>&1); then
		notok "memory: a job over its 64 MiB" "triage submit --memory $((64 * MiB)) refused: $id"
		touch /tmp/vmtest-sibling-go; wait_ended "$sib" 30; return
	fi
	if ! wait_ended "$id" 90; then
		notok "memory: a job over its 64 MiB" "job $id not ended after 90s: $(field "$id" state)"
		cancel_wait "$id"; touch /tmp/vmtest-sibling-go; wait_ended "$sib" 30; return
	fi
	j=$(job "$id")
	st=$(echo "$j" | jq -r .state)
	oom=$(echo "$j" | jq -r .oom)
	peak=$(echo "$j" | jq -r .peak_memory)
	mem=$(echo "$j" | jq -r .memory)
	[ "$mem" = $((64 * MiB)) ] || why="$why memory is $mem, not $((64 * MiB));"
	[ "$st" = failed ] || why="$why state $st, not failed;"
	[ "$oom" = true ] || why="$why oom is $oom;"
	case $(echo "$j" | jq -r .reason) in
	"killed: out of memory, limit 64 MiB, peak "*" MiB") ;;
	*) why="$why the reason does not say the limit and the peak;" ;;
	esac
	if ! [[ $peak =~ ^[0-9]+$ ]] || [ "$peak" -lt $((60 * MiB)) ] || [ "$peak" -gt $((70 * MiB)) ]; then
		why="$why peak_memory $peak not within 60..70 MiB;"
	fi
	if [ -z "$why" ]; then
		ok "memory: a job of memory 64 MiB that wants 256 ends failed, oom, peak_memory $((peak / 1024)) KiB (reason: $(echo "$j" | jq -r .reason))"
	else
		notok "memory: a job of memory 64 MiB that wants 256" "${why% ;} (exit_code $(echo "$j" | jq -r .exit_code), signal $(echo "$j" | jq -r .signal), reason: $(echo "$j" | jq -r .reason))"
	fi
	touch /tmp/vmtest-sibling-go
	wait_ended "$sib" 30
	st=$(field "$sib" state)
	if [ "$st" = succeeded ] && [ "$(systemctl is-active triage.service)" = active ] && [ "$(mainpid)" = "$pid1" ]; then
		ok "memory: the sibling job running beside it succeeded; triage.service active, the same MainPID $pid1"
	else
		notok "memory: the sibling and the daemon untouched" "sibling job $sib $st ($(field "$sib" reason)); triage.service $(systemctl is-active triage.service), MainPID $pid1 -> $(mainpid)"
	fi
	rm -f /tmp/vmtest-sibling-go
}

# pids_max 50: a job forking 200 children gets at most 50 processes, its
# fork fails, and other jobs still start.
FORKER='import os, time
n = 0
for i in range(200):
    try:
        pid = os.fork()
    except OSError as e:
        print("fork %d failed: %s" % (n + 1, e), flush=True)
        break
    if pid == 0:
        time.sleep(120)
        os._exit(0)
    n += 1
print("forked %d" % n, flush=True)
time.sleep(120)'
check_pids_max() {
	local id out cg cur max ev other why=
	id=$(tr_ submit -p bomb -- python3 -c "$FORKER") || { notok "pids_max" "submit failed"; return; }
	if ! until_ 60 sh -c "triage output $id | grep -q '^forked'"; then
		notok "pids_max" "job $id ($(field "$id" state)) did not say how many it forked in 60s: $(tr_ output "$id" 2>&1 | oneline)"
		cancel_wait "$id"; return
	fi
	out=$(tr_ output "$id" 2>&1 | oneline)
	cg=$(field "$id" cgroup)
	if [ "$cg" = null ] || [ -z "$cg" ]; then
		notok "pids_max" "job $id has no cgroup (it says: $out; $(pids_of python3 -c "$FORKER" | wc -l) forker processes)"
		cancel_wait "$id"; return
	fi
	cur=$(cat "$(cgdir "$cg")/pids.current" 2>&1)
	max=$(cat "$(cgdir "$cg")/pids.max" 2>&1)
	ev=$(sed -n 's/^max //p' "$(cgdir "$cg")/pids.events" 2>&1)
	[ "$max" = 50 ] || why="$why pids.max is $max;"
	{ [[ $cur =~ ^[0-9]+$ ]] && [ "$cur" -le 50 ]; } || why="$why pids.current is $cur;"
	echo "$out" | grep -q 'failed' || why="$why no fork failed;"
	if other=$(tr_ submit --wait -p normal -- true 2>&1); then :; else why="$why another job did not run beside it ($other);"; fi
	if [ -z "$why" ]; then
		ok "pids_max 50: job $id holds $cur processes of pids.max $max (pids.events max $ev); it says: $out; another job ran beside it"
	else
		notok "pids_max 50" "${why% ;} (job $id in $cg says: $out)"
	fi
	cancel_wait "$id"
}

# cpu_weight 100 and 300: two busy jobs on one CPU share it 1:3.
usage() { sed -n 's/^usage_usec //p' "$(cgdir "$1")/cpu.stat" 2>/dev/null; }
check_cpu_weight() {
	local lo hi clo chi a0 b0 a1 b1 da db ratio wlo whi
	lo=$(tr_ submit -p cpulow -n busy-low -- taskset -c 0 sh -c 'while :; do :; done')
	hi=$(tr_ submit -p cpuhigh -n busy-high -- taskset -c 0 sh -c 'while :; do :; done')
	if ! until_ 30 state_is "$lo" running || ! until_ 30 state_is "$hi" running; then
		notok "cpu_weight" "jobs $lo ($(field "$lo" state)) and $hi ($(field "$hi" state)) not both running in 30s"
		cancel_wait "$lo"; cancel_wait "$hi"; return
	fi
	clo=$(field "$lo" cgroup)
	chi=$(field "$hi" cgroup)
	if [ "$clo" = null ] || [ "$chi" = null ] || [ -z "$(usage "$clo")" ] || [ -z "$(usage "$chi")" ]; then
		notok "cpu_weight" "no cgroup's cpu.stat for job $lo ($clo) or $hi ($chi)"
		cancel_wait "$lo"; cancel_wait "$hi"; return
	fi
	wlo=$(cat "$(cgdir "$clo")/cpu.weight" 2>&1)
	whi=$(cat "$(cgdir "$chi")/cpu.weight" 2>&1)
	# Both have started spinning: measure 6s of sharing.
	sleep 1
	a0=$(usage "$clo"); b0=$(usage "$chi")
	sleep 6
	a1=$(usage "$clo"); b1=$(usage "$chi")
	da=$((a1 - a0)) db=$((b1 - b0))
	cancel_wait "$lo"; cancel_wait "$hi"
	if [ "$da" -le 0 ]; then
		notok "cpu_weight" "job $lo used no CPU in 6s (cpu.weight $wlo; job $hi: ${db}us, cpu.weight $whi)"; return
	fi
	ratio=$(awk -v a="$da" -v b="$db" 'BEGIN { printf "%.2f", b / a }')
	if awk -v r="$ratio" 'BEGIN { exit !(r >= 2.4 && r <= 3.6) }'; then
		ok "cpu_weight 300 vs 100 on one CPU: ${db}us vs ${da}us in 6s, ratio $ratio (cpu.weight $whi, $wlo)"
	else
		notok "cpu_weight 300 vs 100 on one CPU" "ratio $ratio, not 3 within 20% (${db}us vs ${da}us in 6s; cpu.weight $whi, $wlo)"
	fi
}

check_peak_memory() {
	local id j st peak
	id=$(tr_ submit -p normal -- python3 -c \
		'b = bytearray(50 << 20); [b.__setitem__(i, 1) for i in range(0, len(b), 4096)]') ||
		{ notok "peak_memory" "submit failed"; return; }
	if ! wait_ended "$id" 60; then
		notok "peak_memory" "job $id not ended after 60s"; cancel_wait "$id"; return
	fi
	j=$(job "$id")
	st=$(echo "$j" | jq -r .state)
	peak=$(echo "$j" | jq -r .peak_memory)
	if [ "$st" = succeeded ] && [[ $peak =~ ^[0-9]+$ ]] && [ "$peak" -ge $((40 * MiB)) ]; then
		ok "peak_memory of a job that touched 50 MiB: $((peak / 1024)) KiB (max_rss_kb $(echo "$j" | jq -r .max_rss_kb))"
	else
		notok "peak_memory of a job that touched 50 MiB" "state $st, peak_memory $peak, not at least $((40 * MiB)) (max_rss_kb $(echo "$j" | jq -r .max_rss_kb))"
	fi
}

note "guest: kernel $(uname -r), $(systemctl --version | head -1), $(nproc) CPUs, $(($(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo) / 1024)) MiB; /sys/fs/cgroup $(stat -fc %T /sys/fs/cgroup): $(cat /sys/fs/cgroup/cgroup.controllers)"
if check install check_install; then
	check "a plain job" check_plain_job
	check "the daemon's log" check_cgroup_log
	check "stats" check_stats
	check "the daemon's leaf" check_daemon_leaf
	check "a job's cgroup" check_job_cgroup
	check "restart" check_restart
	check "leftovers" check_leftovers
	check "crash" check_crash
	check "freeze" check_freeze
	check "oom_score_adj" check_oom_score
	check "memory" check_memory
	check "pids_max" check_pids_max
	check "cpu_weight" check_cpu_weight
	check "peak_memory" check_peak_memory
else
	note "journal of triage.service: $(journalctl -u triage.service -n 10 -o cat --no-pager 2>&1 | oneline)"
fi
note "guest: $passed passed, $failed failed, $skipped skipped"
echo "done" >> "$OUT/stage"
