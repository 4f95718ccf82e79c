#!/usr/bin/env bats
# kinf list, watch, deltas and index against a kinf serve (--server
# unix:PATH, tcp:HOST:PORT, KINF_SERVER) in front of test/fakeapi: every
# output the same as straight from fakeapi, index answered by serve's index
# path, and one clear line for each address that is no kinf serve.

load helpers

setup_file() {
	fakeapi_start --pods 40 --namespaces 2 --state "$BATS_FILE_TMPDIR/state"
	SC_DIR=$BATS_FILE_TMPDIR/sc
	mkdir -p "$SC_DIR"
	SOCK=$SC_DIR/s.sock
	"$KINF" serve pods,deployments,nodes -A --listen "unix:$SOCK" \
		--listen tcp:127.0.0.1:0 --write-kubeconfig "$SC_DIR/kubeconfig" \
		>"$SC_DIR/log" 2>&1 3>&- </dev/null &
	SC_PID=$!
	export SC_DIR SOCK SC_PID
	if ! wait_until serve_ready; then
		cat "$SC_DIR/log" >&2
		return 1
	fi
}

# Ready (synced) and its kubeconfig written.
serve_ready() {
	[[ $(curl -s -m 1 --unix-socket "$SOCK" http://kinf/readyz) == ok && -s $SC_DIR/kubeconfig ]]
}

teardown_file() {
	if [[ -n ${SC_PID:-} ]]; then
		kill -TERM "$SC_PID" 2>/dev/null || true
		wait "$SC_PID" 2>/dev/null || true
	fi
	fakeapi_stop
}

# same ARGS...: kinf ARGS straight to fakeapi and through serve's socket
# print the same bytes, and exit the same. (SAME_FILTER, a sed script,
# first takes out what depends on the clock: a watch table's TIME.)
same() {
	local a b ra=0 rb=0
	a=$(set -o pipefail; "$KINF" "$@" 2>&1 | sed "${SAME_FILTER:-}") || ra=$?
	b=$(set -o pipefail; "$KINF" "$@" --server "unix:$SOCK" 2>&1 |
		sed "${SAME_FILTER:-}") || rb=$?
	[[ -n $a ]] || fail "kinf $*: no output"
	if [[ $a != "$b" || $ra != "$rb" ]]; then
		diff <(echo "$a") <(echo "$b") | head -20 >&2
		fail "kinf $* differs through serve (status $ra, $rb)"
	fi
}

@test "serveclient: list prints through serve what it prints straight: every output format" {
	same list pods -A
	same list pods -n default
	same list pods -A -o wide
	same list pods -A --no-headers
	same list pods -A -o json
	same list pods -n default -o yaml
	same list deployments -A -o name
	same list pods -A -o 'jsonpath={.items[*].metadata.name}'
	same list pods -A -o 'custom-columns=NAME:.metadata.name,NODE:.spec.nodeName'
	same list pods -A -l app=web --field-selector spec.nodeName=node-1
	same list nodes -o wide
	same list pods,deployments -A -o name
	same list pods -n default --chunk-size 7 -o name
}

@test "serveclient: watch and deltas print the initial sync through serve as straight" {
	SAME_FILTER='s/^[0-9][0-9]:[0-9][0-9]:[0-9][0-9] //' same watch pods -A --exit-after-sync
	SAME_FILTER='s/^[0-9][0-9]:[0-9][0-9]:[0-9][0-9] //' same watch pods -A -o wide \
		--exit-after-sync
	same watch pods -A -o json --exit-after-sync
	same watch deployments -A -o yaml --exit-after-sync
	same watch pods -A -o name --exit-after-sync
	same watch pods -A -o 'jsonpath={.metadata.name}{"\n"}' --exit-after-sync
	SAME_FILTER='s/^[0-9][0-9]:[0-9][0-9]:[0-9][0-9] //' same deltas pods -A --exit-after-sync
	same deltas pods -A -o json --exit-after-sync
}

@test "serveclient: a watch through serve sees the changes a watch straight sees, in order" {
	a=$BATS_TEST_TMPDIR/a b=$BATS_TEST_TMPDIR/b
	"$KINF" watch pods -n default -o json --timeout 30s >"$a" 2>&1 3>&- &
	pa=$!
	"$KINF" watch pods -n default -o json --timeout 30s --server "unix:$SOCK" >"$b" 2>&1 3>&- &
	pb=$!
	n=$(fakeapi_curl /api/v1/namespaces/default/pods | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')
	wait_until test "$(wc -l <"$a")" -ge "$n"
	wait_until test "$(wc -l <"$b")" -ge "$n"
	fakeapi_ctl POST churn '{"resource":"pods","namespace":"default","create":2,"relabel":4,"delete":1,"seed":3}' >/dev/null
	wait_until grep -q '"type":"DELETED"' "$a"
	wait_until grep -q '"type":"DELETED"' "$b"
	sleep 1
	kill "$pa" "$pb"
	wait "$pa" "$pb" || true
	# Per object, the same events in the same order (across objects the
	# interleaving is the two processes' timing).
	by_key='
import json, sys
seen = {}
for line in open(sys.argv[1]):
    seen.setdefault(json.loads(line)["key"], []).append(line)
for k in sorted(seen):
    sys.stdout.write("".join(seen[k]))'
	diff <(python3 -c "$by_key" "$a") <(python3 -c "$by_key" "$b") ||
		fail "the watch through serve saw other events"
	grep -q '"type":"DELETED"' <(python3 -c "$by_key" "$b")
}

@test "serveclient: index --by, --keys and --values through serve, every output format" {
	same index pods -A --by node=node-1
	same index pods -A --by node=node-1 -o wide
	same index pods -A --by app=web --by phase=Running -o name
	same index pods -A --by app --keys
	same index pods -A --by app=web -o json
	same index pods -A --by app=web -o yaml
	same index pods -A --by node=node-0 -o 'jsonpath={.items[*].metadata.name}'
	same index pods -A --by node=node-0 -o 'custom-columns=NAME:.metadata.name,PHASE:.status.phase'
	same index pods -A --by owner --keys -l app=web
	same index pods -n default --by node=node-0 --keys
	same index pods -A --values node
	same index pods -A --values app -o json
	same index pods -n default --values phase
	same index pods -A --values node --field-selector status.phase=Running
	same index pods -A --index img='spec.containers[*].image' --values img
	same index pods -A --index img='spec.containers[*].image' --by img=ghcr.io/example/web:v2.21.2 --keys
	same index deployments -A --by field:spec.replicas=3 -o wide
}

@test "serveclient: index asks serve's index path: no list of the collection" {
	run kinf index pods -A --by node=node-1 --keys --server "unix:$SOCK" -v2
	assert_success
	assert_output --partial '/kinf/v1/index/api/v1/pods?by=node%3Dnode-1 200'
	refute_output --regexp 'GET unix:[^ ]*s\.sock/api/v1/pods'
	run kinf index pods -A --values node --server "unix:$SOCK" -v2
	assert_output --partial '/kinf/v1/index/api/v1/pods?values=node 200'
	# The path answers only kinf index's questions.
	run curl -sS --unix-socket "$SOCK" 'http://kinf/kinf/v1/index/api/v1/pods'
	assert_output --partial '"code":400'
	run curl -sS --unix-socket "$SOCK" 'http://kinf/kinf/v1/index/api/v1/pods?by=bad:x'
	assert_output --partial 'is not an index'
	run curl -sS --unix-socket "$SOCK" 'http://kinf/kinf/v1/index/api/v1/secrets?by=node'
	assert_output --partial '"code":404'
	run curl -sS --unix-socket "$SOCK" 'http://kinf/kinf/v1/index/version'
	assert_output '404 page not found'
}

@test "serveclient: KINF_SERVER names serve; --server URL overrides it" {
	want=$("$KINF" list pods -A -o name)
	KINF_SERVER=unix:$SOCK run kinf list pods -A -o name -v2
	assert_success
	assert_output --partial "GET unix:$SOCK/version 200"
	KINF_SERVER=unix:$SOCK run kinf list pods -A -o name
	assert_output "$want"
	# An explicit URL is kubectl's --server: fakeapi itself, not serve.
	KINF_SERVER=unix:/nonexistent run kinf list pods -A -o name --server "$FAKEAPI_URL"
	assert_success
	assert_output "$want"
	# unix: alone is serve's default socket.
	XDG_RUNTIME_DIR=$BATS_TEST_TMPDIR run kinf list pods --server unix:
	assert_failure 1
	assert_output "kinf: --server unix:: no kinf serve listens on $BATS_TEST_TMPDIR/kinf/serve.sock (no such socket); start one with kinf serve"
}

@test "serveclient: tcp: with the kubeconfig serve wrote; without its CA one line, exit 3" {
	port=$(sed -n 's/.*listening on tcp:127.0.0.1:\([0-9]*\)$/\1/p' "$SC_DIR/log")
	[[ -n $port ]] || fail "no tcp port in the log"
	run kinf list pods -A -o name --server "tcp:127.0.0.1:$port" --kubeconfig "$SC_DIR/kubeconfig"
	assert_success
	assert_output "$("$KINF" list pods -A -o name)"
	run kinf index pods -A --values node --server "tcp:127.0.0.1:$port" --kubeconfig "$SC_DIR/kubeconfig"
	assert_output "$("$KINF" index pods -A --values node)"
	run kinf list pods --server "tcp:127.0.0.1:$port"
	assert_failure 3
	assert_output --partial "kinf: --server tcp:127.0.0.1:$port: TLS: "
	assert_output --partial 'pass the kubeconfig kinf serve --write-kubeconfig wrote (--kubeconfig FILE)'
	[[ ${#lines[@]} == 1 ]] || fail "more than one line"
	run kinf list pods --server "tcp:127.0.0.1:$port" --kubeconfig "$SC_DIR/kubeconfig" --token wrong
	assert_failure 3
	assert_output --partial 'Unauthorized; pass the kubeconfig'
}

@test "serveclient: bad addresses: unreachable, not a kinf serve, a type serve does not serve" {
	run kinf list pods --server "unix:$BATS_TEST_TMPDIR/none.sock"
	assert_failure 1
	assert_output "kinf: --server unix:$BATS_TEST_TMPDIR/none.sock: no kinf serve listens on $BATS_TEST_TMPDIR/none.sock (no such socket); start one with kinf serve"
	: >"$BATS_TEST_TMPDIR/file"
	run kinf list pods --server "unix:$BATS_TEST_TMPDIR/file"
	assert_failure 1
	assert_output --partial '(connection refused); start one with kinf serve'
	run kinf list pods --server tcp:127.0.0.1:1
	assert_failure 1
	assert_output --regexp '^kinf: --server tcp:127.0.0.1:1: cannot reach kinf serve: .*$'
	KINF_SERVER=$FAKEAPI_URL run kinf list pods
	assert_failure 1
	assert_output --regexp '^kinf: KINF_SERVER=https://[^ ]*: not a kinf serve \(its /version says gitVersion "v[0-9.]*"\)$'
	run kinf list configmaps --server "unix:$SOCK"
	assert_failure 1
	assert_output "kinf: --server unix:$SOCK: kinf serve does not serve \"configmaps\" (it serves what its command line named)"
	run kinf list pods --server "unix:$SOCK" --context viewer
	assert_failure 1
	assert_output --partial 'not a kinf serve (no kinf version at'
	assert_output --partial 'or it serves no context "viewer"'
	run kinf list pods --server tcp:nope
	assert_failure 2
	assert_line 'kinf: --server tcp:nope: tcp: takes HOST:PORT, e.g. tcp:127.0.0.1:8443'
	run kinf list pods --server "unix:$SOCK" --as someone
	assert_failure 2
	assert_line "kinf: --server unix:$SOCK: --as, --as-group and --as-uid do not apply to kinf serve (it reads with its upstream's identity)"
	KINF_SERVER=bogus run kinf list pods
	assert_failure 2
	assert_line 'kinf: KINF_SERVER takes unix:PATH, unix: (the default socket), tcp:HOST:PORT or https://HOST:PORT, not "bogus"'
}

@test "serveclient: --context NAME goes to serve's /clusters/NAME" {
	run kinf list pods -n default -o name --server "unix:$SOCK" --context admin -v2
	assert_success
	assert_output --partial "GET unix:$SOCK/clusters/admin/api/v1/namespaces/default/pods"
}

@test "serveclient: several contexts through one serve: each its /clusters/NAME, output as straight" {
	sock=$BATS_TEST_TMPDIR/m.sock
	"$KINF" serve pods -n default --context admin,admin-cert --listen "unix:$sock" \
		>"$BATS_TEST_TMPDIR/log" 2>&1 3>&- </dev/null &
	pid=$!
	wait_until curl -sf -m 1 --unix-socket "$sock" -o /dev/null http://kinf/readyz
	for args in "list pods -n default --context admin,admin-cert -o name" \
		"list pods -n default --context admin,admin-cert -o json" \
		"index pods -n default --context admin-cert --by app=web --keys"; do
		# shellcheck disable=SC2086
		a=$("$KINF" $args | sort)
		# shellcheck disable=SC2086
		b=$("$KINF" $args --server "unix:$sock" | sort)
		[[ -n $a && $a == "$b" ]] || fail "kinf $args differs through serve"
	done
	kill "$pid"
	wait "$pid" || true
}

@test "serveclient: while serve's upstream is away, kinf shows serve's Warning once and the cached answer" {
	port=${FAKEAPI_URL##*:}
	dir=$FAKEAPI_DIR
	want=$("$KINF" list pods -A -o name --server "unix:$SOCK")
	[[ -n $want ]]
	fakeapi_stop
	wait_until bash -c "curl -s --unix-socket '$SOCK' http://kinf/readyz | grep -q 'upstream failed'"
	# discovery and the list each carry it: shown once
	run --separate-stderr "$KINF" list pods -A -o name --server "unix:$SOCK"
	assert_success
	[[ $output == "$want" ]] || fail "the cached list differs"
	[[ $stderr =~ ^Warning:\ kinf\ serve:\ upstream\ context\ \"admin\"\ \($FAKEAPI_URL\)\ unreachable\ since\ 20[0-9-]+T[0-9:]+Z\ \(.+\):\ answering\ from\ the\ cache$ ]] ||
		fail "stderr: $stderr"
	run --separate-stderr "$KINF" watch pods -n default -o name --exit-after-sync --server "unix:$SOCK"
	assert_success
	[[ $stderr == "Warning: kinf serve: upstream context \"admin\""* && $stderr != *$'\n'* ]] ||
		fail "stderr: $stderr"
	fakeapi_start --dir "$dir" --port "$port" --state "$BATS_FILE_TMPDIR/state"
	wait_until serve_ready
	run --separate-stderr "$KINF" list pods -A -o name --server "unix:$SOCK"
	assert_success
	assert_equal "$stderr" ""
}
