#!/bin/bash
# kernel.sh DIR - fetches Debian 12's own kernel for `make test-vm` into DIR
# (build/vm), without installing it on the host: the package that
# linux-image-amd64 depends on is downloaded with `apt-get download` (apt
# checks it against the archive's signed lists) into DIR/deb, kept there as
# a cache, and unpacked with `dpkg-deb -x` into DIR/kernel. Installing it
# would run its postinst, which writes /boot and the host's initramfs.
#
# Leaves DIR/kernel/vmlinuz, DIR/kernel/version (its uname -r) and
# DIR/kernel/modules/NAME.ko, uncompressed (busybox's insmod takes only
# plain .ko files), for each module the initramfs loads: MODULES below.
# Prints what it did on stdout; exits 1 saying why on failure.
set -eu

mkdir -p "$1"
DIR=$(cd "$1" && pwd)
DEB=$DIR/deb
K=$DIR/kernel
# In the order the initramfs loads them (each after those it needs): virtio
# over PCI, 9p over virtio for the host's filesystem, overlay for the root.
MODULES="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev
virtio_pci netfs fscache 9pnet 9pnet_virtio 9p overlay"

die() { echo "kernel.sh: $*" >&2; exit 1; }

# The package's name: linux-image-amd64 is a metapackage naming the kernel
# of the day (linux-image-6.1.0-NN-amd64).
image_name() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -1
}
download() { # -> the .deb's path on stdout
	local name
	name=$(image_name)
	[ -n "$name" ] || return 1
	(cd "$DEB" && apt-get download -q "$name" >/dev/null 2>"$DEB/apt.err") || return 1
	ls -t "$DEB/$name"_*.deb 2>/dev/null | head -1
}

mkdir -p "$DEB"
deb=$(ls -t "$DEB"/linux-image-*.deb 2>/dev/null | head -1)
if [ -z "$deb" ]; then
	if ! deb=$(download) || [ -z "$deb" ]; then
		# The lists may be old (no such package, or a version gone from
		# the archive): update them once, then try again.
		echo "kernel.sh: apt-get download failed ($(tail -1 "$DEB/apt.err" 2>/dev/null)); apt-get update, then again"
		apt-get update -q >"$DEB/apt-update.log" 2>&1 ||
			die "apt-get update failed: $(tail -2 "$DEB/apt-update.log" | tr '\n' ' ')"
		deb=$(download) && [ -n "$deb" ] ||
			die "cannot download the kernel (linux-image-amd64 depends on '$(image_name)'): $(tail -2 "$DEB/apt.err" 2>/dev/null | tr '\n' ' ')"
	fi
	echo "kernel.sh: downloaded ${deb##*/}"
fi

# Unpacked once per package: DIR/kernel/deb names the one it came from.
if [ "$(cat "$K/deb" 2>/dev/null)" = "${deb##*/}" ] && [ -f "$K/vmlinuz" ]; then
	exit 0
fi
rm -rf "$K" "$K.x"
mkdir -p "$K.x" "$K/modules"
dpkg-deb -x "$deb" "$K.x" || die "dpkg-deb -x ${deb##*/} failed"
vmlinuz=$(ls "$K.x"/boot/vmlinuz-* 2>/dev/null | head -1)
[ -n "$vmlinuz" ] || die "no /boot/vmlinuz-* in ${deb##*/}"
version=${vmlinuz##*/vmlinuz-}
mv "$vmlinuz" "$K/vmlinuz"
echo "$version" > "$K/version"
for m in $MODULES; do
	f=$(find "$K.x/lib/modules/$version" "$K.x/usr/lib/modules/$version" \
		-name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" 2>/dev/null | head -1)
	[ -n "$f" ] || die "module $m is not in ${deb##*/}"
	case $f in
	*.ko) cp "$f" "$K/modules/$m.ko" ;;
	*.ko.xz) xz -dc "$f" > "$K/modules/$m.ko" || die "cannot decompress $f" ;;
	*.ko.zst) zstd -qdc "$f" > "$K/modules/$m.ko" || die "cannot decompress $f" ;;
	esac
done
echo "$MODULES" | tr -s ' \n' '\n\n' | grep . > "$K/modules/order"
rm -rf "$K.x"
echo "${deb##*/}" > "$K/deb"
echo "kernel.sh: unpacked ${deb##*/}: kernel $version, $(wc -l < "$K/modules/order") modules"
