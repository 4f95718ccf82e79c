#!/usr/bin/env bats
# Bad input: one clear line on stderr and a documented exit status.
#   1 API/network/data, 2 usage, 3 kubeconfig or credentials.
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	fakeapi_start
}

teardown_file() {
	fakeapi_stop
}

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
}

# expect STATUS STDERR-GLOB kinf ARGS...: exactly one line on stderr (plus
# "try 'kinf --help'" for usage errors). Parentheses in the glob must be
# escaped: bats turns on extglob.
expect() {
	local want_status=$1 want_err=$2
	shift 2
	run --separate-stderr "$KINF" "$@"
	[ "$status" -eq "$want_status" ] || { echo "status $status, want $want_status: $stderr" >&2; return 1; }
	local first=${stderr%%$'\n'*}
	[[ "$first" == $want_err ]] || { echo "stderr: $stderr" >&2; echo "want:   $want_err" >&2; return 1; }
	[ "$(printf '%s\n' "$stderr" | grep -vc '^try ')" -eq 1 ] || { echo "more than one line: $stderr" >&2; return 1; }
	[ -z "$output" ]
}

@test "missing kubeconfig file" {
	expect 3 "kinf: *nope/config*" list pods --kubeconfig "$BATS_TEST_TMPDIR/nope/config"
}

@test "no configuration at all" {
	HOME="$BATS_TEST_TMPDIR" KUBECONFIG= expect 3 "kinf: no configuration*" list pods
}

@test "invalid YAML names the file, line and column" {
	printf 'apiVersion: v1\nclusters:\n- name: a\n  cluster: {server: x\n' > "$BATS_TEST_TMPDIR/bad"
	expect 3 "kinf: $BATS_TEST_TMPDIR/bad: line *, column *: *" list pods --kubeconfig "$BATS_TEST_TMPDIR/bad"
}

@test "wrong YAML type names the line" {
	printf 'apiVersion: v1\nclusters: 7\n' > "$BATS_TEST_TMPDIR/bad"
	expect 3 "kinf: $BATS_TEST_TMPDIR/bad: line 2, column *" list pods --kubeconfig "$BATS_TEST_TMPDIR/bad"
}

@test "unknown context" {
	expect 3 'kinf: *context "nosuch"*' list pods --context nosuch
}

@test "unreachable server" {
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	expect 1 "kinf: *127.0.0.1:$port*" list pods --server "https://127.0.0.1:$port" --refresh
}

@test "TLS verification failure (a CA that did not sign the server)" {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
		-subj /CN=other -keyout "$BATS_TEST_TMPDIR/k" -out "$BATS_TEST_TMPDIR/ca" 2>/dev/null
	expect 1 "kinf: *TLS*" list pods --certificate-authority "$BATS_TEST_TMPDIR/ca" --refresh
}

@test "401 is a credentials error" {
	expect 3 "kinf: *Unauthorized*\\(401*" list pods --token wrong --refresh
}

@test "403 is an API error" {
	# Nothing on stdout for any command, a table's header neither.
	for cmd in list watch deltas "index --values namespace"; do
		expect 1 'kinf: pods is forbidden: *\(403 Forbidden\)' $cmd pods -A --context viewer
	done
}

@test "unknown resource type, with a suggestion: a usage error (2); no API at the URL: 1" {
	expect 2 'kinf: unknown resource type "podz", did you mean "pods"?' list podz
	expect 2 'kinf: unknown resource type "zzzzzzzz"' list zzzzzzzz
	# No API at all at the URL: the server's fault, not the name's.
	expect 1 'kinf: the server could not find the requested resource \(no API at /api or /apis\)' \
		list pods --server "$FAKEAPI_URL/nonexistent" --refresh
	expect 1 'kinf: the server could not find the requested resource \(no API at /api or /apis\)' \
		watch pods,configmaps -o json --server "$FAKEAPI_URL/nonexistent" --refresh
}

@test "bad label and field selectors are usage errors" {
	expect 2 'kinf: -l: invalid selector "app in (web": *' list pods -l 'app in (web'
	expect 2 'kinf: --field-selector: invalid selector "spec..x=1": *' list pods --field-selector 'spec..x=1'
}

@test "usage errors: unknown command, flag, format, bad values" {
	expect 2 'kinf: unknown command "lsit", did you mean "list"?' lsit pods
	expect 2 "kinf: unknown option*" list pods --nope
	expect 2 'kinf: unknown output format "xml"*' list pods -o xml
	expect 2 'kinf: --chunk-size must be*' list pods --chunk-size -1
	expect 2 'kinf: invalid duration "soon"*' watch pods --timeout soon
	expect 2 'kinf: list needs a resource type*' list
	expect 2 'kinf: --count must be*' watch pods --count 0
}

@test "options before the command: a command's own, a typo, no command" {
	expect 2 "kinf: option '--timeout' is watch's own: it goes after the command \\(kinf watch ... --timeout\\)" \
		--timeout 5s watch pods
	expect 2 "kinf: option '--timeout' is not a shared one: *" --timeout 5s list pods
	expect 2 "kinf: unknown option '--namespce', did you mean '--namespace'?" --namespce x list pods
	expect 2 "kinf: option '-n' needs a value" -n
	expect 2 "kinf: no command after the options" -n team
	expect 2 'kinf: unknown command "lsit", did you mean "list"?' -n team lsit pods
}

@test "a response that is not JSON is a data error" {
	fakeapi_ctl POST /_fake/faults '{"fail_next":{"count":1,"status":500,"verb":"list","message":"boom"}}'
	expect 1 'kinf: boom \(500*' list pods
}

@test "typos in flags suggest the closest option; missing values are named" {
	expect 2 "kinf: unknown option '--namespce', did you mean '--namespace'?" list pods --namespce x
	expect 2 "kinf: unknown option '--exit-after-snyc', did you mean '--exit-after-sync'?" watch pods --exit-after-snyc
	expect 2 "kinf: option '--kubeconfig' needs a value" list pods --kubeconfig
	expect 2 "kinf: option '-n' needs a value" list pods -n
}

@test "no arguments or --help: a short, example-led help on stdout" {
	run --separate-stderr "$KINF"
	assert_success
	[[ "$output" == *"Examples:"* ]]
	[ "$(printf '%s\n' "$output" | wc -l)" -lt 30 ]
	run --separate-stderr "$KINF" --help
	assert_success
	[[ "$output" == *"kinf list pods -n default"* ]]
	run --separate-stderr "$KINF" help watch
	assert_success
	[[ "$output" == "Usage: kinf watch"* ]]
}

@test "kinf help COMMAND is COMMAND --help: every option once; help nope is an error" {
	local c help
	for c in deltas index list version watch; do
		help=$("$KINF" help "$c")
		[ "$help" = "$("$KINF" "$c" --help)" ] || fail "kinf help $c differs from kinf $c --help"
		# Each option has one entry (its meanings said there).
		run bash -c "sed -nE 's/^ +(-[A-Za-z], )?(--[a-z][a-z0-9-]*).*/\\2/p' | sort | uniq -d" <<<"$help"
		assert_output ""
	done
	[[ $("$KINF" help watch) == *"Informer options:"*"--from FILE"* ]]
	[[ $("$KINF" help index) == *"--exit-after-sync"* ]]
	expect 2 'kinf: unknown command "nope" \(the commands: deltas, index, list, serve, version, watch\)' help nope
	expect 2 'kinf: unknown command "wacth", did you mean "watch"?' help wacth
}

@test "any 5xx with Retry-After is retried, as client-go's checkWait; without it, not" {
	require_kubectl
	for code in 500 502 504; do
		fakeapi_ctl POST faults "{\"fail_next\":{\"count\":1,\"status\":$code,\"retry_after\":1,\"verb\":\"list\"}}" >/dev/null
		run kubectl_fake get pods -o name
		assert_success
		fakeapi_ctl POST faults "{\"fail_next\":{\"count\":1,\"status\":$code,\"retry_after\":1,\"verb\":\"list\"}}" >/dev/null
		fakeapi_ctl DELETE /_fake/requests >/dev/null
		run --separate-stderr "$KINF" list pods -o name
		assert_success
		[[ $(fakeapi_requests | jq -s "map(select(.verb == \"list\" and .resource == \"pods\") | .status) == [$code, 200]") == true ]]
	done
	# a 500 without Retry-After is the error at once, for both
	fakeapi_ctl POST faults '{"fail_next":{"count":1,"status":500,"verb":"list"}}' >/dev/null
	run kubectl_fake get pods -o name
	assert_failure
	fakeapi_ctl POST faults '{"fail_next":{"count":1,"status":500,"verb":"list"}}' >/dev/null
	expect 1 "kinf: Internal error occurred: injected failure \(fakeapi\)*" list pods
	fakeapi_ctl POST faults '{"reset":true}' >/dev/null
}
