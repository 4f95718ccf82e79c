#!/usr/bin/env bats
# kinf serve --pass-through (issue 22): reads serve does not cache go to
# the upstream and come back as it answers (describe's events, pods/log
# and a followed log, a watch of an uncached type); without the option
# they get a 404 naming it. And the smaller gaps: the kubeconfig keeps the
# upstream context's namespace, the upstream's Warnings reach serve's
# clients, probes need no token and nothing else goes without it, and a
# second context's OpenAPI documents are found under its prefix.

load helpers

setup_file() {
	fakeapi_start
	fakeapi_ctl POST faults '{"log_interval":0.2}' >/dev/null
	PASS_DIR=$BATS_FILE_TMPDIR/pass
	CACHE_DIR=$BATS_FILE_TMPDIR/cache
	serve_start_in "$PASS_DIR" pods -A --pass-through
	serve_start_in "$CACHE_DIR" pods -A
	POD=$(curl -sS --unix-socket "$CACHE_DIR/s.sock" http://kinf/api/v1/namespaces/default/pods |
		python3 -c 'import json,sys; print([p["metadata"]["name"] for p in json.load(sys.stdin)["items"] if p["metadata"]["name"].startswith("backup")][0])')
	export PASS_DIR CACHE_DIR POD
}

# A serve a test started for itself, stopped even when the test failed first.
teardown() {
	local d
	for d in ns warn ctx; do
		serve_stop_in "$BATS_TEST_TMPDIR/$d"
	done
}

teardown_file() {
	serve_stop_in "$PASS_DIR"
	serve_stop_in "$CACHE_DIR"
	fakeapi_stop
}

# kpass ARGS...: kubectl through the --pass-through serve.
kpass() {
	KUBECACHEDIR=$BATS_FILE_TMPDIR/kcache kubectl --kubeconfig "$PASS_DIR/kubeconfig" "$@"
}

# on DIR [curl args] PATH: a request on the socket of serve_start_in DIR.
on() {
	local dir=$1 last=${*: -1}
	curl -sS --unix-socket "$dir/s.sock" "${@:2:$#-2}" "http://kinf$last"
}

@test "servepass: with --pass-through, describe lists the pod's events and logs are the upstream's" {
	require_kubectl
	# Asked twice when they differ: an AGE may turn over between the two.
	for _ in 1 2; do
		run --separate-stderr kpass describe pod "$POD" -n default
		want=$(kubectl_fake describe pod "$POD" -n default)
		[[ $output == "$want" ]] && break
	done
	assert_success
	assert_output --partial 'Started container backup'
	[[ $output == "$want" && -z $stderr ]] || {
		diff <(echo "$want") <(echo "$output") >&2
		fail "describe differs (stderr: $stderr)"
	}
	# The log's lines carry the second they were made: compare them without it.
	run --separate-stderr kpass logs "$POD" -n default -c backup --tail 3
	assert_success
	[[ $(cut -d' ' -f2- <<<"$output") == "$(kubectl_fake logs "$POD" -n default -c backup --tail 3 | cut -d' ' -f2-)" ]] ||
		fail "the log differs: $output"
	# As the apiserver answers a log: text/plain, its status and headers.
	run on "$PASS_DIR" -D - "/api/v1/namespaces/default/pods/$POD/log?container=backup&tailLines=1"
	assert_line --regexp $'^Content-Type: text/plain\r$'
	assert_line --regexp $'^Audit-Id: [0-9a-f-]+\r$'
	run on "$PASS_DIR" -w ' %{http_code}' "/api/v1/namespaces/default/pods/$POD/log?container=nope"
	assert_output --partial '"message":"container nope is not valid for pod '"$POD"'","reason":"BadRequest"'
	assert_output --regexp ' 400$'
}

@test "servepass: a followed log stays open through serve, line by line" {
	require_kubectl
	out=$BATS_TEST_TMPDIR/follow
	kpass logs -f "$POD" -n default -c backup --tail 1 >"$out" 2>&1 3>&- &
	p=$!
	# One line a 0.2 s upstream: more than the ten it has come while it is open.
	wait_until grep -q ' line 13$' "$out"
	kill -0 "$p" || fail "kubectl logs -f ended"
	kill "$p"
	run cat "$out"
	assert_line --index 0 --regexp ' line 10$'
	assert_line --index 1 --regexp ' line 11$'
}

@test "servepass: a watch of a type serve does not cache is the upstream's watch" {
	require_kubectl
	out=$BATS_TEST_TMPDIR/w
	kpass get configmaps -n default -w >"$out" 2>&1 3>&- &
	p=$!
	wait_until grep -q '^app-config ' "$out"
	kubectl_fake create configmap servepass-w -n default --from-literal=a=b >/dev/null
	wait_until grep -q '^servepass-w ' "$out"
	kill "$p"
	kubectl_fake delete configmap servepass-w -n default >/dev/null
	# Discovery is the upstream's too: every type it has, as it says it.
	run kpass api-resources --no-headers -o name
	assert_output "$(kubectl_fake api-resources --no-headers -o name)"
	# Still read-only.
	run kpass delete configmap app-config -n default
	assert_failure
	assert_output --partial '(MethodNotAllowed): the server does not allow this method on the requested resource: kinf serve is a read-only cache'
}

@test "servepass: without --pass-through those reads get a 404 naming serve and the option" {
	local want='kinf serve is a read-only cache of pods of context \"admin\" ('"$FAKEAPI_URL"'), and passes other reads to it only with --pass-through'
	for path in "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D$POD" \
			"/api/v1/namespaces/default/pods/$POD/log" \
			"/api/v1/namespaces/default/configmaps?watch=1"; do
		run on "$CACHE_DIR" -w ' %{http_code}' "$path"
		assert_output --partial "$want"
		assert_output --partial '"reason":"NotFound","details":{},"code":404}'
		assert_line --index 1 ' 404'
	done
	# kubectl shows it as the error, for logs; describe leaves the events out.
	require_kubectl
	run env KUBECACHEDIR="$BATS_FILE_TMPDIR/kcache" kubectl --kubeconfig "$CACHE_DIR/kubeconfig" \
		logs "$POD" -n default -c backup
	assert_failure
	assert_output --partial 'the server could not find the requested resource (pods/log): kinf serve is a read-only cache'
}

@test "servepass: the kubeconfig serve -A writes keeps the upstream context's namespace" {
	require_kubectl
	local d=$BATS_TEST_TMPDIR/ns
	mkdir -p "$d"
	sed 's/namespace: "\{0,1\}default"\{0,1\}/namespace: viewer-ns/' "$FAKEAPI_DIR/kubeconfig" >"$d/upstream"
	grep -q 'namespace: viewer-ns' "$d/upstream" || fail "no namespace to change in the kubeconfig"
	KUBECONFIG=$d/upstream serve_start_in "$d" pods -A
	run grep -c '^ *namespace: "\{0,1\}viewer-ns"\{0,1\}$' "$d/kubeconfig"
	assert_output 1
	run env KUBECACHEDIR="$d/kc" kubectl --kubeconfig "$d/kubeconfig" get pods -o name
	serve_stop_in "$d"
	assert_success
	assert_output "$(kubectl --kubeconfig "$d/upstream" get pods -o name)"
	assert_output --partial viewer-app
}

@test "servepass: probes answer without the token; /metrics, /version and the rest need it" {
	local server ca=$BATS_TEST_TMPDIR/ca.crt
	server=$(sed -n 's/^ *server: "\(.*\)"/\1/p' "$CACHE_DIR/kubeconfig")
	sed -n 's/^ *certificate-authority-data: "\(.*\)"/\1/p' "$CACHE_DIR/kubeconfig" | base64 -d >"$ca"
	for p in /healthz /livez /readyz; do
		run curl -sS --cacert "$ca" -w ' %{http_code}' "$server$p"
		assert_output 'ok 200'
	done
	for p in /metrics /version /api /openapi/v2 /openapi/v3 /api/v1/namespaces/default \
			/api/v1/pods /readyz/informer-sync; do
		run curl -sS --cacert "$ca" -o /dev/null -w '%{http_code}' "$server$p"
		[[ $output == 401 ]] || fail "$p without the token: $output"
	done
	# With it /version is the upstream's, and kinf's own version is beside it.
	run on "$CACHE_DIR" -D - /version
	assert_line --regexp $'^Kinf-Serve-Version: [0-9.]+.*\r$'
	assert_output --partial "$(fakeapi_curl /version | sed -n 's/.*"gitVersion": \(.*\),/\1/p')"
	run on "$CACHE_DIR" /metrics
	assert_line --regexp '^kinf_serve_build_info\{version="[0-9.]+.*"\} 1$'
	run grep -E '^kinf: serve: kinf [0-9.]+' "$CACHE_DIR/log"
	assert_success
}

@test "servepass: the upstream's Warnings reach serve's clients, each text once" {
	local d=$BATS_TEST_TMPDIR/warn
	fakeapi_ctl POST faults '{"warnings":["299 - \"pods are deprecated in this test\""]}' >/dev/null
	# Two namespaces: two informers that both hear it, one collection that says it once.
	serve_start_in "$d" pods -n default,kube-system
	fakeapi_ctl POST faults '{"warnings":[]}' >/dev/null
	run on "$d" -D - -o /dev/null '/api/v1/namespaces/default/pods?limit=1'
	run grep -c '^Warning: 299 - "pods are deprecated in this test"' <<<"$output"
	assert_output 1
	require_kubectl
	run --separate-stderr env KUBECACHEDIR="$d/kc" kubectl --kubeconfig "$d/kubeconfig" get pods -n kube-system
	assert_success
	[[ $stderr == 'Warning: pods are deprecated in this test' ]] || fail "stderr: $stderr"
	serve_stop_in "$d"
	run grep -c 'upstream warning for pods: pods are deprecated in this test' "$d/log"
	assert_output 1
}

@test "servepass: a second context's /version and OpenAPI documents are found under its prefix" {
	local d=$BATS_TEST_TMPDIR/ctx
	serve_start_in "$d" pods --context admin,viewer -n default
	run on "$d" /clusters/viewer/version
	assert_output --partial '"gitVersion": "v1.'
	run on "$d" /clusters/viewer/openapi/v3
	assert_output --partial '"serverRelativeURL":"/clusters/viewer/openapi/v3/api/v1?hash='
	url=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["paths"]["api/v1"]["serverRelativeURL"])' <<<"$output")
	run on "$d" -o /dev/null -w '%{http_code} %{content_type}' "$url"
	assert_output '200 application/json'
	# A stale hash: the upstream's redirect, to the path under the prefix.
	run on "$d" -D - -o /dev/null "/clusters/viewer/openapi/v3/api/v1?hash=0"
	assert_line --regexp $'^Location: /clusters/viewer/openapi/v3/api/v1\\?hash=[0-9A-F]{128}\r$'
	serve_stop_in "$d"
}
