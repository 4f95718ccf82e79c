#!/usr/bin/env bash
# Build kinf's libFuzzer harnesses: the src/ files compiled directly with
# clang -fsanitize=fuzzer,address,undefined, one executable per fuzz_*.c.
#   test/fuzz/build.sh [OUTDIR]      (default: build-fuzz/ at the top)
# Prints the OUTDIR. Rebuilds only what changed (by timestamps).
# KINF_FUZZ_SRC=DIR takes the library sources from DIR instead of src/
# (e.g. `git archive HEAD src | tar -x -C /tmp/snap`, for runs that must
# not pick up uncommitted work).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
srcdir=${KINF_FUZZ_SRC:-$top/src}
out=${1:-$top/build-fuzz}
mkdir -p "$out/obj"
out=$(cd "$out" && pwd)
# One build at a time per OUTDIR (meson runs the fuzz tests in parallel).
exec 9>"$out/.build.lock"
flock 9

CC=${CC:-clang}
if ! command -v "$CC" >/dev/null; then
	echo "build.sh: $CC not found (.ci/deps --dev installs clang)" >&2
	exit 1
fi
version=$(sed -n "s/^[[:space:]]*version: '\([^']*\)',/\1/p" "$top/meson.build" | head -1)
pkgs="libcurl yaml-0.1 jansson openssl zlib"
cflags=(-g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L "-DKINF_VERSION=\"${version:-0}\""
	-Wall -Wextra -Wno-unused-parameter -Werror
	-fno-omit-frame-pointer -fno-sanitize-recover=undefined
	-I"$srcdir" $(pkg-config --cflags $pkgs))
# Every layer's folder on the include path, as meson has them (src/meson.build).
for dir in "$srcdir"/*/; do
	cflags+=(-I"${dir%/}")
done
libs=($(pkg-config --libs $pkgs) -lpthread)

# The library: every .c below src/, instrumented for coverage but without
# main(); src/client/kubeconfig/load.c is obj/client_kubeconfig_load.o.
objs=()
pids=()
while IFS= read -r src; do
	rel=${src#"$srcdir"/}
	obj=$out/obj/${rel//\//_}
	obj=${obj%.c}.o
	objs+=("$obj")
	if [[ ! -e $obj || $src -nt $obj || -n $(find "$srcdir" -name '*.h' -newer "$obj") ]]; then
		# buf.c's byte loops (zeroing secrets) are not worth coverage
		# feedback and would dominate the kubeconfig harness's time.
		san=fuzzer-no-link,address,undefined
		[[ $(basename "$src") == buf.c ]] && san=address,undefined
		"$CC" "${cflags[@]}" -fsanitize=$san -c "$src" -o "$obj" &
		pids+=($!)
	fi
done < <(find "$srcdir" -name '*.c' | sort)
for p in "${pids[@]}"; do
	wait "$p"
done

for h in "$here"/fuzz_*.c; do
	exe=$out/$(basename "$h" .c)
	stale=0
	[[ ! -e $exe || $h -nt $exe || $here/fuzz.h -nt $exe ]] && stale=1
	for o in "${objs[@]}"; do
		[[ $o -nt $exe ]] && stale=1
	done
	if [[ $stale == 1 ]]; then
		"$CC" "${cflags[@]}" -fsanitize=fuzzer,address,undefined "$h" "${objs[@]}" \
			"${libs[@]}" -o "$exe"
	fi
done
echo "$out"
