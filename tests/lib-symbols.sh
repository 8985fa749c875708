#!/bin/sh
# lib-symbols.sh - libtriage.so.0 exports the functions of <triage/client.h>
# and nothing else, under its SONAME, and the CLI takes them from it.
#
# The functions are read from the header (its TRIAGE_API declarations),
# never from a list here; what the library defines is what `nm -D` says
# (the version node TRIAGE_0, an absolute symbol, aside). Each check is one
# test in cmocka's summary lines, for run-tests.sh. BUILD names the build
# directory (default build).

cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
HEADER=lib/triage/client.h
SO=$BUILD/lib/libtriage.so.0
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM HUP

# case_run, case_summary.
. tests/support/cases.sh

# The names a file of one name a line lacks beside another: "only in".
differ() {
	comm -23 "$1" "$2" | awk -v w="$3" '{ print "  only in " w ": " $0 }'
	comm -13 "$1" "$2" | awk -v w="$4" '{ print "  only in " w ": " $0 }'
	cmp -s "$1" "$2"
}

# The header's public functions: each declaration marked TRIAGE_API.
sed -n 's/^TRIAGE_API .*[ *]\(triage_[a-z0-9_]*\)(.*/\1/p' "$HEADER" |
    sort -u >"$tmp/declared"

header_declares_functions() {
	if [ ! -s "$tmp/declared" ]; then
		echo "  no TRIAGE_API declaration found in $HEADER"
		return 1
	fi
	# Every function the header names (in prose too) is one it declares
	# for export: a name without TRIAGE_API would be hidden.
	grep -o '\btriage_[a-z0-9_]*(' "$HEADER" | tr -d '(' | sort -u \
	    >"$tmp/named"
	differ "$tmp/named" "$tmp/declared" "what $HEADER names" \
	    "its TRIAGE_API declarations"
}

soname_is_libtriage_so_0() {
	if [ ! -f "$SO" ]; then
		echo "  $SO is not built (make $SO)"
		return 1
	fi
	soname=$(readelf -d "$SO" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	[ "$soname" = libtriage.so.0 ] && return 0
	echo "  the SONAME of $SO is '$soname', not libtriage.so.0"
	return 1
}

exports_exactly_the_header() {
	[ -f "$SO" ] || { echo "  $SO is not built"; return 1; }
	# Defined dynamic symbols but the version node (type A).
	nm -D --defined-only "$SO" | awk '$2 != "A" { print $3 }' \
	    >"$tmp/nm" || return 1
	sed 's/@.*//' "$tmp/nm" | sort -u >"$tmp/exported"
	differ "$tmp/exported" "$tmp/declared" "$SO's exports" "$HEADER" ||
	    return 1
	# And each at the version node the map gives them.
	if grep -v '@@TRIAGE_0$' "$tmp/nm" >"$tmp/unversioned"; then
		sed 's/^/  not at version TRIAGE_0: /' "$tmp/unversioned"
		return 1
	fi
}

debian_symbols_list_the_header() {
	# The symbols file's "name@TRIAGE_0 version" lines, the node aside.
	sed -n 's/^ \([a-z0-9_]*\)@TRIAGE_0 .*/\1/p' debian/libtriage0.symbols |
	    sort -u >"$tmp/symbols"
	differ "$tmp/symbols" "$tmp/declared" debian/libtriage0.symbols \
	    "$HEADER"
}

# The CLI is linked to the library (build/bin/triage, and what install puts,
# without a RUNPATH), and its objects define none of the library's
# functions, which the archive could otherwise give it a second copy of.
cli_uses_the_library() {
	rc=0
	for bin in "$BUILD/bin/triage" "$BUILD/install/triage"; do
		if [ ! -f "$bin" ]; then
			echo "  $bin is not built"
			return 1
		fi
		if ! readelf -d "$bin" | grep -q 'NEEDED.*\[libtriage\.so\.0\]'; then
			echo "  $bin does not need libtriage.so.0"
			rc=1
		fi
		nm --defined-only "$bin" | awk '{ print $3 }' | sort -u |
		    comm -12 - "$tmp/declared" >"$tmp/own"
		if [ -s "$tmp/own" ]; then
			awk -v b="$bin" '{ print "  " b " defines " $0 }' \
			    "$tmp/own"
			rc=1
		fi
	done
	runpath=$(readelf -d "$BUILD/bin/triage" |
	    sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
	if [ "$runpath" != '$ORIGIN/../lib' ]; then
		echo "  $BUILD/bin/triage has RUNPATH '$runpath'," \
		    "not \$ORIGIN/../lib"
		rc=1
	fi
	if readelf -d "$BUILD/install/triage" | grep -Eq '\((RPATH|RUNPATH)\)'
	then
		echo "  $BUILD/install/triage has an RPATH or a RUNPATH"
		rc=1
	fi
	return $rc
}

case_run header_declares_functions header_declares_functions
case_run soname_is_libtriage_so_0 soname_is_libtriage_so_0
case_run exports_exactly_the_header exports_exactly_the_header
case_run debian_symbols_list_the_header debian_symbols_list_the_header
case_run cli_uses_the_library cli_uses_the_library
case_summary
