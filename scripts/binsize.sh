#!/bin/sh
# binsize.sh: the size of the stripped switchboard binary, its sections,
# and how much of its code and read-only data each module takes: the sizes
# of its symbols of kind T, t, R, r (`go tool nm -size`), summed by the
# module that holds each symbol's package. The runtime's tables of every
# function (.gopclntab, go:func.*) and strings (go:string.*) are not
# attributed; they grow with the code.
# Run from the repository's root: sh scripts/binsize.sh
set -eu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$out/stripped" ./cmd/switchboard
CGO_ENABLED=0 go build -trimpath -o "$out/symbols" ./cmd/switchboard
echo "stripped binary: $(wc -c <"$out/stripped") bytes"
if command -v size >/dev/null; then
	size -A -d "$out/stripped" | awk '$1 ~ /^\.(text|rodata|gopclntab|typelink|itablink|noptrdata|data)$/ {
		printf "  section %-11s %9.1f KiB\n", $1, $2 / 1024 }'
fi
go version -m "$out/symbols" | awk '$1 == "mod" || $1 == "dep" { print $2 }' >"$out/modules"
go tool nm -size "$out/symbols" | awk -v mods="$out/modules" '
BEGIN { while ((getline m < mods) > 0) modlist[m] = 1 }
$3 !~ /^[TtRr]$/ { next }
{
	size = $2; name = $4
	for (i = 5; i <= NF; i++) name = name " " $i
	if (name ~ /^go:(func|string|cuinfo)/) { other += size; all += size; next }
	sub(/^type:\.?(eq|hash)?\.?/, "", name); sub(/^go:(itab\.)?\*?/, "", name); sub(/^\*/, "", name)
	# the package path: up to the first dot after the last slash before any "(" or "["
	p = name; sub(/[(\[].*/, "", p)
	n = split(p, parts, "/"); last = parts[n]; sub(/\..*/, "", last)
	pkg = ""; for (i = 1; i < n; i++) pkg = pkg parts[i] "/"; pkg = pkg last; gsub(/%2e/, ".", pkg)
	mod = "(standard library and runtime)"; best = 0
	for (m in modlist) if ((pkg == m || index(pkg, m "/") == 1) && length(m) > best) { mod = m; best = length(m) }
	total[mod] += size; all += size
}
END {
	for (m in total) printf "%10.1f KiB  %5.1f%%  %s\n", total[m] / 1024, 100 * total[m] / all, m
	printf "%10.1f KiB  %5.1f%%  %s\n", other / 1024, 100 * other / all, "(go:func.*, go:string.*: not attributed)"
	printf "%10.1f KiB  100.0%%  (code and read-only data, all)\n", all / 1024
}' | sort -rn
