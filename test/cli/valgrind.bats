#!/usr/bin/env bats
# A subset of kinf under valgrind --leak-check=full: zero errors and zero
# leaks (definite, indirect, possible), on a normal exit, on error exits
# and on exit after SIGTERM (watch, deltas, index --watch, --from a pipe,
# in the middle of the initial list). Skipped when kinf is built with
# AddressSanitizer (the two do not mix): CI runs it from the plain build.
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	if ldd "$KINF" 2>/dev/null | grep -q 'libasan\|libclang_rt.asan' ||
			nm "$KINF" 2>/dev/null | grep -q ' __asan_init'; then
		export VALGRIND_SKIP="kinf is built with AddressSanitizer"
	elif ! command -v valgrind >/dev/null; then
		export VALGRIND_SKIP="valgrind is not installed (.ci/deps --dev)"
	else
		fakeapi_start --pods 300
	fi
}

teardown_file() {
	fakeapi_stop
}

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
	[[ -z ${VALGRIND_SKIP:-} ]] || skip "$VALGRIND_SKIP"
}

VALGRIND=(valgrind --leak-check=full --show-leak-kinds=definite,indirect,possible
	--errors-for-leak-kinds=definite,indirect,possible --error-exitcode=1
	--child-silent-after-fork=yes --num-callers=30)

# check_log: the valgrind log says no errors and no leaks.
check_log() {
	local log=$BATS_TEST_TMPDIR/valgrind.log
	grep -q 'ERROR SUMMARY: 0 errors' "$log" || { cat "$log" >&2; return 1; }
	if grep -q 'LEAK SUMMARY' "$log"; then
		grep -Eq 'definitely lost: 0 bytes' "$log" &&
			grep -Eq 'indirectly lost: 0 bytes' "$log" &&
			grep -Eq 'possibly lost: 0 bytes' "$log" || { cat "$log" >&2; return 1; }
	fi
}

# vg STATUS kinf ARGS...: run under valgrind; exit status STATUS (valgrind
# itself exits 1 on an error or leak, so for STATUS 1 the log decides).
vg() {
	local want=$1
	shift 2
	run --separate-stderr "${VALGRIND[@]}" --log-file="$BATS_TEST_TMPDIR/valgrind.log" "$KINF" "$@"
	[[ $status -eq $want ]] || { echo "status $status, want $want: $stderr" >&2; cat "$BATS_TEST_TMPDIR/valgrind.log" >&2; return 1; }
	check_log
}

# vg_term kinf ARGS...: start under valgrind (stdin from $VG_STDIN, else
# /dev/null), wait until `$VG_READY` succeeds (default: some output), send
# SIGTERM, expect exit status 0.
vg_term() {
	shift
	local out=$BATS_TEST_TMPDIR/out
	"${VALGRIND[@]}" --log-file="$BATS_TEST_TMPDIR/valgrind.log" "$KINF" "$@" \
		<"${VG_STDIN:-/dev/null}" >"$out" 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	local pid=$! i
	for ((i = 0; i < 600; i++)); do
		eval "${VG_READY:-[[ -s $out ]]}" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	eval "${VG_READY:-[[ -s $out ]]}" || { echo "not ready: $VG_READY" >&2; cat "$BATS_TEST_TMPDIR/err" >&2; return 1; }
	sleep "${VG_SETTLE:-0.5}"
	kill -TERM "$pid"
	local rc=0
	wait "$pid" || rc=$?
	[[ $rc -eq 0 ]] || { echo "status $rc" >&2; cat "$BATS_TEST_TMPDIR/err" "$BATS_TEST_TMPDIR/valgrind.log" >&2; return 1; }
	check_log
}

@test "list, table, json and yaml" {
	vg 0 kinf list pods -A
	vg 0 kinf list pods -A -o json --chunk-size 50
	vg 0 kinf list deployments -o yaml
}

@test "list: a closed pipe and an expired continue token midway" {
	# Items queued for the printer when the pipe closes are released.
	"${VALGRIND[@]}" --log-file="$BATS_TEST_TMPDIR/valgrind.log" "$KINF" \
		list pods -A -o json --chunk-size 2 3>&- | head -1 >/dev/null
	check_log
	fakeapi_ctl POST /_fake/faults '{"expire_next_continue":1}'
	vg 0 kinf list pods -A -o name --chunk-size 3
	[[ $stderr == *"continue token expired midway"* ]]
}

@test "index and version" {
	vg 0 kinf index pods -A --by node --exit-after-sync
	vg 0 kinf version
}

@test "error exits: 403, unknown type, kubeconfig, usage" {
	vg 1 kinf list pods -A --context viewer
	vg 2 kinf list podz
	vg 3 kinf list pods --context nosuch
	vg 2 kinf list pods --nope
}

@test "exec plugin credentials" {
	cp "$FAKEAPI_DIR/kubeconfig" "$BATS_TEST_TMPDIR/kc"
	printf '#!/bin/sh\nprintf %s "{\\"apiVersion\\":\\"client.authentication.k8s.io/v1\\",\\"kind\\":\\"ExecCredential\\",\\"status\\":{\\"token\\":\\"%s\\"}}"\n' \
		"%s" "$(<"$FAKEAPI_DIR/admin-token")" > "$BATS_TEST_TMPDIR/plugin"
	chmod +x "$BATS_TEST_TMPDIR/plugin"
	"$BATS_TEST_TMPDIR/plugin" | jq -e .status.token >/dev/null
	python3 - "$BATS_TEST_TMPDIR/kc" "$BATS_TEST_TMPDIR/plugin" <<-'EOF'
	import sys
	path, plugin = sys.argv[1:]
	text = open(path).read()
	text = text.replace("users:\n", "users:\n- name: plugin\n  user:\n    exec:\n"
	                    "      apiVersion: client.authentication.k8s.io/v1\n"
	                    f"      command: {plugin}\n      interactiveMode: Never\n", 1)
	open(path, "w").write(text)
	EOF
	vg 0 kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc" --user plugin
}

@test "watch: exit after SIGTERM" {
	vg_term kinf watch pods -A
}

@test "deltas: exit after SIGTERM" {
	vg_term kinf deltas pods -A -o json
}

@test "index --watch: exit after SIGTERM" {
	vg_term kinf index pods -A --by node --watch
}

@test "watch --from a pipe that stays open: exit after SIGTERM" {
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	(cat "$KINF_SOURCE_ROOT/test/fixtures/streams/relist-tombstones.json"; sleep 60) \
		>"$BATS_TEST_TMPDIR/fifo" 3>&- &
	local feeder=$!
	VG_STDIN=$BATS_TEST_TMPDIR/fifo vg_term kinf watch --from -
	kill "$feeder" 2>/dev/null || true
}

@test "watch: SIGTERM in the middle of the initial list" {
	fakeapi_ctl DELETE /_fake/requests
	# 300+ pods: stop as soon as the server has answered the list, while
	# kinf (slowed down by valgrind) is still taking it in.
	VG_SETTLE=0 VG_READY='fakeapi_requests | grep -q "\"verb\":\"list\""' \
		vg_term kinf watch pods -A -o json
	echo "# $(wc -l < "$BATS_TEST_TMPDIR/out") of 307 pods printed" >&3
}

@test "serve: a list, a watch and a TLS request, then SIGTERM" {
	sock=$BATS_TEST_TMPDIR/s.sock
	kc=$BATS_TEST_TMPDIR/kc
	VG_READY="[[ \$(curl -s --unix-socket '$sock' http://kinf/readyz) == ok ]] &&
		curl -sf --unix-socket '$sock' 'http://kinf/api/v1/pods?limit=5&labelSelector=app%3Dweb' >/dev/null &&
		curl -sf --unix-socket '$sock' 'http://kinf/api/v1/pods?watch=1&timeoutSeconds=1' >/dev/null &&
		curl -sf -k https://127.0.0.1:\$(sed -n 's/.*server: \"https:\/\/127.0.0.1:\([0-9]*\)\"/\1/p' '$kc')/api/v1/pods -H \"Authorization: Bearer \$(sed -n 's/.*token: \"\(.*\)\"/\1/p' '$kc')\" >/dev/null" \
		vg_term kinf serve pods -A --listen "unix:$sock" --listen tcp:127.0.0.1:0 \
		--write-kubeconfig "$kc"
}
