# Shared helpers for kinf's bats files: load with `load helpers`.
#
#   setup_file()    { fakeapi_start; }          # or: fakeapi_start --pods 1000
#   teardown_file() { fakeapi_stop; }
#   @test "..." { run kinf list pods; assert_success; }
#
# fakeapi_start exports FAKEAPI_DIR, FAKEAPI_URL, KUBECONFIG, XDG_CACHE_HOME
# and KUBECACHEDIR (kubectl's discovery cache); test/fakeapi/README.md
# documents the server and its /_fake/ control interface.

bats_require_minimum_version 1.5.0

export BATS_LIB_PATH=${BATS_LIB_PATH:-/usr/lib/bats}
bats_load_library bats-support
bats_load_library bats-assert

KINF_SOURCE_ROOT=${KINF_SOURCE_ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
KINF=${KINF:-$KINF_SOURCE_ROOT/build/cmd/kinf/kinf}
FAKEAPI_SERVER=${FAKEAPI_SERVER:-$KINF_SOURCE_ROOT/test/fakeapi/server.py}
export KINF_SOURCE_ROOT KINF

# fakeapi_start [--dir DIR] [server options...]
# Starts test/fakeapi/server.py in the background (fd 3 closed so bats does
# not wait for it) and waits, at most 30 s, for DIR/ready.  DIR defaults to
# $BATS_FILE_TMPDIR/fakeapi (a fresh fakeapi.XXXXXX if that one is taken).
fakeapi_start() {
	local dir=
	if [[ ${1:-} == --dir ]]; then
		dir=$2
		shift 2
	fi
	if [[ -z $dir ]]; then
		dir=$BATS_FILE_TMPDIR/fakeapi
		[[ -e $dir ]] && dir=$(mktemp -d "$BATS_FILE_TMPDIR/fakeapi.XXXXXX")
	fi
	mkdir -p "$dir"
	# --exit-with: the server also stops if this bats process dies without
	# running teardown_file.
	/usr/bin/python3 "$FAKEAPI_SERVER" --dir "$dir" --exit-with "$$" "$@" \
		>"$dir/server.log" 2>&1 3>&- </dev/null &
	local pid=$! i
	for ((i = 0; i < 600; i++)); do
		[[ -e $dir/ready ]] && break
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "fakeapi exited before it was ready:" >&2
			cat "$dir/server.log" >&2
			return 1
		fi
		sleep 0.05
	done
	if [[ ! -e $dir/ready ]]; then
		echo "fakeapi not ready after 30 s:" >&2
		cat "$dir/server.log" >&2
		kill "$pid" 2>/dev/null
		return 1
	fi
	export FAKEAPI_DIR=$dir FAKEAPI_PID=$pid
	FAKEAPI_URL=$(<"$dir/url")
	export FAKEAPI_URL KUBECONFIG=$dir/kubeconfig
	export XDG_CACHE_HOME=$dir/cache KUBECACHEDIR=$dir/cache/kube
	mkdir -p "$XDG_CACHE_HOME"
}

# fakeapi_stop: SIGTERM the server started by fakeapi_start, wait for it
# (SIGKILL after 10 s).
fakeapi_stop() {
	local pid=${FAKEAPI_PID:-} i
	if [[ -z $pid && -n ${FAKEAPI_DIR:-} && -e $FAKEAPI_DIR/pid ]]; then
		pid=$(<"$FAKEAPI_DIR/pid")
	fi
	[[ -n $pid ]] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 200; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	unset FAKEAPI_PID
}

# fakeapi_ctl METHOD PATH [JSON]: call the control API; PATH may omit the
# leading /_fake/ ("faults" means /_fake/faults).  Fails on HTTP errors.
fakeapi_ctl() {
	local method=$1 path=$2 data=${3:-}
	[[ $path == /* ]] || path=/_fake/$path
	local args=(-sS --fail-with-body -X "$method" --cacert "$FAKEAPI_DIR/ca.crt")
	if [[ -n $data ]]; then
		args+=(-H 'Content-Type: application/json' --data "$data")
	fi
	curl "${args[@]}" "$FAKEAPI_URL$path"
}

# fakeapi_requests: the recorded requests, one JSON object per line.
fakeapi_requests() {
	fakeapi_ctl GET /_fake/requests
}

# fakeapi_curl [curl args...] PATH: an authenticated (admin token) request.
fakeapi_curl() {
	local last=${*: -1}
	local rest=("${@:1:$#-1}")
	curl -sS --cacert "$FAKEAPI_DIR/ca.crt" \
		-H "Authorization: Bearer $(<"$FAKEAPI_DIR/admin-token")" "${rest[@]}" \
		"$FAKEAPI_URL$last"
}

# require_kubectl: skip the test (or, in setup_file, the file) when kubectl
# is missing. kubectl is the judge of the fake server and of kinf's output;
# Debian packages no current kubectl, so a machine may lack it.
require_kubectl() {
	command -v kubectl >/dev/null 2>&1 || skip "kubectl is not installed"
}

# kubectl_fake ...: kubectl against the fake server. kubectl is the judge of
# the fake and of kinf's output; on a machine without it (Debian packages
# no current kubectl) the tests that need it are skipped, saying so.
kubectl_fake() {
	if ! command -v kubectl >/dev/null 2>&1; then
		skip "kubectl is not installed"
	fi
	kubectl --kubeconfig "$FAKEAPI_DIR/kubeconfig" "$@"
}

BAD=$KINF_SOURCE_ROOT/test/fixtures/badservers

# bad_start [--dir DIR] MODE [--tls]: start test/fixtures/badservers/
# badserver.py in the background (DIR defaults to $BATS_TEST_TMPDIR/bad);
# exports BAD_DIR, BAD_URL, BAD_PID, KUBECONFIG and XDG_CACHE_HOME.
bad_start() {
	local dir=$BATS_TEST_TMPDIR/bad
	if [[ $1 == --dir ]]; then
		dir=$2
		shift 2
	fi
	mkdir -p "$dir"
	/usr/bin/python3 "$BAD/badserver.py" --dir "$dir" --mode "$@" --exit-with "$$" \
		>"$dir/server.log" 2>&1 3>&- </dev/null &
	local pid=$! i
	for ((i = 0; i < 400; i++)); do
		[[ -e $dir/ready ]] && break
		kill -0 "$pid" 2>/dev/null || { cat "$dir/server.log" >&2; return 1; }
		sleep 0.05
	done
	[[ -e $dir/ready ]] || { echo "badserver not ready" >&2; return 1; }
	export BAD_DIR=$dir BAD_PID=$pid KUBECONFIG=$dir/kubeconfig
	export XDG_CACHE_HOME=$dir/cache
	BAD_URL=$(<"$dir/url")
	export BAD_URL
}

# bad_stop: stop the server bad_start started.
bad_stop() {
	if [[ -n ${BAD_PID:-} ]]; then
		kill "$BAD_PID" 2>/dev/null || true
		wait "$BAD_PID" 2>/dev/null || true
		unset BAD_PID
	fi
}

# same_as_kubectl_get WORDS...: kinf list WORDS and kubectl get WORDS print
# the same stdout and both succeed or both fail; else says how and fails.
# Asked twice when they differ: an AGE cell may tick between the two
# (59s, 60s), a difference of kinf's stays.
same_as_kubectl_get() {
	local kinf_out kubectl_out kinf_rc kubectl_rc try
	for try in 1 2; do
		kinf_rc=0 kubectl_rc=0
		kinf_out=$("$KINF" list "$@" 2>/dev/null) || kinf_rc=$?
		kubectl_out=$(kubectl_fake get "$@" 2>/dev/null) || kubectl_rc=$?
		if [[ $kinf_out == "$kubectl_out" ]] && (((kinf_rc == 0) == (kubectl_rc == 0))); then
			return 0
		fi
	done
	echo "kinf list $* (status $kinf_rc) differs from kubectl get (status $kubectl_rc):"
	diff -u <(printf '%s\n' "$kubectl_out") <(printf '%s\n' "$kinf_out")
	return 1
}

# same_as_kubectl_get_each ROW...: same_as_kubectl_get for each ROW (its
# words split at blanks); fails after all of them when one differed.
same_as_kubectl_get_each() {
	local row failed=0
	for row in "$@"; do
		# shellcheck disable=SC2086
		same_as_kubectl_get $row || failed=1
	done
	return "$failed"
}

# kinf ...: runs $KINF.  Output and status pass through (so `run -N kinf ...`
# works); the command line and status are also written to the test's log
# (bats fd 4, else stderr), which bats shows only when the test fails.
kinf() {
	local rc=0
	"$KINF" "$@" || rc=$?
	if { true >&4; } 2>/dev/null; then
		echo "# kinf $* (status=$rc)" >&4
	else
		echo "# kinf $* (status=$rc)" >&2
	fi
	return "$rc"
}

# lines_at_least FILE N: FILE exists and has N lines or more.
lines_at_least() {
	[ -f "$1" ] && [ "$(wc -l < "$1")" -ge "$2" ]
}

# wait_until COMMAND...: retry for up to 20 s; on failure show $ERR's tail.
wait_until() {
	for _ in $(seq 1 200); do
		if "$@"; then
			return 0
		fi
		sleep 0.1
	done
	echo "timed out waiting for: $*" >&2
	[ -f "${ERR:-}" ] && tail -20 "$ERR" >&2
	return 1
}

# serve_start_in DIR ARGS...: `kinf serve ARGS` in the background, with a
# unix socket DIR/s.sock, a free loopback port and its kubeconfig in
# DIR/kubeconfig (log in DIR/log, pid in DIR/pid), waited for until it is
# ready (at most 20 s).
serve_start_in() {
	local dir=$1
	shift
	mkdir -p "$dir"
	"$KINF" serve "$@" --listen "unix:$dir/s.sock" --listen tcp:127.0.0.1:0 \
		--write-kubeconfig "$dir/kubeconfig" >"$dir/log" 2>&1 3>&- </dev/null &
	echo $! >"$dir/pid"
	if ! wait_until serve_ready_in "$dir"; then
		cat "$dir/log" >&2
		return 1
	fi
}

# serve_ready_in DIR: the serve of serve_start_in DIR is synced and has written its kubeconfig.
serve_ready_in() {
	[[ $(curl -s -m 1 --unix-socket "$1/s.sock" http://kinf/readyz) == ok && -s $1/kubeconfig ]]
}

# serve_stop_in DIR: SIGTERM the serve of serve_start_in DIR and wait for it
# (SIGKILL after 10 s). Fails, showing its log, when it did not exit 0 (a
# sanitizer's report included).
serve_stop_in() {
	local pid i rc=0
	[[ -s $1/pid ]] || return 0
	pid=$(<"$1/pid")
	rm -f "$1/pid"
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 200; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null && rc=137
	wait "$pid" 2>/dev/null || rc=$?
	if ((rc != 0 && rc != 127)) || grep -q 'Sanitizer' "$1/log"; then
		echo "kinf serve exited with status $rc:" >&2
		cat "$1/log" >&2
		return 1
	fi
}
