#!/usr/bin/env bats
# kinf serve in front of test/fakeapi: the API it speaks, checked with curl
# over its unix socket and its TCP listener (token), against what fakeapi
# itself holds; watches, selectors, paging, Tables, errors, /metrics, and
# an upstream that goes away and comes back.

load helpers

serve_start() {
	SERVE_DIR=$BATS_FILE_TMPDIR/serve
	mkdir -p "$SERVE_DIR"
	SOCK=$SERVE_DIR/s.sock
	# A subshell waits for it and keeps its exit status.
	{
		"$KINF" serve pods,deployments,nodes -A --listen "unix:$SOCK" \
			--listen tcp:127.0.0.1:0 --write-kubeconfig "$SERVE_DIR/kubeconfig" \
			--window 50 --bookmark-interval 1s "$@" \
			>"$SERVE_DIR/log" 2>&1 </dev/null &
		echo $! >"$SERVE_DIR/pid"
		wait $!
		echo $? >"$SERVE_DIR/status"
	} 3>&- &
	wait_until test -s "$SERVE_DIR/pid"
	SERVE_PID=$(<"$SERVE_DIR/pid")
	export SERVE_DIR SOCK SERVE_PID
	local i
	for ((i = 0; i < 300; i++)); do
		[[ $(curl -s -m 1 --unix-socket "$SOCK" http://kinf/readyz 2>/dev/null) == ok ]] &&
			return 0
		kill -0 "$SERVE_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "kinf serve not ready:" >&2
	cat "$SERVE_DIR/log" >&2
	return 1
}

setup_file() {
	fakeapi_start --pods 40 --namespaces 2 --state "$BATS_FILE_TMPDIR/state"
	serve_start
}

teardown_file() {
	if [[ -n ${SERVE_PID:-} ]]; then
		kill -TERM "$SERVE_PID" 2>/dev/null || true
		wait_until test -s "$SERVE_DIR/status" || true
	fi
	fakeapi_stop
}

# scurl [curl args] PATH: a request over the unix socket.
scurl() {
	local last=${*: -1}
	curl -sS --unix-socket "$SOCK" "${@:1:$#-1}" "http://kinf$last"
}

# jq-less JSON reads: py EXPR, with the document as d.
py() {
	python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"
}

@test "serve: health, version, and the bound addresses on stderr" {
	run scurl /healthz
	assert_output ok
	run scurl /readyz
	assert_output ok
	run scurl '/readyz?verbose'
	assert_line '[+]informer-sync ok'
	assert_line '[+]upstream ok'
	# /version is the upstream's (kubectl parses it), serve's own beside it.
	run scurl -D - /version
	assert_output --partial "$(fakeapi_curl /version | grep gitVersion)"
	assert_line --regexp $'^Kinf-Serve-Version: [0-9]+\\.[0-9]+.*\r$'
	run grep -c 'kinf: serve: listening on' "$SERVE_DIR/log"
	assert_output 2
}

@test "serve: discovery lists the served types only, legacy and aggregated" {
	run scurl /api/v1
	assert_output --partial '"name":"pods"'
	assert_output --partial '"name":"nodes"'
	refute_output --partial configmaps
	assert_output --partial '"verbs":["get","list","watch"]'
	run scurl /apis
	assert_output --partial '"groupVersion":"apps/v1"'
	run scurl -D - -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' /apis
	assert_output --partial 'Content-Type: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'
	assert_output --partial '"resource":"deployments","responseKind":{"group":"apps","version":"v1","kind":"Deployment"}'
	run scurl /apis/batch/v1
	assert_output '404 page not found'
}

@test "serve: a list holds what the upstream holds, sorted, with its resourceVersion" {
	want=$(fakeapi_curl /api/v1/pods | py '" ".join(sorted(i["metadata"]["namespace"]+"/"+i["metadata"]["name"] for i in d["items"]))')
	run bash -c "curl -sS --unix-socket '$SOCK' http://kinf/api/v1/pods | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[\"kind\"], d[\"metadata\"][\"resourceVersion\"].isdigit()); print(\" \".join(i[\"metadata\"][\"namespace\"]+\"/\"+i[\"metadata\"][\"name\"] for i in d[\"items\"]))'"
	assert_success
	assert_line --index 0 'PodList True'
	assert_line --index 1 "$want"
	run scurl /api/v1/namespaces/default/pods
	refute_output --partial '"namespace":"pod-ns-0"'
}

@test "serve: label and field selectors, as the apiserver checks them" {
	want=$(fakeapi_curl '/api/v1/pods?labelSelector=app%3Dweb' | py 'len(d["items"])')
	run bash -c "curl -sS --unix-socket '$SOCK' 'http://kinf/api/v1/pods?labelSelector=app%3Dweb' | python3 -c 'import json,sys; print(len(json.load(sys.stdin)[\"items\"]))'"
	assert_output "$want"
	node=$(fakeapi_curl /api/v1/pods | py 'sorted(i["spec"].get("nodeName","") for i in d["items"])[-1]')
	want=$(fakeapi_curl "/api/v1/pods?fieldSelector=spec.nodeName%3D$node" | py 'len(d["items"])')
	run bash -c "curl -sS --unix-socket '$SOCK' 'http://kinf/api/v1/pods?fieldSelector=spec.nodeName%3D$node' | python3 -c 'import json,sys; print(len(json.load(sys.stdin)[\"items\"]))'"
	assert_output "$want"
	want=$(fakeapi_curl '/api/v1/pods?fieldSelector=status.phase!%3DRunning,metadata.namespace%3Ddefault' | py 'len(d["items"])')
	run bash -c "curl -sS --unix-socket '$SOCK' 'http://kinf/api/v1/pods?fieldSelector=status.phase!%3DRunning,metadata.namespace%3Ddefault' | python3 -c 'import json,sys; print(len(json.load(sys.stdin)[\"items\"]))'"
	assert_output "$want"
	run scurl '/api/v1/pods?fieldSelector=spec.bogus%3Dx'
	assert_output --partial '"message":"field label not supported: spec.bogus","reason":"BadRequest"'
	run scurl '/apis/apps/v1/deployments?fieldSelector=spec.replicas%3D1'
	assert_output --partial '\"spec.replicas\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"'
	run scurl '/api/v1/pods?labelSelector=a%3D%3D%3D'
	assert_output --partial '"reason":"BadRequest","code":400'
}

@test "serve: limit and continue page through a snapshot, each object once" {
	run bash -c "
		tok=; n=0; all=
		while :; do
			page=\$(curl -sS --unix-socket '$SOCK' \"http://kinf/api/v1/pods?limit=7&continue=\$tok\")
			all+=\$(python3 -c 'import json,sys; print(\" \".join(i[\"metadata\"][\"name\"] for i in json.load(sys.stdin)[\"items\"]), end=\" \")' <<<\"\$page\")
			tok=\$(python3 -c 'import json,sys; print(json.load(sys.stdin)[\"metadata\"].get(\"continue\",\"\"))' <<<\"\$page\")
			n=\$((n + 1))
			[[ -n \$tok ]] || break
		done
		echo \$n; tr ' ' '\n' <<<\"\$all\" | grep -c .; tr ' ' '\n' <<<\"\$all\" | grep . | sort -u | wc -l"
	assert_success
	total=$(fakeapi_curl /api/v1/pods | py 'len(d["items"])')
	assert_line --index 0 "$(( (total + 6) / 7 ))"
	assert_line --index 1 "$total"
	assert_line --index 2 "$total"
	run scurl '/api/v1/pods?limit=2&continue=bogus'
	assert_output --partial '"message":"invalid continue token: bogus"'
	run scurl '/api/v1/pods?limit=2&continue=k1.99999.1.61'
	assert_output --partial '"reason":"Expired","code":410'
}

@test "serve: resourceVersion rules: 504 ahead of the cache (after 3 s), 410 for Exact in the past, 422 for bad combinations" {
	rv=$(scurl /api/v1/pods | py 'd["metadata"]["resourceVersion"]')
	run scurl -D - "/api/v1/pods?resourceVersion=$((rv + 1000))"
	assert_output --partial 'Retry-After: 1'
	assert_output --partial '"reason":"Timeout"'
	assert_output --partial '"code":504'
	run scurl "/api/v1/pods?resourceVersion=1&resourceVersionMatch=Exact"
	assert_output --partial '"message":"The resourceVersion for the provided list is too old.","reason":"Expired","code":410'
	run scurl "/api/v1/pods?resourceVersionMatch=NotOlderThan"
	assert_output --partial '"reason":"Invalid"'
	assert_output --partial '"code":422'
	run scurl "/api/v1/pods?resourceVersion=$rv&limit=3"
	assert_output --partial "\"resourceVersion\":\"$rv\""
}

@test "serve: get one object, and 404 with the apiserver's Status" {
	name=$(scurl /api/v1/namespaces/default/pods | py 'd["items"][0]["metadata"]["name"]')
	run bash -c "curl -sS --unix-socket '$SOCK' http://kinf/api/v1/namespaces/default/pods/$name | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[\"kind\"], d[\"apiVersion\"], d[\"metadata\"][\"name\"])'"
	assert_output "Pod v1 $name"
	run scurl /api/v1/namespaces/default/pods/nope
	assert_output '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"pods"},"code":404}'
	run scurl /apis/apps/v1/namespaces/default/deployments/nope
	assert_output --partial '"message":"deployments.apps \"nope\" not found"'
}

@test "serve: Tables for kubectl get, rows with PartialObjectMetadata" {
	T='Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json'
	run bash -c "curl -sS --unix-socket '$SOCK' -H '$T' http://kinf/api/v1/namespaces/default/pods | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[\"kind\"], [c[\"name\"] for c in d[\"columnDefinitions\"] if c[\"priority\"]==0]); print(d[\"rows\"][0][\"object\"][\"kind\"], len(d[\"rows\"][0][\"cells\"]))'"
	assert_line --index 0 "Table ['Name', 'Ready', 'Status', 'Restarts', 'Age']"
	assert_line --index 1 'PartialObjectMetadata 9'
	run scurl -H "$T" '/api/v1/pods?includeObject=None&limit=1'
	refute_output --partial '"object"'
	run scurl -H "$T" '/api/v1/pods?includeObject=Everything'
	assert_output --partial '"code":400'
}

@test "serve: every error's HTTP status is its Status's code" {
	local T='Accept: application/json;as=Table;v=v1;g=meta.k8s.io' req out n=0
	while IFS= read -r req; do
		eval "out=\$(scurl -w '\n%{http_code}' $req)"
		run python3 -c 'import json,sys; b,c=sys.argv[1].rsplit("\n",1); d=json.loads(b); print(d["kind"], d["code"] == int(c) >= 400, c)' "$out"
		assert_output --regexp "^Status True [0-9]+$"
		n=$((n + 1))
	done <<-'EOF'
		/api/v1/namespaces/default/pods/nope
		/api/v1/configmaps
		'/api/v1/pods?labelSelector=a%3D%3D%3D'
		'/api/v1/pods?fieldSelector=spec.bogus%3Dx'
		'/api/v1/pods?limit=2&continue=bogus'
		'/api/v1/pods?limit=2&continue=k1.99999.1.61'
		'/api/v1/pods?resourceVersionMatch=NotOlderThan'
		'/api/v1/pods?resourceVersion=1&resourceVersionMatch=Exact'
		'/api/v1/pods?watch=1&resourceVersion=x'
		-H "$T" '/api/v1/pods?includeObject=Everything'
		-H 'Accept: application/yaml;as=Bogus' /api/v1/pods
		-X DELETE /api/v1/namespaces/default/pods/x
		-X POST -d '{}' /apis/apps/v1
	EOF
	[[ $n == 13 ]]
}

@test "serve: writes get 405 and unserved types 404, naming the upstream" {
	run scurl -X DELETE /api/v1/namespaces/default/pods/x
	assert_output --partial '"reason":"MethodNotAllowed"'
	assert_output --partial "kinf serve is a read-only cache of context \\\"admin\\\" ($FAKEAPI_URL)"
	run scurl -X POST -d '{}' /api/v1/namespaces/default/pods
	assert_output --partial '"code":405'
	run scurl /api/v1/configmaps
	assert_output --partial '"reason":"NotFound"'
	assert_output --partial 'kinf serve is a read-only cache of pods, deployments.apps, nodes of context'
}

@test "serve: a watch from the list's resourceVersion sees changes; selectors turn updates into ADDED and DELETED" {
	rv=$(scurl /api/v1/namespaces/default/pods | py 'd["metadata"]["resourceVersion"]')
	out=$BATS_TEST_TMPDIR/w
	sel=$BATS_TEST_TMPDIR/s
	curl -sSN --unix-socket "$SOCK" "http://kinf/api/v1/namespaces/default/pods?watch=1&resourceVersion=$rv" >"$out" 3>&- &
	p1=$!
	curl -sSN --unix-socket "$SOCK" "http://kinf/api/v1/namespaces/default/pods?watch=1&resourceVersion=$rv&labelSelector=chaos%3Da" >"$sel" 3>&- &
	p2=$!
	fakeapi_ctl POST churn '{"resource":"pods","namespace":"default","create":2,"relabel":6,"delete":1,"seed":7}' >/dev/null
	wait_until grep -q '"type":"DELETED"' "$out"
	sleep 0.5
	kill "$p1" "$p2"
	run grep -c '"type":"ADDED"' "$out"
	assert_output 2
	# Every chaos=a pod the server ended with is one the selector's stream ended with.
	got=$(python3 -c '
import json, sys
live = {}
for line in open(sys.argv[1]):
    e = json.loads(line); k = e["object"]["metadata"]["name"]
    if e["type"] == "DELETED": live.pop(k, None)
    else: live[k] = 1
print(" ".join(sorted(live)))' "$sel")
	want=$(fakeapi_curl "/api/v1/namespaces/default/pods?labelSelector=chaos%3Da" | py '" ".join(sorted(i["metadata"]["name"] for i in d["items"]))')
	[[ $got == "$want" ]] || fail "selector stream ends with [$got], server has [$want]"
}

@test "serve: watch from a resourceVersion older than the window: an ERROR event with 410" {
	run scurl -N '/api/v1/pods?watch=1&resourceVersion=1'
	assert_output --partial '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 ('
	assert_output --partial '"reason":"Expired","code":410}}'
}

@test "serve: sendInitialEvents ends its initial events with the annotated bookmark; timeoutSeconds ends the stream" {
	run scurl -N '/api/v1/namespaces/default/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2'
	assert_success
	n=$(scurl /api/v1/namespaces/default/pods | py 'len(d["items"])')
	run grep -c '"type":"ADDED"' <<<"$output"
	assert_output "$n"
	run scurl -N '/api/v1/namespaces/default/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2'
	assert_output --partial '"annotations":{"k8s.io/initial-events-end":"true"}'
	run scurl -N '/api/v1/pods?watch=1&sendInitialEvents=true'
	assert_output --partial '"code":422'
}

@test "serve: initial events from a resourceVersion ahead of the cache wait 3 s, then an ERROR event with the 504" {
	rv=$(scurl /api/v1/pods | py 'd["metadata"]["resourceVersion"]')
	run scurl -N "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=$((rv + 1000))"
	assert_success
	assert_output --regexp "^\{\"type\":\"ERROR\",\"object\":\{\"kind\":\"Status\",.*\"message\":\"Timeout: Too large resource version: $((rv + 1000)), current: [0-9]+\",\"reason\":\"Timeout\",.*\"code\":504\}\}$"
}

@test "serve: the TCP listener speaks TLS and wants the token from --write-kubeconfig (0600)" {
	run stat -c %a "$SERVE_DIR/kubeconfig"
	assert_output 600
	server=$(sed -n 's/^ *server: "\(.*\)"/\1/p' "$SERVE_DIR/kubeconfig")
	token=$(sed -n 's/^ *token: "\(.*\)"/\1/p' "$SERVE_DIR/kubeconfig")
	sed -n 's/^ *certificate-authority-data: "\(.*\)"/\1/p' "$SERVE_DIR/kubeconfig" |
		base64 -d >"$BATS_TEST_TMPDIR/ca.crt"
	[[ $server == https://127.0.0.1:* && ${#token} -ge 43 ]] ||
		fail "server $server, token of ${#token} characters"
	run curl -sS --cacert "$BATS_TEST_TMPDIR/ca.crt" "$server/api/v1/namespaces/default/pods"
	assert_output --partial '"code":401'
	run curl -sS --cacert "$BATS_TEST_TMPDIR/ca.crt" -H "Authorization: Bearer $token" \
		"$server/api/v1/namespaces/default/pods"
	assert_output --partial '"kind":"PodList"'
	run curl -sS -H "Authorization: Bearer $token" "${server/https/http}/api/v1/pods"
	refute_output --partial PodList
	run stat -c %a "$SOCK"
	assert_output 600
}

@test "serve: /healthz, /livez and /readyz answer on TCP without the token, as the apiserver's; /version and the rest need it" {
	server=$(sed -n 's/^ *server: "\(.*\)"/\1/p' "$SERVE_DIR/kubeconfig")
	sed -n 's/^ *certificate-authority-data: "\(.*\)"/\1/p' "$SERVE_DIR/kubeconfig" |
		base64 -d >"$BATS_TEST_TMPDIR/ca.crt"
	# system:public-info-viewer: GET of the probes, for anyone. /version is
	# the upstream's, asked with serve's credentials: not for anyone.
	for p in /healthz /livez /readyz; do
		run curl -sS --cacert "$BATS_TEST_TMPDIR/ca.crt" -w ' %{http_code}' "$server$p"
		assert_output "ok 200"
	done
	run curl -sS --cacert "$BATS_TEST_TMPDIR/ca.crt" -I "$server/readyz"
	assert_line --index 0 --regexp '^HTTP/1.1 200 OK'
	# Everything else still needs it: the checks under them, /metrics, discovery, writes.
	for p in /readyz/informer-sync /healthz/ping /metrics /api /version /version/x; do
		run curl -sS --cacert "$BATS_TEST_TMPDIR/ca.crt" -o /dev/null -w '%{http_code}' "$server$p"
		assert_output 401
	done
	run curl -sS --cacert "$BATS_TEST_TMPDIR/ca.crt" -o /dev/null -w '%{http_code}' \
		-X POST "$server/healthz"
	assert_output 401
	# A wrong token is refused there too: the apiserver authenticates first.
	run curl -sS --cacert "$BATS_TEST_TMPDIR/ca.crt" -o /dev/null -w '%{http_code}' \
		-H "Authorization: Bearer wrong" "$server/healthz"
	assert_output 401
}

# kubectl through the kubeconfig serve wrote, and straight to fakeapi.
kserve() {
	KUBECACHEDIR=$BATS_FILE_TMPDIR/kcache-serve kubectl --kubeconfig "$SERVE_DIR/kubeconfig" "$@"
}

# A table without its AGE column (two clocks read it a moment apart).
no_age() {
	awk '{ $5 = ""; print }'
}

@test "serve: kubectl get prints what it prints straight from the server: table, wide, -l, --field-selector, -o name, json, yaml" {
	require_kubectl
	run kserve get pods -n default
	assert_success
	[[ $(no_age <<<"$output") == "$(kubectl_fake get pods -n default | no_age)" ]] ||
		fail "the tables differ"
	run kserve get pods -A -o wide -l app=web
	assert_success
	want=$(kubectl_fake get pods -A -o wide -l app=web)
	[[ $(awk '{ $6 = ""; print }' <<<"$output") == "$(awk '{ $6 = ""; print }' <<<"$want")" ]] ||
		fail "the -A -o wide tables differ"
	run kserve get pods -A --field-selector status.phase=Running,spec.nodeName=node-1 -o name
	assert_success
	assert_output "$(kubectl_fake get pods -A --field-selector status.phase=Running,spec.nodeName=node-1 -o name)"
	run kserve get deploy -A -o json
	assert_output "$(kubectl_fake get deploy -A -o json)"
	run kserve get nodes -o yaml
	assert_output "$(kubectl_fake get nodes -o yaml)"
	name=$(kubectl_fake get pods -n default -o name | head -1)
	run kserve get -n default "$name" -o json
	assert_output "$(kubectl_fake get -n default "$name" -o json)"
}

@test "serve: kubectl get -w sees a pod created upstream; delete is refused; an unserved type is unknown" {
	require_kubectl
	out=$BATS_TEST_TMPDIR/w
	kserve get pods -n default -w >"$out" 2>&1 3>&- &
	p=$!
	wait_until grep -q '^NAME' "$out"
	kubectl_fake run kserve-watched --image=nginx -n default >/dev/null
	wait_until grep -q '^kserve-watched ' "$out"
	kill "$p"
	run kserve delete pod -n default kserve-watched
	assert_failure
	assert_output --partial 'Error from server (MethodNotAllowed): the server does not allow this method on the requested resource: kinf serve is a read-only cache of context "admin"'
	run kserve get configmaps
	assert_failure
	assert_output --partial 'the server doesn'"'"'t have a resource type "configmaps"'
	kubectl_fake delete pod -n default kserve-watched --wait=false >/dev/null
}

@test "serve: /metrics in Prometheus text" {
	run scurl /metrics
	assert_output --partial '# TYPE kinf_informer_lists_total counter'
	assert_output --partial 'kinf_informer_objects{context="admin",resource="pods",namespace=""}'
	assert_line --regexp '^kinf_informer_queue_length\{context="admin",resource="pods",namespace=""\} [0-9]+$'
	assert_line --regexp '^kinf_serve_handover_events\{context="admin",resource="pods",namespace=""\} [0-9]+$'
	assert_output --partial 'kinf_serve_request_duration_seconds_bucket{le="+Inf"}'
	assert_line --regexp '^kinf_serve_requests_total\{code="2xx"\} [1-9][0-9]*$'
	assert_line --regexp '^kinf_informer_up\{context="admin",resource="pods",namespace=""\} 1$'
}

@test "serve: bad invocations: exit status 2 and one line" {
	run -2 kinf serve
	assert_line --index 0 'kinf: serve needs a resource type (pods, or several: pods,deployments)'
	run -2 kinf serve pods --listen http://x
	assert_line --index 0 --partial 'kinf: --listen takes unix:PATH or tcp:HOST:PORT'
	run -2 kinf serve pods --window 10 --max-lag 20
	assert_line --index 0 'kinf: --max-lag (20) cannot exceed --window (10)'
	run -2 kinf serve pods -o json
	assert_line --index 0 'kinf: serve prints nothing: -o does not apply'
	run -1 kinf serve pods --listen "unix:$SOCK"
	assert_output --partial 'a server is already listening there (another kinf serve?)'
}

@test "serve: a context that cannot list is answered 503 with why; the others are served" {
	sock=$BATS_TEST_TMPDIR/m.sock
	"$KINF" serve pods -A --context admin,viewer --listen "unix:$sock" \
		--listen tcp:127.0.0.1:0 --write-kubeconfig "$BATS_TEST_TMPDIR/kc" \
		>"$BATS_TEST_TMPDIR/log" 2>&1 3>&- </dev/null &
	p=$!
	wait_until bash -c "curl -s --unix-socket '$sock' http://kinf/readyz | grep -q 'viewer.*failed: pods is forbidden'"
	run curl -sS --unix-socket "$sock" -D - http://kinf/clusters/viewer/api/v1/pods
	assert_output --partial 'HTTP/1.1 503 Service Unavailable'
	assert_output --partial 'Warning: 299 - "kinf serve: pods of context \"viewer\"'
	assert_output --partial '"message":"kinf serve could not cache pods of context \"viewer\"'
	wait_until bash -c "curl -s --unix-socket '$sock' http://kinf/api/v1/pods | grep -q PodList"
	run curl -sS --unix-socket "$sock" -D - http://kinf/api/v1/pods
	refute_output --partial 'Warning'
	run curl -sS --unix-socket "$sock" http://kinf/readyz
	assert_line '[-]informer-sync failed: pods of context "viewer" ('"$FAKEAPI_URL"'): failed: pods is forbidden: User "viewer" cannot list resource "pods" in API group "" at the cluster scope'
	run grep -c 'kinf: pods of context "viewer": pods is forbidden' "$BATS_TEST_TMPDIR/log"
	assert_output 1
	if command -v kubectl >/dev/null; then
		# Each context of the kubeconfig reaches its own (/clusters/viewer/...).
		export KUBECACHEDIR=$BATS_TEST_TMPDIR/kcache
		run kubectl --kubeconfig "$BATS_TEST_TMPDIR/kc" --context admin get pods -A -o name
		assert_success
		assert_output "$(kubectl_fake get pods -A -o name)"
		run kubectl --kubeconfig "$BATS_TEST_TMPDIR/kc" --context viewer get pods -A
		assert_failure
		assert_output --partial 'Error from server (ServiceUnavailable): kinf serve could not cache pods of context "viewer"'
	fi
	kill -TERM "$p"
	rc=0
	wait "$p" || rc=$?
	[[ $rc == 1 ]] || fail "exit status $rc, not 1 (one informer failed, as watch says): $(cat "$BATS_TEST_TMPDIR/log")"
}

@test "serve: a list across namespaces from a cache of some says which, in a Warning" {
	sock=$BATS_TEST_TMPDIR/n.sock
	"$KINF" serve pods -n default,kube-system --listen "unix:$sock" \
		>"$BATS_TEST_TMPDIR/log" 2>&1 3>&- </dev/null &
	p=$!
	wait_until bash -c "[[ \$(curl -s --unix-socket '$sock' http://kinf/readyz) == ok ]]"
	run curl -sS --unix-socket "$sock" -D - http://kinf/api/v1/pods
	assert_output --partial 'Warning: 299 - "kinf serve caches pods in namespaces \"default\", \"kube-system\" only"'
	run curl -sS --unix-socket "$sock" -D - http://kinf/api/v1/namespaces/default/pods
	refute_output --partial Warning
	run curl -sS --unix-socket "$sock" http://kinf/api/v1/namespaces/other/pods
	assert_output --partial '"message":"the server could not find the requested resource: kinf serve caches pods in namespaces \"default\", \"kube-system\" only (and passes other reads upstream only with --pass-through)"'
	kill -TERM "$p"
	wait "$p"
}

@test "serve: by default a socket in \$XDG_RUNTIME_DIR/kinf (0700) and a free loopback port" {
	rt=$BATS_TEST_TMPDIR/rt
	mkdir -m 700 "$rt"
	XDG_RUNTIME_DIR=$rt "$KINF" serve nodes >"$BATS_TEST_TMPDIR/log" 2>&1 3>&- </dev/null &
	p=$!
	wait_until bash -c "[[ \$(curl -s --unix-socket '$rt/kinf/serve.sock' http://kinf/readyz) == ok ]]"
	run stat -c %a "$rt/kinf"
	assert_output 700
	run grep -E '^kinf: serve: listening on tcp:127\.0\.0\.1:[0-9]+$' "$BATS_TEST_TMPDIR/log"
	assert_success
	kill -TERM "$p"
	wait "$p"
	# Someone else's or an open directory there: refused, nothing made in it.
	chmod 755 "$rt/kinf"
	run -1 env XDG_RUNTIME_DIR="$rt" "$KINF" serve nodes
	assert_output --partial "kinf: serve: $rt/kinf is not a directory of mode 0700 owned by you; pass --listen unix:PATH"
}

# serve_lists FILE: the list requests of configmaps fakeapi recorded since
# FILE's count was taken, "QUERY" per line; the new count into FILE.
serve_lists() {
	local from
	from=$(<"$1")
	fakeapi_requests >"$BATS_TEST_TMPDIR/reqs"
	wc -l <"$BATS_TEST_TMPDIR/reqs" >"$1"
	tail -n +"$((from + 1))" "$BATS_TEST_TMPDIR/reqs" |
		python3 -c 'import json,sys; [print(r["query"]) for r in map(json.loads, sys.stdin) if r["verb"] == "list" and r["path"] == "/api/v1/configmaps"]'
}

# cm_watches [N]: how many watches of configmaps fakeapi has answered; with
# N, whether more than N.
cm_watches() {
	local n
	n=$(fakeapi_requests | python3 -c 'import json,sys; print(sum(1 for r in map(json.loads, sys.stdin) if r["verb"] == "watch" and r["path"] == "/api/v1/configmaps"))')
	if (($#)); then ((n > $1)); else echo "$n"; fi
}

@test "serve: --chunk-size pages its upstream lists, as client-go's WatchListPageSize; the default leaves a relist at a resourceVersion whole" {
	local mark=$BATS_TEST_TMPDIR/mark sock=$BATS_TEST_TMPDIR/c.sock args want
	# configmaps: no other serve here watches them, so the 410 below is this one's only
	for args in "--chunk-size 7" ""; do
		fakeapi_requests | wc -l >"$mark"
		watches=$(cm_watches)
		# shellcheck disable=SC2086
		"$KINF" serve configmaps -A --listen "unix:$sock" $args >"$BATS_TEST_TMPDIR/log" 2>&1 3>&- </dev/null &
		pid=$!
		wait_until bash -c "[[ \$(curl -s --unix-socket '$sock' http://kinf/readyz) == ok ]]"
		run serve_lists "$mark"
		# The first list, at "0", as the reflector's: the server (its watch cache) answers it whole.
		if [[ -n $args ]]; then want=7; else want=500; fi
		assert_output "limit=$want&resourceVersion=0"
		# An event, then a 410 in the stream: the relist at its resourceVersion...
		wait_until cm_watches "$watches"
		fakeapi_ctl POST blast '{"resource":"configmaps","count":1,"then":"gone"}' >/dev/null
		wait_until bash -c "curl -s --unix-socket '$sock' http://kinf/metrics | grep -q '^kinf_informer_relists_total{.*} [1-9]'"
		run serve_lists "$mark"
		if [[ -n $args ]]; then
			# ...pages with the limit asked for (an exact read from storage)
			assert_line --index 0 --regexp '^limit=7&resourceVersion=[1-9][0-9]*$'
			assert_line --index 1 --regexp '^limit=7&continue=.'
			refute_line --regexp '^(resourceVersion|limit=500)'
		else
			# ...asks for all of it at once, for the watch cache to answer
			assert_output --regexp '^resourceVersion=[1-9][0-9]*$'
		fi
		kill "$pid"
		wait "$pid" || true
	done
}

@test "serve: while the upstream is away it answers from the cache, with a Warning; /readyz says why" {
	port=${FAKEAPI_URL##*:}
	dir=$FAKEAPI_DIR
	n=$(scurl /api/v1/pods | py 'len(d["items"])')
	fakeapi_stop
	wait_until bash -c "curl -s --unix-socket '$SOCK' http://kinf/readyz | grep -q 'upstream failed'"
	run scurl /readyz
	assert_line --partial "[-]upstream failed: upstream context \"admin\" ($FAKEAPI_URL) unreachable for"
	# Without the token on TCP: the checks, not the upstream's address and error.
	server=$(sed -n 's/^ *server: "\(.*\)"/\1/p' "$SERVE_DIR/kubeconfig")
	run curl -sSk -w ' %{http_code}' "$server/readyz"
	assert_line --index 2 "[-]upstream failed: reason withheld"
	assert_line --index 3 "readyz check failed"
	assert_line --index 4 " 500"
	refute_output --partial "$FAKEAPI_URL"
	run scurl -D - /api/v1/pods
	assert_output --partial "Warning: 299 - \"kinf serve: upstream context \\\"admin\\\""
	[[ $(python3 -c 'import json,sys; print(len(json.loads(sys.stdin.read().split("\r\n\r\n",1)[1])["items"]))' <<<"$output") == "$n" ]]
	run grep -c 'unreachable: .*answering from the cache' "$SERVE_DIR/log"
	assert_output 1
	fakeapi_start --dir "$dir" --port "$port" --state "$BATS_FILE_TMPDIR/state"
	wait_until bash -c "[[ \$(curl -s --unix-socket '$SOCK' http://kinf/readyz) == ok ]]"
	run grep -c 'is back after' "$SERVE_DIR/log"
	assert_output 1
}

@test "serve: SIGTERM ends it with status 0, watch streams closed with their last chunk" {
	curl -sSN --unix-socket "$SOCK" 'http://kinf/api/v1/pods?watch=1' >"$BATS_TEST_TMPDIR/w" 3>&- &
	p=$!
	wait_until grep -q ADDED "$BATS_TEST_TMPDIR/w"
	kill -TERM "$SERVE_PID"
	wait_until test -s "$SERVE_DIR/status"
	run cat "$SERVE_DIR/status"
	assert_output 0
	unset SERVE_PID
	run wait "$p"
	assert_success	# curl saw the end of the stream, not a cut
	run grep -E 'Sanitizer|runtime error' "$SERVE_DIR/log"
	assert_failure
	[[ ! -e $SOCK ]]
}

