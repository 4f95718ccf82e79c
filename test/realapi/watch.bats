#!/usr/bin/env bats
# kinf watch, deltas, index and --for against the real kube-apiserver:
# events as kubectl sees them, the informer's cache against kubectl's list,
# bookmarks, the watch-list fallback of a 1.28 server (WatchList gate off),
# the indexes against server-side selectors.

load helpers

setup_file() {
	real_workload
}

teardown_file() {
	real_ns_delete
}

@test "the informer's cache is kubectl's list, for every type at once" {
	run kinf watch pods,deployments,configmaps,widgets,gadgets -n "$NS" --exit-after-sync -o name
	assert_success
	diff -u <(kreal get pods,deployments,configmaps,widgets,gadgets -n "$NS" -o name | sort) \
		<(sort <<<"$output")
	# The cache's objects are the server's, field for field.
	kinf watch pods,gadgets -n "$NS" --exit-after-sync -o name --dump-on-exit "$BATS_TEST_TMPDIR/dump" >/dev/null
	diff -u <(kreal get pods,gadgets -n "$NS" -o json |
			jq -S -c '.items[] | del(.apiVersion, .kind, .metadata.managedFields)' | sort) \
		<(jq -S -c 'del(.apiVersion, .kind, .metadata.managedFields)' "$BATS_TEST_TMPDIR/dump" | sort)
}

@test "events: kinf watch sees what kubectl get -w sees, with the same resourceVersions" {
	real_bg "$BATS_TEST_TMPDIR/kinf" "$KINF" watch pods -n "$NS" -o json --watch-only
	local kpid=$BG_PID
	real_bg "$BATS_TEST_TMPDIR/kubectl" kubectl --kubeconfig "$REAL_KUBECONFIG" get pods -n "$NS" \
		-w --output-watch-events -o json --watch-only
	local cpid=$BG_PID
	sleep 1.5	# both watching (kubectl prints nothing until an event)
	kreal run ev-1 -n "$NS" --image=registry.example.com/x:1 --restart=Never >/dev/null
	kreal label pod ev-1 -n "$NS" stage=two >/dev/null
	kreal delete pod ev-1 -n "$NS" --wait=false >/dev/null
	wait_until at_least 1 DELETED "$BATS_TEST_TMPDIR/kinf"
	wait_until at_least 1 DELETED "$BATS_TEST_TMPDIR/kubectl"
	kill "$kpid" "$cpid"
	wait "$kpid" "$cpid" || true
	# kubectl: {"type","object"}; kinf: ADDED, UPDATED, DELETED with the key.
	diff -u <(jq -r '[.type, .object.metadata.name, .object.metadata.resourceVersion] | join(" ")' \
			"$BATS_TEST_TMPDIR/kubectl" | sed 's/^MODIFIED/UPDATED/') \
		<(jq -r '[.type, .object.metadata.name, .object.metadata.resourceVersion] | join(" ")' \
			"$BATS_TEST_TMPDIR/kinf")
	run jq -r .type "$BATS_TEST_TMPDIR/kinf"
	assert_line --index 0 ADDED
	assert_line --index 1 UPDATED
	assert_line --index -1 DELETED
}

@test "deltas: one Sync per object after the list, keys and resourceVersions as the server's" {
	run kinf deltas pods -n "$NS" --exit-after-sync -o json
	assert_success
	diff -u <(kreal get pods -n "$NS" -o json | jq -r '.items[] | "\(.metadata.namespace)/\(.metadata.name) \(.metadata.resourceVersion)"' | sort) \
		<(jq -r '"\(.key) \(.resourceVersion)"' <<<"$output" | sort)
	run jq -r .type <<<"$output"
	refute_output --partial Added
}

@test "index: --by and --values answer what kubectl's selectors answer, pushed down or not" {
	local by sel
	for by in 'app=web:-l app=web' 'tier:-l tier' 'node=node-a:--field-selector spec.nodeName=node-a' \
		'phase=Pending:--field-selector status.phase=Pending' "namespace=$NS:--field-selector metadata.namespace=$NS"; do
		sel=${by#*:}
		by=${by%%:*}
		# shellcheck disable=SC2086
		diff -u <(kreal get pods -n "$NS" $sel -o name) <(kinf index pods -n "$NS" --by "$by" -o name)
		diff -u <(kinf index pods -n "$NS" --by "$by" -o name --no-pushdown) \
			<(kinf index pods -n "$NS" --by "$by" -o name)
	done
	run kinf index pods -n "$NS" --values app -o json
	assert_success
	diff -u <(kreal get pods -n "$NS" -o json | jq -r '[.items[].metadata.labels.app] | group_by(.) | map("\(.[0]) \(length)") | .[]' | sort) \
		<(jq -r '"\(.value) \(.count)"' <<<"$output" | sort)
	same_output kinf index pods,deploy -n "$NS" --by app=web -- kreal get pods,deploy -n "$NS" -l app=web
}

@test "watch and index tables of a custom resource show its printer columns, as kubectl get" {
	same_output kinf index gadgets -n "$NS" --by app=web -- kreal get gadgets -n "$NS" -l app=web
	same_output kinf index gadgets -n "$NS" --by app=web -o wide -- \
		kreal get gadgets -n "$NS" -l app=web -o wide
	# watch: its EVENT column first, then kubectl get's
	run kinf watch gadgets -n "$NS" --exit-after-sync --timestamps none
	assert_success
	local want
	want=$(kreal get gadgets -n "$NS" | head -1 | tr -s ' ')
	assert_equal "$(head -1 <<<"$output" | tr -s ' ')" "EVENT $want"
}

@test "--for: conditions, jsonpath, delete and rollout, as the server's objects change" {
	# No kubelet: the status is written by hand through the status subresource.
	real_bg "$BATS_TEST_TMPDIR/ready" "$KINF" watch pod/web-2 -n "$NS" --for condition=Ready --timeout 30s
	local pid=$BG_PID
	sleep 0.5
	kreal patch pod web-2 -n "$NS" --subresource=status --type=merge \
		-p '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null
	wait "$pid"
	run cat "$BATS_TEST_TMPDIR/ready"
	assert_output 'pod/web-2 condition met'
	run kreal wait --for condition=Ready pod/web-2 -n "$NS" --timeout 5s
	assert_output 'pod/web-2 condition met'
	run kinf watch pods -n "$NS" -l app=web --for 'jsonpath={.status.phase}=Pending' --timeout 10s
	assert_success
	assert_output $'pod/web-1 condition met\npod/web-2 condition met'
	# A condition that never comes: status 4 and what was still not true.
	run --separate-stderr kinf watch pod/db-1 -n "$NS" --for condition=Ready --timeout 1s
	assert_failure 4
	[[ $stderr == *'timed out after 1s waiting for condition=Ready: pod/db-1'* ]]
	# rollout: no controller runs, so the deployment's status is written as
	# the deployment controller would once its pods are ready.
	real_bg "$BATS_TEST_TMPDIR/rollout" "$KINF" watch deploy/web -n "$NS" --for rollout --timeout 30s
	pid=$BG_PID
	sleep 0.5
	local gen
	gen=$(kreal get deploy web -n "$NS" -o jsonpath='{.metadata.generation}')
	kreal patch deploy web -n "$NS" --subresource=status --type=merge -p '{"status":{"observedGeneration":'"$gen"',"replicas":2,"updatedReplicas":2,"readyReplicas":2,"availableReplicas":2,"conditions":[{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"},{"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable"}]}}' >/dev/null
	wait "$pid"
	run cat "$BATS_TEST_TMPDIR/rollout"
	assert_output 'deployment.apps/web condition met'
	run kreal rollout status deploy/web -n "$NS" --timeout 5s
	assert_success
	# delete
	kreal run doomed -n "$NS" --image=registry.example.com/x:1 --restart=Never >/dev/null
	real_bg "$BATS_TEST_TMPDIR/delete" "$KINF" watch pod/doomed -n "$NS" --for delete --timeout 30s
	pid=$BG_PID
	sleep 0.5
	kreal delete pod doomed -n "$NS" --wait=false >/dev/null
	wait "$pid"
	run cat "$BATS_TEST_TMPDIR/delete"
	assert_output 'pod/doomed condition met'
}

@test "bookmarks: the server's, before each watch's deadline, once the resource changed" {
	# The apiserver sends a bookmark 2 s before a watch's timeoutSeconds
	# (and every minute), carrying the last change to the resource it
	# saw (any namespace), only to watches that began before that change:
	# a resource quiet since the watch began gets none.
	local rv
	rv=$(real_curl "/api/v1/namespaces/$NS/configmaps" | jq -r .metadata.resourceVersion)
	# Quiet (unless someone changes a configmap meanwhile): none, or only
	# bookmarks after where the watch began.
	run real_curl -m 10 "/api/v1/namespaces/$NS/configmaps?watch=1&resourceVersion=$rv&allowWatchBookmarks=true&timeoutSeconds=3"
	[ -z "$output" ] || jq -e --argjson rv "$rv" -s \
		'all(.[]; .type == "BOOKMARK" and (.object.metadata.resourceVersion | tonumber) > $rv)' <<<"$output"
	real_bg "$BATS_TEST_TMPDIR/bm" real_curl -m 10 \
		"/api/v1/namespaces/$NS/configmaps?watch=1&resourceVersion=$rv&allowWatchBookmarks=true&timeoutSeconds=3"
	local pid=$BG_PID
	sleep 0.5
	kreal create configmap "bm-$RANDOM" -n default >/dev/null	# another namespace
	wait "$pid"
	run cat "$BATS_TEST_TMPDIR/bm"
	assert_line --index 0 --regexp '^\{"type":"BOOKMARK","object":\{"kind":"ConfigMap","apiVersion":"v1","metadata":\{"resourceVersion":"[0-9]+","creationTimestamp":null\}\}\}$'
	jq -e --argjson rv "$rv" -s \
		'all(.[]; .type == "BOOKMARK" and (.object.metadata.resourceVersion | tonumber) > $rv)' <<<"$output"
	# kinf: watches of 4 s, a bookmark in each once configmaps changed.
	real_bg "$BATS_TEST_TMPDIR/stats" "$KINF" watch configmaps -n "$NS" --watch-timeout 4s \
		--timeout 9s --stats -o name
	pid=$BG_PID
	sleep 0.5
	kreal create configmap "bm-$RANDOM" -n default >/dev/null
	sleep 4.2	# the second watch began
	kreal create configmap "bm-$RANDOM" -n default >/dev/null
	wait "$pid"
	run cat "$BATS_TEST_TMPDIR/stats"
	[[ $output =~ bookmarks\ ([0-9]+) ]] && ((BASH_REMATCH[1] >= 2))
	[[ $output =~ watches\ ([0-9]+) ]] && ((BASH_REMATCH[1] >= 2))
	assert_line 'relists 0'
	assert_line 'errors 0'
}

@test "watch-list: the 1.28 server refuses sendInitialEvents (gate off); kinf falls back to a list" {
	run real_curl -w '\n%{http_code}' "/api/v1/namespaces/$NS/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
	assert_line --index 0 --partial 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'
	assert_line --index 1 422
	run --separate-stderr kinf watch pods,gadgets -n "$NS" --watch-list --exit-after-sync --stats -o name
	assert_success
	diff -u <(kreal get pods,gadgets -n "$NS" -o name | sort) <(sort <<<"$output")
	[[ $stderr == *'watch_list_fallbacks 2'* ]]
	# Then it watches as after any list: a change arrives.
	real_bg "$BATS_TEST_TMPDIR/wl" "$KINF" watch pods -n "$NS" --watch-list --watch-only -o name \
		--count 1 --timeout 20s
	local pid=$BG_PID
	sleep 1
	kreal label pod db-1 -n "$NS" wl=1 >/dev/null
	wait "$pid"
	run cat "$BATS_TEST_TMPDIR/wl"
	assert_output 'pod/db-1'
}

@test "Warning headers of a deprecated version reach stderr once for a whole watch" {
	run --separate-stderr kinf watch gadgets.v1beta1.example.com -n "$NS" -o name --timeout 3s --watch-timeout 1s
	assert_success
	[ "$stderr" = 'Warning: example.com/v1beta1 Gadget is "deprecated"; use example.com/v1' ]
}
