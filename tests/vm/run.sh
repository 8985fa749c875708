#!/bin/bash
# run.sh - `make test-vm`: triage under systemd as PID 1 on Debian 12's own
# kernel, in a QEMU VM (TCG), where cgroup v2 is whole (memory, pids, cpu),
# as it is not on this project's machines. The host side: fetches the kernel
# (tests/vm/kernel.sh), builds the initramfs (busybox, the modules,
# tests/vm/init), the guest's units and a `make install` tree, boots the VM
# over the host's / (read-only over 9p, a tmpfs overlay above it), prints
# the guest's results (tests/vm/checks.sh) as they come back over a
# writable 9p share, and checks that the host's files are untouched.
#
# Prints "ok - name" / "not ok - name: why" per check, with timings, then
# "N passed, N failed, N skipped"; exits 1 on any failure. Skips (exit 0)
# when not root (qemu must read every file of / for the guest's systemd).
#
# Environment: VM_ACCEL (tcg; kvm where /dev/kvm works), VM_MEM (MiB, 1536),
# VM_CPUS (2), deadlines in seconds: VM_BOOT_SECS (120: from qemu's start
# to the checks' start), VM_CHECK_SECS (150: one check),
# VM_POWEROFF_SECS (60), VM_TOTAL_SECS (480).
set -u

REPO=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$REPO/tests/vm
. "$REPO/tests/systemd/common.sh"
V=$REPO/build/vm
OUT=$V/out
ACCEL=${VM_ACCEL:-tcg}
BOOT_SECS=${VM_BOOT_SECS:-120}
CHECK_SECS=${VM_CHECK_SECS:-150}
POWEROFF_SECS=${VM_POWEROFF_SECS:-60}
TOTAL_SECS=${VM_TOTAL_SECS:-480}

passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
notok() { failed=$((failed + 1)); echo "not ok - $1: $2"; }
note() { echo "# $*"; }
finish() {
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit $?
}
# Milliseconds since the epoch, and a duration in seconds from two of them.
ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
secs() { local d=$(($2 - $1)); printf '%d.%01d' $((d / 1000)) $((d % 1000 / 100)); }
T0=$(ms)

if [ "$(id -u)" != 0 ]; then
	echo "skip - VM test: needs root (qemu exports / to the guest, whose systemd reads root's files) (uid $(id -u))"
	exit 0
fi
for b in triaged triage; do
	[ -x "$REPO/build/bin/$b" ] || { notok "build" "$REPO/build/bin/$b missing (make first)"; finish; }
done
for t in qemu-system-x86_64 busybox apt-get dpkg-deb; do
	command -v "$t" >/dev/null || { notok "tools" "no $t (make test-vm installs VM_TEST_TOOLS)"; finish; }
done
case $REPO in *[[:space:]]*)
	notok "the repository's path" "'$REPO' has a blank: it cannot go on the kernel's command line"; finish ;;
esac
if [ "$ACCEL" = kvm ] && ! [ -w /dev/kvm ]; then
	note "VM_ACCEL=kvm but /dev/kvm is not usable: TCG"
	ACCEL=tcg
fi

# --- the kernel, the initramfs, the units, the install tree --------------
mkdir -p "$V"
if ! out=$(bash "$HERE/kernel.sh" "$V" 2>&1); then
	notok "kernel" "$out"
	finish
fi
[ -z "$out" ] || echo "$out" | sed 's/^/# /'
KVER=$(cat "$V/kernel/version")

# The initramfs: a static busybox, the modules in their order, /init.
I=$V/initramfs
rm -rf "$I" "$V/initramfs.cpio"
mkdir -p "$I/bin" "$I/modules"
bb=$(command -v busybox)
if ! file -L "$bb" 2>/dev/null | grep -q 'statically linked' && ldd "$bb" >/dev/null 2>&1; then
	notok "initramfs" "$bb is not statically linked (busybox-static is needed)"
	finish
fi
cp "$bb" "$I/bin/busybox"
cp "$V/kernel/modules/"*.ko "$V/kernel/modules/order" "$I/modules/"
cp "$HERE/init" "$I/init"
chmod 0755 "$I/init" "$I/bin/busybox"
if ! (cd "$I" && find . | LC_ALL=C sort | busybox cpio -o -H newc 2>/dev/null) > "$V/initramfs.cpio" ||
	! [ -s "$V/initramfs.cpio" ]; then
	notok "initramfs" "busybox cpio failed"
	finish
fi

# The units the guest's systemd sees, and nothing else of the host's:
# journald and the shutdown path; the test's own target and service. The
# guest boots to triage-vm.target.
U=$V/units
rm -rf "$U"
mkdir -p "$U"
minimal_units "$U" "triage VM test"
cat > "$U/triage-vm.target" <<'EOF'
[Unit]
Description=triage VM test: boot this far only
Requires=basic.target
After=basic.target
Wants=triage-vm-checks.service
AllowIsolate=yes
EOF
# The checks, then power off however they end.
cat > "$U/triage-vm-checks.service" <<EOF
[Unit]
Description=triage VM test: the checks (tests/vm/checks.sh)
After=basic.target
SuccessAction=poweroff
FailureAction=poweroff

[Service]
Type=oneshot
ExecStart=/bin/bash ${VM_CHECKS:-$HERE/checks.sh} $OUT $V/install
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=${TOTAL_SECS}s
EOF
ln -s triage-vm.target "$U/default.target"

# What the guest installs: `make install` into a staging tree, as an admin
# would into /usr/local (the unit's @sbindir@ becomes /usr/local/sbin).
rm -rf "$V/install"
if ! make -C "$REPO" --no-print-directory install DESTDIR="$V/install" \
	PREFIX=/usr/local >"$V/install.log" 2>&1; then
	notok "make install DESTDIR=build/vm/install" "$(tail -3 "$V/install.log" | tr '\n' ' ')"
	finish
fi
unit=$(find "$V/install" -name triage.service | head -1)
[ -n "$unit" ] || { notok "make install" "installed no triage.service"; finish; }
note "installs in the guest: $(cd "$V/install" && find . -path '*bin/*' -o -name 'triage.service' | sed 's/^\.//' | tr '\n' ' ')"

# --- the host before ----------------------------------------------------
HOST_REPO=$REPO
host_before triage-vmtest "$V/host-before"

# --- boot ---------------------------------------------------------------
rm -rf "$OUT"
mkdir -p "$OUT"
: > "$OUT/results"
: > "$OUT/stage"
QPID=
stop_qemu() {
	if [ -n "$QPID" ] && kill -0 "$QPID" 2>/dev/null; then
		kill -TERM "$QPID" 2>/dev/null
		for _ in $(seq 1 50); do kill -0 "$QPID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$QPID" 2>/dev/null
		wait "$QPID" 2>/dev/null
	fi
	QPID=
}
trap 'stop_qemu; host_forget "$V/host-before"' EXIT
trap 'echo "# interrupted"; exit 130' INT TERM

CMDLINE="console=ttyS0 quiet loglevel=4 panic=-1 rdinit=/init"
CMDLINE="$CMDLINE vmtest.repo=$REPO vmtest.out=$OUT"
CMDLINE="$CMDLINE systemd.show_status=0 systemd.log_target=console systemd.log_level=notice"
# No network device, no disk: the host's / (read-only) and the results
# share, over virtio-9p; the console on ttyS0, into build/vm/console.log.
qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot \
	-machine pc -accel "$ACCEL" -cpu max -smp "${VM_CPUS:-2}" -m "${VM_MEM:-1536}" \
	-kernel "$V/kernel/vmlinuz" -initrd "$V/initramfs.cpio" \
	-append "$CMDLINE" \
	-virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$OUT,mount_tag=out,security_model=none,multidevs=remap" \
	-serial "file:$V/console.log" </dev/null >"$V/qemu.log" 2>&1 &
QPID=$!
TBOOT=$(ms)
note "booting Debian's kernel $KVER under qemu ($ACCEL, ${VM_CPUS:-2} CPUs, ${VM_MEM:-1536} MiB): the host's / read-only over 9p"

# Follows the guest: prints its result lines as they come, and keeps to
# each step's deadline. The guest writes its steps to $OUT/stage: "init
# UPTIME" (the initramfs mounted the shares), "checks UPTIME" (systemd
# started the checks), "check NAME" (one begins), "done" (all ended).
console_tail() { tail -n "${1:-12}" "$V/console.log" 2>/dev/null | tr -d '\r' | sed 's/^/#   console: /'; }
nres=0 nstage=0
step="kernel and initramfs (nothing from /init yet)" limit=$BOOT_SECS tstep=$TBOOT
t_init='' t_checks='' t_done='' hung=''
show_results() {
	local total line
	total=$(wc -l < "$OUT/results")
	[ "$total" -gt "$nres" ] || return 0
	while IFS= read -r line; do
		case $line in
		"ok - "*) passed=$((passed + 1)) ;;
		"not ok - "*) failed=$((failed + 1)) ;;
		"skip - "*) skipped=$((skipped + 1)) ;;
		esac
		printf '%s\n' "$line"
	done < <(sed -n "$((nres + 1)),${total}p" "$OUT/results")
	nres=$total
}
read_stage() {
	local total line now
	total=$(wc -l < "$OUT/stage")
	[ "$total" -gt "$nstage" ] || return 0
	now=$(ms)
	while IFS= read -r line; do
		tstep=$now
		case $line in
		init*) t_init=$now; step="systemd's boot (the initramfs handed over at uptime ${line#init }s)"; limit=$BOOT_SECS
			tstep=$TBOOT ;;
		checks*) t_checks=$now; step="the checks' start"; limit=$CHECK_SECS
			note "boot: $(secs "$TBOOT" "$now")s from qemu's start to the checks (initramfs done after $(secs "$TBOOT" "$t_init")s; guest uptime ${line#checks }s)" ;;
		"check "*) step="check '${line#check }'"; limit=$CHECK_SECS ;;
		done*) t_done=$now; step="poweroff"; limit=$POWEROFF_SECS ;;
		esac
	done < <(sed -n "$((nstage + 1)),${total}p" "$OUT/stage")
	nstage=$total
}
while kill -0 "$QPID" 2>/dev/null; do
	read_stage
	show_results
	now=$(ms)
	if [ $((now - tstep)) -gt $((limit * 1000)) ]; then
		hung="$step: no progress in ${limit}s"
		break
	fi
	if [ $((now - TBOOT)) -gt $((TOTAL_SECS * 1000)) ]; then
		hung="$step: the whole run past ${TOTAL_SECS}s"
		break
	fi
	sleep 0.2
done
TEND=$(ms)
read_stage
show_results
if [ -n "$hung" ]; then
	notok "the VM run" "hung at $hung; killing qemu"
	console_tail 15
	stop_qemu
else
	wait "$QPID"
	rc=$?
	QPID=
	if [ -z "$t_init" ]; then
		notok "boot" "qemu exited ($rc) before /init mounted the shares: $(tail -3 "$V/qemu.log" | tr '\n' ' ')"
		console_tail 15
	elif [ -z "$t_checks" ]; then
		notok "boot" "the VM powered off before systemd started the checks"
		console_tail 15
	elif [ -z "$t_done" ]; then
		notok "the checks" "the VM powered off before they ended (last: $step)"
		console_tail 15
	elif [ "$rc" != 0 ]; then
		notok "poweroff" "qemu exited $rc: $(tail -3 "$V/qemu.log" | tr '\n' ' ')"
	else
		ok "poweroff: the VM powered off $(secs "$t_done" "$TEND")s after the checks ended"
	fi
fi

# --- the host afterwards ------------------------------------------------
host_after "$V/host-before"
note "times: boot $( [ -n "$t_checks" ] && secs "$TBOOT" "$t_checks" || echo -)s, checks $( [ -n "$t_done" ] && secs "$t_checks" "$t_done" || echo -)s, poweroff $( [ -n "$t_done" ] && secs "$t_done" "$TEND" || echo -)s; all $(secs "$T0" "$(ms)")s"
finish
