#!/usr/bin/env bash
# Fuzz one harness for a while: test/fuzz/run.sh NAME [SECONDS] [OUTDIR]
#   NAME      watchstream, object, selector, kubeconfig, discovery or replay
#   SECONDS   how long (default 30)
#   OUTDIR    where build.sh put the harnesses (default build-fuzz/)
# The seed corpus (test/fuzz/corpus/NAME) and regressions are read, new
# inputs go to a scratch corpus under OUTDIR (the seeds are not touched).
# A crash leaves OUTDIR/crash-* and fails; the last line of output is
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
name=${1:?usage: test/fuzz/run.sh NAME [SECONDS] [OUTDIR]}
secs=${2:-30}
out=${3:-$top/build-fuzz}
exe=$out/fuzz_$name
[[ -x $exe ]] || "$here/build.sh" "$out" >/dev/null

case $name in
kubeconfig) dict=kubeconfig.dict ;;
discovery) dict=discovery.dict ;;
*) dict=json.dict ;;
esac
work=$out/corpus-$name
mkdir -p "$work"
log=$out/fuzz-$name.log
export TMPDIR=${TMPDIR:-/tmp}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# 2 GB RSS and 1 GB per allocation: an input that needs more is a finding.
set +e
"$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
	-max_len=65536 -dict="$here/dict/$dict" -artifact_prefix="$out/" \
	-print_final_stats=1 "$work" "$here/corpus/$name" "$here/regressions/$name" \
	>"$log" 2>&1
rc=$?
set -e
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
if [[ $rc != 0 ]]; then
	grep -E 'ERROR|check failed|runtime error|Test unit written' "$log" | head -20 >&2
	echo "fuzz $name: FAILED after ${execs:-?} execs (log: $log)" >&2
	exit 1
fi
echo "fuzz $name: ${execs:-?} execs in $secs s"
