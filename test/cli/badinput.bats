#!/usr/bin/env bats
# Bad input, bounded resources: each row is one bad input with the exact
# line kinf prints on stderr and its exit status (1 API/network/data, 2
# usage, 3 kubeconfig or credentials). None may crash, hang without bound
# or use unbounded memory: rows that could are timed and their peak memory
# measured. The misbehaving servers are test/fixtures/badservers/.
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	# One TLS server for the certificate rows (making its CA takes a while).
	bad_start --dir "$BATS_FILE_TMPDIR/tls" ok --tls
	echo "$BAD_PID" > "$BATS_FILE_TMPDIR/tls.pid"
	unset BAD_PID	# not for the tests' teardown to stop
	# The exec plugin that hangs runs for a minute (the default timeout)
	# while the other rows run; its row at the end checks the outcome.
	plugin_kubeconfig "$BATS_FILE_TMPDIR/hang.kubeconfig" hang
	(
		start=$(date +%s)
		rc=0
		XDG_CACHE_HOME=$BATS_FILE_TMPDIR/hang-cache timeout 100 "$KINF" list pods \
			--kubeconfig "$BATS_FILE_TMPDIR/hang.kubeconfig" \
			>"$BATS_FILE_TMPDIR/hang.out" 2>"$BATS_FILE_TMPDIR/hang.err" || rc=$?
		echo "$rc $(($(date +%s) - start))" > "$BATS_FILE_TMPDIR/hang.done.tmp"
		mv "$BATS_FILE_TMPDIR/hang.done.tmp" "$BATS_FILE_TMPDIR/hang.done"
	) 3>&- &
}

teardown_file() {
	kill "$(cat "$BATS_FILE_TMPDIR/tls.pid")" 2>/dev/null || true
}

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
	TLS_DIR=$BATS_FILE_TMPDIR/tls
	TLS_URL=$(<"$TLS_DIR/url")
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/cache
}

teardown() {
	bad_stop
}

# plugin_kubeconfig FILE MODE [ARG]: a kubeconfig whose user runs
# bad-plugin MODE against an unused port (the plugin fails first).
plugin_kubeconfig() {
	cat > "$1" <<-EOF
	apiVersion: v1
	kind: Config
	current-context: p
	clusters:
	- name: c
	  cluster: {server: "https://127.0.0.1:1"}
	users:
	- name: u
	  user:
	    exec:
	      apiVersion: client.authentication.k8s.io/v1
	      command: $BAD/bad-plugin
	      args: [$2${3:+, $3}]
	      interactiveMode: Never
	contexts:
	- name: p
	  context: {cluster: c, user: u}
	EOF
}

# tls_kubeconfig FILE CERT: the TLS server's kubeconfig with another client
# certificate (expired, revoked).
tls_kubeconfig() {
	sed "s#/client\.#/$2.#g" "$TLS_DIR/kubeconfig" > "$1"
}

# expect STATUS LINE kinf ARGS...: exit status STATUS and exactly LINE on
# stderr (one line; a plugin's own stderr lines before it are allowed with
# --plugin-stderr N), nothing on stdout. Also records the peak memory (KB)
# in $maxrss and the seconds taken in $secs.
expect() {
	local want_status=$1 want_line=$2 extra=0
	shift 2
	if [[ $1 == --plugin-stderr ]]; then
		extra=$2
		shift 2
	fi
	[[ $1 == kinf ]] && shift
	local start=$SECONDS
	# A sanitizer build's quarantine of freed memory (256 MB) would count
	# as kinf's own: keep it small, so the peak is what kinf holds.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16 \
		run --separate-stderr /usr/bin/time -f 'maxrss=%M' -o "$BATS_TEST_TMPDIR/time" \
		timeout 120 "$KINF" "$@"
	secs=$((SECONDS - start))
	maxrss=$(sed -n 's/^maxrss=//p' "$BATS_TEST_TMPDIR/time")
	echo "# status $status, ${secs}s, ${maxrss} KB" >&3
	[[ $status -eq $want_status ]] || {
		echo "status $status, want $want_status; stderr: $stderr" >&2
		return 1
	}
	local lines
	mapfile -t lines <<<"$stderr"
	[[ ${#lines[@]} -eq $((extra + 1)) ]] || {
		echo "want $((extra + 1)) line(s) on stderr, got: $stderr" >&2
		return 1
	}
	[[ ${lines[$extra]} == "$want_line" ]] || {
		echo "stderr: ${lines[$extra]}" >&2
		echo "want:   $want_line" >&2
		return 1
	}
	[[ -z $output ]] || { echo "stdout: $output" >&2; return 1; }
}

# Bounds for the rows that could run away.
fast() { [[ $secs -le ${1:-10} ]] || { echo "took ${secs}s, bound ${1:-10}s" >&2; return 1; }; }
small() {
	[[ $maxrss -le ${1:-262144} ]] || { echo "peak ${maxrss} KB, bound ${1:-262144} KB" >&2; return 1; }
}

# ---- kubeconfig and credentials: exit status 3 ----

@test "malformed YAML" {
	printf 'apiVersion: v1\nclusters: [a\n' > "$BATS_TEST_TMPDIR/kc"
	expect 3 "kinf: $BATS_TEST_TMPDIR/kc: line 3, column 1: did not find expected ',' or ']'" \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
}

@test "a kubeconfig that is not a mapping" {
	printf -- '- a\n- b\n' > "$BATS_TEST_TMPDIR/kc"
	expect 3 "kinf: $BATS_TEST_TMPDIR/kc: line 1, column 1: a kubeconfig must be a mapping" \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
}

# Hostile YAML in a kubeconfig: bounded by the limits the man page lists
# (LIMITS, Kubeconfig), in little time and memory.

# laughs_kubeconfig FILE WHERE: a billion laughs (10^9 scalars from 90
# aliases) in the exec extension (WHERE=extension) or in a key nothing reads.
laughs_kubeconfig() {
	python3 - "$1" "$2" "$BAD/bad-plugin" <<-'EOF'
	import sys
	path, where, plugin = sys.argv[1:]
	ind = "        " if where == "extension" else "  "
	laughs = [ind + "a0: &a0 [" + ", ".join(["lol"] * 10) + "]"]
	laughs += [ind + f"a{i}: &a{i} [" + ", ".join([f"*a{i-1}"] * 10) + "]" for i in range(1, 10)]
	out = ["apiVersion: v1", "kind: Config", "current-context: p", "clusters:", "- name: c",
	       "  cluster:", '    server: "https://127.0.0.1:1"']
	if where == "extension":
	    out += ["    extensions:", "    - name: client.authentication.k8s.io/exec",
	            "      extension:"] + laughs
	out += ["users:", "- name: u", "  user:", "    exec:",
	        "      apiVersion: client.authentication.k8s.io/v1", f"      command: {plugin}",
	        "      args: [fail]", "      interactiveMode: Never", "      provideClusterInfo: true",
	        "contexts:", "- name: p", "  context: {cluster: c, user: u}"]
	if where != "extension":
	    out += ["unused:"] + laughs
	open(path, "w").write("\n".join(out) + "\n")
	EOF
}

@test "kubeconfig: a billion laughs in the exec extension" {
	laughs_kubeconfig "$BATS_TEST_TMPDIR/kc" extension
	expect 3 "kinf: $BATS_TEST_TMPDIR/kc: line 16, column 18: more than 200000 nodes, an alias counting as the nodes it names (the kubeconfig limit)" \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
	fast 2
	small 65536
}

@test "kubeconfig: a billion laughs where nothing reads it" {
	laughs_kubeconfig "$BATS_TEST_TMPDIR/kc" unused
	expect 3 "kinf: $BATS_TEST_TMPDIR/kc: line 26, column 12: more than 200000 nodes, an alias counting as the nodes it names (the kubeconfig limit)" \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
	fast 2
	small 65536	# (it took 2 GB)
}

# extension_kubeconfig FILE DEPTH: plugin_kubeconfig's (plugin: fail), with
# an exec extension nested DEPTH levels deep and provideClusterInfo.
extension_kubeconfig() {
	plugin_kubeconfig "$1" fail
	python3 - "$1" "$2" <<-'EOF'
	import sys
	path, depth = sys.argv[1], int(sys.argv[2])
	text = open(path).read()
	cluster = text.split("\n  cluster: {server: ")[1].split("}\n")[0]
	text = text.replace("  cluster: {server: %s}\n" % cluster,
	                    "  cluster:\n    server: %s\n    extensions:\n"
	                    "    - name: client.authentication.k8s.io/exec\n"
	                    "      extension: %s\n" % (cluster, "[" * depth + "]" * depth))
	text = text.replace("      interactiveMode: Never\n",
	                    "      interactiveMode: Never\n      provideClusterInfo: true\n")
	open(path, "w").write(text)
	EOF
}

@test "kubeconfig: nested 100,000 levels deep, in the exec extension and unused" {
	extension_kubeconfig "$BATS_TEST_TMPDIR/kc" 100000
	expect 3 "kinf: $BATS_TEST_TMPDIR/kc: line 10, column 112: nested more than 100 levels deep (the kubeconfig limit)" \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
	fast 2
	small 65536
	plugin_kubeconfig "$BATS_TEST_TMPDIR/kc" fail
	python3 -c 'import sys; print("unused: " + "[" * 100000 + "]" * 100000)' >> "$BATS_TEST_TMPDIR/kc"
	expect 3 "kinf: $BATS_TEST_TMPDIR/kc: line 18, column 108: nested more than 100 levels deep (the kubeconfig limit)" \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
	fast 2
	small 65536
}

@test "kubeconfig: within the limits, an exec extension 94 deep loads and the plugin runs" {
	extension_kubeconfig "$BATS_TEST_TMPDIR/kc" 94
	# the plugin fails, after it got the cluster information
	expect 3 "kinf: discovery: exec plugin \"$BAD/bad-plugin\" failed: exit status 1" \
		--plugin-stderr 1 kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
}

@test "unknown context" {
	expect 3 'kinf: context "nosuch" does not exist' \
		kinf list pods --kubeconfig "$TLS_DIR/kubeconfig" --context nosuch
}

@test "unknown cluster" {
	expect 3 'kinf: cluster "nosuch" does not exist' \
		kinf list pods --kubeconfig "$TLS_DIR/kubeconfig" --cluster nosuch
}

@test "unknown user" {
	expect 3 'kinf: auth info "nosuch" does not exist' \
		kinf list pods --kubeconfig "$TLS_DIR/kubeconfig" --user nosuch
}

@test "a context naming a cluster that does not exist" {
	sed 's/cluster: bad$/cluster: gone/' "$TLS_DIR/kubeconfig" > "$BATS_TEST_TMPDIR/kc"
	expect 3 'kinf: invalid configuration: cluster "gone" was not found for context "bad"' \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
}

@test "client certificate without its key" {
	grep -v client-key "$TLS_DIR/kubeconfig" > "$BATS_TEST_TMPDIR/kc"
	expect 3 "kinf: invalid configuration: client-key-data or client-key must be specified for good to use the clientCert authentication method." \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
}

@test "certificate authority given as data and as a file" {
	sed "s#^\(    certificate-authority: .*\)#\1\n    certificate-authority-data: $(base64 -w0 < "$TLS_DIR/ca.crt")#" \
		"$TLS_DIR/kubeconfig" > "$BATS_TEST_TMPDIR/kc"
	expect 3 "kinf: invalid configuration: certificate-authority-data and certificate-authority are both specified for bad. certificate-authority-data will override." \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
}

@test "unreadable kubeconfig (a directory)" {
	expect 3 "kinf: error loading config file \"$BATS_TEST_TMPDIR\": Is a directory" \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR"
}

@test "unreadable certificate authority (missing)" {
	sed "s#certificate-authority: .*#certificate-authority: $BATS_TEST_TMPDIR/nope.crt#" \
		"$TLS_DIR/kubeconfig" > "$BATS_TEST_TMPDIR/kc"
	expect 3 "kinf: invalid configuration: unable to read certificate-authority $BATS_TEST_TMPDIR/nope.crt for bad due to No such file or directory" \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
}

@test "unreadable client key (a directory)" {
	sed "s#client-key: .*#client-key: $BATS_TEST_TMPDIR#" \
		"$TLS_DIR/kubeconfig" > "$BATS_TEST_TMPDIR/kc"
	expect 3 "kinf: unable to read client-key $BATS_TEST_TMPDIR: Is a directory" \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
}

@test "expired client certificate" {
	tls_kubeconfig "$BATS_TEST_TMPDIR/kc" expired
	expect 3 "kinf: discovery: $TLS_URL: TLS: the server rejected the client certificate: certificate expired" \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
}

@test "revoked client certificate" {
	tls_kubeconfig "$BATS_TEST_TMPDIR/kc" revoked
	expect 3 "kinf: discovery: $TLS_URL: TLS: the server rejected the client certificate: certificate revoked" \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
}

@test "exec plugin that fails: its stderr, then kinf's line" {
	plugin_kubeconfig "$BATS_TEST_TMPDIR/kc" fail
	expect 3 "kinf: discovery: exec plugin \"$BAD/bad-plugin\" failed: exit status 1" \
		--plugin-stderr 1 kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
	[[ $stderr == "bad-plugin: no credentials today"$'\n'* ]]
}

@test "exec plugin that prints garbage" {
	plugin_kubeconfig "$BATS_TEST_TMPDIR/kc" garbage
	expect 3 "kinf: discovery: exec plugin \"$BAD/bad-plugin\": decoding stdout: line 1, column 6: '[' or '{' expected" \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
}

@test "exec plugin that prints another kind" {
	plugin_kubeconfig "$BATS_TEST_TMPDIR/kc" wrongkind
	expect 3 "kinf: discovery: exec plugin \"$BAD/bad-plugin\": decoding stdout: kind is Secret, want ExecCredential" \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
}

@test "exec plugin that floods its output" {
	plugin_kubeconfig "$BATS_TEST_TMPDIR/kc" flood
	expect 3 "kinf: discovery: exec plugin \"$BAD/bad-plugin\": more than 1048576 bytes of output" \
		kinf list pods --kubeconfig "$BATS_TEST_TMPDIR/kc"
	small
}

@test "401 Unauthorized" {
	bad_start status:401
	expect 3 "kinf: Unauthorized (401 Unauthorized)" kinf list pods
}

# ---- TLS and the network: exit status 1 ----

@test "wrong CA: the server's certificate does not verify" {
	expect 1 "kinf: discovery: $TLS_URL: TLS: SSL certificate problem: self-signed certificate in certificate chain" \
		kinf list pods --kubeconfig "$TLS_DIR/kubeconfig" --certificate-authority "$TLS_DIR/other-ca.crt"
}

@test "https to a plain http server" {
	bad_start ok
	local url=${BAD_URL/http:/https:}
	expect 1 "kinf: discovery: $url: TLS: OpenSSL/3.0.8: error:0A00010B:SSL routines::wrong version number" \
		kinf list pods --server "$url" ||
		[[ $status -eq 1 && $stderr == "kinf: discovery: $url: TLS: "*"wrong version number" ]]
}

@test "connection refused" {
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	bad_start ok
	# The milliseconds vary.
	expect 1 "kinf: discovery: http://127.0.0.1:$port: Failed to connect to 127.0.0.1 port $port after 0 ms: Couldn't connect to server" \
		kinf list pods --server "http://127.0.0.1:$port" ||
		[[ $status -eq 1 && $stderr == "kinf: discovery: http://127.0.0.1:$port: Failed to connect to 127.0.0.1 port $port after "*" ms: Couldn't connect to server" ]]
}

# ---- what the server answers: exit status 1 ----

@test "403 Forbidden" {
	bad_start status:403
	expect 1 'kinf: pods is forbidden: User "bad" cannot list resource "pods" in API group "" in the namespace "default" (403 Forbidden)' \
		kinf list pods
}

@test "404 Not Found" {
	bad_start status:404
	expect 1 "kinf: the server could not find the requested resource (404 NotFound)" kinf list pods
}

@test "405 Method Not Allowed" {
	bad_start status:405
	expect 1 "kinf: the server does not allow this method on the requested resource (405 MethodNotAllowed)" \
		kinf list pods
}

@test "429 forever, without Retry-After" {
	bad_start status:429
	expect 1 "kinf: too many requests, please try again later (429 TooManyRequests)" kinf list pods
	fast 5
}

@test "429 forever, with Retry-After: 10 retries, then the error" {
	bad_start retry:429
	expect 1 "kinf: too many requests, please try again later (429 TooManyRequests)" kinf list pods
	fast 20
	[[ $(grep -c '"/api/v1/namespaces/default/pods' "$BAD_DIR/requests") -eq 11 ]]
}

# Retry-After as a hostile server writes it: obeyed up to 60 s a time,
# ten times; a longer wait is not retried, and the error says why.
pods_requests() { grep -c '"/api/v1/namespaces/default/pods' "$BAD_DIR/requests"; }

@test "Retry-After: 1000000000 (and 61, and one that overflows): no wait, the error says why" {
	local v vs=(1000000000 61 +3600) k
	for k in "${!vs[@]}"; do
		v=${vs[k]}
		bad_start --dir "$BATS_TEST_TMPDIR/bad$k" retry-after:$v
		expect 1 "kinf: too many requests, please try again later; the server asked to retry after ${v#+} s, longer than the 60 s kinf waits (429 TooManyRequests)" \
			kinf list pods
		fast 5
		[[ $(pods_requests) -eq 1 ]]
		bad_stop
	done
	bad_start retry-after:99999999999999999999999999
	expect 1 "kinf: too many requests, please try again later; the server asked to retry after over 9223372036854775807 s, longer than the 60 s kinf waits (429 TooManyRequests)" \
		kinf list pods
	fast 5
	[[ $(pods_requests) -eq 1 ]]
}

@test "Retry-After that is garbage or an HTTP-date: not a retry (as client-go), the error at once" {
	local v vs=(soon 1.5 '' '-' '1 2' "$(printf '1\x1b[2J')" 'Wed, 21 Oct 2099 07:28:00 GMT') k
	for k in "${!vs[@]}"; do
		v=${vs[k]}
		bad_start --dir "$BATS_TEST_TMPDIR/bad$k" "retry-after:$v"
		expect 1 "kinf: too many requests, please try again later (429 TooManyRequests)" kinf list pods
		fast 5
		[[ $(pods_requests) -eq 1 ]]
		bad_stop
	done
}

@test "Retry-After: 2, then an answer: kinf waits and proceeds" {
	bad_start retry-after-once:2
	local start=$SECONDS
	run --separate-stderr timeout 20 "$KINF" list pods -o name
	assert_success
	assert_output "pod/p1"
	[[ $((SECONDS - start)) -ge 1 && $((SECONDS - start)) -le 6 ]]
	[[ $(pods_requests) -eq 2 ]]
}

@test "Retry-After: -5 is no wait (at least 1 s), then the answer" {
	bad_start retry-after-once:-5
	run --separate-stderr timeout 20 "$KINF" list pods -o name
	assert_success
	assert_output "pod/p1"
	[[ $(pods_requests) -eq 2 ]]
}

@test "Retry-After past --request-timeout: not waited for" {
	bad_start retry-after:30
	expect 1 "kinf: too many requests, please try again later; the server asked to retry after 30 s, past the 3000 ms of --request-timeout (429 TooManyRequests)" \
		kinf list pods --request-timeout 3s
	fast 5
	[[ $(pods_requests) -eq 1 ]]
}

@test "500 forever" {
	bad_start status:500
	expect 1 "kinf: Internal error occurred: etcdserver: request timed out (500 InternalError)" kinf list pods
}

@test "403 on a watch: an error before the first sync" {
	bad_start status:403
	expect 1 'kinf: pods is forbidden: User "bad" cannot list resource "pods" in API group "" in the namespace "default" (403 Forbidden)' \
		kinf watch pods
}

@test "500 forever on a watch: retried with backoff, saying so, until --timeout" {
	bad_start status:500
	run --separate-stderr timeout 30 "$KINF" watch pods --timeout 5s
	assert_success
	# 800 ms doubling (with jitter): 2 to 4 attempts in 5 s, each one line.
	mapfile -t lines <<<"$stderr"
	[[ ${#lines[@]} -ge 2 && ${#lines[@]} -le 4 ]] || { echo "$stderr" >&2; return 1; }
	for l in "${lines[@]}"; do
		[[ $l == "kinf: warning: Internal error occurred: etcdserver: request timed out InternalError; retrying" ]]
	done
	[[ $(grep -c '/pods' "$BAD_DIR/requests") -eq ${#lines[@]} ]]
}

@test "a response that is not JSON" {
	bad_start notjson
	expect 1 "kinf: list response is not a JSON object" kinf list pods -o name
}

@test "discovery that is not JSON" {
	bad_start all-notjson
	expect 1 "kinf: discovery: /api: line 1, column 1: '[' or '{' expected near '<'" kinf list pods
}

@test "truncated JSON" {
	bad_start truncated
	expect 1 "kinf: truncated list response" kinf list pods -o name
}

@test "invalid UTF-8" {
	bad_start badutf8
	expect 1 "kinf: list item 1: line 1, column 23: invalid UTF-8 in string" kinf list pods -o name
}

@test "\"items\" that is not an array" {
	bad_start items-object
	expect 1 'kinf: list response: "items" is not an array' kinf list pods -o name
}

@test "an item without metadata.name" {
	bad_start no-name
	expect 1 "kinf: list item 1: object has no metadata.name" kinf list pods -o name
}

@test "an object nested 10,000 levels deep" {
	bad_start deep:10000
	expect 1 "kinf: a list item is nested more than 1000 levels deep" kinf list pods -o name
	small
}

@test "an object nested 600 levels deep (over --max-depth)" {
	bad_start deep:600
	expect 1 "kinf: list item 1: line 1, column 2611: nesting too deep (more than 512 levels)" \
		kinf list pods -o name
	# Within a raised limit it is fine.
	run --separate-stderr "$KINF" list pods -o name --max-depth 1000
	assert_success
	assert_output "pod/p1"
}

@test "a single 100 MB object" {
	bad_start big:100000000
	expect 1 "kinf: a list item exceeds the limit of 67108864 bytes (--max-object-size)" kinf list pods -o name
	fast 20
	small
}

@test "a 10 GB Content-Length" {
	bad_start huge-length
	expect 1 "kinf: a list item exceeds the limit of 67108864 bytes (--max-object-size)" kinf list pods -o name
	fast 20
	small
}

@test "a gzip bomb (10 GB inflated)" {
	bad_start gzip-bomb
	expect 1 "kinf: a list item exceeds the limit of 67108864 bytes (--max-object-size)" kinf list pods -o name
	fast 20
	small
}

@test "a discovery document over 64 MiB" {
	bad_start all-big:100000000
	expect 1 "kinf: discovery: /api: the response exceeds 64 MiB" kinf list pods
	fast 20
	small
}

@test "a server that accepts and never answers" {
	bad_start silent
	expect 1 "kinf: $BAD_URL: the server sent less than 1024 bytes/s for 2 s (--idle-timeout)" \
		kinf list pods --idle-timeout 2s
	fast 6
}

@test "a server that never answers, with --request-timeout" {
	bad_start silent
	expect 1 "kinf: $BAD_URL: no complete answer after 1500 ms (--request-timeout)" \
		kinf list pods --request-timeout 1.5s
	fast 5
}

@test "an https server that never completes the TLS handshake" {
	bad_start mute
	local url=${BAD_URL/http:/https:}
	expect 1 "kinf: discovery: $url: no connection (TCP and TLS) within 2000 ms (--request-timeout)" \
		kinf list pods --server "$url" --request-timeout 2s
	fast 5
}

@test "a server that trickles one byte a second" {
	bad_start trickle
	expect 1 "kinf: $BAD_URL: the server sent less than 1024 bytes/s for 3 s (--idle-timeout)" \
		kinf list pods -o name --idle-timeout 3s
	fast 8
}

@test "a status line, then nothing" {
	bad_start headers-only
	expect 1 "kinf: $BAD_URL: the server sent less than 1024 bytes/s for 2 s (--idle-timeout)" \
		kinf list pods -o name --idle-timeout 2s
	fast 6
}

@test "header lines without end" {
	bad_start header-flood
	expect 1 "kinf: $BAD_URL: Too large response headers: 307969 > 307200" kinf list pods -o name
	small
}

@test "a connection closed without an answer" {
	bad_start empty-reply
	expect 1 "kinf: $BAD_URL: Empty reply from server" kinf list pods -o name
}

@test "broken chunked encoding" {
	bad_start bad-chunk
	expect 1 "kinf: $BAD_URL: Illegal or missing hexadecimal sequence in chunked-encoding" \
		kinf list pods -o name
}

@test "a redirect (not followed)" {
	bad_start redirect
	expect 1 "kinf: the server responded with status 302 Found (302)" kinf list pods -o name
	[[ $(grep -c '127.0.0.1:1/' "$BAD_DIR/requests") -eq 0 ]]
}

# ---- names no API server allows: refused whole, never cut short ----

@test "a NUL inside a name: an error naming the object" {
	bad_start 'item-name:a\u0000evil'
	expect 1 'kinf: table row 2: object "default/a\u0000evil": metadata.name may not contain \u0000' \
		kinf list pods
	run --separate-stderr "$KINF" list pods -o name
	[[ $status -eq 1 ]]
	[[ $output == pod/a ]]	# the good item; the bad one is neither "a" nor dropped silently
	[[ $stderr == 'kinf: list item 2: object "default/a\u0000evil": metadata.name may not contain \u0000' ]]
	run --separate-stderr "$KINF" watch pods --timeout 2s
	[[ $status -eq 1 ]]
	[[ $stderr == 'kinf: list item 2: object "default/a\u0000evil": metadata.name may not contain \u0000' ]]
}

@test "a NUL inside a namespace: an error naming the object" {
	bad_start 'item-namespace:n\u0000s'
	expect 1 'kinf: table row 2: object "n\u0000s/b": metadata.namespace may not contain \u0000' \
		kinf list pods -A
	run --separate-stderr "$KINF" list pods -A -o json
	[[ $status -eq 1 ]]
	[[ $stderr == 'kinf: list item 2: object "n\u0000s/b": metadata.namespace may not contain \u0000' ]]
}

@test "names the API server refuses (IsValidPathSegmentName): '/', '%', '.', '..'" {
	local name want
	for name in a/b 50% . ..; do
		case $name in
		*/*) want="may not contain '/'" ;;
		*%*) want="may not contain '%'" ;;
		*) want="may not be '$name'" ;;
		esac
		bad_start "item-name:$name"
		expect 1 "kinf: table row 2: object \"default/$name\": metadata.name $want" kinf list pods
		expect 1 "kinf: list item 2: object \"default/$name\": metadata.name $want" \
			kinf index pods --by namespace --keys
		bad_stop
		rm -rf "$BATS_TEST_TMPDIR/bad"
	done
}

@test "a NUL inside a name in a watch event: the watch is retried, naming the object" {
	bad_start 'watch-name:b\u0000evil'
	run --separate-stderr timeout 60 "$KINF" watch pods -o name --timeout 3s
	[[ $status -eq 0 ]]
	[[ $output == pod/a ]]
	[[ ${stderr%%$'\n'*} == 'kinf: warning: event 1: ADDED event object: object "default/b\u0000evil": metadata.name may not contain \u0000; retrying' ]]
}

@test "--from: a NUL inside a name" {
	printf '{"type":"ADDED","object":{"metadata":{"name":"a\\u0000evil","namespace":"default"}}}\n' \
		> "$BATS_TEST_TMPDIR/s"
	expect 1 "kinf: $BATS_TEST_TMPDIR/s: event 1: ADDED event object: object \"default/a\\u0000evil\": metadata.name may not contain \\u0000" \
		kinf watch --from "$BATS_TEST_TMPDIR/s"
	expect 1 "kinf: $BATS_TEST_TMPDIR/s: event 1: ADDED event object: object \"default/a\\u0000evil\": metadata.name may not contain \\u0000" \
		kinf index pods --from "$BATS_TEST_TMPDIR/s" --by namespace --keys
}

# ---- recorded streams and limits ----

@test "--from: a truncated stream" {
	printf '{"type":"ADDED","object":{"metadata":{"name":"a"' > "$BATS_TEST_TMPDIR/s"
	expect 1 "kinf: $BATS_TEST_TMPDIR/s: event 1: truncated at end of input" \
		kinf watch --from "$BATS_TEST_TMPDIR/s"
}

@test "--from: not JSON" {
	printf 'hello\n' > "$BATS_TEST_TMPDIR/s"
	expect 1 "kinf: $BATS_TEST_TMPDIR/s: event 1: a JSON object expected, found 'h'" \
		kinf watch --from "$BATS_TEST_TMPDIR/s"
}

@test "--from: invalid UTF-8" {
	printf '{"type":"ADDED","object":{"metadata":{"name":"a\xff"}}}\n' > "$BATS_TEST_TMPDIR/s"
	expect 1 "kinf: $BATS_TEST_TMPDIR/s: event 1: line 1, column 48: invalid UTF-8 in string" \
		kinf watch --from "$BATS_TEST_TMPDIR/s"
}

@test "--max-object-size is enforced" {
	python3 -c 'print("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"},\"d\":\"" + "A" * 3000 + "\"}}")' \
		> "$BATS_TEST_TMPDIR/s"
	expect 1 "kinf: $BATS_TEST_TMPDIR/s: event 1: ADDED event object: object of 3032 bytes exceeds the limit of 1024 bytes (--max-object-size)" \
		kinf watch --from "$BATS_TEST_TMPDIR/s" --max-object-size 1K
}

@test "--max-depth is enforced" {
	python3 -c 'print("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"},\"d\":" + "[" * 20 + "]" * 20 + "}}")' \
		> "$BATS_TEST_TMPDIR/s"
	expect 1 "kinf: $BATS_TEST_TMPDIR/s: event 1: line 1, column 63: nesting too deep (more than 10 levels)" \
		kinf watch --from "$BATS_TEST_TMPDIR/s" --max-depth 10
}

# ---- pagination without end, 410 every time (issue 16: 5, 7) ----

@test "the same continue token on every page" {
	bad_start same-token
	expect 1 "kinf: list page 2 repeats the continue token that asked for page 2: the server's pages go round in a circle" \
		kinf list pods
	[[ $(grep -c '/pods' "$BAD_DIR/requests") -eq 2 ]]
}

@test "continue tokens in a circle (A, B, A)" {
	bad_start token-cycle
	expect 1 "kinf: list page 3 repeats the continue token that asked for page 2: the server's pages go round in a circle" \
		kinf list pods
	[[ $(grep -c '/pods' "$BAD_DIR/requests") -eq 3 ]]
}

# 3 MB pages: the next page is asked for on a second connection while this
# one arrives; the repeated token must be caught there too.
@test "the same continue token on every large page (two connections)" {
	bad_start same-token:3000000
	expect 1 "kinf: list page 2 repeats the continue token that asked for page 2: the server's pages go round in a circle" \
		kinf list pods
	fast 10
	small
}

@test "continue tokens in a circle, large pages (two connections)" {
	bad_start token-cycle:3000000
	expect 1 "kinf: list page 3 repeats the continue token that asked for page 2: the server's pages go round in a circle" \
		kinf list pods
	fast 10
	small
}

@test "pages without end: --max-list-items bounds the items" {
	bad_start endless-pages:500
	expect 1 "kinf: the list holds more than 5000 items (--max-list-items)" \
		kinf list pods --max-list-items 5000
	[[ $(grep -c '/pods' "$BAD_DIR/requests") -eq 11 ]]
	fast 10
	small
}

@test "large pages without end (two connections): --max-list-items bounds them" {
	bad_start endless-pages:100:30000
	expect 1 "kinf: the list holds more than 3000 items (--max-list-items)" \
		kinf list pods --max-list-items 3000
	fast 20
	small
}

@test "empty pages without end: --max-list-items bounds the pages" {
	bad_start endless-pages:0
	expect 1 "kinf: the list runs to more than 30 pages (--max-list-items)" \
		kinf list pods --max-list-items 30
	[[ $(grep -c '/pods' "$BAD_DIR/requests") -eq 30 ]]
}

@test "--max-list-items: not a whole number >= 1 is a usage error" {
	for v in 0 -1 x 10k ""; do
		run --separate-stderr "$KINF" list pods --max-list-items "$v"
		[[ $status -eq 2 && -z $output ]]
		[[ $stderr == "kinf: invalid --max-list-items \"$v\""$'\n'"try 'kinf list --help'" ]]
	done
}

@test "a watch whose list repeats its continue token: an error before the first sync" {
	bad_start same-token
	expect 1 "kinf: list page 2 repeats the continue token that asked for page 2: the server's pages go round in a circle" \
		kinf watch pods
	fast 10
}

@test "a watch whose list never ends: an error before the first sync" {
	bad_start endless-pages:500
	expect 1 "kinf: the list holds more than 2000 items (--max-list-items)" \
		kinf watch pods --max-list-items 2000
	fast 10
}

@test "a watch-list whose initial events never end: bounded, then a regular list" {
	bad_start endless-initial
	run --separate-stderr timeout 30 "$KINF" watch pods -o name --watch-list --max-list-items 1000 --timeout 3s -v
	assert_success
	assert_output "pod/p1"
	grep -q 'streaming list failed (the initial events hold more than 1000 objects (--max-list-items)); falling back to a regular list$' <<<"$stderr"
}

@test "410 on every continued page, a continue token in the full list too: one fallback" {
	bad_start gone-continue
	run --separate-stderr timeout 20 "$KINF" list pods -o name
	assert_success
	assert_output "pod/p1"
	[[ $stderr == "kinf: warning: the list's continue token expired midway; the items after that come from a second, full list (resourceVersion 10)" ]]
	# The first page, the continued one (410), the full list; its token is not followed.
	[[ $(grep -c '/pods' "$BAD_DIR/requests") -eq 3 ]]
}

@test "410 on every continued page, a token in the full list, large pages (two connections)" {
	bad_start gone-continue:3000000
	run --separate-stderr timeout 20 "$KINF" list pods -o name
	assert_success
	assert_output "pod/p1"
	[[ $stderr == "kinf: warning: the list's continue token expired midway; the items after that come from a second, full list (resourceVersion 10)" ]]
	[[ $(grep -c '/pods' "$BAD_DIR/requests") -eq 3 ]]
}

@test "410 on every continued page and on the full list: the server's message" {
	bad_start gone-unpaged
	expect 1 "kinf: The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter. (410 Expired)" \
		kinf list pods
	[[ $(grep -c '/pods' "$BAD_DIR/requests") -eq 3 ]]
	grep -q 'continue=A' "$BAD_DIR/requests"
	! grep '/pods' "$BAD_DIR/requests" | tail -1 | grep -q 'limit='
}

@test "410 on every list for a watch: backs off and says so, no hot loop" {
	bad_start gone-unpaged
	run --separate-stderr timeout 30 "$KINF" watch pods --timeout 5s
	assert_success
	# Each attempt: the list at "0" and at "" (each page 1, 410, full list: 410).
	mapfile -t lines <<<"$stderr"
	[[ ${#lines[@]} -ge 2 && ${#lines[@]} -le 4 ]] || { echo "$stderr" >&2; return 1; }
	for l in "${lines[@]}"; do
		[[ $l == "kinf: warning: The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter. Expired; retrying" ]]
	done
	[[ $(grep -c '/pods' "$BAD_DIR/requests") -le $((6 * ${#lines[@]} + 6)) ]]
}

@test "410 on every watch: relists with backoff, logged with -v" {
	bad_start watch-gone
	run --separate-stderr timeout 30 "$KINF" watch pods -o name --timeout 5s -v
	assert_success
	# The pod, again after each relist or not: that is the printer's business.
	[[ $(sort -u <<<"$output") == "pod/p1" ]]
	# 800 ms doubling (with jitter) between relists: 2 to 4 in 5 s.
	n=$(grep -c 'watch=1' "$BAD_DIR/requests")
	[[ $n -ge 2 && $n -le 4 ]] || { echo "$n watches" >&2; return 1; }
	[[ $(grep -c '/pods' "$BAD_DIR/requests") -eq $((2 * n)) ]]
	[[ $(grep -c 'watch: error; relisting$' <<<"$stderr") -eq $n ]]
	[[ $(grep -c 'relist due; retrying in [0-9]* ms$' <<<"$stderr") -ge $((n - 1)) ]]
}

# ---- what client-go accepts (issue 16: 8, 9) ----

@test "\"items\": null is an empty list" {
	bad_start items-null
	run --separate-stderr "$KINF" list pods -o name
	assert_success
	assert_output ""
	[[ -z $stderr ]]
	run --separate-stderr "$KINF" list pods
	assert_success
	[[ $stderr == "No resources found in default namespace." ]]
}

@test "unknown top-level members of every JSON type are ignored" {
	bad_start extra-members
	run --separate-stderr "$KINF" list pods -o name
	assert_success
	assert_output "pod/p1"
	[[ -z $stderr ]]
}

@test "an unknown top-level member that is not JSON is an error" {
	bad_start bad-member
	expect 1 'kinf: list member "x": line 1, column 1: invalid literal' kinf list pods -o name
}

@test "watch events back to back without newlines, CR or tabs between, one split" {
	bad_start watch-concat
	run --separate-stderr timeout 20 "$KINF" watch pods -o name --timeout 3s
	assert_success
	[[ -z $stderr ]] || { echo "$stderr" >&2; return 1; }
	# The list's pod, then every event, though the stream has no newline at all.
	assert_output "$(printf 'pod/%s\n' p1 c1 c2 c3 c3 c4 c1 c5)"
}

# Last: the plugin started in setup_file has had its minute.
@test "exec plugin that hangs: killed after the 60 s timeout" {
	for ((i = 0; i < 900; i++)); do
		[[ -e $BATS_FILE_TMPDIR/hang.done ]] && break
		sleep 0.1
	done
	read -r rc took < "$BATS_FILE_TMPDIR/hang.done"
	echo "# status $rc, ${took}s" >&3
	[[ $rc -eq 3 ]]
	[[ $took -ge 59 && $took -le 70 ]]
	[[ $(<"$BATS_FILE_TMPDIR/hang.err") == "kinf: discovery: exec plugin \"$BAD/bad-plugin\" timed out after 60000 ms and was killed" ]]
	[[ ! -s $BATS_FILE_TMPDIR/hang.out ]]
	# The plugin's process group went with it (its child too).
	! pgrep -f "$BAD/bad-plugin hang" >/dev/null
}
