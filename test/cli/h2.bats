#!/usr/bin/env bats
# One connection per server (issue 15, section 4): behind an HTTP/2 front
# (nghttpx, TLS with ALPN h2, in front of test/fakeapi over plain
# HTTP/1.1) all the informers' lists and watches share one TCP connection;
# behind the same front limited to HTTP/1.1, each stream has its own. The
# fronts' access logs name each request's client port: one port is one
# connection.
bats_require_minimum_version 1.5.0

load helpers

# nghttpx_start NAME ALPN: a front on a free port for $FAKEAPI_URL, its
# access log NAME.log ("port alpn status method path" per request, written
# when the response headers come, so open watches are in it too), its
# kubeconfig NAME.kubeconfig (the admin token, the front's CA).
nghttpx_start() {
	local name=$1 alpn=$2 dir=$BATS_FILE_TMPDIR port i backend=${FAKEAPI_URL#http://}
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	# --conf /dev/null: not Debian's sample, which also listens on :3000
	nghttpx --conf=/dev/null --no-ocsp --workers=1 \
		-f "127.0.0.1,$port" -b "${backend%:*},${backend##*:}" --npn-list="$alpn" \
		--accesslog-file="$dir/$name.log" --accesslog-write-early \
		--accesslog-format='$remote_port $alpn $status $method $path' \
		--errorlog-file="$dir/$name.err" --pid-file="$dir/$name.pid" \
		"$dir/front.key" "$dir/front.crt" 3>&- </dev/null >/dev/null 2>&1 &
	for ((i = 0; i < 200; i++)); do
		curl -s -o /dev/null --cacert "$dir/front.crt" "https://127.0.0.1:$port/version" && break
		sleep 0.05
	done
	cat > "$dir/$name.kubeconfig" <<-EOF
		apiVersion: v1
		kind: Config
		clusters:
		- name: $name
		  cluster:
		    server: https://127.0.0.1:$port
		    certificate-authority-data: $(base64 -w0 "$dir/front.crt")
		users:
		- name: admin
		  user:
		    token: $(<"$FAKEAPI_DIR/admin-token")
		contexts:
		- name: $name
		  context: {cluster: $name, user: admin, namespace: default}
		current-context: $name
	EOF
	echo "https://127.0.0.1:$port" > "$dir/$name.url"
}

setup_file() {
	command -v nghttpx >/dev/null 2>&1 ||
		skip "nghttpx is not installed (Debian package nghttp2-proxy)"
	# Enough pods for a list in pages that the lister splits over two
	# requests at once (its lanes), both on the one connection.
	fakeapi_start --plain-http --pods 1500
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj /CN=front -addext subjectAltName=IP:127.0.0.1 \
		-keyout "$BATS_FILE_TMPDIR/front.key" -out "$BATS_FILE_TMPDIR/front.crt" 2>/dev/null
	nghttpx_start h2 h2,http/1.1
	nghttpx_start h1 http/1.1
}

teardown_file() {
	local f
	for f in "$BATS_FILE_TMPDIR"/h2.pid "$BATS_FILE_TMPDIR"/h1.pid; do
		[ -e "$f" ] && kill -TERM "$(<"$f")" 2>/dev/null
	done
	fakeapi_stop
}

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
	: > "$BATS_FILE_TMPDIR/h2.log"
	: > "$BATS_FILE_TMPDIR/h1.log"
	EV=$BATS_TEST_TMPDIR/events.json
	ERR=$BATS_TEST_TMPDIR/stderr
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/cache
}

teardown() {
	if [ -n "${WATCH_PID:-}" ]; then
		kill -TERM "$WATCH_PID" 2>/dev/null || true
		wait "$WATCH_PID" 2>/dev/null || true
	fi
}

# connections NAME [ALPN]: the client ports in NAME's access log (of
# requests made with ALPN), one per connection.
connections() {
	awk -v a="${2:-}" 'a == "" || $2 == a { print $1 }' "$BATS_FILE_TMPDIR/$1.log" | sort -u | wc -l
}

# logged NAME VERB: the requests of a verb (list, watch) in NAME's log.
logged() {
	local re='limit='
	[ "$2" = watch ] && re='watch=1'
	grep -c -- "$re" "$BATS_FILE_TMPDIR/$1.log" || true
}

WHAT=(pods,configmaps,deployments -n default,kube-system)

@test "HTTP/2: six informers' lists and watches on one connection" {
	run --separate-stderr kinf --kubeconfig "$BATS_FILE_TMPDIR/h2.kubeconfig" \
		watch "${WHAT[@]}" -o json --exit-after-sync
	assert_success
	[ -z "$stderr" ]
	jq -e -s '([.[].resource] | unique) == ["configmaps", "deployments.apps", "pods"] and
		([.[].key | split("/")[0]] | unique) == ["default", "kube-system"]' <<<"$output"
	# Every informer listed through the front, and over HTTP/2.
	[ "$(logged h2 list)" -eq 6 ]
	run connections h2
	assert_output 1
	run connections h2 h2
	assert_output 1
}

@test "HTTP/2: the set's watches and the events they bring on one connection" {
	"$KINF" --kubeconfig "$BATS_FILE_TMPDIR/h2.kubeconfig" watch "${WHAT[@]}" \
		-o json --watch-only > "$EV" 2> "$ERR" 3>&- &
	WATCH_PID=$!
	wait_until eval '[ "$(logged h2 watch)" -eq 6 ]'
	fakeapi_ctl POST /_fake/churn '{"resource":"configmaps","namespace":"default","create":2}' >/dev/null
	fakeapi_ctl POST /_fake/churn '{"resource":"pods","namespace":"kube-system","create":1}' >/dev/null
	fakeapi_ctl POST /_fake/churn '{"resource":"deployments","namespace":"default","create":1}' >/dev/null
	wait_until eval '[ "$(wc -l < "$EV")" -ge 4 ]'
	kill -TERM "$WATCH_PID"
	wait "$WATCH_PID"
	WATCH_PID=
	run jq -r '"\(.type) \(.resource) \(.key | split("/")[0])"' "$EV"
	assert_output - <<-EOF
		ADDED configmaps default
		ADDED configmaps default
		ADDED pods kube-system
		ADDED deployments.apps default
	EOF
	run connections h2
	assert_output 1
}

@test "HTTP/1.1: a connection per stream, as before" {
	"$KINF" --kubeconfig "$BATS_FILE_TMPDIR/h1.kubeconfig" watch "${WHAT[@]}" \
		-o name > "$EV" 2> "$ERR" 3>&- &
	WATCH_PID=$!
	wait_until eval '[ "$(logged h1 watch)" -eq 6 ]'
	kill -TERM "$WATCH_PID"
	wait "$WATCH_PID"
	WATCH_PID=
	[ "$(logged h1 list)" -eq 6 ]
	# The six watches run at once, each on its own connection; the lists
	# before them used the same connections, each informer its own.
	run eval "grep -- watch=1 '$BATS_FILE_TMPDIR/h1.log' | awk '{ print \$1 }' | sort -u | wc -l"
	assert_output 6
	# And one more: the first request, which found out that the server
	# speaks HTTP/1.1 (the others waited for its answer), on a connection
	# closed after it.
	run connections h1 http/1.1
	assert_output 7
	first=$(awk 'NR == 1 { print $1 }' "$BATS_FILE_TMPDIR/h1.log")
	[ "$(awk -v p="$first" '$1 == p' "$BATS_FILE_TMPDIR/h1.log" | wc -l)" -eq 1 ]
}

@test "HTTP/2: a list of pages on two lanes at once, one connection, the same objects" {
	run --separate-stderr kinf --kubeconfig "$BATS_FILE_TMPDIR/h2.kubeconfig" \
		list pods -A -o name --chunk-size 100
	assert_success
	h2=$output
	[ "$(wc -l <<<"$h2")" -ge 1500 ]
	[ "$(logged h2 list)" -ge 15 ]
	run connections h2
	assert_output 1
	run --separate-stderr kinf --kubeconfig "$BATS_FILE_TMPDIR/h1.kubeconfig" \
		list pods -A -o name --chunk-size 100
	assert_success
	[ "$output" = "$h2" ]
	# Over HTTP/1.1, two connections or more: the lanes' pages overlapped.
	[ "$(connections h1)" -ge 2 ]
}

@test "HTTP/2: a consumer that waits holds up no other stream (transport unit test)" {
	local exe=${KINF%/cmd/kinf/kinf}/test/test-transport
	[ -x "$exe" ] || skip "no $exe (built with the unit tests)"
	KINF_TEST_H2_URL=$(<"$BATS_FILE_TMPDIR/h2.url") \
		KINF_TEST_H2_CA=$BATS_FILE_TMPDIR/front.crt \
		KINF_TEST_H2_TOKEN=$(<"$FAKEAPI_DIR/admin-token") run "$exe"
	assert_success
	refute_output --partial 'not ok'
	refute_output --partial '# SKIP'
	assert_output --partial 'on one connection'
}
