#!/usr/bin/env bash
# Fuzz one harness for a while: test/fuzz/run.sh NAME [SECONDS] [OUTDIR]
#   NAME      watchstream, object, selector, kubeconfig, discovery, replay,
#             listsplit, jsonskim, header, httpreq or termsafe
#   SECONDS   how long (default 30)
#   OUTDIR    where build.sh puts the harnesses (default build-fuzz/)
# The seed corpus (test/fuzz/corpus/NAME) and regressions are read, new
# inputs go to a scratch corpus under OUTDIR (the seeds are not touched).
# A crash leaves OUTDIR/crash-* and fails; the last line of output is
# "fuzz NAME: N execs in S s". KINF_FUZZ_RUNS=N stops after N executions
# instead (SECONDS is then an upper bound), for the counts in RESULTS.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
name=${1:?usage: test/fuzz/run.sh NAME [SECONDS] [OUTDIR]}
secs=${2:-30}
out=${3:-$top/build-fuzz}
[[ -e $here/fuzz_$name.c ]] || { echo "run.sh: no harness fuzz_$name.c" >&2; exit 2; }
"$here/build.sh" "$out" >/dev/null
exe=$out/fuzz_$name

case $name in
kubeconfig) dict=kubeconfig.dict ;;
discovery) dict=discovery.dict ;;
httpreq) dict=http.dict ;;
*) dict=json.dict ;;
esac
work=$out/corpus-$name
mkdir -p "$work"
log=$out/fuzz-$name.log
# Temporary files of the kubeconfig and discovery harnesses: memory if we can.
if [[ -z ${TMPDIR:-} ]]; then
	TMPDIR=/tmp
	[[ -d /dev/shm && -w /dev/shm ]] && TMPDIR=/dev/shm
fi
export TMPDIR
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
runs=()
[[ -n ${KINF_FUZZ_RUNS:-} ]] && runs=(-runs="$KINF_FUZZ_RUNS")
start=$SECONDS
# 10 s per input, 2 GB RSS, 1 GB per allocation: more is a finding.
set +e
"$exe" "${runs[@]}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	-malloc_limit_mb=1024 -max_len=65536 -dict="$here/dict/$dict" \
	-artifact_prefix="$out/" -print_final_stats=1 \
	"$work" "$here/corpus/$name" "$here/regressions/$name" >"$log" 2>&1
rc=$?
set -e
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
if [[ $rc != 0 ]]; then
	grep -aE 'ERROR|check failed|runtime error|Test unit written' "$log" | head -20 >&2
	echo "fuzz $name: FAILED after ${execs:-?} execs (log: $log)" >&2
	exit 1
fi
echo "fuzz $name: ${execs:-?} execs in $((SECONDS - start)) s"
