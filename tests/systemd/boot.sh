#!/bin/sh
# boot.sh T [hybrid|unified] - run by tests/systemd/run.sh as the first process of new PID,
# mount, UTS, IPC and cgroup namespaces: builds a root for the namespace's
# systemd in which nothing writes to the host's files, then execs systemd.
#
#   /                 an overlay: the host's root read-only below, a tmpfs
#                     above (every write of the namespace lands there)
#   /tmp /var/tmp /run /run/systemd /run/user   tmpfs of their own
#   /proc             the namespace's (unshare --mount-proc), /proc/sys ro
#   /sys              the host's, read-only; /sys/fs/cgroup remounted
#                     from inside the cgroup namespace (systemd's root is
#                     the test's own cgroup, not the host's)
#   /dev              the host's (systemd mounts its shm, pts, mqueue on it,
#                     in this namespace only)
#   /usr/lib/systemd/system   a tmpfs holding only the units the test
#                     allows (T/units); /usr/lib/systemd/*-generators and
#                     /etc/systemd/system hold nothing but what T gives
#
# T/install (a DESTDIR tree), T/etc (passwd, group, triage/) are copied in.
set -eu
# Only ever as PID 1 of a new PID namespace: never on the host's mounts.
if [ "$$" != 1 ]; then
	echo "boot.sh: not PID 1 of a new PID namespace; refusing" >&2
	exit 1
fi
T=$1
R=$T/root
O=$T/ovl

mount --make-rprivate /
mkdir -p "$O" "$R"
mount -t tmpfs -o mode=0755 tmpfs "$O"
mkdir -p "$O/upper" "$O/work"
mount -t overlay -o lowerdir=/,upperdir="$O/upper",workdir="$O/work" overlay "$R"

mount --rbind /dev "$R/dev"
mount -t proc proc "$R/proc"
mount --bind "$R/proc/sys" "$R/proc/sys"
mount -o remount,bind,ro "$R/proc/sys"
mount --bind /sys "$R/sys"
mount -o remount,bind,ro "$R/sys"
if [ "${2:-hybrid}" = unified ]; then
	mount -t cgroup2 cgroup2 "$R/sys/fs/cgroup"
else
	mount -t tmpfs -o mode=0755 tmpfs "$R/sys/fs/cgroup"
	mkdir "$R/sys/fs/cgroup/systemd" "$R/sys/fs/cgroup/unified"
	mount -t cgroup -o none,name=systemd cgroup "$R/sys/fs/cgroup/systemd"
	mount -t cgroup2 cgroup2 "$R/sys/fs/cgroup/unified"
fi

for d in tmp var/tmp; do
	mount -t tmpfs -o mode=1777 tmpfs "$R/$d"
done
mount -t tmpfs -o mode=0755 tmpfs "$R/run"
mkdir -p "$R/run/systemd" "$R/run/user"
mount -t tmpfs -o mode=0755 tmpfs "$R/run/systemd"
mount -t tmpfs -o mode=0755 tmpfs "$R/run/user"

# Units: only those of T/units, and no generators.
mount -t tmpfs -o mode=0755 tmpfs "$R/usr/lib/systemd/system"
cp -a "$T/units/." "$R/usr/lib/systemd/system/"
for g in system-generators system-environment-generators; do
	[ -d "$R/usr/lib/systemd/$g" ] &&
		mount -t tmpfs -o mode=0755 tmpfs "$R/usr/lib/systemd/$g"
done
for d in etc/systemd/system etc/systemd/system-generators usr/local/lib/systemd/system; do
	rm -rf "${R:?}/$d"
	mkdir -p "$R/$d"
done

# What the test installs: the DESTDIR tree, then its /etc files.
if [ -d "$T/install" ]; then
	for top in "$T/install"/*; do
		[ -e "$top" ] || continue
		case ${top##*/} in
		usr|etc|var|opt) cp -a "$top" "$R/" ;;
		lib|lib64|bin|sbin) mkdir -p "$R/usr/${top##*/}"
			cp -a "$top/." "$R/usr/${top##*/}/" ;;
		*) echo "boot.sh: not installing $top" >&2 ;;
		esac
	done
fi
cp -a "$T/etc/." "$R/etc/"
# The Debian package to install, when there is one.
if [ -d "$T/pkg" ]; then
	mkdir -p "$R/root/pkg"
	cp -a "$T/pkg/." "$R/root/pkg/"
fi

cd "$R"
mkdir -p old-root
pivot_root . old-root
cd /
umount -l /old-root
rmdir /old-root

export container=triage-test
exec /usr/lib/systemd/systemd --system --unit=triage-test.target \
	--log-target=journal --log-level=info --show-status=no </dev/null
