#!/usr/bin/env bats
# Several informers in one process (issue 15): watch and deltas over a
# comma list of resources and several namespaces (-n a,b or repeated -n),
# their events merged, each -o json line naming its resource and context;
# --exit-after-sync waits for all of them; one that fails for good (403 in
# one namespace) is reported once and the others go on; bad input.
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
	fakeapi_ctl POST /_fake/faults '{"reset":true}' >/dev/null
	fakeapi_ctl DELETE /_fake/requests >/dev/null
	EV="$BATS_TEST_TMPDIR/events.json"
	ERR="$BATS_TEST_TMPDIR/stderr"
}

teardown() {
	if [ -n "${WATCH_PID:-}" ]; then
		kill -TERM "$WATCH_PID" 2>/dev/null || true
		wait "$WATCH_PID" 2>/dev/null || true
	fi
	if [ -n "${OTHER_PID:-}" ]; then
		kill -TERM "$OTHER_PID" 2>/dev/null || true
		wait "$OTHER_PID" 2>/dev/null || true
	fi
}

# other_server [server options]: a second test server, its kubeconfig
# renamed (cluster, user and context "other") and merged after the first,
# so that --context admin,other reaches both. The first stays FAKEAPI_*.
other_server() {
	local saved=("$FAKEAPI_DIR" "$FAKEAPI_PID" "$FAKEAPI_URL" "$KUBECONFIG" "$XDG_CACHE_HOME"
		"$KUBECACHEDIR")
	fakeapi_start --dir "$BATS_TEST_TMPDIR/other" "$@"
	OTHER_PID=$FAKEAPI_PID
	sed -e 's/^- name: fake$/- name: other/' -e 's/^    cluster: fake$/    cluster: other/' \
		-e 's/^- name: admin$/- name: other/' -e 's/^    user: admin$/    user: other/' \
		"$FAKEAPI_DIR/kubeconfig" > "$BATS_TEST_TMPDIR/other.kubeconfig"
	FAKEAPI_DIR=${saved[0]} FAKEAPI_PID=${saved[1]} FAKEAPI_URL=${saved[2]}
	export KUBECONFIG="${saved[3]}:$BATS_TEST_TMPDIR/other.kubeconfig"
	export XDG_CACHE_HOME=${saved[4]} KUBECACHEDIR=${saved[5]}
}

# A table without its last column (AGE: seconds apart between two commands).
noage() {
	sed -E 's/ +[^ ]+$//'
}

# "resource key" of every object the server has of resource in namespace.
server_keys() {	# server_keys RESOURCE NAMESPACE
	fakeapi_ctl GET "/_fake/objects?resource=$1&namespace=$2" |
		jq -r --arg r "$1" '"\($r) \(.metadata.namespace)/\(.metadata.name)"'
}

@test "watch pods,configmaps -n a,b: both kinds from both namespaces, each line naming its resource and context" {
	run --separate-stderr kinf watch pods,configmaps -n default,viewer-ns -o json --exit-after-sync
	assert_success
	[ -z "$stderr" ]
	got=$(jq -r '"\(.resource) \(.key)"' <<<"$output" | sort)
	want=$( { server_keys pods default; server_keys pods viewer-ns
		server_keys configmaps default; server_keys configmaps viewer-ns; } | sort)
	[ -n "$want" ]
	diff <(echo "$want") <(echo "$got")
	# Every line: ADDED, initial, the context of the kubeconfig.
	jq -e -s 'all(.[]; .type == "ADDED" and .initial and .context == "admin")' <<<"$output"
	# One list and one watch per resource and namespace, nothing cluster-wide.
	run fakeapi_requests
	jq -e -s '[.[] | select(.verb == "list") | "\(.resource)/\(.namespace)"] | sort ==
		["configmaps/default", "configmaps/viewer-ns", "pods/default", "pods/viewer-ns"]' <<<"$output"
}

@test "a single informer's json lines carry resource (plural.group) and context too" {
	run --separate-stderr kinf watch deployments -n default -o json --exit-after-sync
	assert_success
	jq -e -s 'length == 1 and .[0].resource == "deployments.apps" and .[0].context == "admin"' <<<"$output"
	run --separate-stderr kinf deltas pods,deploy -n default -o json --exit-after-sync
	assert_success
	jq -e -s 'length == 5 and all(.[]; .context == "admin") and
		([.[].resource] | unique) == ["deployments.apps", "pods"]' <<<"$output"
	# --from knows neither.
	printf '{"type":"ADDED","object":{"metadata":{"name":"a","namespace":"n","resourceVersion":"1"}}}\n' \
		> "$BATS_TEST_TMPDIR/s"
	run --separate-stderr kinf watch --from "$BATS_TEST_TMPDIR/s" -o json
	assert_success
	jq -e 'has("resource") or has("context") | not' <<<"$output"
}

@test "repeated -n is -n a,b; a namespace named twice is watched once" {
	run --separate-stderr kinf watch pods -n viewer-ns -n default,viewer-ns -n default -o json --exit-after-sync
	assert_success
	got=$(jq -r '"pods \(.key)"' <<<"$output" | sort)
	diff <( { server_keys pods default; server_keys pods viewer-ns; } | sort) <(echo "$got")
	run fakeapi_requests
	jq -e -s '[.[] | select(.verb == "list") | .namespace] | sort == ["default", "viewer-ns"]' <<<"$output"
	# Before the command they add up too; after it they replace those before.
	run --separate-stderr "$KINF" -n default -n viewer-ns watch pods -o json --exit-after-sync
	assert_success
	diff <( { server_keys pods default; server_keys pods viewer-ns; } | sort) \
		<(jq -r '"pods \(.key)"' <<<"$output" | sort)
	run --separate-stderr "$KINF" -n default -n viewer-ns watch pods -n kube-system -o json --exit-after-sync
	assert_success
	diff <(server_keys pods kube-system | sort) <(jq -r '"pods \(.key)"' <<<"$output" | sort)
	# pods,po,pod is one resource.
	run --separate-stderr kinf watch pods,po,pod -n default -o json --exit-after-sync
	assert_success
	[ "$(jq -s 'length' <<<"$output")" -eq "$(server_keys pods default | wc -l)" ]
}

@test "--exit-after-sync waits for every informer, the slow one too" {
	fakeapi_ctl POST /_fake/faults \
		'{"stall":{"seconds":2,"verb":"list","path":"/namespaces/viewer-ns/configmaps"}}' >/dev/null
	run --separate-stderr kinf watch pods,configmaps -n default,viewer-ns -o json --exit-after-sync
	assert_success
	jq -e -s 'any(.[]; .resource == "configmaps" and .key == "viewer-ns/kube-root-ca.crt")' <<<"$output"
	got=$(jq -r '"\(.resource) \(.key)"' <<<"$output" | sort)
	want=$( { server_keys pods default; server_keys pods viewer-ns
		server_keys configmaps default; server_keys configmaps viewer-ns; } | sort)
	diff <(echo "$want") <(echo "$got")
	# The stalled list was answered after 2 s, and kinf waited for it.
	run fakeapi_requests
	jq -e -s 'any(.[]; .verb == "list" and .namespace == "viewer-ns" and
		.resource == "configmaps" and .duration_ms >= 1900)' <<<"$output"
}

@test "changes in each namespace and resource arrive merged, as they happen" {
	"$KINF" watch pods,configmaps -n default,viewer-ns -o json --watch-only \
		> "$EV" 2> "$ERR" 3>&- &
	WATCH_PID=$!
	wait_until eval '[ "$(fakeapi_requests | jq -s "[.[] | select(.verb == \"watch\")] | length")" -eq 4 ]'
	fakeapi_ctl POST /_fake/churn '{"resource":"configmaps","namespace":"viewer-ns","create":1}' >/dev/null
	fakeapi_ctl POST /_fake/churn '{"resource":"pods","namespace":"default","create":1}' >/dev/null
	fakeapi_ctl POST /_fake/churn '{"resource":"pods","namespace":"kube-system","create":1}' >/dev/null
	wait_until eval '[ "$(wc -l < "$EV")" -ge 2 ]'
	sleep 0.5
	kill -TERM "$WATCH_PID"
	wait "$WATCH_PID"
	WATCH_PID=
	# configmap first, then pod, as they were made; kube-system is not watched.
	run jq -r '"\(.type) \(.resource) \(.key | split("/")[0])"' "$EV"
	assert_output - <<-EOF
		ADDED configmaps viewer-ns
		ADDED pods default
	EOF
}

@test "403 in one of several namespaces: reported once, naming it; the others go on; exit 1" {
	"$KINF" watch pods --context viewer -n default,kube-system -o json --stats \
		> "$EV" 2> "$ERR" 3>&- &
	WATCH_PID=$!
	wait_until grep -q 'kube-system' "$ERR"
	wait_until eval '[ "$(fakeapi_requests | jq -s "[.[] | select(.verb == \"watch\")] | length")" -ge 1 ]'
	fakeapi_ctl POST /_fake/churn '{"resource":"pods","namespace":"default","create":1}' >/dev/null
	n=$(server_keys pods default | wc -l)
	wait_until eval '[ "$(wc -l < "$EV")" -ge '"$n"' ]'
	kill -TERM "$WATCH_PID"
	status=0
	wait "$WATCH_PID" || status=$?
	WATCH_PID=
	[ "$status" -eq 1 ]
	run grep -c 'forbidden' "$ERR"
	assert_output 1
	run grep 'forbidden' "$ERR"
	assert_output 'kinf: pods in namespace "kube-system": pods is forbidden: User "viewer" cannot list resource "pods" in API group "" in the namespace "kube-system" (403 Forbidden)'
	# default's list and the pod created after the failure.
	jq -e -s --argjson n "$n" 'length == $n and all(.[]; .key | startswith("default/")) and
		any(.[]; .initial | not)' "$EV"
	# --stats: the total, then each informer.
	grep -qx "pops $n" "$ERR"
	grep -q '^informer pods in namespace "default": lists 1 .* errors 0 ' "$ERR"
	grep -q '^informer pods in namespace "kube-system": lists 0 .* errors 1 ' "$ERR"
}

@test "every informer failing ends the watch, exit 1, each reported" {
	run --separate-stderr kinf watch pods --context viewer -n kube-system,kube-public -o json
	assert_failure 1
	[ "$(grep -c forbidden <<<"$stderr")" -eq 2 ]
	[ -z "$output" ]
	# One alone fails as before, without the informer's name.
	run --separate-stderr kinf watch pods --context viewer -n kube-system -o json
	assert_failure 1
	[[ $stderr == 'kinf: pods is forbidden: '* ]]
}

@test "bad input: unknown type in a list, empty items, tables of several types, commands that take one" {
	run --separate-stderr kinf watch pods,podz -n default -o json
	assert_failure 2
	assert_equal "$stderr" 'kinf: unknown resource type "podz", did you mean "pods"?'
	# Before any list or watch.
	run fakeapi_requests
	jq -e -s 'all(.[]; .verb == "discovery")' <<<"$output"

	run --separate-stderr kinf watch pods,,configmaps -o json
	assert_failure 2
	[[ $stderr == 'kinf: empty resource type in "pods,,configmaps"'* ]]
	run --separate-stderr kinf watch pods -n default, -o json
	assert_failure 2
	[[ $stderr == 'kinf: empty namespace name in "default,"'* ]]
	run --separate-stderr kinf deltas pods -n ,default -o json
	assert_failure 2
	[[ $stderr == 'kinf: empty namespace name in ",default"'* ]]
	run --separate-stderr kinf watch pods,configmaps -n default
	assert_failure 2
	[[ $stderr == 'kinf: several resource types need -o json'* ]]
	run --separate-stderr kinf watch pods -n default,viewer-ns --for condition=Ready --all
	assert_failure 2
	[[ $stderr == 'kinf: watch --for takes one namespace and one context'* ]]
	run --separate-stderr kinf watch deploy/web pod/web --for rollout
	assert_failure 2
	[[ $stderr == 'kinf: --for rollout takes one resource type'* ]]
	run --separate-stderr kinf index pods deploy --by app
	assert_failure 2
	[[ $stderr == 'kinf: index takes resource types (pods or pods,deploy), not names'* ]]
	run --separate-stderr kinf index pod/web --by app
	assert_failure 2
	[[ $stderr == 'kinf: index takes resource types (pods or pods,deploy), not names'* ]]
	run --separate-stderr kinf list pods -n default,
	assert_failure 2
	[[ $stderr == 'kinf: empty namespace name in "default,"'* ]]
}

@test "a cluster-scoped resource with several namespaces is watched once; tables gain NAMESPACE" {
	run --separate-stderr kinf watch nodes,pods -n default,viewer-ns -o name --exit-after-sync
	assert_success
	[ "$(grep -c '^node/' <<<"$output")" -eq 2 ]
	run fakeapi_requests
	jq -e -s '[.[] | select(.verb == "list" and .resource == "nodes")] | length == 1' <<<"$output"
	run --separate-stderr kinf watch pods -n default,viewer-ns --exit-after-sync --timestamps none
	assert_success
	assert_line --index 0 --regexp '^EVENT +NAMESPACE +NAME '
	assert_line --regexp '^ADDED +viewer-ns +viewer-app-'
}

@test "--dump-on-exit holds every informer's cache; with several contexts each line names its own" {
	run --separate-stderr kinf watch pods,configmaps -n default,viewer-ns -o name --exit-after-sync \
		--dump-on-exit "$BATS_TEST_TMPDIR/cache.json"
	assert_success
	diff <( { server_keys pods default; server_keys pods viewer-ns
		server_keys configmaps default; server_keys configmaps viewer-ns; } | awk '{ print $2 }' | sort) \
		<(jq -r '"\(.metadata.namespace)/\(.metadata.name)"' "$BATS_TEST_TMPDIR/cache.json" | sort)
	# Several contexts: each line names its context, the object inside.
	run --separate-stderr kinf watch pods --context admin,viewer -n default -o name --exit-after-sync \
		--dump-on-exit "$BATS_TEST_TMPDIR/cache.json"
	assert_success
	diff <(server_keys pods default | awk '{ print "admin " $2; print "viewer " $2 }' | sort) \
		<(jq -r '"\(.context) \(.object.metadata.namespace)/\(.object.metadata.name)"' \
			"$BATS_TEST_TMPDIR/cache.json" | sort)
}

@test "--context a,b: the same resources and namespaces in each context, each line naming its context" {
	run --separate-stderr kinf watch pods,configmaps --context admin,viewer -n default,viewer-ns -o json --exit-after-sync --stats
	assert_success
	got=$(jq -r '"\(.context) \(.resource) \(.key)"' <<<"$output" | sort)
	want=$( { server_keys pods default; server_keys pods viewer-ns
		server_keys configmaps default; server_keys configmaps viewer-ns; } |
		sed 's/^/admin /; p; s/^admin /viewer /' | sort)
	diff <(echo "$want") <(echo "$got")
	# Each context's requests with its own credentials.
	run fakeapi_requests
	jq -e -s '[.[] | select(.verb == "list") | .user] | group_by(.) | map(length) == [4, 4]' <<<"$output"
	[[ $stderr == *'informer pods in namespace "default" of context "viewer": lists 1 '* ]]
	# --context a --context a,b is a,b.
	run --separate-stderr kinf watch pods --context viewer --context admin,viewer -n default -o name --exit-after-sync
	assert_success
	[ "${#lines[@]}" -eq $((2 * $(server_keys pods default | wc -l))) ]
}

@test "--context a,b: 403 in one context's namespace is reported once, naming context and namespace" {
	run --separate-stderr kinf watch pods --context admin,viewer -n default,kube-system -o json --exit-after-sync
	assert_failure 1
	assert_equal "$stderr" 'kinf: pods in namespace "kube-system" of context "viewer": pods is forbidden: User "viewer" cannot list resource "pods" in API group "" in the namespace "kube-system" (403 Forbidden)'
	jq -e -s 'any(.[]; .context == "admin" and (.key | startswith("kube-system/"))) and
		any(.[]; .context == "viewer" and (.key | startswith("default/"))) and
		all(.[]; .context == "admin" or (.key | startswith("default/")))' <<<"$output"
}

@test "bad input: an unknown or empty context in the list, several contexts where one is taken" {
	run --separate-stderr kinf watch pods --context admin,nope -o json
	assert_failure 3
	[[ $stderr == 'kinf: '*'"nope"'* ]]
	[ "${#stderr_lines[@]}" -eq 1 ]
	run fakeapi_requests
	jq -e -s 'all(.[]; .verb == "discovery")' <<<"$output"
	run --separate-stderr kinf watch pods --context admin, -o json
	assert_failure 2
	[[ $stderr == 'kinf: empty context name in "admin,"'* ]]
	run --separate-stderr kinf list pods --context admin,nope
	assert_failure 3
	assert_equal "$stderr" 'kinf: context "nope" does not exist'
	run --separate-stderr kinf list pods --context ,admin
	assert_failure 2
	[[ $stderr == 'kinf: empty context name in ",admin"'* ]]
	run --separate-stderr kinf watch pod/web --context admin,viewer --for condition=Ready
	assert_failure 2
	[[ $stderr == 'kinf: watch --for takes one namespace and one context'* ]]
}

@test "--context a,b: tables gain a CONTEXT column" {
	run --separate-stderr kinf watch pods --context admin,viewer -n default --exit-after-sync --timestamps none
	assert_success
	assert_line --index 0 --regexp '^EVENT +CONTEXT +NAME +READY '
	n=$(server_keys pods default | wc -l)
	[ "$(grep -cE '^ADDED +admin +' <<<"$output")" -eq "$n" ]
	[ "$(grep -cE '^ADDED +viewer +' <<<"$output")" -eq "$n" ]
	# With several namespaces too, CONTEXT then NAMESPACE.
	run --separate-stderr kinf watch pods --context admin,viewer -n default,viewer-ns --exit-after-sync --timestamps none
	assert_success
	assert_line --index 0 --regexp '^EVENT +CONTEXT +NAMESPACE +NAME '
	assert_line --regexp '^ADDED +viewer +viewer-ns +viewer-app-'
}

@test "a type missing from a fresh discovery cache, after one found there: both watched" {
	# Fill the cache, then take configmaps out of it, as a cache written
	# before a CRD was added lacks it: the refresh must keep pods' type.
	run --separate-stderr kinf watch pods -n default -o name --exit-after-sync
	assert_success
	f=$(echo "$XDG_CACHE_HOME"/kinf/discovery/*/discovery.json)
	[ -f "$f" ]
	jq -c '(.discovery.items[].versions[].resources) |= map(select(.resource != "configmaps"))' \
		"$f" > "$f.new"
	mv "$f.new" "$f"
	! grep -q '"configmaps"' "$f"
	run --separate-stderr kinf watch pods,configmaps -n default -o json --exit-after-sync
	assert_success
	jq -e -s '([.[].resource] | unique) == ["configmaps", "pods"]' <<<"$output"
	grep -q '"configmaps"' "$f"
}

@test "list pods,deploy: a table per type, kind/name in NAME, a blank line between, as kubectl get" {
	run --separate-stderr kinf list pods,deploy -n default
	assert_success
	assert_equal "$(noage <<<"$output")" "$(kubectl_fake get pods,deploy -n default | noage)"
	assert_line --index 0 --regexp '^NAME +READY +STATUS '
	assert_line --regexp '^pod/web-'
	assert_line --regexp '^deployment.apps/web +3/3 '
	# -A: NAMESPACE first, as kubectl.
	run --separate-stderr kinf list pods,configmaps -A
	assert_success
	assert_equal "$(noage <<<"$output")" "$(kubectl_fake get pods,configmaps -A | noage)"
	# Names apply to each type; one plain type keeps its plain names.
	run --separate-stderr kinf list pods,deploy web -n default
	assert_failure 1
	assert_equal "$stderr" 'kinf: pods "web" not found'
	assert_output --regexp '^NAME +READY +UP-TO-DATE +AVAILABLE +AGE'$'\n''deployment.apps/web '
	# -o name, json: each object as one type alone prints it.
	run --separate-stderr kinf list pods,deploy -n default -o name
	assert_success
	assert_equal "$(noage <<<"$output")" "$(kubectl_fake get pods,deploy -n default -o name | noage)"
	run --separate-stderr kinf list pods,deploy -n default -o json
	assert_success
	jq -e -s '([.[].kind] | unique) == ["Deployment", "Pod"]' <<<"$output"
	# More types than arguments (a heap overflow found against the real server).
	run --separate-stderr kinf list pods,deploy,cm,wd,ns -n default
	assert_success
	assert_equal "$(noage <<<"$output")" "$(kubectl_fake get pods,deploy,cm,wd,ns -n default | noage)"
}

@test "list TYPE/NAME TYPE/NAME: each named object, a table per type, as kubectl get" {
	p=$(server_keys pods default | head -1 | sed 's|.*/||')
	run --separate-stderr kinf list deploy/web pod/"$p" -n default
	assert_success
	assert_equal "$(noage <<<"$output")" "$(kubectl_fake get deploy/web pod/"$p" -n default | noage)"
	assert_line --index 1 --regexp '^deployment.apps/web '
	assert_line --regexp "^pod/$p "
	# One type alone: its plain names, as kubectl.
	run --separate-stderr kinf list pod/"$p" -n default
	assert_success
	assert_equal "$(noage <<<"$output")" "$(kubectl_fake get pod/"$p" -n default | noage)"
	# Consecutive TYPE/NAME of one type make one table.
	q=$(server_keys pods default | sed -n 2p | sed 's|.*/||')
	run --separate-stderr kinf list pod/"$p" pod/"$q" deploy/web -n default
	assert_success
	assert_equal "$(noage <<<"$output")" "$(kubectl_fake get pod/"$p" pod/"$q" deploy/web -n default | noage)"
	# A missing one is reported; the others are printed; exit 1.
	run --separate-stderr kinf list deploy/web pod/nope -n default
	assert_failure 1
	assert_equal "$stderr" 'kinf: pods "nope" not found'
	assert_line --regexp '^deployment.apps/web '
}

@test "list: TYPE/NAME mixed with a plain type, or malformed, refused as kubectl's builder refuses" {
	run --separate-stderr kinf list pods a deploy/b
	assert_failure 2
	[[ $stderr == "kinf: there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kinf list resource/<resource_name>' instead of 'kinf list resource resource/<resource_name>')"* ]]
	run kubectl_fake get pods a deploy/b
	[[ $output == *'there is no need to specify a resource type as a separate argument'* ]]
	fakeapi_ctl DELETE /_fake/requests >/dev/null
	run --separate-stderr kinf list pods/a/b
	assert_failure 2
	[[ $stderr == 'kinf: arguments in resource/name form may not have more than one slash'* ]]
	for arg in pods,svc/a /a pods/; do
		run --separate-stderr kinf list "$arg"
		assert_failure 2
		[[ $stderr == 'kinf: arguments in resource/name form must have a single resource and name'* ]]
	done
	run --separate-stderr kinf list pods,,deploy
	assert_failure 2
	[[ $stderr == 'kinf: empty resource type in "pods,,deploy"'* ]]
	# None of these asked the server anything.
	run fakeapi_requests
	[ -z "$output" ]
}

available() {	# available NAME True|False: the Available condition of deploy NAME in viewer-ns
	kubectl_fake patch deploy "$1" -n viewer-ns --subresource=status --type=merge -p "{\"status\":{
		\"observedGeneration\":1,\"replicas\":1,\"updatedReplicas\":1,\"readyReplicas\":1,
		\"availableReplicas\":1,\"conditions\":[
		{\"type\":\"Available\",\"status\":\"$2\",\"reason\":\"MinimumReplicasAvailable\"}]}}" >/dev/null
}

@test "watch deploy/a deploy/b --for condition=Available waits for both, as kubectl wait" {
	for d in one two three; do
		kubectl_fake delete deploy "$d" -n viewer-ns --ignore-not-found >/dev/null
		kubectl_fake create deployment "$d" -n viewer-ns --image=nginx --replicas=1 >/dev/null
	done
	available one True
	available two False
	available three True
	# --timeout 0: checked once; two is not Available.
	run --separate-stderr kinf watch deploy/one deploy/two -n viewer-ns --for condition=Available --timeout 0
	assert_failure 4
	[[ $stderr == 'kinf: timed out waiting for condition=Available: deployment.apps/two: '* ]]
	run kubectl_fake wait deploy/one deploy/two -n viewer-ns --for condition=Available --timeout 0
	assert_failure
	"$KINF" watch deploy/one deploy/two -n viewer-ns --for condition=Available --timeout 20s \
		> "$EV" 2> "$ERR" 3>&- &
	WATCH_PID=$!
	sleep 1
	kill -0 "$WATCH_PID"	# still waiting for two
	[ ! -s "$EV" ]
	available two True
	wait "$WATCH_PID"
	WATCH_PID=
	run cat "$EV"
	assert_output - <<-EOF
		deployment.apps/one condition met
		deployment.apps/two condition met
	EOF
	assert_equal "$(kubectl_fake wait deploy/one deploy/two -n viewer-ns --for condition=Available --timeout 0)" "$output"
	# TYPE NAME NAME is the same; a missing one is waited for.
	run --separate-stderr kinf watch deploy one nope -n viewer-ns --for condition=Available --timeout 0
	assert_failure 4
	[[ $stderr == *'deployment.apps/nope'* ]]
	# Without --for: the events of the named objects only (three is left out).
	run --separate-stderr kinf watch deploy/one deploy/two -n viewer-ns -o name --exit-after-sync
	assert_success
	assert_output - <<-EOF
		deployment.apps/one
		deployment.apps/two
	EOF
	run --separate-stderr kinf watch deploy two one -n viewer-ns -o json --exit-after-sync
	assert_success
	jq -e -s '[.[].key] | sort == ["viewer-ns/one", "viewer-ns/two"]' <<<"$output"
	for d in one two three; do
		kubectl_fake delete deploy "$d" -n viewer-ns >/dev/null
	done
}

@test "watch: TYPE/NAME after a plain type, or malformed, is refused" {
	run --separate-stderr kinf watch deploy a deploy/b
	assert_failure 2
	[[ $stderr == "kinf: there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kinf watch resource/<resource_name>' instead of 'kinf watch resource resource/<resource_name>')"* ]]
	run --separate-stderr kinf watch deploy/a/b
	assert_failure 2
	[[ $stderr == 'kinf: arguments in resource/name form may not have more than one slash'* ]]
	run --separate-stderr kinf watch deploy/
	assert_failure 2
	[[ $stderr == 'kinf: arguments in resource/name form must have a single resource and name'* ]]
	run --separate-stderr kinf watch deploy/a deploy/b --for condition=Available --all
	assert_failure 2
	[[ $stderr == 'kinf: --all and a NAME exclude each other'* ]]
	run fakeapi_requests
	[ -z "$output" ]
}

@test "list -n a,b: one table per type with NAMESPACE, as kubectl get -A shows those namespaces" {
	run --separate-stderr kinf list pods,deploy -n viewer-ns,default -n default
	assert_success
	[ -z "$stderr" ]
	# (kubectl's columns are wider for kube-system's names: spaces squeezed)
	want=$(kubectl_fake get pods,deploy -A | awk '$0 == "" || $1 == "NAMESPACE" || $1 == "default" || $1 == "viewer-ns"' | noage | tr -s ' ')
	assert_equal "$(noage <<<"$output" | tr -s ' ')" "$want"
	# One list per type and namespace; a cluster-scoped type once, its own table.
	fakeapi_ctl DELETE /_fake/requests >/dev/null
	kinf list pods,deploy -n viewer-ns,default -n default >/dev/null
	run fakeapi_requests
	jq -e -s '[.[] | select(.verb == "list") | "\(.resource)/\(.namespace)"] | sort ==
		["deployments/default", "deployments/viewer-ns", "pods/default", "pods/viewer-ns"]' <<<"$output"
	run --separate-stderr kinf list nodes,pods -n default,viewer-ns
	assert_success
	assert_line --index 0 --regexp '^NAME +STATUS +ROLES '
	assert_line --regexp '^node/node-0 '
	assert_line --regexp '^NAMESPACE +NAME +READY '
	assert_line --regexp '^viewer-ns +pod/viewer-app-'
	# -o name, json: each namespace's objects in turn.
	run --separate-stderr kinf list pods -n default,viewer-ns -o json
	assert_success
	diff <( { server_keys pods default; server_keys pods viewer-ns; } | awk '{ print $2 }') \
		<(jq -r '"\(.metadata.namespace)/\(.metadata.name)"' <<<"$output")
	# A namespace or context named twice is one, as watch has it: the
	# table of one namespace, not "list takes one namespace".
	run --separate-stderr kinf list pods -n default,default --context admin --context admin
	assert_success
	# (the AGE column aside: a second may pass between the two)
	assert_equal "$(awk '{ print $1, $2, $3, $4 }' <<<"$output")" \
		"$(kinf list pods -n default | awk '{ print $1, $2, $3, $4 }')"
	# None anywhere: said once.
	run --separate-stderr kinf list pods -n kube-public,kube-node-lease
	assert_success
	[ -z "$output" ]
	assert_equal "$stderr" "No resources found"
}

@test "list --context a,b: one table per type with CONTEXT first; a failing one named, the others listed, exit 1" {
	run --separate-stderr kinf list pods --context admin,viewer -n default
	assert_success
	assert_line --index 0 --regexp '^CONTEXT +NAME +READY +STATUS '
	n=$(server_keys pods default | wc -l)
	[ "$(grep -cE '^admin +' <<<"$output")" -eq "$n" ]
	[ "$(grep -cE '^viewer +' <<<"$output")" -eq "$n" ]
	[ "${#lines[@]}" -eq $((2 * n + 1)) ]
	# Each context's list with its own credentials.
	run fakeapi_requests
	jq -e -s '[.[] | select(.verb == "list") | .user] | sort == ["admin", "viewer"]' <<<"$output"
	# viewer may not list kube-system nor nodes: each reported once, naming it.
	run --separate-stderr kinf list pods,nodes -n default,kube-system --context admin,viewer
	assert_failure 1
	assert_equal "${stderr_lines[0]}" 'kinf: pods in namespace "kube-system" of context "viewer": pods is forbidden: User "viewer" cannot list resource "pods" in API group "" in the namespace "kube-system" (403 Forbidden)'
	[[ ${stderr_lines[1]} == 'kinf: nodes of context "viewer": nodes is forbidden: User "viewer" cannot list resource "nodes" '* ]]
	[ "${#stderr_lines[@]}" -eq 2 ]
	assert_line --index 0 --regexp '^CONTEXT +NAMESPACE +NAME +READY '
	assert_line --regexp '^admin +kube-system +pod/coredns-'
	assert_line --regexp '^viewer +default +pod/web-'
	assert_line --regexp '^CONTEXT +NAME +STATUS +ROLES '
	assert_line --regexp '^admin +node/node-0 '
	refute_line --regexp '^viewer +(kube-system|node/)'
	# -o name: each context's in turn.
	run --separate-stderr kinf list pods -n default --context admin,viewer -o name
	assert_success
	[ "${#lines[@]}" -eq $((2 * n)) ]
}

@test "index pods,deploy --by app=web: a table per type with kind/name, as kubectl get -l" {
	run --separate-stderr kinf index pods,deploy -A --by app=web
	assert_success
	# Each type's --by is pushed down as its own selector.
	run fakeapi_requests
	jq -e -s '[.[] | select(.verb == "list") | "\(.resource) \(.query)"] | sort ==
		["deployments labelSelector=app%3Dweb&limit=500&resourceVersion=0",
		 "pods labelSelector=app%3Dweb&limit=500&resourceVersion=0"]' <<<"$output"
	run --separate-stderr kinf index pods,deploy -A --by app=web
	assert_equal "$(noage <<<"$output")" "$(kubectl_fake get pods,deploy -A -l app=web | noage)"
	assert_line --index 0 --regexp '^NAMESPACE +NAME +READY +STATUS '
	assert_line --regexp '^default +deployment.apps/web +3/3 '
	# Several namespaces: sorted as -A sorts, one table per type.
	run --separate-stderr kinf index pods,deploy -n viewer-ns,default --by app
	assert_success
	want=$(kubectl_fake get pods,deploy -A -l app | awk '$0 == "" || $1 == "NAMESPACE" || $1 == "default" || $1 == "viewer-ns"' | noage | tr -s ' ')
	assert_equal "$(noage <<<"$output" | tr -s ' ')" "$want"
	# One type: as before, plain names.
	run --separate-stderr kinf index pods -A --by app=web
	assert_success
	assert_equal "$(noage <<<"$output")" "$(kubectl_fake get pods -A -l app=web | noage)"
	# -o name and json: each object, kind-qualified names.
	run --separate-stderr kinf index pods,deploy -n default --by app=web -o name
	assert_success
	assert_equal "$output" "$(kubectl_fake get pods,deploy -n default -l app=web -o name)"
	run --separate-stderr kinf index pods,deploy -n default --by app=web -o json
	assert_success
	jq -e -s --argjson n "$(kubectl_fake get pods,deploy -n default -l app=web -o name | wc -l)" \
		'([.[].kind] | unique) == ["Deployment", "Pod"] and length == $n' <<<"$output"
	# jsonpath over every match, one List, as kubectl's.
	run --separate-stderr kinf index pods,deploy -n default --by app=web -o 'jsonpath={.items[*].kind}'
	assert_success
	assert_output "$(kubectl_fake get pods,deploy -n default -l app=web -o 'jsonpath={.items[*].kind}')"
	# Nothing anywhere: said once.
	run --separate-stderr kinf index pods,deploy -A --by app=nothing
	assert_success
	[ -z "$output" ]
	assert_equal "$stderr" "No resources found"
}

@test "index across namespaces and contexts: CONTEXT and NAMESPACE columns; --keys and --watch name resource and context" {
	run --separate-stderr kinf index pods,deploy --context admin,viewer -n default,viewer-ns --by app
	assert_success
	assert_line --index 0 --regexp '^CONTEXT +NAMESPACE +NAME +READY +STATUS '
	assert_line --regexp '^viewer +viewer-ns +pod/viewer-app-'
	assert_line --regexp '^admin +default +deployment.apps/web +3/3 '
	assert_line --regexp '^CONTEXT +NAMESPACE +NAME +READY +UP-TO-DATE '
	# --keys: the resource (and context) of each key.
	run --separate-stderr kinf index pods,deploy --context admin,viewer -n default,viewer-ns --by app --keys -o json
	assert_success
	want=$( { server_keys pods default; server_keys pods viewer-ns
		server_keys deployments default; server_keys deployments viewer-ns; } |
		sed 's/^deployments/deployments.apps/' | sed 's/^/admin /; p; s/^admin /viewer /' | sort)
	diff <(echo "$want") <(jq -r '"\(.context) \(.resource) \(.key)"' <<<"$output" | sort)
	run --separate-stderr kinf index pods,deploy -n default --by app=web --keys
	assert_success
	assert_line --index 0 --regexp '^RESOURCE +KEY$'
	assert_line --regexp '^deployments.apps +default/web$'
	# --values: counted over every informer.
	run --separate-stderr kinf index pods,deploy --context admin,viewer -n default,viewer-ns --values app -o json
	assert_success
	for app in web viewer-app; do
		n=$(for r in pods deployments; do for ns in default viewer-ns; do
			fakeapi_ctl GET "/_fake/objects?resource=$r&namespace=$ns"; done; done |
			jq -s --arg app "$app" '[.[] | select(.metadata.labels.app == $app)] | length')
		assert_line "{\"value\":\"$app\",\"count\":$((2 * n))}"
	done
	jq -e -s '[.[].count] | . == (sort | reverse)' <<<"$output"
	# --watch: each change names its informer.
	run --separate-stderr kinf index pods,deploy -n default,viewer-ns --by app=viewer-app --watch --exit-after-sync -o json
	assert_success
	jq -e -s '([.[] | "\(.type) \(.resource) \(.context) \(.key)"] | sort) ==
		["MATCHED deployments.apps admin viewer-ns/viewer-app",
		 "MATCHED pods admin viewer-ns/\(.[] | select(.resource == "pods") | .key | split("/")[1])"]' <<<"$output"
	run --separate-stderr kinf index pods,deploy -n viewer-ns --by app=viewer-app --watch --exit-after-sync
	assert_success
	assert_line '+ deployments.apps viewer-ns/viewer-app'
	# 403 in one namespace: named once, the others answered, exit 1.
	run --separate-stderr kinf index pods --context viewer -n default,kube-system --by app=web --keys
	assert_failure 1
	[[ $stderr == 'kinf: pods in namespace "kube-system": pods is forbidden: '* ]]
	[ "${#stderr_lines[@]}" -eq 1 ]
	assert_line --regexp '^pods +default/web-'
}

@test "watch deploy/a pod/b: TYPE/NAME of several types, each asked for by name; --for waits for all" {
	p=$(server_keys pods default | head -1 | sed 's|.*/||')
	run --separate-stderr kinf watch deploy/web pod/"$p" -n default -o name --exit-after-sync
	assert_success
	assert_equal "$(sort <<<"$output")" "$(printf 'deployment.apps/web\npod/%s' "$p")"
	# One name of a type: a field selector for each.
	run fakeapi_requests
	jq -e -s '[.[] | select(.verb == "list") | "\(.resource) \(.query)"] | sort ==
		["deployments fieldSelector=metadata.name%3Dweb&limit=500&resourceVersion=0",
		 "pods fieldSelector=metadata.name%3D'"$p"'&limit=500&resourceVersion=0"]' <<<"$output"
	# --for over both, as kubectl wait deploy/web pod/P.
	run --separate-stderr kinf watch deploy/web pod/"$p" -n default --for 'jsonpath={.metadata.name}' --timeout 5s
	assert_success
	assert_equal "$output" "$(kubectl_fake wait deploy/web pod/"$p" -n default --for 'jsonpath={.metadata.name}' --timeout 5s)"
	# deploy/web pod/nope: waits for the missing one, and says so.
	run --separate-stderr kinf watch deploy/web pod/nope -n default --for create --timeout 0
	assert_failure 4
	assert_equal "$stderr" 'kinf: timed out waiting for create: pod/nope: not found'
	# A type named twice (deploy, deployments) is one informer with both names.
	run --separate-stderr kinf watch deploy/web deployments/viewer-app -A -o json --exit-after-sync
	assert_success
	jq -e -s '[.[].key] | sort == ["default/web", "viewer-ns/viewer-app"]' <<<"$output"
	# A table takes one type, as with pods,deploy.
	run --separate-stderr kinf watch deploy/web pod/"$p" -n default
	assert_failure 2
	[[ $stderr == 'kinf: several resource types need -o json'* ]]
}

@test "a type only some contexts have: reported once for each that lacks it, the others watched; exit 1" {
	other_server --without-group example.com
	# kubectl sees the same: the other cluster has no widgets.
	run kubectl --context other get wd -n default
	assert_output --partial 'the server doesn'"'"'t have a resource type "wd"'
	run --separate-stderr kinf watch pods,wd --context admin,other -n default -o json --exit-after-sync
	assert_failure 1
	assert_equal "$stderr" 'kinf: widgets.example.com of context "other": the server doesn'"'"'t have a resource type "wd"'
	# (the other server's pods are its own default data)
	jq -e -s '([.[] | select(.resource == "pods") | .context] | unique) == ["admin", "other"] and
		([.[] | select(.resource == "widgets.example.com") | .context] | unique) == ["admin"]' <<<"$output"
	diff <(server_keys pods default | awk '{ print $2 }' | sort) \
		<(jq -r 'select(.context == "admin" and .resource == "pods") | .key' <<<"$output" | sort)
	# Only the context that has it was asked for it.
	run fakeapi_requests
	jq -e -s '[.[] | select(.verb == "list")] | map(.resource) | sort == ["pods", "widgets"]' <<<"$output"
	# index and deltas the same.
	run --separate-stderr kinf index pods,widgets --context other,admin -n default --by app --keys -o json
	assert_failure 1
	assert_equal "$stderr" 'kinf: widgets.example.com of context "other": the server doesn'"'"'t have a resource type "widgets"'
	jq -e -s 'any(.[]; .resource == "widgets.example.com" and .context == "admin")' <<<"$output"
	# A type no context has is an error before any list, as with one context.
	fakeapi_ctl DELETE /_fake/requests >/dev/null
	run --separate-stderr kinf watch pods,wdz --context admin,other -o json
	assert_failure 2
	assert_equal "$stderr" 'kinf: unknown resource type "wdz", did you mean "wd"?'
	run fakeapi_requests
	jq -e -s 'all(.[]; .verb == "discovery")' <<<"$output"
}

# dev may list and watch pods in default and team-* namespaces, and the
# namespaces; not pods cluster-wide.
dev_context() {
	fakeapi_ctl POST /_fake/tokens '{"token":"dev-tok","user":"dev"}' >/dev/null
	fakeapi_ctl POST /_fake/rbac '{"user":"dev","rules":[
		{"verbs":["list","watch"],"resources":["pods"],"namespaces":["default","team-a","team-b"]},
		{"verbs":["list"],"resources":["configmaps"],"namespaces":["viewer-ns"]},
		{"verbs":["list","watch"],"resources":["namespaces"]}]}' >/dev/null
	cat > "$BATS_TEST_TMPDIR/dev.kubeconfig" <<-EOF
		apiVersion: v1
		kind: Config
		clusters:
		- name: dev-fake
		  cluster:
		    server: $FAKEAPI_URL
		    certificate-authority: $FAKEAPI_DIR/ca.crt
		users:
		- name: dev
		  user:
		    token: dev-tok
		contexts:
		- name: dev
		  context:
		    cluster: dev-fake
		    user: dev
		    namespace: default
	EOF
	export KUBECONFIG="$KUBECONFIG:$BATS_TEST_TMPDIR/dev.kubeconfig"
}

@test "-A --accessible: the namespaces where the user may list and watch, asked with SelfSubjectAccessReviews" {
	dev_context
	# kubectl agrees on what dev may do.
	[ "$(kubectl --context dev auth can-i list pods -A)" = no ]
	[ "$(kubectl --context dev auth can-i watch pods -n default)" = yes ]
	run --separate-stderr kinf watch pods --context dev -A -o json --exit-after-sync
	assert_failure 1
	[[ $stderr == *'pods is forbidden: User "dev" cannot list resource "pods" in API group "" at the cluster scope'* ]]
	fakeapi_ctl DELETE /_fake/requests >/dev/null
	run --separate-stderr kinf watch pods,configmaps --context dev -A --accessible -o json --exit-after-sync
	assert_success
	[ -z "$stderr" ]
	# Pods of default (the only allowed namespace that exists); no configmaps
	# (list but not watch in viewer-ns).
	diff <(server_keys pods default | sort) <(jq -r '"\(.resource) \(.key)"' <<<"$output" | sort)
	run fakeapi_requests
	# Cluster-wide first, then each namespace, list and watch as kubectl auth can-i asks.
	jq -e -s '[.[] | select(.resource == "selfsubjectaccessreviews")] | length > 0 and
		all(.[]; .verb == "create" and .user == "dev")' <<<"$output"
	jq -e -s '[.[] | select(.verb == "list") | "\(.resource) \(.namespace)"] | sort ==
		["namespaces null", "pods default"]' <<<"$output"
	# Someone who may list everywhere: one informer over every namespace.
	fakeapi_ctl DELETE /_fake/requests >/dev/null
	run --separate-stderr kinf watch pods -A --accessible -o name --exit-after-sync
	assert_success
	n=${#lines[@]}
	run fakeapi_requests
	jq -e -s '[.[] | select(.verb == "list") | "\(.resource) \(.namespace)"] == ["pods null"]' <<<"$output"
	[ "$n" -eq "$(kubectl_fake get pods -A -o name | wc -l)" ]
	# index too, and its indexes are in every namespace's informer.
	run --separate-stderr kinf index pods --context dev -A --accessible --values app -o json
	assert_success
	n=$(fakeapi_ctl GET '/_fake/objects?resource=pods&namespace=default' |
		jq -s '[.[] | select(.metadata.labels.app == "web")] | length')
	assert_line "{\"value\":\"web\",\"count\":$n}"
}

@test "-A --accessible: a namespace created later joins, one deleted leaves" {
	dev_context
	kubectl_fake delete namespace team-a team-b --ignore-not-found >/dev/null
	"$KINF" watch pods --context dev -A --accessible -o json --watch-only -v \
		> "$EV" 2> "$ERR" 3>&- &
	WATCH_PID=$!
	wait_until grep -q 'pods in namespace "default" joins' "$ERR"
	kubectl_fake create namespace team-a >/dev/null
	kubectl_fake create namespace team-z >/dev/null
	wait_until grep -q 'pods in namespace "team-a" joins' "$ERR"
	wait_until grep -q 'may list and watch pods in namespace team-z: no' "$ERR"
	kubectl_fake run p1 -n team-a --image=nginx >/dev/null
	kubectl_fake run p2 -n team-z --image=nginx >/dev/null
	wait_until grep -q '"team-a/p1"' "$EV"
	kubectl_fake delete namespace team-a >/dev/null
	wait_until grep -q 'pods in namespace "team-a" leaves' "$ERR"
	kubectl_fake create namespace team-a >/dev/null
	wait_until eval '[ "$(grep -c '"'"'pods in namespace "team-a" joins'"'"' "$ERR")" -eq 2 ]'
	kubectl_fake run p3 -n team-a --image=nginx >/dev/null
	wait_until grep -q '"team-a/p3"' "$EV"
	kill -TERM "$WATCH_PID"
	wait "$WATCH_PID"
	WATCH_PID=
	run jq -r '"\(.type) \(.key)"' "$EV"
	assert_output - <<-EOF
		ADDED team-a/p1
		DELETED team-a/p1
		ADDED team-a/p3
	EOF
	kubectl_fake delete namespace team-a team-z >/dev/null
}

@test "list -A --accessible: the namespaces where the user may list the type, asked with SelfSubjectAccessReviews" {
	dev_context
	run --separate-stderr kinf list pods --context dev -A
	assert_failure 1
	[[ $stderr == *'pods is forbidden: User "dev" cannot list resource "pods" in API group "" at the cluster scope'* ]]
	fakeapi_ctl DELETE /_fake/requests >/dev/null
	# Pods of default (team-a and team-b do not exist); configmaps of
	# viewer-ns, where dev may list them (and not watch: a list needs no watch).
	run --separate-stderr kinf list pods,configmaps --context dev -A --accessible
	assert_success
	[ -z "$stderr" ]
	got=$output
	run fakeapi_requests
	# Cluster-wide first, then each namespace, as kubectl auth can-i asks.
	jq -e -s '[.[] | select(.resource == "selfsubjectaccessreviews")] | length > 2 and
		all(.[]; .verb == "create" and .user == "dev")' <<<"$output"
	jq -e -s '[.[] | select(.verb == "list") | "\(.resource) \(.namespace)"] | sort ==
		["configmaps viewer-ns", "namespaces null", "namespaces null", "pods default"]' <<<"$output"
	want=$(kubectl_fake get pods,configmaps -A | awk '$0 == "" || $1 == "NAMESPACE" ||
		($1 == "default" && $2 ~ /^pod\//) || ($1 == "viewer-ns" && $2 ~ /^configmap\//)' |
		noage | tr -s ' ')
	assert_equal "$(noage <<<"$got" | tr -s ' ')" "$want"
	# -o json: each namespace's objects in turn.
	run --separate-stderr kinf list pods,configmaps --context dev -A --accessible -o json
	assert_success
	diff <( { server_keys pods default; server_keys configmaps viewer-ns; } | awk '{ print $2 }') \
		<(jq -r '"\(.metadata.namespace)/\(.metadata.name)"' <<<"$output")
	# Names: missing when no namespace allowed has them, as for one -A list.
	name=$(server_keys pods default | head -1 | cut -d/ -f2)
	run --separate-stderr kinf list pods "$name" nosuch --context dev -A --accessible -o name
	assert_failure 1
	assert_output "pod/$name"
	assert_equal "$stderr" 'kinf: pods "nosuch" not found'
	# Someone who may list everywhere: one list over every namespace.
	fakeapi_ctl DELETE /_fake/requests >/dev/null
	run --separate-stderr kinf list pods -A --accessible -o name
	assert_success
	n=${#lines[@]}
	run fakeapi_requests
	jq -e -s '[.[] | select(.verb == "list") | "\(.resource) \(.namespace)"] == ["pods null"]' <<<"$output"
	[ "$n" -eq "$(kubectl_fake get pods -A -o name | wc -l)" ]
	# Nowhere: said, exit 1.
	fakeapi_ctl POST /_fake/tokens '{"token":"nopods-tok","user":"nopods"}' >/dev/null
	fakeapi_ctl POST /_fake/rbac '{"user":"nopods","rules":[
		{"verbs":["list"],"resources":["namespaces"]}]}' >/dev/null
	run --separate-stderr kinf list pods -A --accessible --token nopods-tok
	assert_failure 1
	[ -z "$output" ]
	assert_equal "$stderr" 'kinf: --accessible: no namespace where pods may be listed'
}

@test "bad input: --accessible without -A, or with --from; namespaces it may not list" {
	fakeapi_ctl POST /_fake/tokens '{"token":"nons-tok","user":"nons"}' >/dev/null
	fakeapi_ctl POST /_fake/rbac '{"user":"nons","rules":[
		{"verbs":["list","watch"],"resources":["pods"],"namespaces":["default"]}]}' >/dev/null
	run --separate-stderr kinf watch pods -A --accessible --token nons-tok -o json --exit-after-sync
	assert_failure 1
	assert_equal "$stderr" 'kinf: --accessible: namespaces: namespaces is forbidden: User "nons" cannot list resource "namespaces" in API group "" at the cluster scope (403 Forbidden)'
	run --separate-stderr kinf watch pods --accessible -o json
	assert_failure 2
	[[ $stderr == 'kinf: --accessible goes with -A (and a server)'* ]]
	run --separate-stderr kinf watch -A --accessible --from /dev/null
	assert_failure 2
	[[ $stderr == 'kinf: --accessible goes with -A (and a server)'* ]]
	# list: the same, before any request.
	fakeapi_ctl DELETE /_fake/requests >/dev/null
	run --separate-stderr kinf list pods --accessible
	assert_failure 2
	[[ $stderr == 'kinf: --accessible goes with -A (and a server)'* ]]
	run fakeapi_requests
	[ -z "$output" ]
	run --separate-stderr kinf list pods -A --accessible --token nons-tok
	assert_failure 1
	assert_equal "$stderr" 'kinf: --accessible: namespaces: namespaces is forbidden: User "nons" cannot list resource "namespaces" in API group "" at the cluster scope (403 Forbidden)'
}
