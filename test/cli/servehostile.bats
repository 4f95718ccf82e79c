#!/usr/bin/env bats
# kinf serve under hostile and heavy clients (issue 25): no client can
# starve the others or make serve answer unlike the apiserver. Each test
# holds one class of client against serve on loopback, bounded in time:
# idle connections that never finish a TLS handshake, heavy Tables, lists
# that are never read, pipelining, oversized heads, parameters and tokens.

load helpers

setup_file() {
	# 3,000 pods of about 8 KB: a JSON list of some 24 MB, a Table of ~1 s of rendering.
	fakeapi_start --pods 3000 --namespaces 4
	SERVE_DIR=$BATS_FILE_TMPDIR/serve
	mkdir -p "$SERVE_DIR"
	SOCK=$SERVE_DIR/s.sock
	{
		"$KINF" serve pods -A --listen "unix:$SOCK" --listen tcp:127.0.0.1:0 \
			--write-kubeconfig "$SERVE_DIR/kubeconfig" \
			>"$SERVE_DIR/log" 2>&1 </dev/null &
		echo $! >"$SERVE_DIR/pid"
		wait $!
		echo $? >"$SERVE_DIR/status"
	} 3>&- &
	wait_until test -s "$SERVE_DIR/pid"
	SERVE_PID=$(<"$SERVE_DIR/pid")
	local i
	for ((i = 0; i < 600; i++)); do
		[[ $(curl -s -m 1 --unix-socket "$SOCK" http://kinf/readyz 2>/dev/null) == ok ]] && break
		kill -0 "$SERVE_PID" 2>/dev/null || break
		sleep 0.1
	done
	SERVER=$(sed -n 's/^ *server: "\(.*\)"/\1/p' "$SERVE_DIR/kubeconfig")
	TOKEN=$(sed -n 's/^ *token: "\(.*\)"/\1/p' "$SERVE_DIR/kubeconfig")
	sed -n 's/^ *certificate-authority-data: "\(.*\)"/\1/p' "$SERVE_DIR/kubeconfig" |
		base64 -d >"$SERVE_DIR/ca.crt"
	export SERVE_DIR SOCK SERVE_PID SERVER TOKEN
}

teardown_file() {
	if [[ -n ${SERVE_PID:-} ]]; then
		kill -TERM "$SERVE_PID" 2>/dev/null || true
		wait_until test -s "$SERVE_DIR/status" || true
	fi
	fakeapi_stop
}

# tcurl [curl args] PATH: over TLS with the token.
tcurl() {
	local last=${*: -1}
	curl -sS -m 10 --cacert "$SERVE_DIR/ca.crt" -H "Authorization: Bearer $TOKEN" \
		"${@:1:$#-1}" "$SERVER$last"
}

# scurl [curl args] PATH: over the unix socket.
scurl() {
	local last=${*: -1}
	curl -sS -m 10 --unix-socket "$SOCK" "${@:1:$#-1}" "http://kinf$last"
}

# metric NAME: the sum of a /metrics series.
metric() {
	scurl /metrics | awk -v n="$1" '$1 == n || index($1, n "{") == 1 { s += $2 } END { print s + 0 }'
}

rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$SERVE_PID/status"
}

# hold PY_BODY: run a python client in the background (its pid in $HOLD_PID)
# until it writes $BATS_TEST_TMPDIR/ready; it is killed by the test.
hold() {
	rm -f "$BATS_TEST_TMPDIR/ready"
	python3 -c "$1" "$BATS_TEST_TMPDIR/ready" "$SOCK" "${SERVER#https://}" 3>&- &
	HOLD_PID=$!
	wait_until test -e "$BATS_TEST_TMPDIR/ready"
}

unhold() {
	[[ -n ${HOLD_PID:-} ]] || return 0
	kill "$HOLD_PID" 2>/dev/null || true
	wait "$HOLD_PID" 2>/dev/null || true
	HOLD_PID=
}

# A failed test's clients go too: they would hold serve for the next.
teardown() {
	unhold
}

@test "servehostile: 1,100 connections that never finish a TLS handshake lock no one out; the drops are counted" {
	dropped0=$(metric kinf_serve_connections_dropped_total)
	hold '
import resource, socket, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
host, port = sys.argv[3].split(":")
held = [socket.create_connection((host, int(port))) for _ in range(1100)]
open(sys.argv[1], "w").close()
time.sleep(120)
'
	# A TLS client with the token, a probe without, the unix socket: all answered.
	run tcurl -o /dev/null -w '%{http_code}' '/api/v1/namespaces/default/pods?limit=1'
	assert_output 200
	run curl -sS -m 10 --cacert "$SERVE_DIR/ca.crt" "$SERVER/readyz"
	assert_output ok
	run scurl /readyz
	assert_output ok
	run scurl /metrics
	assert_output --regexp 'kinf_serve_connections_dropped_total\{reason="unauthenticated_peer"\} [1-9][0-9]+'
	assert_output --regexp 'kinf_serve_unauthenticated_connections [0-9]+'
	unhold
	(($(metric kinf_serve_connections_dropped_total) - dropped0 >= 800)) ||
		fail "fewer than 800 of the 1,100 dropped (256 kept of one address)"
}

@test "servehostile: while three Tables of 3,000 pods are being written, a health probe over a new TLS connection answers in well under a second" {
	hold '
import socket, sys, time
s = []
for _ in range(3):
    c = socket.socket(socket.AF_UNIX)
    c.connect(sys.argv[2])
    c.sendall(b"GET /api/v1/pods HTTP/1.1\r\nHost: k\r\n"
              b"Accept: application/json;as=Table;v=v1;g=meta.k8s.io\r\n\r\n")
    s.append(c)
open(sys.argv[1], "w").close()
time.sleep(120)
'
	local worst=0 t i
	for ((i = 0; i < 5; i++)); do
		t=$(curl -sS -m 10 -o /dev/null -w '%{time_total}' --cacert "$SERVE_DIR/ca.crt" "$SERVER/readyz")
		worst=$(python3 -c "print(max($worst, $t))")
	done
	unhold
	python3 -c "import sys; sys.exit(0 if $worst < 0.5 else 1)" ||
		fail "the slowest of 5 probes took $worst s"
}

@test "servehostile: ten clients that ask for the full list and never read, and one that pipelines lists unread, hold little of serve's memory" {
	before=$(rss_kb)
	hold '
import socket, sys, time
s = []
for _ in range(10):
    c = socket.socket(socket.AF_UNIX)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.connect(sys.argv[2])
    c.sendall(b"GET /api/v1/pods HTTP/1.1\r\nHost: k\r\n\r\n")
    s.append(c)
p = socket.socket(socket.AF_UNIX)
p.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
p.connect(sys.argv[2])
p.setblocking(False)
try:
    for _ in range(10):
        p.send(b"GET /api/v1/pods HTTP/1.1\r\nHost: k\r\n\r\n")
except BlockingIOError:
    pass
open(sys.argv[1], "w").close()
time.sleep(120)
'
	sleep 1
	during=$(rss_kb)
	run scurl /readyz
	assert_output ok
	run tcurl -o /dev/null -w '%{http_code}' '/api/v1/namespaces/default/pods?limit=1'
	assert_output 200
	unhold
	# Each list is some 24 MB: held whole, eleven of them would be 250 MB.
	((during - before < 40000)) || fail "serve grew by $((during - before)) KB"
}

@test "servehostile: a list too large for one slice is written as the client reads: chunked, whole, as the upstream holds it" {
	want=$(fakeapi_curl /api/v1/pods | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')
	run scurl -D "$BATS_TEST_TMPDIR/h" -o "$BATS_TEST_TMPDIR/list" /api/v1/pods
	assert_success
	run grep -c 'Transfer-Encoding: chunked' "$BATS_TEST_TMPDIR/h"
	assert_output 1
	run python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); k=[i["metadata"]["namespace"]+"/"+i["metadata"]["name"] for i in d["items"]]; print(d["kind"], len(k), k == sorted(k))' "$BATS_TEST_TMPDIR/list"
	assert_output "PodList $want True"
	run scurl -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' -o "$BATS_TEST_TMPDIR/table" /api/v1/pods
	run python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["kind"], len(d["rows"]), len(d["columnDefinitions"]) > 0)' "$BATS_TEST_TMPDIR/table"
	assert_output "Table $want True"
	# HEAD: the headers a GET has, no body.
	run scurl -I /api/v1/pods
	assert_line --index 0 --regexp '^HTTP/1.1 200 OK'
}

@test "servehostile: another client's burst of paged lists does not expire a paginating client's continue token" {
	token=$(scurl '/api/v1/pods?limit=10' | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["continue"])')
	# 40 paged lists on one connection of another client.
	urls=()
	for ((i = 0; i < 40; i++)); do
		urls+=("http://kinf/api/v1/pods?limit=5&x=$i")
	done
	curl -sS -m 30 --unix-socket "$SOCK" "${urls[@]}" >/dev/null
	run scurl -o /dev/null -w '%{http_code}' "/api/v1/pods?limit=10&continue=$token"
	assert_output 200
}

@test "servehostile: an oversized request head is answered 431 at once, a long request line 414" {
	run python3 -c '
import socket, sys, time
for head, want in ((b"GET / HTTP/1.1\r\nHost: k\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n", b" 431 "),
                   (b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: k\r\n\r\n", b" 414 ")):
    c = socket.socket(socket.AF_UNIX)
    c.connect(sys.argv[1])
    c.settimeout(5)
    t0 = time.monotonic()
    try:
        c.sendall(head)
    except OSError:
        pass
    got = c.recv(200)
    print(got.split(b"\r\n")[0].decode(), round(time.monotonic() - t0, 1))
' "$SOCK"
	assert_line --index 0 'HTTP/1.1 431 Request Header Fields Too Large 0.0'
	assert_line --index 1 'HTTP/1.1 414 Request URI Too Long 0.0'
}

@test "servehostile: sendInitialEvents without watch is 422; booleans read as the apiserver reads them" {
	run scurl '/api/v1/pods?sendInitialEvents=true&limit=1'
	assert_output '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"ListOptions","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: sendInitialEvents is forbidden for list","field":"sendInitialEvents"}]},"code":422}'
	run scurl -o /dev/null -w '%{http_code}' '/api/v1/pods?sendInitialEvents=false&limit=1'
	assert_output 422
	# Every error at once, as apimachinery aggregates them.
	run scurl '/api/v1/pods?resourceVersionMatch=Bogus&sendInitialEvents=1&limit=1'
	assert_output --partial '"message":"ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Unsupported value: \"Bogus\": supported values: \"Exact\", \"NotOlderThan\", \"\", sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list]"'
	# runtime.Convert_Slice_string_To_bool: anything but "0" and "false" is true.
	run scurl -D - '/api/v1/namespaces/default/pods?watch=bogus&timeoutSeconds=1&allowWatchBookmarks=bogus'
	assert_output --partial 'Transfer-Encoding: chunked'
	assert_output --partial '"type":"ADDED"'
}

@test "servehostile: field selectors are parsed as fields.ParseSelector parses them" {
	name=$(scurl '/api/v1/namespaces/default/pods?limit=1' | python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["metadata"]["name"])')
	# Empty terms are skipped; == is =.
	for sel in ",metadata.name=$name" "metadata.name==$name,," "metadata.name%3D$name"; do
		run scurl "/api/v1/namespaces/default/pods?fieldSelector=$sel"
		assert_output --partial "\"name\":\"$name\""
	done
	# Empty terms, and terms empty on both sides, select everything.
	for sel in , %3D '!%3D,,'; do
		run scurl "/api/v1/namespaces/default/pods?fieldSelector=$sel"
		assert_output --partial '"kind":"PodList"'
	done
	run scurl '/api/v1/pods?fieldSelector=%3Dx'
	assert_output --partial '"message":"field label not supported: ","reason":"BadRequest"'
	# The first operator splits a term; its value is unescaped strictly.
	run scurl '/api/v1/pods?fieldSelector=metadata.name%3Da%3Db'
	assert_output --partial '"message":"invalid field selector: unescaped character in value: 61","reason":"BadRequest","code":400'
	run scurl '/api/v1/pods?fieldSelector=metadata.name!%3Da%3Db'
	assert_output --partial '"message":"invalid field selector: unescaped character in value: 61"'
	run scurl '/api/v1/pods?fieldSelector=metadata.name%3Da%5Cx'
	assert_output --partial '"message":"invalid field selector: invalid escape sequence: \\x"'
	run scurl '/api/v1/pods?fieldSelector=metadata.name%3Da%5C'
	assert_output --partial '"message":"invalid field selector: invalid escape sequence: \\"'
	run scurl '/api/v1/pods?fieldSelector=metadata.name%3Da%5C,b'
	assert_output --partial '"kind":"PodList"'
	run scurl '/api/v1/pods?fieldSelector=x,metadata.name%3Da'
	assert_output --partial "\"message\":\"invalid selector: 'x,metadata.name=a'; can't understand 'x'\""
	# Terms are sorted before they are checked: the first in that order is named.
	run scurl '/api/v1/pods?fieldSelector=z%3D1,b%3D2'
	assert_output --partial '"message":"field label not supported: b"'
}

@test "servehostile: the bearer token is read as the apiserver's authenticator reads it" {
	run curl -sS -m 10 --cacert "$SERVE_DIR/ca.crt" -D - -H "Authorization: Bearer  $TOKEN" \
		"$SERVER/api/v1/namespaces/default/pods?limit=1"
	assert_output --partial 'HTTP/1.1 401 Unauthorized'
	assert_output --partial 'Warning: 299 - "the provided Authorization header contains extra space before the bearer token, and is ignored"'
	# A third part is ignored (strings.SplitN(auth, " ", 3)); trailing white space trimmed.
	local -a cases=(
		"Bearer ${TOKEN}x" 401
		"bEaReR $TOKEN extra" 200
		"Bearer $TOKEN	" 200
		"Bearer	$TOKEN" 401
	)
	local i
	for ((i = 0; i < ${#cases[@]}; i += 2)); do
		run curl -sS -m 10 --cacert "$SERVE_DIR/ca.crt" -o /dev/null -w '%{http_code}' \
			-H "Authorization: ${cases[i]}" "$SERVER/api/v1/namespaces/default/pods?limit=1"
		assert_output "${cases[i + 1]}"
	done
}
