#!/usr/bin/env bats
# Security: TLS verification on by default; --insecure-skip-tls-verify
# warns once; credentials only over https; tokens, passwords and keys never
# in -v output, error messages or freed memory; exec plugins run through
# execve with an argv and client-go's environment, their stderr passed
# through and their stdout parsed strictly; no temporary files for
# credentials. The server is test/fixtures/badservers/badserver.py, which
# records the requests it gets (with their headers).
bats_require_minimum_version 1.5.0

load helpers

BAD=$KINF_SOURCE_ROOT/test/fixtures/badservers
SECRET=Zq7s3cretT0kenXx9
PASSWORD=Pw9s3cretPassw0rd

# server DIR MODE [--tls]: start badserver.py, wait for DIR/ready.
server() {
	local dir=$1
	shift
	mkdir -p "$dir"
	/usr/bin/python3 "$BAD/badserver.py" --dir "$dir" --mode "$@" --exit-with "$$" \
		>"$dir/server.log" 2>&1 3>&- </dev/null &
	echo $! > "$dir/server.pid"
	local i
	for ((i = 0; i < 400; i++)); do
		[[ -e $dir/ready ]] && return 0
		sleep 0.05
	done
	cat "$dir/server.log" >&2
	return 1
}

setup_file() {
	server "$BATS_FILE_TMPDIR/tls" ok --tls
	server "$BATS_FILE_TMPDIR/plain" ok
}

teardown_file() {
	kill "$(cat "$BATS_FILE_TMPDIR/tls/server.pid")" "$(cat "$BATS_FILE_TMPDIR/plain/server.pid")" \
		2>/dev/null || true
}

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
	TLS=$BATS_FILE_TMPDIR/tls
	PLAIN=$BATS_FILE_TMPDIR/plain
	TLS_URL=$(<"$TLS/url")
	PLAIN_URL=$(<"$PLAIN/url")
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/cache
	: > "$TLS/requests"
	: > "$PLAIN/requests"
}

# kubeconfig SERVER USER-YAML...: a kubeconfig for SERVER (with the TLS
# server's CA when https) whose user has the given lines (indented 4).
kubeconfig() {
	local url=$1 f=$BATS_TEST_TMPDIR/kubeconfig
	shift
	{
		printf 'apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n'
		printf -- '- name: s\n  cluster:\n    server: %s\n' "$url"
		if [[ $url == https:* ]]; then
			printf '    certificate-authority-data: %s\n' "$(base64 -w0 < "$TLS/ca.crt")"
		fi
		printf 'users:\n- name: u\n  user:\n'
		printf '    %s\n' "$@"
		printf 'contexts:\n- name: c\n  context: {cluster: s, user: u, namespace: default}\n'
	} > "$f"
	echo "$f"
}

# plugin_user MODE ARGS...: user lines for bad-plugin with these args.
plugin_user() {
	local args=
	for a in "$@"; do
		args+="${args:+, }'${a//\'/\'\'}'"
	done
	printf '%s\n' "exec:" "  apiVersion: client.authentication.k8s.io/v1" \
		"  command: $BAD/bad-plugin" "  args: [$args]" "  interactiveMode: Never" \
		"  env: [{name: KINF_PLUGIN_ENV, value: from-kubeconfig}, {name: BAD_PLUGIN_LOG, value: $BATS_TEST_TMPDIR/plugin.log}]"
}

# ---- TLS ----

@test "TLS verification is on by default" {
	# The system store does not know the server's CA.
	kc=$(kubeconfig "$TLS_URL" "token: $SECRET")
	sed -i '/certificate-authority-data/d' "$kc"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_equal "$status" 1
	[[ $stderr == "kinf: discovery: $TLS_URL: TLS: SSL certificate problem: "* ]]
	# Nothing was sent, so no token either.
	[[ ! -s $TLS/requests ]]
}

@test "--insecure-skip-tls-verify: one warning for many requests" {
	kc=$(kubeconfig "$TLS_URL" "token: $SECRET")
	sed -i '/certificate-authority-data/d' "$kc"
	run --separate-stderr "$KINF" watch pods --kubeconfig "$kc" --insecure-skip-tls-verify \
		--timeout 2s -o name
	assert_success
	assert_output "pod/p1"
	[[ $(grep -c . "$TLS/requests") -ge 4 ]]	# discovery, list, watch
	assert_equal "$stderr" "kinf: warning: TLS verification is off for $TLS_URL; the connection is not secure"
}

@test "insecure-skip-tls-verify in the kubeconfig warns too" {
	kc=$(kubeconfig "$TLS_URL" "token: $SECRET")
	sed -i 's/^    certificate-authority-data: .*/    insecure-skip-tls-verify: true/' "$kc"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" -o name
	assert_success
	assert_equal "$stderr" "kinf: warning: TLS verification is off for $TLS_URL; the connection is not secure"
}

# ---- credentials only over https ----

@test "no credentials over plain http: token, basic auth, client certificate, plugin, URL" {
	local users=(
		"token: $SECRET"
		"username: alice|password: $PASSWORD"
		"client-certificate: $TLS/client.crt|client-key: $TLS/client.key"
	)
	for u in "${users[@]}"; do
		IFS='|' read -ra lines <<<"$u"
		kc=$(kubeconfig "$PLAIN_URL" "${lines[@]}")
		run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
		assert_equal "$status" 3
		assert_equal "$stderr" "kinf: discovery: refusing to send credentials to $PLAIN_URL over plain http; use https"
	done
	mapfile -t lines < <(plugin_user token "$SECRET")
	kc=$(kubeconfig "$PLAIN_URL" "${lines[@]}")
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_equal "$status" 3
	[[ $stderr == *"kinf: discovery: refusing to send credentials to $PLAIN_URL over plain http; use https" ]]
	kc=$(kubeconfig "${PLAIN_URL/http:\/\//http://alice:$PASSWORD@}" "{}")
	sed -i 's/^    {}$//' "$kc"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: discovery: refusing to send credentials to $PLAIN_URL over plain http; use https"
	# The server never saw a request, let alone a credential.
	[[ ! -s $PLAIN/requests ]]
}

# ---- no header injection through credentials ----
# A value that becomes a header may hold no control character but tab
# (net/http's httpguts.ValidHeaderFieldValue): kinf refuses it, naming
# where it came from, with exit status 3 and nothing sent.

# no_injection: the server got no request at all.
no_requests() {
	[[ ! -s $TLS/requests ]] || { cat "$TLS/requests" >&2; return 1; }
}

# bad_bytes: YAML/JSON escapes and the name kinf gives each.
BAD_BYTES=(
	'\r|a carriage return'
	'\n|a line feed'
	'\u0000|a NUL byte'
	'\u0001|the control character 0x01'
	'\u001b|the control character 0x1b'
	'\u007f|the control character 0x7f'
)

@test "header injection: a kubeconfig token with a control character is refused, nothing sent" {
	for b in "${BAD_BYTES[@]}"; do
		kc=$(kubeconfig "$TLS_URL" "token: \"abc${b%%|*}X-Injected: 1\"")
		run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
		assert_equal "$status" 3
		assert_equal "$stderr" "kinf: $kc: line 12, column 12: the token of user \"u\" holds ${b#*|} (byte 4), which an HTTP header cannot carry"
		assert_equal "$output" ""
	done
	# CR LF as the exploit has it, in a block scalar.
	kc=$(kubeconfig "$TLS_URL" "token: |-" "  abc" "  X-Injected: 1")
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: $kc: line 12, column 12: the token of user \"u\" holds a line feed (byte 4), which an HTTP header cannot carry"
	no_requests
}

@test "header injection: a token that is not used (another user) does not matter" {
	kc=$(kubeconfig "$TLS_URL" "token: $SECRET")
	printf -- '- name: other\n  user:\n    token: "abc\\r\\nX-Injected: 1"\n' > "$BATS_TEST_TMPDIR/other"
	sed -i "/^contexts:/e cat $BATS_TEST_TMPDIR/other" "$kc"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" -o name
	assert_success
	assert_output "pod/p1"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" --user other
	assert_equal "$status" 3
	[[ $stderr == "kinf: $kc: line "*", column 12: the token of user \"other\" holds a carriage return (byte 4), which an HTTP header cannot carry" ]]
	! grep -qi x-injected "$TLS/requests"
}

@test "header injection: tab and non-ASCII bytes are valid in a token (as in Go)" {
	kc=$(kubeconfig "$TLS_URL" "token: \"a\\tb\\u00e9$SECRET\"")
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" -o name
	assert_success
	assert_output "pod/p1"
	# (the server reads headers as Latin-1: é is two characters there)
	grep -qF "\"authorization\": \"Bearer a\\tb\\u00c3\\u00a9$SECRET\"" "$TLS/requests"
}

@test "header injection: --token with CR LF is refused, nothing sent" {
	kc=$(kubeconfig "$TLS_URL" "token: $SECRET")
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" --token $'abc\r\nX-Injected: 1'
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: --token holds a carriage return (byte 4), which an HTTP header cannot carry"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" --token $'abc\x7f'
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: --token holds the control character 0x7f (byte 4), which an HTTP header cannot carry"
	no_requests
}

@test "header injection: a token file with CR LF inside is refused, nothing sent" {
	kc=$(kubeconfig "$TLS_URL" "tokenFile: $BATS_TEST_TMPDIR/token")
	printf 'abc\r\nX-Injected: 1\n' > "$BATS_TEST_TMPDIR/token"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: discovery: the token in file $BATS_TEST_TMPDIR/token holds a carriage return (byte 4), which an HTTP header cannot carry"
	printf 'abc\0def\n' > "$BATS_TEST_TMPDIR/token"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: discovery: the token in file $BATS_TEST_TMPDIR/token holds a NUL byte (byte 4), which an HTTP header cannot carry"
	no_requests
	# White space around the token is trimmed, as client-go does: that is fine.
	printf '\r\n %s \r\n' "$SECRET" > "$BATS_TEST_TMPDIR/token"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" -o name
	assert_success
	grep -q "\"authorization\": \"Bearer $SECRET\"" "$TLS/requests"
}

@test "header injection: an exec plugin's token with CR LF or NUL is refused, nothing sent" {
	for b in '\r\nX-Injected: 1|a carriage return' '\n|a line feed' '\u007f|the control character 0x7f'; do
		mapfile -t lines < <(plugin_user token "abc${b%%|*}")
		kc=$(kubeconfig "$TLS_URL" "${lines[@]}")
		run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
		assert_equal "$status" 3
		assert_equal "$stderr" "bad-plugin: note on stderr"$'\n'"kinf: discovery: exec plugin \"$BAD/bad-plugin\": the token it printed holds ${b#*|} (byte 4), which an HTTP header cannot carry"
	done
	# A NUL is refused by the JSON decoder already.
	mapfile -t lines < <(plugin_user token 'abc\u0000evil')
	kc=$(kubeconfig "$TLS_URL" "${lines[@]}")
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_equal "$status" 3
	[[ $stderr == *"kinf: discovery: exec plugin \"$BAD/bad-plugin\": decoding stdout: line 1, column 105: \u0000 is not allowed"* ]]
	no_requests
}

@test "header injection: a server URL or proxy-url with CR LF is refused, nothing sent" {
	kc=$(kubeconfig "$TLS_URL/x\r\nX-Injected: 1" "token: $SECRET")
	sed -i 's#^    server: \(.*\)$#    server: "\1"#' "$kc"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: invalid configuration: the server URL of cluster \"s\" holds a carriage return (byte $((${#TLS_URL} + 3))), which a URL cannot carry"
	kc=$(kubeconfig "$TLS_URL" "token: $SECRET")
	sed -i "s#^    server: .*#&\n    proxy-url: \"http://u:p\\\\r\\\\nX-Injected: 1@${PLAIN_URL#http://}\"#" "$kc"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: invalid configuration: the proxy-url of cluster \"s\" holds a carriage return (byte 11), which a URL cannot carry"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" --server $'https://a\nX-Injected: 1'
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: --server holds a line feed (byte 10), which a URL cannot carry"
	no_requests
	[[ ! -s $PLAIN/requests ]]
}

@test "a URL's user:password never shows in an error or warning (proxy-url, server)" {
	local url
	for url in "ftp://alice:$PASSWORD@proxy.example:21" "alice:$PASSWORD@proxy.example:3128" \
			"socks4://alice:$PASSWORD@proxy.example" "http://alice:$PASSWORD@" \
			"x:$PASSWORD@y://proxy.example"; do
		kc=$(kubeconfig "$TLS_URL" "token: $SECRET")
		sed -i "s#^    server: .*#&\n    proxy-url: \"$url\"#" "$kc"
		run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
		assert_equal "$status" 3
		[[ $stderr == *"invalid 'proxy-url' \""*"xxxxx@"* ]]
		[[ $stderr != *"$PASSWORD"* ]]
	done
	kc=$(kubeconfig "$TLS_URL" "token: $SECRET")
	sed -i "s#^    proxy-url: .*##; s#^    server: .*#&\n    proxy-url: \"ftp://alice:$PASSWORD@proxy.example:21\"#" "$kc"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_equal "$stderr" "kinf: invalid configuration: invalid 'proxy-url' \"ftp://xxxxx@proxy.example:21\" for cluster \"s\": unsupported scheme \"ftp\", must be http, https, or socks5"
	# the server's: the --insecure-skip-tls-verify warning, connection errors
	kc=$(kubeconfig "https://alice:$PASSWORD@${TLS_URL#https://}")
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" --insecure-skip-tls-verify -o name
	assert_equal "${stderr%%$'\n'*}" "kinf: warning: TLS verification is off for https://xxxxx@${TLS_URL#https://}; the connection is not secure"
	[[ $stderr != *"$PASSWORD"* ]]
	kc=$(kubeconfig "https://alice:$PASSWORD@127.0.0.1:1")
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" --insecure-skip-tls-verify
	assert_equal "$status" 1
	[[ $stderr == *"127.0.0.1:1"* && $stderr != *"$PASSWORD"* ]]
}

@test "header injection: impersonation values with CR LF are refused where they come from" {
	kc=$(kubeconfig "$TLS_URL" "token: $SECRET" "as: alice" 'as-groups: [devs, "ops\r\nX-Injected: 1"]')
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: $kc: line 14, column 23: 'as-groups' of user \"u\" holds a carriage return (byte 4), which an HTTP header cannot carry"
	# --token replaces the credentials, not the impersonation (as in kubectl)
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" --token "$SECRET"
	assert_equal "$status" 3
	# --as-group replaces the kubeconfig's groups, and is checked too
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" --as-group ok
	assert_equal "$status" 0
	: > "$TLS/requests"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" --as-group $'a\r\nX-Injected: 1'
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: --as-group holds a carriage return (byte 2), which an HTTP header cannot carry"
	kc=$(kubeconfig "$TLS_URL" "token: $SECRET" 'as: "alice\nX-Injected: 1"' 'as-uid: "1\u0000"' \
		'as-user-extra: {"k\r\nX": ["v\u007f"]}')
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: $kc: line 13, column 9: 'as' of user \"u\" holds a line feed (byte 6), which an HTTP header cannot carry"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" --as alice
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: $kc: line 14, column 13: 'as-uid' of user \"u\" holds a NUL byte (byte 2), which an HTTP header cannot carry"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" --as alice --as-uid 1
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: $kc: line 15, column 32: 'as-user-extra' of user \"u\" holds the control character 0x7f (byte 2), which an HTTP header cannot carry"
	for flag in --as --as-uid; do
		run --separate-stderr "$KINF" list pods --kubeconfig "$kc" "$flag" $'x\ny'
		assert_equal "$status" 3
		assert_equal "$stderr" "kinf: $flag holds a line feed (byte 2), which an HTTP header cannot carry"
	done
	no_requests
}

@test "impersonation: the extra key is percent-encoded, so it cannot end the header name" {
	kc=$(kubeconfig "$TLS_URL" "token: $SECRET" "as: alice" 'as-user-extra: {"k: v\r\nX-Injected": [one]}')
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" -o name
	assert_success
	grep -qF '"impersonate-extra-k%3a%20v%0d%0ax-injected": "one"' "$TLS/requests"
	! grep -qi '"x-injected"' "$TLS/requests"
}

@test "header injection: basic auth with CR LF goes base64-encoded, no header added" {
	kc=$(kubeconfig "$TLS_URL" 'username: "alice\r\nX-Injected: 1"' "password: \"$PASSWORD\\r\\nX-Also: 2\"")
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" -o name
	assert_success
	grep -qF "\"authorization\": \"Basic $(printf 'alice\r\nX-Injected: 1:%s\r\nX-Also: 2' "$PASSWORD" | base64 -w0)\"" "$TLS/requests"
	! grep -qi 'x-injected\|x-also' "$TLS/requests"
}

# ---- secrets out of logs, messages and memory ----

@test "a bearer token is sent, and never shown by -v=9 or in errors" {
	kc=$(kubeconfig "$TLS_URL" "token: $SECRET")
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" -o name -v=9
	assert_success
	grep -q "\"authorization\": \"Bearer $SECRET\"" "$TLS/requests"
	[[ -n $stderr && $stderr != *"$SECRET"* ]]
	# An error answer: the token is not in the message either.
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" --server "${TLS_URL}/nonexistent" -v=9
	assert_equal "$status" 1
	[[ $stderr != *"$SECRET"* ]]
}

@test "a password is sent, and never shown by -v=9, errors or cache names" {
	kc=$(kubeconfig "$TLS_URL" "username: alice" "password: $PASSWORD")
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" -o name -v=9
	assert_success
	grep -q "\"authorization\": \"Basic $(printf 'alice:%s' "$PASSWORD" | base64 -w0)\"" "$TLS/requests"
	[[ $stderr != *"$PASSWORD"* ]]
	# In the server URL: used, but not shown, and not in the cache's name.
	kc=$(kubeconfig "${TLS_URL/https:\/\//https://alice:$PASSWORD@}" "{}")
	sed -i 's/^    {}$//' "$kc"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" -o name -v=9
	assert_success
	[[ $stderr != *"$PASSWORD"* && $stderr == *"GET $TLS_URL/api"* ]]
	! grep -rq "$PASSWORD" "$XDG_CACHE_HOME"
	[[ $(find "$XDG_CACHE_HOME" -name "*$PASSWORD*" | wc -l) -eq 0 ]]
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" --server "${TLS_URL/https:\/\//https://alice:$PASSWORD@}:1"
	[[ $status -ne 0 && $stderr != *"$PASSWORD"* ]]
}

@test "key material is never shown by -v=9" {
	kc=$(kubeconfig "$TLS_URL" "client-certificate: $TLS/client.crt" "client-key: $TLS/client.key")
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" -o name -v=9
	assert_success
	[[ $stderr != *"PRIVATE KEY"* && $stderr != *"$(sed -n 2p "$TLS/client.key")"* ]]
}

@test "an exec plugin that prints a bare token: the token is not in the error" {
	cat > "$BATS_TEST_TMPDIR/raw-plugin" <<-EOF
	#!/bin/sh
	echo "abcdefgh$SECRET"
	EOF
	chmod +x "$BATS_TEST_TMPDIR/raw-plugin"
	kc=$(kubeconfig "$TLS_URL" "exec: {apiVersion: client.authentication.k8s.io/v1, command: $BATS_TEST_TMPDIR/raw-plugin, interactiveMode: Never}")
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_equal "$status" 3
	assert_equal "$stderr" "kinf: discovery: exec plugin \"$BATS_TEST_TMPDIR/raw-plugin\": decoding stdout: line 1, column 10: '[' or '{' expected"
}

@test "freed memory keeps no copy of the token (a core dump holds it only where in use)" {
	kc=$(kubeconfig "$TLS_URL" "token: $SECRET")
	# The scanner starts kinf itself (a parent may read its child's memory),
	# waits for the watch, and counts the token in every readable mapping:
	# the configuration, the auth cache and the watch request in flight.
	run /usr/bin/python3 - "$SECRET" "$KINF" watch pods --kubeconfig "$kc" -o name <<-'EOF'
	import re, subprocess, sys, time
	secret = sys.argv[1].encode()
	p = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
	p.stdout.readline()	# the pod: listed, the watch is open
	time.sleep(0.5)
	hits = 0
	try:
	    mem = open(f"/proc/{p.pid}/mem", "rb", 0)
	except PermissionError:
	    p.terminate()
	    print("unreadable")
	    sys.exit(0)
	with open(f"/proc/{p.pid}/maps") as maps, mem:
	    for line in maps:
	        addr, perms = line.split()[:2]
	        start, end = (int(x, 16) for x in addr.split("-"))
	        if "r" not in perms or end - start > 1 << 30 or line.rstrip().endswith("]") and "[heap]" not in line:
	            continue
	        try:
	            mem.seek(start)
	            hits += mem.read(end - start).count(secret)
	        except (OSError, ValueError, OverflowError):
	            pass
	p.terminate()
	p.wait()
	print(hits)
	EOF
	assert_success
	[[ $output != unreadable ]] || skip "cannot read a child's memory here (ptrace restrictions)"
	echo "# $output copies" >&3
	[[ $output -ge 1 && $output -le 3 ]]
}

# ---- exec plugins ----

@test "exec plugin: execve with the argv as written, no shell" {
	mapfile -t lines < <(plugin_user token "$SECRET" 'a b' '$(touch '"$BATS_TEST_TMPDIR"'/x)' "; touch $BATS_TEST_TMPDIR/y" '*')
	kc=$(kubeconfig "$TLS_URL" "${lines[@]}")
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" -o name
	assert_success
	grep -qxF "argv: [token] [$SECRET] [a b] [\$(touch $BATS_TEST_TMPDIR/x)] [; touch $BATS_TEST_TMPDIR/y] [*]" \
		"$BATS_TEST_TMPDIR/plugin.log"
	[[ ! -e $BATS_TEST_TMPDIR/x && ! -e $BATS_TEST_TMPDIR/y ]]
}

@test "exec plugin: client-go's environment" {
	mapfile -t lines < <(plugin_user token "$SECRET")
	kc=$(kubeconfig "$TLS_URL" "${lines[@]}")
	# Our environment passes through; the kubeconfig's env wins over it.
	KINF_OUTER=kept KINF_PLUGIN_ENV=from-outside run --separate-stderr "$KINF" list pods --kubeconfig "$kc" -o name
	assert_success
	log=$BATS_TEST_TMPDIR/plugin.log
	grep -qx "env: KINF_OUTER=kept" "$log"
	grep -qx "env: KINF_PLUGIN_ENV=from-kubeconfig" "$log"
	[[ $(grep -c '^env: KINF_PLUGIN_ENV=' "$log") -eq 1 ]]
	info=$(sed -n 's/^env: KUBERNETES_EXEC_INFO=//p' "$log")
	[[ $(jq -r '.apiVersion + " " + .kind + " " + (.spec.interactive | tostring)' <<<"$info") == \
		"client.authentication.k8s.io/v1 ExecCredential false" ]]
	grep -qx "stdin: not a terminal" "$log"
}

@test "exec plugin: its stderr passes through, its token is used" {
	mapfile -t lines < <(plugin_user token "$SECRET")
	kc=$(kubeconfig "$TLS_URL" "${lines[@]}")
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" -o name
	assert_success
	assert_equal "$stderr" "bad-plugin: note on stderr"
	grep -q "\"authorization\": \"Bearer $SECRET\"" "$TLS/requests"
}

@test "exec plugin: stdout is parsed strictly" {
	local bad=(
		'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}} trailing|decoding stdout: line 1, column 104: end of file expected'
		'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t","token":"u"}}|decoding stdout: line 1, column 101: duplicate object key'
		'{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}}|plugin is configured to use API version client.authentication.k8s.io/v1, plugin returned version client.authentication.k8s.io/v1beta1'
		'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":7}}|*'
	)
	for b in "${bad[@]}"; do
		printf '#!/bin/sh\ncat <<"EOF"\n%s\nEOF\n' "${b%%|*}" > "$BATS_TEST_TMPDIR/p"
		chmod +x "$BATS_TEST_TMPDIR/p"
		kc=$(kubeconfig "$TLS_URL" "exec: {apiVersion: client.authentication.k8s.io/v1, command: $BATS_TEST_TMPDIR/p, interactiveMode: Never}")
		run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
		assert_equal "$status" 3
		want=${b#*|}
		[[ $stderr == "kinf: discovery: exec plugin \"$BATS_TEST_TMPDIR/p\": "$want ]] ||
			{ declare -p stderr want >&2; return 1; }
	done
	[[ ! -s $TLS/requests ]]
}

# ---- no temporary files ----

@test "no temporary files for credentials" {
	command -v strace >/dev/null || skip "strace is not installed (.ci/deps --dev)"
	mapfile -t lines < <(plugin_user token "$SECRET")
	kc=$(kubeconfig "$TLS_URL" "client-certificate-data: $(base64 -w0 < "$TLS/client.crt")" \
		"client-key-data: $(base64 -w0 < "$TLS/client.key")")
	TMPDIR=$BATS_TEST_TMPDIR/tmp
	mkdir -p "$TMPDIR"
	# (LeakSanitizer cannot run under ptrace: off for this run.)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	run strace -f -qq -e trace=open,openat,creat,mkdir,rename,link,memfd_create \
		-o "$BATS_TEST_TMPDIR/strace" "$KINF" list pods --kubeconfig "$kc" -o name
	assert_success
	assert_output "pod/p1"
	# Files opened for writing, made or renamed: only the discovery cache.
	writes=$(grep -E 'O_WRONLY|O_RDWR|O_CREAT|creat\(|mkdir\(|rename\(|link\(|memfd_create\(' "$BATS_TEST_TMPDIR/strace" |
		grep -vE '"/dev/(null|tty)"|= -1 ' | grep -v "\"$XDG_CACHE_HOME[/\"]" || true)
	[[ -z $writes ]] || { echo "$writes" >&2; return 1; }
	[[ -z $(ls -A "$TMPDIR") ]]
	! grep -rq "PRIVATE KEY" "$XDG_CACHE_HOME"
}

# ---- terminal escapes from a server (CVE-2021-25743's class) ----

# What badserver.py's hostile mode puts after every string it sends (ESC ]
# 0 ; title BEL, ESC [ 2 J, CR LF, DEL, U+0085, U+202E, U+2066), and what
# kinf must print for it.
EVIL_SHOWN='^[]0;pwned^G^[[2J\r\nkinf: fake line^?\u0085\u202eevil\u2066'
# In a Table's cell, as kubectl's printTable prints one: up to its first
# line break, then "...".
EVIL_CELL='^[]0;pwned^G^[[2J...'

# terminal_safe FILE...: each FILE is valid UTF-8 and holds no control
# character but newline, no DEL, no C1 control and no bidi control.
terminal_safe() {
	python3 - "$@" <<-'PY'
	import sys
	bidi = {0x061c, 0x200e, 0x200f} | set(range(0x202a, 0x202f)) | set(range(0x2066, 0x206a))
	for path in sys.argv[1:]:
	    text = open(path, "rb").read().decode("utf-8")
	    for i, c in enumerate(text):
	        o = ord(c)
	        if (o < 0x20 and c != "\n") or 0x7f <= o <= 0x9f or o in bidi:
	            sys.exit(f"{path}: U+{o:04X} at {i}: {text[max(0, i - 30):i + 30]!r}")
	PY
}

# hostile MODE: start badserver.py in MODE for this test; KUBECONFIG set.
hostile() {
	server "$BATS_TEST_TMPDIR/h" "$1"
	export KUBECONFIG=$BATS_TEST_TMPDIR/h/kubeconfig
}

teardown() {
	if [[ -e $BATS_TEST_TMPDIR/h/server.pid ]]; then
		kill "$(cat "$BATS_TEST_TMPDIR/h/server.pid")" 2>/dev/null || true
	fi
}

# shown KINF-ARGS...: run kinf; stdout in $output and $BATS_TEST_TMPDIR/out,
# stderr in $stderr; both must be terminal-safe.
shown() {
	run --separate-stderr "$KINF" "$@"
	printf '%s' "$output" > "$BATS_TEST_TMPDIR/out"
	printf '%s' "$stderr" > "$BATS_TEST_TMPDIR/err"
	terminal_safe "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/err"
}

@test "escapes in a server-side Table's titles and cells, names and namespaces print escaped" {
	hostile hostile
	shown list pods
	assert_success
	[[ ${#lines[@]} -eq 2 ]]	# a header and one row: no line from a CR LF
	assert_line --index 0 --regexp '^NAME +STATUS\^\[\]0;PWNED\^G\^\[\[2J\\r\\nKINF: FAKE LINE\^\?\\u0085\\u202eEVIL\\u2066$'
	assert_line --index 1 "p$EVIL_CELL   Running$EVIL_CELL"
	shown list pods -o wide
	assert_success
	assert_line --index 1 --partial "   n$EVIL_CELL"
	shown list pods -A
	assert_success
	assert_line --index 1 --regexp "^ns"
	assert_line --index 1 --partial "ns$EVIL_SHOWN   p$EVIL_CELL   "
	shown list pods -o name
	assert_success
	assert_output "pod/p$EVIL_SHOWN"
	shown list pods -o custom-columns=NAME:.metadata.name,PHASE:.status.phase
	assert_success
	assert_line --index 1 "p$EVIL_SHOWN   Running$EVIL_SHOWN"
}

@test "escapes in watch events print escaped: watch, --diff, -o name, deltas, index" {
	hostile hostile
	shown watch pods -A --diff --timeout 2s
	assert_success
	[[ ${#lines[@]} -eq 5 ]]	# header, list, ADDED, UPDATED, one --diff line
	assert_line --index 1 --regexp "^[0-9:]+ +ADDED +ns\\^\\[\\]0;pwned"
	assert_line --index 4 --partial '    .metadata.labels: <none> → {"app\u001B]0;pwned\u0007\u001B[2J\r\nkinf: fake line^?\u0085\u202eevil\u2066":'
	# With --color, kinf's own colors and nothing else.
	run --separate-stderr "$KINF" watch pods --color always --timeout 2s
	assert_success
	assert_line --index 1 --regexp $'\e\\[32mADDED\e\\[0m +p\\^\\[\\]0;pwned'
	sed $'s/\e\\[3[23]m//g; s/\e\\[0m//g' <<<"$output" > "$BATS_TEST_TMPDIR/out"
	terminal_safe "$BATS_TEST_TMPDIR/out"
	shown watch pods -o name --timeout 2s
	assert_success
	assert_line --index 0 "pod/p$EVIL_SHOWN"
	shown deltas pods --timeout 2s
	assert_success
	assert_line --index 1 --partial "ns$EVIL_SHOWN/p$EVIL_SHOWN   5"
	shown index pods -A --values phase --timeout 2s
	assert_success
	assert_line --index 1 --partial "Running$EVIL_SHOWN"
	shown index pods -A --by phase --keys --timeout 2s
	assert_success
	assert_output "ns$EVIL_SHOWN/p$EVIL_SHOWN"
}

@test "kinf __complete leaves out a hostile server's names and labels with escapes" {
	hostile hostile
	shown __complete list pods ''
	assert_success
	assert_output ":4"	# nothing offered, the directive (no file completion)
	shown __complete index pods --by ''
	assert_success
	refute_output --partial "app"
}

@test "escapes in a recorded stream (--from) print escaped" {
	python3 -c '
import json
e = "\x1b]0;pwned\x07\x1b[2J\r\nkinf: fake line\x7f\u0085\u202eevil\u2066"
md = {"name": "p" + e, "namespace": "ns" + e, "resourceVersion": "1"}
print(json.dumps({"type": "ADDED", "object": {"kind": "Pod", "apiVersion": "v1", "metadata": md}}))
' > "$BATS_TEST_TMPDIR/s"
	shown watch --from "$BATS_TEST_TMPDIR/s"
	assert_success
	assert_line --index 1 --partial "ns$EVIL_SHOWN   p$EVIL_CELL   "
	shown index pods --from "$BATS_TEST_TMPDIR/s" --by namespace --keys
	assert_success
	assert_output "ns$EVIL_SHOWN/p$EVIL_SHOWN"
	# A failed rollout's line names the object.
	python3 -c '
import json
e = "\x1b]0;pwned\x07\x1b[2J\r\nkinf: fake line\x7f\u0085\u202eevil\u2066"
print(json.dumps({"type": "ADDED", "object": {"kind": "Deployment", "apiVersion": "apps/v1",
    "metadata": {"name": "r" + e, "namespace": "default", "resourceVersion": "1", "generation": 2},
    "spec": {"replicas": 1}, "status": {"observedGeneration": 2, "replicas": 1, "conditions": [
        {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]}}}))
' > "$BATS_TEST_TMPDIR/roll"
	shown watch --from "$BATS_TEST_TMPDIR/roll" --for rollout --all --timeout 10s
	assert_failure 5
	[[ $stderr == "kinf: rollout failed: object/r$EVIL_SHOWN: exceeded its progress deadline" ]]
}

@test "a server version with escapes prints escaped" {
	hostile hostile
	shown version
	assert_success
	assert_line --index 1 "Server Version: v1.32.0$EVIL_SHOWN"
}

@test "a Status message with escapes reaches stderr escaped, on one line" {
	hostile hostile-status:403
	shown list pods
	assert_failure 1
	[[ $stderr == "kinf: pods is forbidden$EVIL_SHOWN (403 Forbidden"* ]]
	[[ $(wc -l < "$BATS_TEST_TMPDIR/err") -eq 0 ]]	# one line, its newline stripped by run
	shown watch pods --timeout 2s
	assert_failure 1
	[[ $stderr == "kinf: pods is forbidden$EVIL_SHOWN (403 Forbidden"* ]]
}

@test "-o json keeps the server's values exact; -o jsonpath prints them raw, as kubectl does" {
	hostile hostile
	run --separate-stderr "$KINF" list pods -o json
	assert_success
	python3 -c '
import json, sys
sys.path.insert(0, sys.argv[2])
import badserver
got = json.loads(sys.argv[1])
assert got == badserver.evil_pod(), got
' "$output" "$BAD"
	run --separate-stderr "$KINF" list pods -o 'jsonpath={.items[0].metadata.name}'
	assert_success
	[[ $output == "p"$'\e]0;pwned\a\e[2J\r\nkinf: fake line\x7f\u0085\u202eevil\u2066' ]]
}
