#!/bin/sh
# check-includes.sh - fails when modules of daemon/, lib/ and store/ include
# each other's headers in a circle, or when a lib/ or store/ file includes a
# daemon/ header.
#
# A module is x.c with x.h (either may be missing); x -> y when x.c or x.h
# has #include "y.h", the header found as the compiler finds it: beside the
# file, then in lib/, store/, daemon/ (the Makefile's -Ilib -Istore -Idaemon).
# libtriage's public header, lib/triage/client.h ("triage/client.h"), is a
# module of its own, apart from lib/client.c's internal lib/client.h.
# <...>
# includes and headers elsewhere are no modules. A circle is a set of modules
# each of which reaches all the others (a strongly connected component); it
# is printed with the includes inside it, the ones to cut. The summary line
# is cmocka's, so that run-tests.sh counts this as one test.

cd "$(dirname "$0")/.." || exit 2
edges=$(mktemp) || exit 2
uses=$(mktemp) || exit 2
trap 'rm -f "$edges" "$uses"' EXIT
trap 'exit 2' INT TERM HUP

# One line per include between modules: from-module to-module file:line.
# A private header (x-private.h) is no module: it is what several files of
# one part share, and calls through it would hide a circle. Its users are
# noted instead (from-module header file:line), for what follows the loop.
for f in lib/*.c lib/*.h lib/triage/*.h store/*.c store/*.h daemon/*.c \
    daemon/*.h; do
	[ -f "$f" ] || continue
	dir=${f%/*}
	base=${f##*/}
	from=$dir/${base%.*}
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"' "$f" |
	    sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1 \2/' |
	    while read -r line name; do
		to=
		for cand in "$dir/$name" "lib/$name" "store/$name" \
		    "daemon/$name"; do
			if [ -f "$cand" ]; then
				to=$cand
				break
			fi
		done
		case $to in
		*/./* | */../*) to=$(realpath -m --relative-to=. "$to") ;;
		esac
		case $to in
		lib/*.h | store/*.h | daemon/*.h) ;;
		*) continue ;;
		esac
		case $to in
		*-private.h)
			echo "$from $to $f:$line" >>"$uses"
			continue
			;;
		esac
		to=${to%.h}
		[ "$to" = "$from" ] || echo "$from $to $f:$line"
	done
done >"$edges"

# Through a private header: its user depends on what the header includes,
# and on the module that defines each function of the header it calls.
while read -r from priv where; do
	case $from in
	*-private) continue ;;
	esac
	file=${where%:*}
	dir=${priv%/*}
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"' "$priv" |
	    sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1 \2/' |
	    while read -r line name; do
		for cand in "$dir/$name" "lib/$name" "store/$name" \
		    "daemon/$name"; do
			if [ -f "$cand" ]; then
				case $cand in
				*-private.h) ;;
				*) to=${cand%.h}
				   [ "$to" = "$from" ] ||
				       echo "$from $to $priv:$line(for:$file)" ;;
				esac
				break
			fi
		done
	done
	for fn in $(grep -o '\b[a-z_][a-z0-9_]*(' "$priv" | tr -d '(' |
	    sort -u); do
		def=$(grep -l "^$fn(" lib/*.c store/*.c daemon/*.c | head -n 1)
		[ -n "$def" ] || continue
		to=${def%.c}
		[ "$to" = "$from" ] && continue
		if grep -qw "$fn" "$file"; then
			echo "$from $to $file:$fn()"
		fi
	done
done <"$uses" >>"$edges"

# Reachability by Floyd-Warshall: some 60 modules, so n^3 is nothing.
awk '
{
	from = $1; to = $2; where = $3
	if (!(from in node)) { node[from]; name[++n] = from }
	if (!(to in node)) { node[to]; name[++n] = to }
	if ((from, to) in adj)
		adj[from, to] = adj[from, to] ", " where
	else
		adj[from, to] = where
	if (from ~ /^(lib|store)\// && to ~ /^daemon\//) {
		printf "check-includes: %s: %s includes a daemon/ header (%s.h)\n", where, substr(from, 1, index(from, "/")), to
		bad++
	}
}
END {
	# Sorted names, for output that does not change from run to run.
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && name[j - 1] > name[j]; j--) {
			t = name[j]; name[j] = name[j - 1]; name[j - 1] = t
		}
	for (i = 1; i <= n; i++)
		for (j = 1; j <= n; j++)
			if ((name[i], name[j]) in adj)
				reach[i, j] = 1
	for (k = 1; k <= n; k++)
		for (i = 1; i <= n; i++)
			if ((i, k) in reach)
				for (j = 1; j <= n; j++)
					if ((k, j) in reach)
						reach[i, j] = 1
	for (i = 1; i <= n; i++) {
		if (i in done || !((i, i) in reach))
			continue
		m = 0
		for (j = 1; j <= n; j++)
			if ((i, j) in reach && (j, i) in reach) {
				done[j]
				member[++m] = name[j]
			}
		list = ""
		for (a = 1; a <= m; a++)
			list = list " " member[a]
		printf "check-includes: circle of %d modules:%s\n", m, list
		for (a = 1; a <= m; a++)
			for (b = 1; b <= m; b++)
				if ((member[a], member[b]) in adj)
					printf "  %s -> %s (%s)\n", member[a], member[b], adj[member[a], member[b]]
		bad++
	}
	exit (bad > 0 ? 1 : 0)
}' "$edges"
rc=$?

echo "[==========] 1 test(s) run."
if [ "$rc" -eq 0 ]; then
	echo "[  PASSED  ] 1 test(s)."
	exit 0
fi
echo "[  FAILED  ] 1 test(s)."
exit 1
