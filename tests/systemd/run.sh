#!/bin/bash
# run.sh - `make test-systemd`: triage under a real systemd, PID 1 of new
# PID, mount, UTS, IPC and cgroup namespaces (tests/systemd/boot.sh builds
# its root: an overlay over the host's, so nothing it writes reaches the
# host). Prints "ok - name" / "not ok - name: why" per check, then
# "N passed, N failed, N skipped"; exits 1 on any failure. Skips (exit 0)
# when not root or when namespaces are not permitted.
#
# Environment: WATCHDOG_SECS (default 60) how long the watchdog check
# watches the service; KEEP=1 keeps the temp dir (build/systemd-test).
set -u

REPO=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$REPO/tests/systemd
. "$HERE/common.sh"
BIN=$REPO/build/bin
T=$REPO/build/systemd-test
WATCHDOG_SECS=${WATCHDOG_SECS:-60}
START=$(date +%s)

passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
notok() { failed=$((failed + 1)); echo "not ok - $1: $2"; }
skip() { skipped=$((skipped + 1)); echo "skip - $1: $2"; }
note() { echo "# $*"; }
finish() {
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit $?
}

# --- can we? -----------------------------------------------------------
if [ "$(id -u)" != 0 ]; then
	echo "skip - systemd test: needs root for namespaces (uid $(id -u))"
	exit 0
fi
if ! why=$(unshare --pid --fork --mount --uts --ipc --cgroup --mount-proc \
	sh -c 'mount --make-rprivate / && mount -t tmpfs tmpfs /mnt && mount -t overlay -o lowerdir=/usr:/etc overlay /mnt' 2>&1); then
	echo "skip - systemd test: namespaces not permitted here: $why"
	exit 0
fi
for b in triaged triage; do
	[ -x "$BIN/$b" ] || { echo "not ok - build: $BIN/$b missing (make first)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
done
SYSTEMD=/usr/lib/systemd/systemd
[ -x "$SYSTEMD" ] || { echo "skip - systemd test: no $SYSTEMD"; exit 0; }

# --- the host before ----------------------------------------------------
rm -rf "$T"
mkdir -p "$T/units" "$T/etc/triage" "$T/log"
host_before triage-sdtest "$T.host-before"

# --- what to install ----------------------------------------------------
SRC=fallback
if [ -d "$REPO/systemd" ] && make -C "$REPO" -n install >/dev/null 2>&1; then
	if make -C "$REPO" --no-print-directory install DESTDIR="$T/install" PREFIX=/usr >"$T/log/install" 2>&1; then
		SRC=repo
	else
		notok "make install" "failed: $(tail -3 "$T/log/install" | tr '\n' ' ')"
	fi
fi
if [ "$SRC" = repo ] && [ -z "$(find "$T/install" -name triage.service 2>/dev/null)" ]; then
	note "make install installed no triage.service; using the test's own units"
	SRC=fallback
fi
if [ "$SRC" = fallback ]; then
	# The test's minimal units, until systemd/ is merged.
	U=$T/install/usr/lib/systemd/system
	mkdir -p "$U" "$T/install/usr/bin" "$T/install/usr/lib/sysusers.d"
	cp "$BIN/triaged" "$BIN/triage" "$T/install/usr/bin/"
	cat > "$U/triage.service" <<-'EOF'
	[Unit]
	Description=triage job-dispatch daemon (test unit)
	Requires=triage.socket
	After=triage.socket

	[Service]
	Type=notify
	ExecStart=/usr/bin/triaged --config /etc/triage/triage.conf
	ExecReload=/bin/kill -HUP $MAINPID
	KillMode=mixed

	[Install]
	WantedBy=multi-user.target
	EOF
	cat > "$U/triage.socket" <<-'EOF'
	[Unit]
	Description=triage daemon socket (test unit)

	[Socket]
	ListenStream=/run/triage/triage.sock
	SocketMode=0660
	SocketGroup=triage
	RemoveOnStop=yes

	[Install]
	WantedBy=sockets.target
	EOF
	echo 'g triage -' > "$T/install/usr/lib/sysusers.d/triage.conf"
fi
# The package, when `make deb` built one: boot.sh puts it in /root/pkg.
DEB=$(ls -t "$REPO"/build/triage_*.deb 2>/dev/null | head -1)
# The client library the CLI links, a package of its own, installed with it.
LIBDEB=$(ls -t "$REPO"/build/libtriage0_*.deb 2>/dev/null | head -1)
PREV=
if [ -n "$DEB" ]; then
	mkdir -p "$T/pkg" && cp "$DEB" ${LIBDEB:+"$LIBDEB"} "$T/pkg/"
	# The previous version, for the upgrade check: this package with a
	# lower version (one from before adoption kills its jobs as it stops,
	# as it always did: there is nothing of it to test here).
	if dpkg-deb -R "$DEB" "$T/prev" &&
	    v=$(sed -n 's/^Version: //p' "$T/prev/DEBIAN/control") &&
	    sed -i "s/^Version: .*/Version: $v~prev/" "$T/prev/DEBIAN/control" &&
	    dpkg-deb -b "$T/prev" "$T/pkg/triage_$v~prev.deb" >/dev/null 2>"$T/log/prev"; then
		PREV=$T/pkg/triage_$v~prev.deb
	else
		note "no previous version to upgrade from: $(tr '\n' ' ' < "$T/log/prev" 2>/dev/null)"
	fi
	rm -rf "$T/prev"
fi
note "units from: $SRC ($(cd "$T/install" && find . -path '*systemd*' -type f | tr '\n' ' '))"

# --- the namespace's units ----------------------------------------------
# journald, sysusers and the shutdown path; nothing else starts.
minimal_units "$T/units" "triage test" systemd-sysusers.service
cat > "$T/units/triage-test.target" <<'EOF'
[Unit]
Description=triage test: boot this far only
Requires=basic.target
After=basic.target
AllowIsolate=yes
EOF
ln -s triage-test.target "$T/units/default.target"

# --- /etc of the namespace: users, config -------------------------------
TUID=4242
cp /etc/passwd /etc/group "$T/etc/"
grep -q "^tester:" "$T/etc/passwd" || echo "tester:x:$TUID:$TUID:triage test user:/tmp:/bin/sh" >> "$T/etc/passwd"
grep -q "^tester:" "$T/etc/group" || echo "tester:x:$TUID:" >> "$T/etc/group"
[ -e /etc/shadow ] && cp -p /etc/shadow /etc/gshadow "$T/etc/" 2>/dev/null

write_conf() { # SLOTS [extra text]
	cat > "$T/triage.conf.new" <<-EOF
	# triage.conf of the systemd test
	[daemon]
	socket = /run/triage/triage.sock
	socket_group = triage
	socket_mode = 0660
	state_dir = /var/lib/triage
	slots = $1
	policy = weighted
	kill_grace = 2s
	log_level = info

	[priority.high]
	rank = 0
	weight = 8

	[priority.normal]
	rank = 10
	weight = 3

	[priority.low]
	rank = 20
	weight = 1
	EOF
	[ $# -gt 1 ] && printf '%s\n' "$2" >> "$T/triage.conf.new"
	return 0
}
write_conf 1
cp "$T/triage.conf.new" "$T/etc/triage/triage.conf"

# --- boot ---------------------------------------------------------------
CG=triage-sdtest-$$
CGDIRS=
# The namespace's systemd gets a cgroup of its own (and a cgroup namespace
# rooted there): under the hybrid layout's name=systemd and unified
# hierarchies, or, on a cgroup2-only host, under /sys/fs/cgroup.
if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
	CGMODE=unified
	mkdir -p "/sys/fs/cgroup/$CG" && CGDIRS=/sys/fs/cgroup/$CG
else
	CGMODE=hybrid
	for h in systemd unified; do
		[ -d "/sys/fs/cgroup/$h" ] || continue
		mkdir -p "/sys/fs/cgroup/$h/$CG" && CGDIRS="$CGDIRS /sys/fs/cgroup/$h/$CG"
	done
fi
NSPID= UPID=
cleanup() {
	trap - EXIT INT TERM
	if [ -n "$UPID" ] && kill -0 "$UPID" 2>/dev/null; then
		[ -n "$NSPID" ] && timeout 30 nsenter -t "$NSPID" -p -m systemctl poweroff >/dev/null 2>&1
		for _ in $(seq 1 300); do kill -0 "$UPID" 2>/dev/null || break; sleep 0.1; done
		if kill -0 "$UPID" 2>/dev/null; then
			note "systemd did not power off; killing the namespace"
			[ -n "$NSPID" ] && kill -KILL "$NSPID" 2>/dev/null
			kill -KILL "$UPID" 2>/dev/null
		fi
		wait "$UPID" 2>/dev/null
	fi
	for d in $CGDIRS; do
		# whatever is left in the test's cgroups
		for _ in 1 2 3; do
			find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null
			find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
			[ -d "$d" ] || break
			sleep 0.5
		done
	done
	[ "${KEEP:-0}" = 1 ] || rm -rf "$T"
	[ -n "${FINAL:-}" ] || host_forget "$T.host-before"
}
trap cleanup EXIT
trap 'echo "# interrupted"; exit 130' INT TERM

CGDIRS="$CGDIRS" sh -c 'for d in $CGDIRS; do echo $$ > "$d/cgroup.procs" || exit 1; done
	exec unshare --pid --fork --kill-child --mount --uts --ipc --cgroup \
		--mount-proc sh "$0" "$1" "$2"' "$HERE/boot.sh" "$T" "$CGMODE" </dev/null >"$T/log/boot" 2>&1 &
UPID=$!

# Runs a command inside the namespace, as root, with a deadline.
ns() { timeout 60 nsenter -t "$NSPID" -p -m -u -i -r -w env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin TRIAGE_SOCKET=/run/triage/triage.sock "$@"; }
# As the test user (uid 4242), cwd /tmp.
nsu() { timeout 60 nsenter -t "$NSPID" -p -m -u -i -r -w setpriv --reuid=$TUID --regid=$TUID --init-groups env -i PATH=/usr/bin:/bin HOME=/tmp TRIAGE_SOCKET=/run/triage/triage.sock "$@"; }
sc() { ns systemctl "$@"; }
tr_() { ns triage "$@"; }
# until SECS CMD...: polls CMD every 0.2s until it succeeds; fails at the deadline.
until_() {
	local end=$(($(date +%s) + $1)); shift
	while ! "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.2
	done
}
prop() { sc show -p "$2" --value "$1" 2>/dev/null; }
is_active() { [ "$(sc is-active "$1" 2>/dev/null)" = active ]; }
journal_cursor() { ns journalctl -n0 --show-cursor -q 2>/dev/null | sed -n 's/^-- cursor: //p'; }
job_field() { tr_ --json status "$1" 2>/dev/null | jq -r ".$2"; }

# The namespace's PID 1, as the host sees it: unshare's child.
find_nspid() {
	local c
	c=$(cat /proc/"$UPID"/task/*/children 2>/dev/null | tr ' ' '\n' | grep . | head -1)
	[ -n "$c" ] && [ "$(cat /proc/"$c"/comm 2>/dev/null)" = systemd ] && NSPID=$c
}
booted() {
	local s
	s=$(sc is-system-running 2>/dev/null)
	[ "$s" = running ] || [ "$s" = degraded ]
}
if ! until_ 30 find_nspid; then
	notok "boot" "no systemd in the namespace: $(tail -5 "$T/log/boot" | tr '\n' ' ')"
	finish
fi
if until_ 60 booted; then
	ok "boot: systemd is PID 1 of the namespace, system $(sc is-system-running)"
else
	notok "boot" "not running after 60s: $(sc is-system-running 2>&1); $(sc --failed --no-legend 2>&1 | tr '\n' ' ')"
	finish
fi
note "namespace systemd: host pid $NSPID; failed units: $(sc --failed --no-legend --plain 2>/dev/null | awk '{print $1}' | tr '\n' ' ')"
note "units running: $(sc list-units --state=active --no-legend --plain 2>/dev/null | awk '{print $1}' | grep -v -e '\.mount$' -e '\.device$' -e '\.scope$' -e '\.slice$' | tr '\n' ' ')"

# Our drop-in: short start timeout so that a failing start fails fast.
ns mkdir -p /etc/systemd/system/triage.service.d
ns sh -c 'printf "[Service]\nTimeoutStartSec=20s\nTimeoutStopSec=30s\n" > /etc/systemd/system/triage.service.d/50-test.conf'
sc daemon-reload

# --- checks -------------------------------------------------------------
check_verify() {
	local out f
	f=$(ns sh -c 'ls /usr/lib/systemd/system/triage*.service /usr/lib/systemd/system/triage*.socket 2>/dev/null' | tr '\n' ' ')
	# man pages only count when installed (Documentation=man:... else fails)
	local man=--man=no
	[ -n "$(find "$T/install" -name 'triaged.8*' 2>/dev/null)" ] && man=
	if out=$(ns systemd-analyze verify $man $f 2>&1) && [ -z "$out" ]; then
		ok "systemd-analyze verify ${man:+$man }$f: clean"
	else
		notok "systemd-analyze verify" "$(echo "$out" | tr '\n' ' ')"
	fi
}

check_sysusers() {
	local g
	if g=$(ns getent group triage); then
		ok "systemd-sysusers created group triage ($g)"
	else
		notok "sysusers" "no group triage in the namespace ($(sc status systemd-sysusers 2>&1 | tail -3 | tr '\n' ' '))"
	fi
	# the test user may use the socket
	ns usermod -aG triage tester >/dev/null 2>&1
}

# The package's tmpfiles.d file, alone (systemd-tmpfiles-setup is not run:
# the host's other tmpfiles.d files have no business here).
check_tmpfiles() {
	local f out
	f=$(cd "$T/install" && find . -path '*tmpfiles.d/*triage*' | sed 's/^\.//' | head -1)
	if [ -z "$f" ]; then
		note "no tmpfiles.d file installed: not applying one"
		return
	fi
	case $f in /lib/*) f=/usr$f ;; esac
	if out=$(ns systemd-tmpfiles --create "$f" 2>&1); then
		ok "systemd-tmpfiles --create $f"
	else
		notok "systemd-tmpfiles --create $f" "$(echo "$out" | tr '\n' ' ')"
	fi
}

# The daemon as a socket-activated service; used by checks that need it
# running. When activation does not bring it up, the service is started
# alone (a copy of the unit without its triage.socket dependency, in
# /etc/systemd/system), and if that does not come up either, with a
# Type=simple drop-in: so that the later checks test what they test.
COMPAT=
daemon_up() { tr_ stats >/dev/null 2>&1; }
start_service() {
	sc reset-failed triage.service triage.socket >/dev/null 2>&1
	sc start triage.service >/dev/null 2>&1
	is_active triage.service && until_ 20 daemon_up
}
ensure_running() {
	if is_active triage.service && until_ 10 daemon_up; then return 0; fi
	if [ -z "$COMPAT" ]; then
		sc start triage.socket >/dev/null 2>&1
		if is_active triage.socket && until_ 25 daemon_up && is_active triage.service; then return 0; fi
		note "socket activation does not bring the daemon up: from now on, triage.service alone (a copy without its triage.socket dependency)"
		COMPAT=nosocket
		sc stop triage.service triage.socket >/dev/null 2>&1
		ns sh -c 'sed -e "/^Requires=triage.socket\$/d" -e "/^Sockets=/d" -e "s/ *triage.socket//g" -e "/^\(After\|Requires\|Wants\|BindsTo\)=\$/d" /usr/lib/systemd/system/triage.service > /etc/systemd/system/triage.service'
		sc daemon-reload
	fi
	start_service && return 0
	if [ "$COMPAT" = nosocket ]; then
		note "triage.service does not come up as Type=$(prop triage.service Type): from now on with a Type=simple drop-in"
		COMPAT=simple
		sc stop triage.service >/dev/null 2>&1
		ns sh -c 'printf "[Service]\nType=simple\n" > /etc/systemd/system/triage.service.d/60-compat.conf'
		sc daemon-reload
		start_service && return 0
	fi
	return 1
}

check_activation() {
	local out
	if ! sc start triage.socket 2>"$T/err"; then
		notok "socket activation" "systemctl start triage.socket: $(cat "$T/err")"; return
	fi
	if is_active triage.service; then
		notok "socket activation" "triage.service already active before any connection"; return
	fi
	if ! out=$(tr_ stats 2>&1); then
		notok "socket activation: first connection" "triage stats: $out; service: $(sc is-active triage.service)"; return
	fi
	if is_active triage.service; then
		ok "socket activation: triage stats started triage.service (TriggeredBy $(prop triage.service TriggeredBy))"
	else
		notok "socket activation" "stats answered but triage.service is $(sc is-active triage.service)"
	fi
}

check_notify() {
	local type
	type=$(prop triage.service Type)
	if [ "$COMPAT" = simple ]; then
		notok "Type=notify service becomes active (sd_notify READY=1)" "it did not: the compat drop-in (Type=simple) was needed"
	elif [ "$type" = notify ] && is_active triage.service; then
		ok "Type=notify service became active (READY=1)"
	else
		notok "sd_notify" "Type=$type, $(sc is-active triage.service)"
	fi
}

run_job() { # who(ns|nsu) -> prints the job's output
	local id
	id=$("$1" triage submit -p high -- sh -c 'id -u') || return 1
	"$1" triage wait "$id" >/dev/null || return 1
	"$1" triage output "$id"
}
check_jobs() {
	local out
	ensure_running
	if out=$(run_job ns 2>&1) && [ "$out" = 0 ]; then
		ok "a job submitted by root runs as root"
	else
		notok "job as root" "got '$out'"
	fi
	if out=$(run_job nsu 2>&1) && [ "$out" = "$TUID" ]; then
		ok "a job submitted by uid $TUID runs as uid $TUID"
	else
		notok "job as unprivileged user" "got '$out' ($(nsu id 2>&1); $(ns ls -ln /run/triage 2>&1 | tr '\n' ' '))"
	fi
}

check_status_text() {
	local st
	ensure_running
	st=$(prop triage.service StatusText)
	if [ -n "$st" ] && echo "$st" | grep -qiE 'queued|running'; then
		ok "StatusText shows the queue: $st"
	else
		notok "StatusText" "'$st'"
	fi
}

nrunning() { tr_ --json list --state running 2>/dev/null | grep -c .; }
check_reload() {
	local pid out cur id1 ids st
	ensure_running
	pid=$(prop triage.service MainPID)
	# a new priority
	write_conf 1 $'[priority.urgent]\nrank = 5\nweight = 4'
	ns sh -c 'cat > /etc/triage/triage.conf' < "$T/triage.conf.new"
	if ! out=$(sc reload triage.service 2>&1); then
		notok "reload: new priority" "systemctl reload: $out"
	elif until_ 10 sh -c "nsenter -t $NSPID -p -m -r -w env TRIAGE_SOCKET=/run/triage/triage.sock triage priorities | grep -q '^urgent'"; then
		ok "systemctl reload: the new priority urgent shows in triage priorities"
	else
		notok "reload: new priority" "not in triage priorities: $(tr_ priorities 2>&1 | tr '\n' ' ')"
	fi
	[ "$(prop triage.service MainPID)" = "$pid" ] || note "MainPID changed on reload ($pid -> $(prop triage.service MainPID))"

	# more slots: 1 -> 3, with a job running throughout
	ensure_running
	ids=
	for _ in 1 2 3; do ids="$ids $(tr_ submit -p normal -- sleep 300)"; done
	id1=${ids# }; id1=${id1%% *}
	until_ 10 sh -c "[ \$(nsenter -t $NSPID -p -m -r -w env TRIAGE_SOCKET=/run/triage/triage.sock triage --json list --state running | grep -c .) -ge 1 ]"
	local before; before=$(nrunning)
	write_conf 3 $'[priority.urgent]\nrank = 5\nweight = 4'
	ns sh -c 'cat > /etc/triage/triage.conf' < "$T/triage.conf.new"
	sc reload triage.service >/dev/null 2>&1
	if until_ 15 sh -c "[ \$(nsenter -t $NSPID -p -m -r -w env TRIAGE_SOCKET=/run/triage/triage.sock triage --json list --state running | grep -c .) -ge 3 ]"; then
		st=$(job_field "$id1" state)/$(job_field "$id1" attempt)
		if [ "$st" = running/1 ]; then
			ok "reload slots 1 -> 3: $before then 3 jobs run at once, the first one still running (attempt 1)"
		else
			notok "reload slots" "3 run, but the first job is $st"
		fi
	else
		notok "reload slots 1 -> 3" "$before running before, $(nrunning) after"
	fi
	# shellcheck disable=SC2086
	tr_ cancel $ids >/dev/null 2>&1

	# a broken config: the service stays up on the old one, the journal says why
	ensure_running
	pid=$(prop triage.service MainPID)
	local prios; prios=$(tr_ priorities 2>/dev/null | awk '{print $1, $2}')
	cur=$(journal_cursor)
	ns sh -c 'printf "[daemon]\nslots = lots\n[priority.broken\n" > /etc/triage/triage.conf'
	sc reload triage.service >/dev/null 2>&1
	# the reload is asynchronous (SIGHUP): wait for its warning, or 10s
	until_ 10 sh -c "nsenter -t $NSPID -p -m -r -w journalctl -u triage.service --after-cursor '$cur' -p warning -o cat -q | grep -q ."
	if ! until_ 5 is_active triage.service || [ "$(prop triage.service MainPID)" != "$pid" ]; then
		notok "reload of a broken config" "service $(sc is-active triage.service), MainPID $pid -> $(prop triage.service MainPID)"
	elif [ "$(tr_ priorities 2>/dev/null | awk '{print $1, $2}')" != "$prios" ]; then
		notok "reload of a broken config" "the priorities changed: $(tr_ priorities 2>&1 | tr '\n' ' ')"
	elif out=$(ns journalctl -u triage.service --after-cursor "$cur" -p warning -o cat 2>/dev/null) && echo "$out" | grep -qiE 'triage.conf|config|slots'; then
		ok "reload of a broken config: still active on the old config; journal: $(echo "$out" | grep -iE 'triage.conf|config|slots' | head -1)"
	else
		notok "reload of a broken config" "active on the old config, but no warning in the journal says why (got: $(echo "$out" | tr '\n' ' '))"
	fi
	write_conf 3 $'[priority.urgent]\nrank = 5\nweight = 4'
	ns sh -c 'cat > /etc/triage/triage.conf' < "$T/triage.conf.new"
	sc reload triage.service >/dev/null 2>&1
}

check_stop_requeue() {
	local id st a
	ensure_running
	id=$(tr_ submit -p high -- sleep 300)
	if ! until_ 10 sh -c "[ \"\$(nsenter -t $NSPID -p -m -r -w env TRIAGE_SOCKET=/run/triage/triage.sock triage --json status $id | jq -r .state)\" = running ]"; then
		notok "stop requeues" "job $id never ran: $(job_field "$id" state)"; return
	fi
	sc stop triage.service >/dev/null 2>&1
	if is_active triage.service; then notok "systemctl stop" "still active"; return; fi
	if [ -n "$COMPAT" ]; then
		sc start triage.service >/dev/null 2>&1
	else
		sc start triage.socket >/dev/null 2>&1
	fi
	until_ 25 daemon_up || ensure_running
	st=$(job_field "$id" state); a=$(job_field "$id" attempt)
	if { [ "$st" = queued ] || [ "$st" = running ]; } && [ "$a" = 2 ]; then
		ok "systemctl stop with a job running requeues it: $st again as attempt 2 after $( [ -n "$COMPAT" ] && echo "systemctl start (compat)" || echo "socket activation")"
	else
		notok "systemctl stop requeues the running job" "job $id is $st, attempt $a"
	fi
	tr_ cancel "$id" >/dev/null 2>&1
}

check_restart() {
	local id1 id2 id3 p st
	ensure_running
	# one slot: a long job holds it, so the second stays queued
	write_conf 1
	ns sh -c 'cat > /etc/triage/triage.conf' < "$T/triage.conf.new"
	sc restart triage.service >/dev/null 2>&1
	until_ 25 daemon_up || ensure_running
	id1=$(tr_ submit -p high -- sleep 300)
	until_ 10 sh -c "[ \"\$(nsenter -t $NSPID -p -m -r -w env TRIAGE_SOCKET=/run/triage/triage.sock triage --json status $id1 | jq -r .state)\" = running ]"
	id2=$(tr_ submit -p normal -- true)
	tr_ pause low >/dev/null 2>&1
	id3=$(tr_ submit -p low -- true)
	sc restart triage.service >/dev/null 2>&1
	until_ 25 daemon_up || ensure_running
	st=$(job_field "$id2" state)
	if [ "$st" = queued ]; then
		ok "after systemctl restart, the queued job $id2 is still queued (job $id1 holds the slot)"
	else
		notok "restart keeps queued jobs" "job $id2 is '$st' (job $id1: $(job_field "$id1" state))"
	fi
	p=$(tr_ --json priorities 2>/dev/null | jq -r 'select(.name == "low") | .paused' 2>/dev/null)
	[ -n "$p" ] || p=$(tr_ priorities 2>/dev/null | awk '$1 == "low" {print $NF}')
	st=$(job_field "$id3" state)
	if { [ "$p" = true ] || [ "$p" = yes ]; } && [ "$st" = queued ]; then
		ok "after systemctl restart, priority low is still paused (its job $id3 still queued)"
	else
		notok "restart keeps paused priorities" "low paused: '$p', its job $id3 is '$st'"
	fi
	tr_ resume low >/dev/null 2>&1
	tr_ cancel "$id1" "$id2" "$id3" >/dev/null 2>&1
	write_conf 3 $'[priority.urgent]\nrank = 5\nweight = 4'
	ns sh -c 'cat > /etc/triage/triage.conf' < "$T/triage.conf.new"
}

# A request over max_request (1 MiB): the daemon drops the client with a warning.
oversize() {
	ns python3 -c '
import socket
s = socket.socket(socket.AF_UNIX)
s.connect("/run/triage/triage.sock")
try:
    s.sendall(b"x" * (2 << 20))
    s.recv(100)
except OSError:
    pass'
}
has_warning() { ns journalctl -u triage.service -o json --no-pager -p warning 2>/dev/null | jq -e -s 'map(select(.PRIORITY == "4" and ._PID != "1")) | length > 0' >/dev/null; }

# A job that prints 0 to COUNT-1, one line every 50 ms: its output shows
# any byte lost or doubled while daemons came and went.
COUNT=300
counter_job() {
	tr_ submit -p high -- sh -c "i=0; while [ \$i -lt $COUNT ]; do echo \$i; i=\$((i+1)); sleep 0.05; done"
}
# Whether job $1 has printed at least $2 lines.
printed() { [ "$(tr_ output "$1" 2>/dev/null | wc -l)" -ge "$2" ]; }
# Ends the counter job $1 started: it must end succeeded as attempt 1,
# its process $2 the one that ran throughout, its output whole; $3 says
# what it lived through. A `triage wait` begun before ($4, its pid; its
# output in $T/wait.$1) must have returned the job's exit code.
counter_end() {
	local id=$1 pid=$2 what=$3 wpid=${4:-} out st a
	tr_ wait "$id" >/dev/null 2>&1
	st=$(job_field "$id" state); a=$(job_field "$id" attempt)
	out=$(tr_ output "$id" 2>/dev/null | md5sum)
	if [ "$st" != succeeded ] || [ "$a" != 1 ]; then
		notok "$what" "job $id ended $st as attempt $a: $(job_field "$id" reason)"
	elif [ "$(job_field "$id" pid)" != "$pid" ]; then
		notok "$what" "job $id ran as pid $pid, and ended as pid $(job_field "$id" pid)"
	elif [ "$out" != "$(seq 0 $((COUNT - 1)) | md5sum)" ]; then
		notok "$what" "job $id's output is not 0..$((COUNT - 1)) once each: $(tr_ output "$id" 2>/dev/null | wc -l) lines, $(tr_ output "$id" 2>/dev/null | sort -n | uniq -d | head -3 | tr '\n' ' ')"
	elif [ -n "$wpid" ] && ! { wait "$wpid"; [ "$?" = 0 ]; }; then
		notok "$what" "the wait begun before said: $(tr '\n' ' ' < "$T/wait.$id")"
	else
		ok "$what: job $id ran on as attempt 1, pid $pid, and ended succeeded with its $COUNT lines whole${wpid:+; the wait begun before it returned 0}"
	fi
}

# The jobs are in triage-jobs.scope, not in the unit: `systemctl restart`
# and `systemctl kill -s KILL` of triage.service leave them running, and
# the next daemon takes them over as the same attempt.
check_restart_adopts() {
	local id pid main wpid cg
	ensure_running
	id=$(counter_job) || { notok "restart adopts" "submit failed"; return; }
	if ! until_ 20 printed "$id" 5; then
		notok "restart adopts" "job $id did not start: $(job_field "$id" state)"; return
	fi
	pid=$(job_field "$id" pid); cg=$(job_field "$id" cgroup)
	if [ "$(sc is-active triage-jobs.scope)" = active ] &&
	    [ "$cg" = "$(prop triage-jobs.scope ControlGroup)/jobs/$id.1" ] &&
	    ns grep -q "^0::\(/.*\)\?$cg\$" "/proc/$pid/cgroup"; then
		ok "a running job is in triage-jobs.scope ($cg), apart from the unit"
	else
		notok "the jobs' scope" "scope $(sc is-active triage-jobs.scope 2>&1) at $(prop triage-jobs.scope ControlGroup); job $id in '$cg', its pid $pid in $(ns cat "/proc/$pid/cgroup" 2>&1)"
	fi
	ns triage wait "$id" >"$T/wait.$id" 2>&1 &
	wpid=$!
	main=$(prop triage.service MainPID)
	sc restart triage.service >/dev/null 2>&1
	until_ 25 daemon_up
	if [ "$(prop triage.service MainPID)" = "$main" ]; then
		notok "systemctl restart" "MainPID still $main"
	elif [ "$(job_field "$id" state)" = running ] &&
	    [ "$(job_field "$id" attempt)" = 1 ] && ns kill -0 "$pid"; then
		ok "systemctl restart with a job running: the new daemon (MainPID $main -> $(prop triage.service MainPID)) took job $id over as attempt 1, pid $pid"
	else
		notok "systemctl restart adopts" "job $id is $(job_field "$id" state), attempt $(job_field "$id" attempt); $(ns journalctl -u triage.service -n 8 -o cat 2>/dev/null | tr '\n' ' ')"
	fi
	main=$(prop triage.service MainPID)
	# The checks before restarted it often: within systemd's start limit.
	sc reset-failed triage.service >/dev/null 2>&1
	sc kill -s KILL triage.service >/dev/null 2>&1
	# Restart=on-failure brings it back.
	until_ 25 sh -c "[ \"\$(nsenter -t $NSPID -p -m systemctl show -p MainPID --value triage.service)\" != $main ]"
	until_ 25 daemon_up
	if [ "$(job_field "$id" state)" = running ] &&
	    [ "$(job_field "$id" attempt)" = 1 ] && ns kill -0 "$pid"; then
		ok "systemctl kill -s KILL triage: systemd starts it again (MainPID $main -> $(prop triage.service MainPID)), and it takes job $id over as attempt 1"
	else
		notok "systemctl kill -s KILL adopts" "job $id is $(job_field "$id" state), attempt $(job_field "$id" attempt); $(ns journalctl -u triage.service -n 8 -o cat 2>/dev/null | tr '\n' ' ')"
	fi
	counter_end "$id" "$pid" "systemctl restart and kill -s KILL with a job running" "$wpid"
	# stop still stops: with nothing running, the scope ends with the unit.
	sc stop triage.service >/dev/null 2>&1
	if until_ 10 sh -c "! nsenter -t $NSPID -p -m systemctl is-active -q triage-jobs.scope"; then
		ok "systemctl stop with no job running: triage-jobs.scope ends too"
	else
		notok "the scope's end" "triage-jobs.scope is $(sc is-active triage-jobs.scope) after systemctl stop"
	fi
	ensure_running
}

check_journal() {
	local j
	ensure_running
	oversize >/dev/null 2>&1
	until_ 10 has_warning
	j=$(ns journalctl -u triage.service -o json --no-pager 2>/dev/null)
	if echo "$j" | jq -e -s 'map(select(.PRIORITY == "5" and (.MESSAGE | tostring | test("ready on")))) | length > 0' >/dev/null 2>&1; then
		ok "journal: \"ready on\" at PRIORITY 5 (notice)"
	else
		notok "journal priorities: ready on" "no \"ready on\" at PRIORITY 5 (seen: $(echo "$j" | jq -r -s 'map(select(.MESSAGE | tostring | test("ready on"))) | map(.PRIORITY) | join(",")' 2>/dev/null))"
	fi
	if echo "$j" | jq -e -s 'map(select(.PRIORITY == "4" and ._PID != "1")) | length > 0' >/dev/null 2>&1; then
		ok "journal: warnings at PRIORITY 4: $(echo "$j" | jq -r -s 'map(select(.PRIORITY == "4" and ._PID != "1")) | .[0].MESSAGE' 2>/dev/null)"
	else
		notok "journal priorities: warnings" "no message of the daemon at PRIORITY 4 (levels seen: $(echo "$j" | jq -r -s 'map(.PRIORITY) | unique | join(",")' 2>/dev/null))"
	fi
}

check_watchdog() {
	local pid n end st why=
	ensure_running
	ns sh -c 'printf "[Service]\nWatchdogSec=2\n" > /etc/systemd/system/triage.service.d/70-watchdog.conf'
	sc daemon-reload
	sc restart triage.service >/dev/null 2>&1
	until_ 25 daemon_up || ensure_running
	pid=$(prop triage.service MainPID)
	n=$(prop triage.service NRestarts)
	end=$(($(date +%s) + WATCHDOG_SECS))
	while [ "$(date +%s)" -lt "$end" ]; do
		st=$(sc is-active triage.service 2>/dev/null)
		if [ "$st" != active ]; then why="service $st"; break; fi
		if [ "$(prop triage.service MainPID)" != "$pid" ]; then why="MainPID $pid -> $(prop triage.service MainPID)"; break; fi
		sleep 1
	done
	[ -n "$why" ] || [ "$(prop triage.service NRestarts)" = "$n" ] || why="NRestarts $n -> $(prop triage.service NRestarts)"
	if [ -z "$why" ] && [ "$n" = 0 ]; then
		ok "WatchdogSec=2 for ${WATCHDOG_SECS}s: still active, same MainPID $pid, NRestarts=0"
	else
		notok "WatchdogSec=2" "${why:-NRestarts=$n} ($(ns journalctl -u triage.service -o cat 2>/dev/null | grep -iE 'watchdog|result' | tail -2 | tr '\n' ' '))"
	fi
	ns rm -f /etc/systemd/system/triage.service.d/70-watchdog.conf
	sc daemon-reload
	sc reset-failed triage.service >/dev/null 2>&1
}

security_score() { ns systemd-analyze security --no-pager triage.service 2>&1 | grep -E 'Overall exposure level'; }
check_security() {
	local s1 s2 sb
	s1=$(security_score)
	if [ -n "$s1" ]; then
		ok "systemd-analyze security: $s1"
	else
		notok "systemd-analyze security" "$(ns systemd-analyze security --no-pager triage.service 2>&1 | tail -2 | tr '\n' ' ')"
	fi
	sb=$REPO/systemd/sandbox.conf
	if [ ! -f "$sb" ]; then
		note "no systemd/sandbox.conf: no score with the sandbox drop-in"
		return
	fi
	ns sh -c 'cat > /etc/systemd/system/triage.service.d/80-sandbox.conf' < "$sb"
	sc daemon-reload
	s2=$(security_score)
	if [ -n "$s2" ]; then
		ok "systemd-analyze security with systemd/sandbox.conf: $s2"
	else
		notok "systemd-analyze security with sandbox.conf" "no score"
	fi
	sc restart triage.service >/dev/null 2>&1
	if until_ 25 daemon_up && out=$(run_job ns 2>&1) && [ "$out" = 0 ]; then
		ok "with systemd/sandbox.conf, the service runs jobs"
	else
		notok "service with sandbox.conf" "$(sc is-active triage.service); job: '$out'; $(ns journalctl -u triage.service -n 3 -o cat 2>/dev/null | tr '\n' ' ')"
	fi
}

# The Debian package (`make deb`), installed as an admin would, with
# apt-get, into this throwaway root once what `make install` put there is
# gone: its postinst adds the group and starts triage.socket, whose first
# connection starts the service, which runs a job.
apt_install() { # DEB LOG: with libtriage0, which triage depends on
	timeout 300 nsenter -t "$NSPID" -p -m -u -i -r -w env -i \
	    PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -q --no-install-recommends "/root/pkg/${1##*/}" \
	    ${LIBDEB:+"/root/pkg/${LIBDEB##*/}"} >"$2" 2>&1
}

# An upgrade from the previous version with a job running: the package
# restarts the running service once the new files are in, and the new
# daemon takes the job over.
check_upgrade() {
	local id pid main v
	if [ -z "$PREV" ]; then
		skip "upgrade" "no previous version of the package"; return
	fi
	id=$(counter_job) || { notok "upgrade" "submit failed"; return; }
	if ! until_ 20 printed "$id" 5; then
		notok "upgrade" "job $id did not start: $(job_field "$id" state)"; return
	fi
	pid=$(job_field "$id" pid); main=$(prop triage.service MainPID)
	if ! apt_install "$DEB" "$T/log/upgrade"; then
		notok "upgrade: apt-get install ./${DEB##*/}" "$(tail -5 "$T/log/upgrade" | tr '\n' ' ')"
		return
	fi
	v=$(ns dpkg-query -W -f '${Version}' triage)
	until_ 25 daemon_up
	if [ "$(prop triage.service MainPID)" = "$main" ] || ! is_active triage.service; then
		notok "upgrade restarts the service" "service $(sc is-active triage.service), MainPID $main -> $(prop triage.service MainPID)"
	elif [ "$(job_field "$id" state)" = running ] && [ "$(job_field "$id" attempt)" = 1 ]; then
		ok "upgrade to $v with a job running: the service restarted (MainPID $main -> $(prop triage.service MainPID)), the job taken over as attempt 1"
	else
		notok "upgrade adopts" "job $id is $(job_field "$id" state), attempt $(job_field "$id" attempt); $(ns journalctl -u triage.service -n 8 -o cat 2>/dev/null | tr '\n' ' ')"
	fi
	if is_active triage.socket; then
		ok "upgrade: triage.socket stayed active"
	else
		notok "upgrade: triage.socket" "$(sc is-active triage.socket) after the upgrade"
	fi
	counter_end "$id" "$pid" "upgrade of the package with a job running"
}

check_deb() {
	local f out= id
	if [ -z "$DEB" ]; then
		skip "deb" "no package built (make deb writes build/triage_*.deb)"
		return
	fi
	sc stop triage.socket triage.service >/dev/null 2>&1
	sc disable triage.socket triage.service >/dev/null 2>&1
	for f in $(cd "$T/install" && find . -type f | sed 's|^\.||; s|^/lib/|/usr/lib/|'); do
		ns rm -f "$f"
	done
	ns rm -rf /etc/triage /etc/systemd/system/triage.service.d /var/lib/triage
	# A container image's policy-rc.d (exit 101: start nothing) would keep
	# the postinst from starting the socket, as no real machine does.
	ns rm -f /usr/sbin/policy-rc.d
	sc daemon-reload
	# The previous version first, when there is one: the upgrade below.
	f=${PREV:-$DEB}
	if ! apt_install "$f" "$T/log/deb"; then
		notok "deb: apt-get install ./${f##*/}" "$(tail -5 "$T/log/deb" | tr '\n' ' ')"
		return
	fi
	if ! is_active triage.socket || [ "$(sc is-enabled triage.socket 2>/dev/null)" != enabled ]; then
		notok "deb: triage.socket" "not enabled and active after the install: $(sc status triage.socket --no-pager 2>&1 | head -5 | tr '\n' ' ')"
		return
	fi
	id=$(tr_ submit -p high -- sh -c 'echo packaged') &&
	    tr_ wait "$id" >/dev/null && out=$(tr_ output "$id")
	if [ "$out" = packaged ] && is_active triage.service &&
	    [ "$(prop triage.service TriggeredBy)" = triage.socket ]; then
		ok "deb: apt-get install ./${f##*/} gives an enabled triage.socket; its first connection starts triage.service, which runs a job"
	else
		notok "deb: a job through the packaged service" "output '$out'; service $(sc is-active triage.service); $(ns journalctl -u triage.service -n 5 -o cat 2>/dev/null | tr '\n' ' ')"
	fi
	# The README, which the man pages' readers are sent to, is there too.
	if ns sh -c 'zcat -f /usr/share/doc/triage/README.md* | grep -q "^# triage"'; then
		ok "deb: /usr/share/doc/triage has the README"
	else
		notok "deb: the README" "not in /usr/share/doc/triage: $(ns ls /usr/share/doc/triage 2>&1 | tr '\n' ' ')"
	fi
}

check_verify
check_sysusers
check_tmpfiles
check_activation
ensure_running || note "the daemon could not be started at all: $(ns journalctl -u triage.service -n 5 -o cat 2>/dev/null | tr '\n' ' ')"
check_notify
check_jobs
check_status_text
check_reload
check_stop_requeue
check_restart
check_restart_adopts
check_journal
check_watchdog
check_security
check_deb
[ -n "$DEB" ] && check_upgrade

# --- power off, and the host afterwards ---------------------------------
if timeout 30 nsenter -t "$NSPID" -p -m systemctl poweroff >/dev/null 2>&1 &&
	until_ 30 sh -c "! kill -0 $UPID 2>/dev/null"; then
	ok "systemctl poweroff ends the namespace"
else
	notok "poweroff" "the namespace's systemd is still there after 30s"
fi
# Whatever is left is killed and the cgroups removed; then the host.
FINAL=1
cleanup
trap 'host_forget "$T.host-before"' EXIT
host_after "$T.host-before"
note "run time: $(($(date +%s) - START))s"
finish
