# common.sh - what the systemd test (tests/systemd/run.sh) and the VM test
# (tests/vm/run.sh) share, sourced by both: a systemd that starts nothing
# but what the test gives it, and the check that the host is as it was.
# The sourcing script has ok, notok (name, why) and REPO.

# minimal_units DIR LABEL [UNIT...]: in DIR, journald and the shutdown path
# copied from the host, with the host's UNITs (started at sysinit), and the
# targets everything else names written empty, so that nothing else starts
# (no udev, tmpfiles, getty, timers, cron, postgresql...). LABEL names the
# test in their descriptions. The test's own target is the caller's.
minimal_units() {
	local dir=$1 label=$2 u t
	shift 2
	for u in systemd-journald.service systemd-journald.socket \
		systemd-journald-dev-log.socket "$@" \
		shutdown.target poweroff.target systemd-poweroff.service \
		halt.target systemd-halt.service reboot.target systemd-reboot.service \
		exit.target systemd-exit.service final.target umount.target \
		slices.target user.slice; do
		[ -e "/usr/lib/systemd/system/$u" ] && cp "/usr/lib/systemd/system/$u" "$dir/"
	done
	for t in local-fs.target local-fs-pre.target swap.target paths.target \
		timers.target network.target network-pre.target network-online.target \
		nss-lookup.target nss-user-lookup.target remote-fs.target \
		time-set.target time-sync.target cryptsetup.target getty.target \
		emergency.target rescue.target; do
		printf '[Unit]\nDescription=%s (empty, %s)\n' "$t" "$label" > "$dir/$t"
	done
	cat > "$dir/sockets.target" <<-EOT
	[Unit]
	Description=Sockets ($label)
	Wants=systemd-journald.socket systemd-journald-dev-log.socket
	EOT
	cat > "$dir/sysinit.target" <<-EOT
	[Unit]
	Description=System Initialization ($label)
	Wants=systemd-journald.service $*
	After=systemd-journald.service $*
	EOT
	cat > "$dir/basic.target" <<-EOT
	[Unit]
	Description=Basic System ($label)
	Requires=sysinit.target
	After=sysinit.target sockets.target
	Wants=sockets.target
	EOT
	cat > "$dir/multi-user.target" <<-EOT
	[Unit]
	Description=Multi-User System ($label)
	Requires=basic.target
	After=basic.target
	EOT
}

# The host as a test may not change it: /etc, every entry with its mode,
# size and mtime; /tmp, /run: the entries older than an hour (younger ones
# come and go with the machine's other users), and a canary dated a month
# ago in each, which systemd-tmpfiles would clean; with HOST_REPO set, the
# repository's files but build/ (git status).
#
# host_before TAG FILE: makes the canaries (named after TAG) and writes the
# snapshot to FILE. host_after FILE: checks the host against it (ok or
# notok "the host is unchanged"), and removes the canaries and FILE, as
# host_forget FILE does without a check.
host_snapshot() { # [AGE]: only /tmp and /run entries older than AGE minutes
	find /etc -xdev -printf '%p %m %s %T@\n' 2>/dev/null | sort
	find /tmp /run -xdev -mindepth 1 -maxdepth 1 ${1:+-mmin +$1} \
		! -name "$HOST_TAG-canary*" -printf '%p\n' 2>/dev/null | sort
	[ -z "${HOST_REPO:-}" ] ||
		git -C "$HOST_REPO" status --porcelain --ignored=no 2>/dev/null |
		grep -v ' build/' | sed 's/^/git: /'
}
host_forget() { # FILE: the canaries and the snapshot, for an early end
	# shellcheck disable=SC2086 # two paths, a word each
	rm -f "$1" ${HOST_CANARIES:-}
}
host_before() {
	HOST_TAG=$1
	HOST_CANARIES="/tmp/$1-canary.$$ /run/$1-canary.$$"
	# shellcheck disable=SC2086 # two paths, a word each
	touch -d '30 days ago' $HOST_CANARIES 2>/dev/null
	host_snapshot 60 > "$2"
}
host_after() {
	local before=$1 after=$1.after why= d c
	host_snapshot > "$after"
	for c in $HOST_CANARIES; do
		[ -e "$c" ] || why="$why $c (dated 30 days ago) is gone;"
	done
	d=$(diff <(grep '^/etc' "$before") <(grep '^/etc' "$after") | grep '^[<>]' | head -5)
	[ -z "$d" ] || why="$why /etc changed: $(echo "$d" | tr '\n' ' ');"
	d=$(comm -23 <(grep '^/[rt]' "$before") <(grep '^/[rt]' "$after") | head -5)
	[ -z "$d" ] || why="$why gone from /tmp or /run: $(echo "$d" | tr '\n' ' ');"
	d=$(diff <(grep '^git: ' "$before") <(grep '^git: ' "$after") | grep '^[<>]' | head -5)
	[ -z "$d" ] || why="$why the repository changed outside build/: $(echo "$d" | tr '\n' ' ');"
	if [ -z "$why" ]; then
		ok "the host is unchanged: /etc identical ($(grep -c '^/etc' "$after") entries), /tmp and /run keep their entries and the aged canaries${HOST_REPO:+, the repository unchanged outside build/}"
	else
		notok "the host is unchanged" "$why"
	fi
	rm -f "$after"
	host_forget "$before"
}
