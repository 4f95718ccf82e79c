#!/usr/bin/env bats
# kinf index: every --by form, --keys, --values, --watch, errors; answers
# checked against kubectl and jq over the server's objects.
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	fakeapi_start --pods 80 --seed 11
	export STREAMS="$KINF_SOURCE_ROOT/test/fixtures/streams"
	# Every pod as JSON, for computing expected answers with jq.
	kubectl_fake get pods -A -o json | jq -c '.items[]' > "$BATS_FILE_TMPDIR/pods.json"
	export PODS="$BATS_FILE_TMPDIR/pods.json"
}

teardown_file() {
	fakeapi_stop
}

setup() {
	require_kubectl
	bats_load_library bats-support
	bats_load_library bats-assert
}

keys_where() {	# keys_where JQ-FILTER
	jq -r "select($1) | .metadata.namespace + \"/\" + .metadata.name" "$PODS" | sort
}

@test "--by label agrees with kubectl get -l" {
	run "$KINF" index pods -A --by app=web -o name
	assert_success
	diff <(printf '%s\n' "$output") <(kubectl_fake get pods -A -l app=web -o name | sort)
	[ -n "$output" ]
}

@test "--by label key alone matches every object with the label" {
	run "$KINF" index pods -A --by tier --keys
	assert_success
	diff <(printf '%s\n' "$output") <(keys_where '.metadata.labels.tier != null')
}

@test "--by namespace, node, phase, owner" {
	run "$KINF" index pods -A --by namespace=kube-system --keys
	assert_success
	diff <(printf '%s\n' "$output") <(keys_where '.metadata.namespace == "kube-system"')
	run "$KINF" index pods -A --by node=node-1 --keys
	diff <(printf '%s\n' "$output") <(keys_where '.spec.nodeName == "node-1"')
	run "$KINF" index pods -A --by phase=Running --keys
	diff <(printf '%s\n' "$output") <(keys_where '.status.phase == "Running"')
	owner=$(jq -r 'select(.metadata.ownerReferences != null) | .metadata.ownerReferences[0] | .kind + "/" + .name' "$PODS" | head -1)
	run "$KINF" index pods -A --by "owner=$owner" --keys
	assert_success
	[ -n "$output" ]
	diff <(printf '%s\n' "$output") <(keys_where "any(.metadata.ownerReferences[]?; .kind + \"/\" + .name == \"$owner\")")
}

@test "--by field path with [*] and a named --index" {
	image=$(jq -r '.spec.containers[0].image' "$PODS" | head -1)
	run "$KINF" index pods -A --by "field:spec.containers[*].image=$image" --keys
	assert_success
	diff <(printf '%s\n' "$output") <(keys_where "any(.spec.containers[]; .image == \"$image\")")
	run "$KINF" index pods -A --index sa=spec.serviceAccountName --by sa=default --keys
	assert_success
	diff <(printf '%s\n' "$output") <(keys_where '.spec.serviceAccountName == "default"')
}

@test "several --by are ANDed" {
	run "$KINF" index pods -A --by node=node-0 --by phase=Running --by app --keys
	assert_success
	diff <(printf '%s\n' "$output") \
		<(keys_where '.spec.nodeName == "node-0" and .status.phase == "Running" and .metadata.labels.app != null')
}

@test "output formats: table, json, yaml, name" {
	run "$KINF" index pods -A --by app=web
	assert_success
	[[ "${lines[0]}" == NAMESPACE* ]]
	run "$KINF" index pods -A --by app=web -o json
	assert_success
	printf '%s\n' "$output" | jq -e -s 'all(.kind == "Pod" and .metadata.labels.app == "web")'
	run "$KINF" index pods -A --by app=web -o yaml
	assert_success
	[[ "$output" == *"kind: Pod"* ]]
}

@test "--values lists values with counts, sorted by count then value" {
	run "$KINF" index pods -A --values node -o json
	assert_success
	diff <(printf '%s\n' "$output" | jq -c .) \
		<(jq -s -c 'map(.spec.nodeName) | map(select(. != null)) | group_by(.) |
			map({value: .[0], count: length}) | sort_by(-.count, .value)[]' "$PODS")
	run "$KINF" index pods -A --values app
	assert_success
	[[ "${lines[0]}" == VALUE* ]]
	# Ties (8 pods in each pod-ns-*) by value, in the table too.
	run "$KINF" index pods -A --values namespace --no-headers
	assert_success
	diff <(printf '%s\n' "$output" | awk '{print $1, $2}') \
		<(jq -s -r 'group_by(.metadata.namespace) | map({value: .[0].metadata.namespace,
			count: length}) | sort_by(-.count, .value)[] | "\(.value) \(.count)"' "$PODS")
}

@test "--watch prints membership changes as labels change and pods go" {
	kubectl_fake apply -f - >/dev/null <<-EOF
	{"apiVersion":"v1","kind":"Pod","metadata":{"name":"ix-1","namespace":"default","labels":{"team":"blue"}},
	 "spec":{"containers":[{"name":"c","image":"nginx"}]}}
	EOF
	"$KINF" index pods -n default --by team=blue --watch > "$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	for _ in $(seq 1 100); do grep -q "+ default/ix-1" "$BATS_TEST_TMPDIR/out" && break; sleep 0.1; done
	kubectl_fake label pod ix-1 -n default --overwrite team=red >/dev/null
	kubectl_fake label pod ix-1 -n default --overwrite team=blue >/dev/null
	kubectl_fake annotate pod ix-1 -n default note=x >/dev/null
	kubectl_fake delete pod ix-1 -n default --wait=false >/dev/null
	for _ in $(seq 1 100); do [ "$(grep -c ix-1 "$BATS_TEST_TMPDIR/out")" -ge 5 ] && break; sleep 0.1; done
	kill -TERM "$pid"
	wait "$pid"
	run cat "$BATS_TEST_TMPDIR/out"
	assert_output $'+ default/ix-1\n- default/ix-1\n+ default/ix-1\n~ default/ix-1\n- default/ix-1'
}

@test "--from works as a filter" {
	run --separate-stderr "$KINF" index --from "$STREAMS/kubectl-events.json" --by app=web --keys
	assert_success
	assert_output "default/db-1"
	run --separate-stderr bash -c "cat '$STREAMS/relist-tombstones.json' | '$KINF' index --from - --values node"
	assert_success
	[[ "$output" == *"n2"* ]]
}

@test "an unknown index, a malformed --by or path: exit status 2" {
	run --separate-stderr "$KINF" index pods --by 'bad key!=x'
	assert_failure 2
	[[ "$stderr" == *"is not an index"* ]]
	run --separate-stderr "$KINF" index pods --by 'field:spec..x=1'
	assert_failure 2
	[[ "$stderr" == *"invalid field path"* ]]
	run --separate-stderr "$KINF" index pods --by '=x'
	assert_failure 2
	run --separate-stderr "$KINF" index pods --index 'node=spec.x' --by node=a
	assert_failure 2
	[[ "$stderr" == *"is a built-in index"* ]]
	run --separate-stderr "$KINF" index pods
	assert_failure 2
	[[ "$stderr" == *"index needs --by"* ]]
}

@test "-o jsonpath and custom-columns over the matches, as kubectl -l prints them" {
	diff <("$KINF" index pods -A --by app=web -o 'jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}') \
		<(kubectl_fake get pods -A -l app=web -o 'jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}')
	diff <("$KINF" index pods -A --by app=web -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName) \
		<(kubectl_fake get pods -A -l app=web -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName)
}

# The selectors of the last list request the server recorded.
last_list_selectors() {
	fakeapi_requests | jq -r -s '[.[] | select(.verb == "list")] | last | .query' |
		tr '&' '\n' | grep -E '^(labelSelector|fieldSelector)=' |
		python3 -c 'import sys, urllib.parse; [print(urllib.parse.unquote(l.strip())) for l in sys.stdin]'
}

@test "a one-shot --by is pushed down as selectors, and answers as without" {
	app=$(jq -r '.metadata.labels.app // empty' "$PODS" | sort | uniq -c | sort -n | tail -1 | awk '{print $2}')
	while IFS='|' read -r by labels fields; do
		# shellcheck disable=SC2086
		run --separate-stderr "$KINF" index pods -A $by -o name
		assert_success
		pushed=$output
		[ "$(last_list_selectors)" = "$(printf '%s\n' ${labels:+"labelSelector=$labels"} \
			${fields:+"fieldSelector=$fields"})" ] || { echo "$by: $(last_list_selectors)" >&2; false; }
		# shellcheck disable=SC2086
		run --separate-stderr "$KINF" index pods -A $by -o name --no-pushdown
		assert_success
		[ "$output" = "$pushed" ]
		[ -z "$(last_list_selectors)" ]
	done <<-EOF
	--by app=$app|app=$app|
	--by tier|tier|
	--by app=$app --by node=node-1 --by phase=Running|app=$app|spec.nodeName=node-1,status.phase=Running
	--by namespace=pod-ns-3 --by phase=Pending||metadata.namespace=pod-ns-3,status.phase=Pending
	--by namespace=pod-ns-3||metadata.namespace=pod-ns-3
	--by owner=ReplicaSet/x --by field:spec.nodeName=node-0||
	EOF
	# The answer is kubectl's for the same selectors.
	diff <("$KINF" index pods -A --by "app=$app" --by node=node-1 -o name | sort) \
		<(kubectl_fake get pods -A -l "app=$app" --field-selector spec.nodeName=node-1 -o name | sort)
	# -l and --field-selector are kept, ANDed with what is pushed down.
	run --separate-stderr "$KINF" index pods -A -l tier --field-selector spec.restartPolicy=Always --by "app=$app"
	assert_success
	[ "$(last_list_selectors)" = "$(printf '%s\n' "labelSelector=tier,app=$app" \
		"fieldSelector=spec.restartPolicy=Always")" ]
}

@test "pushdown only where the kind has the field selector; never with --watch" {
	run --separate-stderr "$KINF" index deploy -A --by node=node-0 --by namespace=default -o name
	assert_success
	[ "$(last_list_selectors)" = "fieldSelector=metadata.namespace=default" ]
	run --separate-stderr "$KINF" index ns --by phase=Active -o name
	assert_success
	[ "$(last_list_selectors)" = "fieldSelector=status.phase=Active" ]
	diff <(printf '%s\n' "$output") <(kubectl_fake get ns -o name)
	run --separate-stderr "$KINF" index nodes --by phase=x --keys
	assert_success
	[ -z "$(last_list_selectors)" ]
	run --separate-stderr "$KINF" index pods -A --by app=web --watch --timeout 1s
	assert_success
	[ -z "$(last_list_selectors)" ]
}
