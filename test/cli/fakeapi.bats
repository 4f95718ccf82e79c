#!/usr/bin/env bats
# The fake API server, judged by kubectl (and curl for raw wire checks).

load helpers

setup_file() {
	fakeapi_start
}

teardown_file() {
	fakeapi_stop
}

setup() {
	require_kubectl
}

# json_field FILTER: jq over stdin, e.g. json_field .metadata.resourceVersion
json_field() {
	jq -r "$1"
}

list_rv() {
	fakeapi_curl "/api/v1/namespaces/$1/pods?limit=1" | json_field .metadata.resourceVersion
}

@test "kubectl get pods -A lists the default data" {
	run kubectl_fake get pods -A
	assert_success
	assert_line --index 0 --regexp '^NAMESPACE +NAME +READY +STATUS +RESTARTS +AGE$'
	assert_line --regexp '^default +web-[a-z0-9]{10}-[a-z0-9]{5} +2/2 +Running +0 +4d23h$'
	assert_line --regexp '^default +backup-[0-9]+-[a-z0-9]{5} +0/2 +Completed +0 +60m$'
	assert_line --regexp '^kube-system +coredns-[a-z0-9]{10}-[a-z0-9]{5} +2/2 +Running +0 +29d$'
	assert_line --regexp '^viewer-ns +viewer-app-'
	[ "${#lines[@]}" -eq 8 ]
}

@test "kubectl get pods -o wide prints the server's wide columns" {
	run kubectl_fake get pods -o wide -n kube-system
	assert_success
	assert_line --index 0 --regexp '^NAME +READY +STATUS +RESTARTS +AGE +IP +NODE +NOMINATED NODE +READINESS GATES$'
	assert_line --regexp '^coredns-.* 10\.244\.[0-9]+\.[0-9]+ +node-[01] +<none> +<none>$'
}

@test "kubectl get pods -o json is a PodList; raw list items omit kind" {
	run kubectl_fake get pods -o json
	assert_success
	[ "$(json_field .kind <<<"$output")" = List ]
	[ "$(json_field '.items | length' <<<"$output")" -eq 4 ]
	[ "$(json_field '[.items[].kind] | unique | join(",")' <<<"$output")" = Pod ]
	run fakeapi_curl /api/v1/namespaces/default/pods
	assert_success
	[ "$(json_field .kind <<<"$output")" = PodList ]
	[ "$(json_field .apiVersion <<<"$output")" = v1 ]
	[ "$(json_field '[.items[] | has("kind")] | any' <<<"$output")" = false ]
	# A pod as the real server shapes it: managedFields, ownerReferences, status.
	[ "$(json_field '.items[1].metadata.managedFields | length' <<<"$output")" -eq 2 ]
	[ "$(json_field '.items[1].metadata.ownerReferences[0].kind' <<<"$output")" = ReplicaSet ]
	[ "$(json_field '.items[1].status.containerStatuses | length' <<<"$output")" -eq 2 ]
}

@test "kubectl get deploy, nodes and the custom resource wd" {
	run kubectl_fake get deploy
	assert_success
	assert_line --index 0 --regexp '^NAME +READY +UP-TO-DATE +AVAILABLE +AGE$'
	assert_line --index 1 --regexp '^web +3/3 +3 +3 +5d$'
	run kubectl_fake get nodes
	assert_success
	assert_line --index 0 --regexp '^NAME +STATUS +ROLES +AGE +VERSION$'
	assert_line --index 1 --regexp '^node-0 +Ready +control-plane +29d +v1\.32\.0$'
	assert_line --index 2 --regexp '^node-1 +Ready +<none> +29d +v1\.32\.0$'
	# A CRD without printer columns: Name and Age (apiextensions default).
	run kubectl_fake get wd
	assert_success
	assert_output --regexp '^NAME +AGE
widget-a +4d
widget-b +2d$'
	run kubectl_fake get widgets.example.com widget-a -o jsonpath='{.spec.color}'
	assert_output blue
}

@test "kubectl get pods --chunk-size=2 pages with continue tokens" {
	fakeapi_ctl DELETE requests >/dev/null
	run kubectl_fake get pods --chunk-size=2 -o name
	assert_success
	[ "${#lines[@]}" -eq 4 ]
	run fakeapi_requests
	assert_success
	local pages continued
	pages=$(jq -s '[.[] | select(.verb == "list" and .resource == "pods")] | length' <<<"$output")
	continued=$(jq -s '[.[] | select(.verb == "list" and (.query | test("continue=")))] | length' <<<"$output")
	[ "$pages" -eq 2 ]
	[ "$continued" -eq 1 ]
	# The list resourceVersion is the same on every page, remainingItemCount counts down.
	run fakeapi_curl "/api/v1/namespaces/default/pods?limit=3"
	local rv cont
	rv=$(json_field .metadata.resourceVersion <<<"$output")
	cont=$(json_field .metadata.continue <<<"$output")
	[ "$(json_field .metadata.remainingItemCount <<<"$output")" -eq 1 ]
	run fakeapi_curl "/api/v1/namespaces/default/pods?limit=3&continue=$cont"
	[ "$(json_field .metadata.resourceVersion <<<"$output")" = "$rv" ]
	[ "$(json_field '.items | length' <<<"$output")" -eq 1 ]
	[ "$(json_field '.metadata.continue // "none"' <<<"$output")" = none ]
}

@test "label and field selectors" {
	run kubectl_fake get pods -A -l 'app in (web,coredns),tier!=backend' -o name
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	assert_line --regexp '^pod/web-'
	run kubectl_fake get pods -A -l '!tier' -o name
	assert_success
	assert_output ''
	run kubectl_fake get pods -A --field-selector status.phase=Succeeded -o name
	assert_success
	assert_output --regexp '^pod/backup-[0-9]+-[a-z0-9]{5}$'
	local want
	want=$(kubectl_fake get pods -n kube-system -o json |
		jq '[.items[] | select(.spec.nodeName != "node-0")] | length')
	run kubectl_fake get pods -A --field-selector 'spec.nodeName!=node-0,metadata.namespace==kube-system' -o json
	assert_success
	[ "$(json_field '.items | length' <<<"$output")" -eq "$want" ]
	[ "$(json_field '[.items[] | select(.spec.nodeName == "node-0" or .metadata.namespace != "kube-system")] | length' <<<"$output")" -eq 0 ]
}

@test "a bad selector is a 400 BadRequest with the real message" {
	run kubectl_fake get pods -l 'a in b'
	assert_failure
	assert_output --partial "unable to parse requirement: found 'b' expected: '('"
	run fakeapi_curl -w '\n%{http_code}' '/api/v1/pods?labelSelector=a%3D%3D%3Db'
	assert_line --index 1 400
	[ "$(head -n1 <<<"$output" | json_field .reason)" = BadRequest ]
	run kubectl_fake get pods --field-selector spec.color=red
	assert_failure
	assert_output --partial 'field label not supported: spec.color'
}

@test "kubectl create, label, annotate, apply and delete a pod" {
	kubectl_fake create namespace t-crud
	cat >"$BATS_TEST_TMPDIR/pod.yaml" <<-EOF
		apiVersion: v1
		kind: Pod
		metadata:
		  name: crud
		  namespace: t-crud
		  labels: {app: crud}
		spec:
		  containers:
		  - name: c
		    image: nginx:1.27
	EOF
	run kubectl_fake create -f "$BATS_TEST_TMPDIR/pod.yaml"
	assert_success
	assert_output 'pod/crud created'
	run kubectl_fake create -f "$BATS_TEST_TMPDIR/pod.yaml"
	assert_failure
	assert_output --partial 'pods "crud" already exists'
	run kubectl_fake -n t-crud label pod crud color=red
	assert_output 'pod/crud labeled'
	run kubectl_fake -n t-crud annotate pod crud note=hi
	assert_output 'pod/crud annotated'
	sed -i 's/nginx:1.27/nginx:1.28/' "$BATS_TEST_TMPDIR/pod.yaml"
	run kubectl_fake apply -f "$BATS_TEST_TMPDIR/pod.yaml"
	assert_success
	assert_output --partial 'pod/crud configured'
	run kubectl_fake -n t-crud get pod crud -o jsonpath='{.spec.containers[0].image} {.metadata.labels.color} {.metadata.annotations.note} {.status.phase}'
	assert_output 'nginx:1.28 red hi Pending'
	run kubectl_fake -n t-crud get pods
	assert_line --index 1 --regexp '^crud +0/1 +Pending +0 +[0-9]+s$'
	run kubectl_fake -n t-crud delete pod crud
	assert_success
	assert_output 'pod "crud" deleted'
	run kubectl_fake -n t-crud get pod crud
	assert_failure
	assert_output 'Error from server (NotFound): pods "crud" not found'
	run kubectl_fake -n nowhere create configmap c --from-literal=a=b
	assert_failure
	assert_output --partial 'namespaces "nowhere" not found'
}

@test "PUT with a stale resourceVersion is a 409 Conflict" {
	local body
	body=$(fakeapi_curl /api/v1/namespaces/default/configmaps/app-config)
	fakeapi_curl -X PATCH -H 'Content-Type: application/merge-patch+json' \
		--data '{"data":{"x":"1"}}' /api/v1/namespaces/default/configmaps/app-config >/dev/null
	run fakeapi_curl -w '\n%{http_code}' -X PUT -H 'Content-Type: application/json' \
		--data "$body" /api/v1/namespaces/default/configmaps/app-config
	assert_line --index 1 409
	assert_line --index 0 --partial 'Operation cannot be fulfilled on configmaps \"app-config\": the object has been modified'
}

@test "kubectl get pods -w sees a pod created meanwhile" {
	kubectl_fake create namespace t-watch
	local out=$BATS_TEST_TMPDIR/watch.out i
	timeout 15 kubectl --kubeconfig "$KUBECONFIG" -n t-watch get pods -w \
		--request-timeout=20s >"$out" 2>&1 3>&- &
	local pid=$!
	for ((i = 0; i < 100; i++)); do
		grep -q 'No resources found' "$out" && break
		sleep 0.1
	done
	kubectl_fake -n t-watch run watched --image=nginx:1.27
	for ((i = 0; i < 100; i++)); do
		grep -q '^watched ' "$out" && break
		sleep 0.1
	done
	kubectl_fake -n t-watch delete pod watched --wait=false
	sleep 0.5
	kill "$pid" 2>/dev/null || true
	wait "$pid" || true
	run cat "$out"
	assert_line --regexp '^NAME +READY +STATUS +RESTARTS +AGE$'
	assert_line --regexp '^watched +0/1 +Pending +0 +[0-9]+s$'
}

@test "watch with a label selector turns a label change into DELETED" {
	kubectl_fake create namespace t-sel
	kubectl_fake -n t-sel create configmap cm1 --from-literal=k=v
	kubectl_fake -n t-sel label configmap cm1 team=a
	local rv
	rv=$(fakeapi_curl "/api/v1/namespaces/t-sel/configmaps?limit=1" | json_field .metadata.resourceVersion)
	local out=$BATS_TEST_TMPDIR/sel.out
	fakeapi_curl -N "/api/v1/namespaces/t-sel/configmaps?watch=1&labelSelector=team%3Da&resourceVersion=$rv&timeoutSeconds=3" >"$out" 3>&- &
	local pid=$!
	sleep 0.5
	kubectl_fake -n t-sel label configmap cm1 extra=1
	kubectl_fake -n t-sel label --overwrite configmap cm1 team=b
	kubectl_fake -n t-sel label --overwrite configmap cm1 team=a
	wait "$pid"
	run jq -r '.type + " " + .object.metadata.labels.team' "$out"
	assert_output 'MODIFIED a
DELETED a
ADDED a'
	# DELETED carries the old state with the resourceVersion of the change.
	local del_rv mod_rv
	mod_rv=$(jq -r 'select(.type=="MODIFIED") | .object.metadata.resourceVersion' "$out")
	del_rv=$(jq -r 'select(.type=="DELETED") | .object.metadata.resourceVersion' "$out")
	[ "$del_rv" -gt "$mod_rv" ]
}

@test "403 for the viewer outside its namespaces" {
	run kubectl_fake --context viewer get pods -n kube-system
	assert_failure
	assert_output 'Error from server (Forbidden): pods is forbidden: User "viewer" cannot list resource "pods" in API group "" in the namespace "kube-system"'
	run kubectl_fake --context viewer get pods -A
	assert_output --partial 'User "viewer" cannot list resource "pods" in API group "" at the cluster scope'
	run kubectl_fake --context viewer get deploy -n viewer-ns -o name
	assert_success
	assert_output 'deployment.apps/viewer-app'
	run kubectl_fake --context viewer delete configmap app-config
	assert_failure
	assert_output --partial 'configmaps "app-config" is forbidden: User "viewer" cannot delete resource "configmaps"'
}

@test "401 for a bad token; no credentials at all is system:anonymous, 403" {
	run kubectl_fake --token bogus get pods
	assert_failure
	assert_output --partial 'error: You must be logged in to the server (Unauthorized)'
	run curl -sS --cacert "$FAKEAPI_DIR/ca.crt" -H 'Authorization: Bearer bogus' -w '\n%{http_code}' "$FAKEAPI_URL/api/v1/pods"
	assert_line --index 0 '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}'
	assert_line --index 1 401
	# --anonymous-auth is on by default: RBAC refuses the anonymous user.
	run curl -sS --cacert "$FAKEAPI_DIR/ca.crt" -w '\n%{http_code}' "$FAKEAPI_URL/api/v1/pods"
	assert_line --index 0 '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" at the cluster scope","reason":"Forbidden","details":{"kind":"pods"},"code":403}'
	assert_line --index 1 403
}

# wire_is PATH STATUS BODY [curl args...]: the test server answers PATH
# (admin token, a non-curl User-Agent) with STATUS and exactly BODY.
wire_is() {
	local path=$1 code=$2 body=$3
	shift 3
	run curl -sS --cacert "$FAKEAPI_DIR/ca.crt" -A kinf-test/1 -w '\n%{http_code} %{content_type}' \
		-H "Authorization: Bearer $(<"$FAKEAPI_DIR/admin-token")" "$@" "$FAKEAPI_URL$path"
	local got=${output%$'\n'*}
	got=${got%$'\n'}	# the body's own newline
	if [[ ${lines[-1]} != "$code" ]] || [[ $got != "$body" ]]; then
		printf 'GET %s\nwant: %s\n%s\ngot:  %s\n%s\n' "$path" "$code" "$body" "${lines[-1]}" "$got" >&2
		return 1
	fi
}

@test "answers test/real found the real kube-apiserver v1.28.7 gives otherwise (test/fakeapi/README.md)" {
	local P=/api/v1/namespaces/default/pods S='{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure"'
	# Paths: a known group's own NotFound (JSON, details {}); text below an
	# unknown or custom resource group, and elsewhere; nothing under /openapi/v3.
	wire_is /api/v1/namespaces/default/bogus "404 application/json" "$S"',"message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}'
	wire_is /apis/apps/v2 "404 application/json" "$S"',"message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}'
	wire_is $P/x/bogus "404 application/json" "$S"',"message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}'
	wire_is /apis/bogus.example.com/v1 "404 text/plain; charset=utf-8" '404 page not found'
	wire_is /apis/example.com/v1/namespaces/default/bogus "404 text/plain; charset=utf-8" '404 page not found'
	wire_is /foo "404 text/plain; charset=utf-8" '404 page not found'
	wire_is /openapi/v3/apis/bogus.example.com/v1 "404 " ''
	# Anonymous: /version and health public, discovery not.
	run curl -sS --cacert "$FAKEAPI_DIR/ca.crt" -w '%{http_code}' "$FAKEAPI_URL/api"
	assert_output "$S"',"message":"forbidden: User \"system:anonymous\" cannot get path \"/api\"","reason":"Forbidden","details":{},"code":403}'$'\n403'
	run curl -sS --cacert "$FAKEAPI_DIR/ca.crt" -w '%{http_code}' "$FAKEAPI_URL/readyz"
	assert_output ok200
	# Field selectors: kinds without a conversion function of their own.
	wire_is '/apis/apps/v1/namespaces/default/deployments?fieldSelector=spec.replicas%3D1' "400 application/json" "$S"',"message":"\"spec.replicas\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"","reason":"BadRequest","code":400}'
	wire_is '/api/v1/namespaces/default/configmaps?fieldSelector=data.x%3D1' "400 application/json" "$S"',"message":"\"data.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"","reason":"BadRequest","code":400}'
	wire_is '/apis/example.com/v1/namespaces/default/widgets?fieldSelector=spec.color%3Dred' "400 application/json" "$S"',"message":"field label not supported: spec.color","reason":"BadRequest","code":400}'
	# resourceVersion not a number: a bare 500 from the watch cache, 400 from etcd.
	local bad='resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax'
	wire_is "$P?resourceVersion=abc" "500 application/json" "$S"',"message":"'"$bad"'","code":500}'
	wire_is "$P/nope?resourceVersion=abc" "500 application/json" "$S"',"message":"'"$bad"'","code":500}'
	wire_is "$P?watch=1&resourceVersion=abc" "500 application/json" "$S"',"message":"'"$bad"'","code":500}'
	wire_is "$P?resourceVersion=abc&limit=1" "400 application/json" "$S"',"message":"invalid resource version: '"$bad"'","reason":"BadRequest","code":400}'
	# A resourceVersion ahead: etcd's answers come at once.
	wire_is "$P?resourceVersion=99999999&resourceVersionMatch=Exact" "500 application/json" "$S"',"message":"etcdserver: mvcc: required revision is a future revision","code":500}'
	run curl -sS --cacert "$FAKEAPI_DIR/ca.crt" -i -H "Authorization: Bearer $(<"$FAKEAPI_DIR/admin-token")" \
		"$FAKEAPI_URL$P?resourceVersion=99999999&resourceVersionMatch=NotOlderThan&limit=1"
	assert_output --regexp '"message":"Timeout: Too large resource version: 99999999, current: [0-9]+","reason":"Timeout","details":\{"causes":\[\{"reason":"ResourceVersionTooLarge","message":"Too large resource version"\}\]\},"code":504\}$'
	refute_output --partial Retry-After
	# Number parameters, Tables, continue tokens.
	wire_is "$P?limit=abc" "400 application/json" "$S"',"message":"strconv.ParseInt: parsing \"abc\": invalid syntax","reason":"BadRequest","code":400}'
	wire_is "$P?watch=1&timeoutSeconds=abc" "400 application/json" "$S"',"message":"strconv.ParseInt: parsing \"abc\": invalid syntax","reason":"BadRequest","code":400}'
	wire_is "$P?includeObject=Bogus" "400 application/json" "$S"',"message":"Unable to convert to Table as requested: includeObject: Invalid value: \"Bogus\": must be '"'Metadata', 'Object', 'None', or empty"'","reason":"BadRequest","code":400}' \
		-H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io'
	wire_is "$P?limit=1&continue=garbage" "400 application/json" "$S"',"message":"invalid continue token: continue key is not valid: invalid character '"'\\\\u0081'"' looking for beginning of value","reason":"BadRequest","code":400}'
	# Booleans as apimachinery reads them: anything but 0 and false is true.
	for w in bogus '' yes; do
		run curl -sS -m 5 --cacert "$FAKEAPI_DIR/ca.crt" -H "Authorization: Bearer $(<"$FAKEAPI_DIR/admin-token")" \
			"$FAKEAPI_URL$P?watch=$w&timeoutSeconds=1"
		assert_line --index 0 --regexp '^\{"type":"ADDED","object":\{"kind":"Pod"'
	done
	# Bookmarks (allowWatchBookmarks=bogus is true): the cacher's carry the
	# last change to the resource in any namespace and go only to watches
	# that began before it, so a quiet resource's watch gets none.
	local rv
	rv=$(fakeapi_curl "$P?limit=1" | json_field .metadata.resourceVersion)
	run curl -sS -m 5 --cacert "$FAKEAPI_DIR/ca.crt" -H "Authorization: Bearer $(<"$FAKEAPI_DIR/admin-token")" \
		"$FAKEAPI_URL$P?watch=1&resourceVersion=$rv&allowWatchBookmarks=bogus&timeoutSeconds=3"
	assert_output ''
	curl -sS -m 5 --cacert "$FAKEAPI_DIR/ca.crt" -H "Authorization: Bearer $(<"$FAKEAPI_DIR/admin-token")" \
		"$FAKEAPI_URL$P?watch=1&resourceVersion=$rv&allowWatchBookmarks=bogus&timeoutSeconds=3" \
		>"$BATS_TEST_TMPDIR/bm" &
	local pid=$!
	sleep 0.3
	fakeapi_ctl POST churn '{"resource":"pods","namespace":"kube-system","relabel":1,"seed":7}' >/dev/null
	wait "$pid"
	run cat "$BATS_TEST_TMPDIR/bm"
	assert_output --regexp '^\{"type":"BOOKMARK","object":\{"kind":"Pod","apiVersion":"v1","metadata":\{"resourceVersion":"[0-9]+","creationTimestamp":null\},"spec":\{"containers":null\},"status":\{\}\}\}$'
	[ "$(json_field .object.metadata.resourceVersion <<<"$output")" -gt "$rv" ]
	# pods/log: no node, no log (204); a node without its Node object.
	run curl -sS --cacert "$FAKEAPI_DIR/ca.crt" -i -H "Authorization: Bearer $(<"$FAKEAPI_DIR/admin-token")" -X POST \
		-H 'Content-Type: application/json' --data '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"nolog"},"spec":{"containers":[{"name":"c","image":"x"}]}}' \
		"$FAKEAPI_URL$P"
	wire_is $P/nolog/log "204 " ''
	run curl -sS --cacert "$FAKEAPI_DIR/ca.crt" -o /dev/null -H "Authorization: Bearer $(<"$FAKEAPI_DIR/admin-token")" -X POST \
		-H 'Content-Type: application/json' --data '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"nolog2"},"spec":{"nodeName":"node-9","containers":[{"name":"c","image":"x"}]}}' \
		"$FAKEAPI_URL$P"
	wire_is $P/nolog2/log "404 application/json" "$S"',"message":"pods \"node-9\" not found","reason":"NotFound","details":{"name":"node-9","kind":"pods"},"code":404}'
	kubectl_fake delete pod nolog nolog2 -n default >/dev/null
	# Encoding: a created Deployment's pod template metadata in ObjectMeta
	# order; a custom resource's Table row object typed (ObjectMeta order).
	kubectl_fake create deployment order-check --image=x -n default >/dev/null
	run fakeapi_curl /apis/apps/v1/namespaces/default/deployments/order-check
	assert_output --partial '"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"order-check"}}'
	kubectl_fake delete deployment order-check -n default >/dev/null
	run fakeapi_curl -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' /apis/example.com/v1/namespaces/default/widgets
	assert_output --regexp '"object":\{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":\{"name":"widget-a","namespace":"default","uid":'
	# Aggregated discovery: cacheable; a built-in resource's responseKind
	# has its kind only; a custom resource's verbs in the CRD handler's order.
	run fakeapi_curl -i -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList' /apis
	assert_line --regexp '^Cache-Control: public'
	assert_output --partial '{"resource":"deployments","responseKind":{"group":"","version":"","kind":"Deployment"}'
	assert_output --partial '{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"}'
	assert_output --partial '{"resource":"widgets","responseKind":{"group":"example.com","version":"v1","kind":"Widget"},"scope":"Namespaced","singularResource":"widget","verbs":["delete","deletecollection","get","list","patch","create","update","watch"]'
}

@test "the admin-cert context authenticates with a client certificate" {
	fakeapi_ctl DELETE requests >/dev/null
	run kubectl_fake --context admin-cert get pods -n kube-system -o name
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	run fakeapi_requests
	run jq -r 'select(.verb == "list") | [.auth, .client_cert_cn, .user] | join(" ")' <<<"$output"
	assert_output 'none admin admin'
}

@test "tokens added at runtime work until they expire" {
	local t0
	t0=$(date +%s%N)
	fakeapi_ctl POST tokens '{"token":"short-lived","user":"admin","expires_in":3}' >/dev/null
	run kubectl_fake --token short-lived get ns default -o name
	assert_output 'namespace/default'
	# A second of slack: under load the POST itself can take a while.
	local left=$((4300 - ($(date +%s%N) - t0) / 1000000))
	((left <= 0)) || sleep "$(printf '%d.%03d' $((left / 1000)) $((left % 1000)))"
	run kubectl_fake --token short-lived get ns default -o name
	assert_failure
	assert_output --partial Unauthorized
}

@test "--pods 1000 loads generated pods that list in chunks" {
	fakeapi_start --pods 1000 --namespaces 4 --seed 7
	run kubectl_fake get pods -A --chunk-size=500 -o name
	assert_success
	[ "${#lines[@]}" -eq 1007 ]
	run kubectl_fake get pods -n pod-ns-3 -o name
	[ "${#lines[@]}" -eq 250 ]
	local size
	size=$(fakeapi_curl "/api/v1/namespaces/pod-ns-0/pods?limit=1" | jq -c '.items[0]' | wc -c)
	[ "$size" -gt 5000 ] && [ "$size" -lt 10000 ]
	local start end
	start=$(date +%s%N)
	fakeapi_stop
	end=$(date +%s%N)
	[ $(((end - start) / 1000000)) -lt 3000 ]
}

@test "fail_next: a 500, then recovery; 429 carries Retry-After" {
	fakeapi_ctl POST faults '{"fail_next":{"count":1,"status":500,"verb":"list"}}' >/dev/null
	run kubectl_fake get pods -o name
	assert_failure
	assert_output --partial 'Internal error occurred: injected failure (fakeapi)'
	run kubectl_fake get pods -o name
	assert_success
	fakeapi_ctl POST faults '{"fail_next":{"count":1,"status":429,"retry_after":3}}' >/dev/null
	run fakeapi_curl -i /api/v1/namespaces/default/pods
	assert_line --index 0 --regexp '^HTTP/1.1 429 '
	assert_line --regexp '^Retry-After: 3'
	assert_line --partial '"reason":"TooManyRequests","details":{"retryAfterSeconds":3},"code":429}'
}

@test "compact: a watch from an old resourceVersion gets an in-stream 410" {
	kubectl_fake create namespace t-compact
	local rv
	rv=$(list_rv t-compact)
	kubectl_fake -n t-compact create configmap c1 --from-literal=a=b
	# Before compaction the change is replayed.
	run fakeapi_curl "/api/v1/namespaces/t-compact/configmaps?watch=1&resourceVersion=$rv&timeoutSeconds=1"
	assert_success
	[ "$(json_field .type <<<"$output")" = ADDED ]
	fakeapi_ctl POST faults '{"compact":true}' >/dev/null
	run fakeapi_curl -w '\n%{http_code}' "/api/v1/namespaces/t-compact/configmaps?watch=1&resourceVersion=$rv&timeoutSeconds=5"
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	assert_line --index 1 200
	[ "$(head -n1 <<<"$output" | json_field '.type + " " + .object.reason + " " + (.object.code|tostring)')" = 'ERROR Expired 410' ]
	assert_line --index 0 --regexp "\"message\":\"too old resource version: $rv \\([0-9]+\\)\""
	# Watching from now still works (and ends cleanly at the timeout).
	run fakeapi_curl "/api/v1/namespaces/t-compact/configmaps?watch=1&resourceVersion=$(list_rv t-compact)&timeoutSeconds=1"
	assert_success
	assert_output ''
}

@test "expire_continue: the next page is a 410 with a fresh continue token" {
	local cont
	cont=$(fakeapi_curl "/api/v1/pods?limit=2" | json_field .metadata.continue)
	fakeapi_ctl POST faults '{"expire_continue":true}' >/dev/null
	run fakeapi_curl -w '\n%{http_code}' "/api/v1/pods?limit=2&continue=$cont"
	assert_line --index 1 410
	[ "$(head -n1 <<<"$output" | json_field .reason)" = Expired ]
	assert_line --index 0 --partial 'The provided continue parameter is too old to display a consistent list result.'
	local fresh
	fresh=$(head -n1 <<<"$output" | json_field .metadata.continue)
	[ -n "$fresh" ] && [ "$fresh" != "$cont" ]
	run fakeapi_curl "/api/v1/pods?limit=2&continue=$fresh"
	[ "$(json_field '.items | length' <<<"$output")" -eq 2 ]
}

@test "sendInitialEvents ends the initial ADDED events with an annotated BOOKMARK" {
	local rv
	rv=$(list_rv kube-system)
	run fakeapi_curl "/api/v1/namespaces/kube-system/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	[ "$(jq -r .type <<<"${lines[0]}")" = ADDED ]
	[ "$(jq -r .type <<<"${lines[1]}")" = ADDED ]
	[ "$(jq -r '.type + " " + .object.kind' <<<"${lines[2]}")" = 'BOOKMARK Pod' ]
	[ "$(jq -r '.object.metadata.annotations["k8s.io/initial-events-end"]' <<<"${lines[2]}")" = true ]
	[ "$(jq -r '.object.metadata.resourceVersion' <<<"${lines[2]}")" -ge "$rv" ]
	# Without resourceVersionMatch=NotOlderThan the request is invalid.
	run fakeapi_curl -w '\n%{http_code}' "/api/v1/pods?watch=1&sendInitialEvents=true"
	assert_line --index 1 422
	# And a server with the WatchList gate off refuses it.
	fakeapi_ctl POST faults '{"watch_list":false}' >/dev/null
	run fakeapi_curl "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
	fakeapi_ctl POST faults '{"watch_list":true}' >/dev/null
	[ "$(json_field .code <<<"$output")" -eq 422 ]
	[ "$(json_field .message <<<"$output")" = 'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled' ]
}

@test "watch faults: garbage line, truncated event, dropped watches" {
	fakeapi_ctl POST faults '{"invalid_json_next_watch":true}' >/dev/null
	run fakeapi_curl "/api/v1/namespaces/kube-system/pods?watch=1&timeoutSeconds=1"
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	run jq -e . <<<"${lines[0]}"
	assert_failure
	fakeapi_ctl POST faults '{"truncate_next_watch":true}' >/dev/null
	run fakeapi_curl "/api/v1/namespaces/kube-system/pods?watch=1&timeoutSeconds=5"
	# curl: (18) transfer closed with outstanding read data remaining
	assert_failure 18
	[ "${#lines[@]}" -eq 2 ]
	fakeapi_curl -N "/api/v1/namespaces/kube-system/pods?watch=1&resourceVersion=$(list_rv kube-system)" \
		>"$BATS_TEST_TMPDIR/dropped" 3>&- &
	local pid=$! i
	for ((i = 0; i < 50; i++)); do
		[ "$(fakeapi_ctl GET state | jq .watches)" -ge 1 ] && break
		sleep 0.1
	done
	[ "$(fakeapi_ctl GET state | jq .watches)" -ge 1 ]
	fakeapi_ctl POST faults '{"drop_watches":true}' >/dev/null
	# The stream ends cleanly (curl exits 0), and no watch is left open.
	wait "$pid"
	run fakeapi_ctl GET state
	[ "$(json_field .watches <<<"$output")" -eq 0 ]
}

@test "discovery: aggregated v2 when asked for, legacy otherwise" {
	run fakeapi_curl -i -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' /apis
	assert_line --regexp '^Content-Type: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'
	run fakeapi_curl -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' /apis
	[ "$(json_field '[.items[].metadata.name] | join(",")' <<<"$output")" = apps,rbac.authorization.k8s.io,example.com ]
	run fakeapi_curl -H 'Accept: application/json' /apis
	[ "$(json_field .kind <<<"$output")" = APIGroupList ]
	run fakeapi_curl /api/v1
	[ "$(json_field '.resources[] | select(.name == "pods") | .shortNames[0]' <<<"$output")" = po ]
	run kubectl_fake api-resources --api-group=example.com --no-headers
	assert_output --regexp '^widgets +wd +example.com/v1 +true +Widget$'
}

@test "selfsubjectaccessreviews and per-namespace RBAC (POST /_fake/rbac), as kubectl auth can-i asks" {
	fakeapi_ctl POST /_fake/tokens '{"token":"dev-can-i","user":"dev"}' >/dev/null
	fakeapi_ctl POST /_fake/rbac '{"user":"dev","rules":[
		{"verbs":["list","watch"],"resources":["pods"],"namespaces":["default"]},
		{"verbs":["get"],"resources":["deployments"],"apiGroups":["apps"]}]}' >/dev/null
	can_i() { kubectl_fake --token dev-can-i auth can-i "$@"; }
	run can_i list pods -n default
	assert_success
	assert_output yes
	run can_i watch pods -n default
	assert_output yes
	run can_i list pods -n kube-system
	assert_failure
	assert_output no
	run can_i list pods -A
	assert_output no
	run can_i get deployments.apps -A
	assert_output yes
	run can_i get deployments.apps -n kube-system
	assert_output yes
	# kubectl's typed client sends protobuf; a request the rule allows is served.
	run kubectl_fake --token dev-can-i get pods -n default -o name
	assert_success
	run kubectl_fake --token dev-can-i get pods -n kube-system
	assert_failure
	assert_output --partial 'pods is forbidden: User "dev" cannot list resource "pods" in API group "" in the namespace "kube-system"'
	# The wire form, JSON: 201 and the review sent back with its status.
	body='{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"resourceAttributes":{"namespace":"default","verb":"list","resource":"pods"}}}'
	run curl -sS -w '\n%{http_code}' --cacert "$FAKEAPI_DIR/ca.crt" -H 'Authorization: Bearer dev-can-i' \
		-H 'Content-Type: application/json' --data "$body" \
		"$FAKEAPI_URL/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	assert_line --index 1 201
	assert_equal "${lines[0]}" '{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","metadata":{"creationTimestamp":null},"spec":{"resourceAttributes":{"namespace":"default","verb":"list","resource":"pods"}},"status":{"allowed":true,"reason":"RBAC: allowed by RoleBinding \"fake-dev/default\" of Role \"fake-dev\" to User \"dev\""}}'
	run curl -sS --cacert "$FAKEAPI_DIR/ca.crt" -H 'Authorization: Bearer dev-can-i' \
		-H 'Content-Type: application/json' --data "${body/default/kube-system}" \
		"$FAKEAPI_URL/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	[[ $output == *'"status":{"allowed":false}}' ]]
	# Neither attribute: 422, as the validation says.
	run curl -sS -w '\n%{http_code}' --cacert "$FAKEAPI_DIR/ca.crt" -H 'Authorization: Bearer dev-can-i' \
		-H 'Content-Type: application/json' --data '{"spec":{}}' \
		"$FAKEAPI_URL/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	assert_line --index 1 422
	[[ ${lines[0]} == *'exactly one of nonResourceAttributes or resourceAttributes must be specified'* ]]
	# Recorded as a create of selfsubjectaccessreviews by the user.
	fakeapi_requests | jq -e -s 'any(.[]; .verb == "create" and .resource == "selfsubjectaccessreviews" and .user == "dev")'
}

# One watch or more open on the server.
watching() {
	[ "$(fakeapi_ctl GET state | json_field .watches)" -ge 1 ]
}

@test "blast: a watch whose client did not read writes every blast it missed, or a 410 when they are gone" {
	# The paced serve benchmark's "stall": a watcher more than 8 blasts
	# behind skipped the older ones in silence, so its client never had
	# them and waited for events nobody would send.
	local rv out=$BATS_TEST_TMPDIR/w
	rv=$(list_rv default)
	fakeapi_curl "/api/v1/namespaces/default/pods?watch=1&resourceVersion=$rv&timeoutSeconds=8" >"$out" 3>&- &
	local p=$!
	wait_until watching
	fakeapi_ctl POST faults '{"stall_watches":{"seconds":2}}' >/dev/null
	local i
	for ((i = 0; i < 12; i++)); do
		fakeapi_ctl POST blast '{"namespace":"default","count":1}' >/dev/null
	done
	wait "$p"
	run grep -c '"type":"MODIFIED"' "$out"
	assert_output 12
	# Fewer kept than it missed: the watch ends with a 410, not a gap.
	rv=$(list_rv default)
	fakeapi_curl "/api/v1/namespaces/default/pods?watch=1&resourceVersion=$rv&timeoutSeconds=8" >"$out" 3>&- &
	p=$!
	wait_until watching
	fakeapi_ctl POST faults '{"stall_watches":{"seconds":2},"blast_keep":4}' >/dev/null
	for ((i = 0; i < 6; i++)); do
		fakeapi_ctl POST blast '{"namespace":"default","count":1}' >/dev/null
	done
	wait "$p"
	fakeapi_ctl POST faults '{"blast_keep":4096}' >/dev/null
	run grep -c '"type":"MODIFIED"' "$out"
	assert_output 0
	run tail -n 1 "$out"
	assert_output --partial '"type":"ERROR"'
	assert_output --partial 'blasts '
	assert_output --partial '"code":410'
}
