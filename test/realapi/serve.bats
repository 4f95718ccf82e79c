#!/usr/bin/env bats
# kinf serve in front of the real kube-apiserver: kubectl through serve
# against kubectl straight to the server (the same stdout, stderr and exit
# status, server URLs aside), kinf's own commands through serve against
# kinf straight; what issue 22 (serve as a drop-in) asks that serve does
# not yet answer is checked when serve answers it.

load helpers

setup_file() {
	real_workload
	real_serve_start pods,deployments,configmaps,widgets,gadgets -n "$NS"
}

teardown_file() {
	real_serve_stop
	real_ns_delete
}

# through_serve KUBECTL-ARGS...: kubectl through serve and straight agree.
through_serve() {
	same_output kserve "$@" -- kreal "$@"
}

@test "kubectl get through serve prints what it prints straight, in every output" {
	local o t
	for t in pods deployments configmaps widgets pods,deploy; do
		for o in '' wide name json yaml; do
			through_serve get "$t" -n "$NS" ${o:+-o $o}
		done
	done
	through_serve get pods -n "$NS" -l app=web
	through_serve get pods -n "$NS" -l 'app in (web,db),tier!=front'
	through_serve get pods -n "$NS" --field-selector spec.nodeName=node-a
	through_serve get pods -n "$NS" --field-selector status.phase=Pending,metadata.name=db-1
	through_serve get pod web-1 -n "$NS" -o yaml
	through_serve get pod web-1 db-1 -n "$NS" -o wide
	through_serve get deploy/web pod/web-2 -n "$NS"
	through_serve get pods -n "$NS" --chunk-size 1
	through_serve get pods -n "$NS" --sort-by .metadata.name -o name
	through_serve get pods -n "$NS" -o 'jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}'
	through_serve get pods -n "$NS" -o custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[0].image
	through_serve get widgets -n "$NS" -o wide --show-labels
}

@test "kubectl get -w through serve sees the same events as straight" {
	real_bg "$BATS_TEST_TMPDIR/serve.w" kubectl --kubeconfig "$SERVE_KUBECONFIG" get pods -n "$NS" \
		-w --output-watch-events -o json --watch-only
	local spid=$BG_PID
	real_bg "$BATS_TEST_TMPDIR/real.w" kubectl --kubeconfig "$REAL_KUBECONFIG" get pods -n "$NS" \
		-w --output-watch-events -o json --watch-only
	local rpid=$BG_PID
	sleep 1.5
	kreal label pod db-1 -n "$NS" through=serve >/dev/null
	kreal run w-1 -n "$NS" --image=registry.example.com/x:1 --restart=Never >/dev/null
	kreal delete pod w-1 -n "$NS" --wait=false >/dev/null
	wait_until at_least 1 '"DELETED"' "$BATS_TEST_TMPDIR/serve.w"
	wait_until at_least 1 '"DELETED"' "$BATS_TEST_TMPDIR/real.w"
	kill "$spid" "$rpid"
	diff -u <(jq -c . "$BATS_TEST_TMPDIR/real.w") <(jq -c . "$BATS_TEST_TMPDIR/serve.w")
}

@test "kinf through serve prints what kinf prints straight" {
	local args
	for args in "list pods" "list pods -o wide" "list pods -o json" "list pods,deploy,cm" \
		"list pods -l app=web -o name" "list widgets -o wide" "index pods --values app" \
		"index pods --by app=web -o name" "watch pods --exit-after-sync -o name"; do
		# shellcheck disable=SC2086
		same_output kinf $args -n "$NS" --server "unix:$SERVE_SOCK" -- kinf $args -n "$NS"
	done
}

@test "writes through serve are refused with 405, reads of what it does not cache with 404" {
	run --separate-stderr kserve delete pod web-1 -n "$NS"
	assert_failure
	[[ $stderr == *'(MethodNotAllowed)'* ]]
	kreal get pod web-1 -n "$NS" >/dev/null
	run --separate-stderr kserve get secrets -n "$NS"
	assert_failure
}

@test "kubectl's follow-ups through serve (issue 22): version, NotFound wording, describe" {
	local v
	v=$(curl -s --unix-socket "$SERVE_SOCK" http://kinf/version | jq -r .gitVersion 2>/dev/null)
	[[ $v == v1.28.* ]] ||
		skip "serve answers /version with \"$v\", not the upstream's: issue 22 (not in this build)"
	through_serve version
	through_serve get pod nope -n "$NS"
	through_serve get pods,deploy nope -n "$NS"
}

@test "a custom resource's printer columns through serve, as straight" {
	through_serve get gadgets -n "$NS"
	through_serve get gadgets -n "$NS" -o wide
	through_serve get gadgets,widgets -n "$NS" -o wide
}
