#!/usr/bin/env bats
# Through a restart of the real kube-apiserver (down.sh --keep-etcd, up.sh):
# a watch resumes, meets the 410 of a new watch cache, relists; a pod
# deleted in etcd while the apiserver was down comes out as a tombstone
# (DELETED, final state unknown). kinf serve rides the restart for its
# clients. These stop the server: nothing else may use it meanwhile.

load helpers

setup_file() {
	real_workload
}

teardown_file() {
	real_serve_stop
	real_up || true
	real_ns_delete
}

# etcd_delete_pod NAME: the pod removed behind the apiserver's back.
etcd_delete_pod() {
	real_etcdctl del "/registry/pods/$NS/$1" >/dev/null
}

@test "watch and deltas: resume, 410, relist; a pod deleted in etcd while down is a tombstone" {
	local rv
	rv=$(real_curl "/api/v1/namespaces/$NS/pods" | jq -r .metadata.resourceVersion)
	real_bg "$BATS_TEST_TMPDIR/watch" "$KINF" watch pods -n "$NS" -o json --stats -v=1 --no-resync-events
	local wpid=$BG_PID
	real_bg "$BATS_TEST_TMPDIR/deltas" "$KINF" deltas pods -n "$NS" -o json --stats
	local dpid=$BG_PID
	wait_until at_least 3 '"ADDED"' "$BATS_TEST_TMPDIR/watch"
	wait_until at_least 3 '"Sync"' "$BATS_TEST_TMPDIR/deltas"
	real_restart etcd_delete_pod web-2
	kreal run after-1 -n "$NS" --image=registry.example.com/x:1 --restart=Never >/dev/null
	wait_for 120 grep -q '"after-1"' "$BATS_TEST_TMPDIR/watch"
	wait_for 60 grep -q '"Added"' "$BATS_TEST_TMPDIR/deltas"
	kill -TERM "$wpid" "$dpid"
	wait "$wpid" "$dpid"
	# The watch: web-2 DELETED with its final state unknown, after-1 ADDED,
	# nothing else (unchanged objects relisted are resyncs, left out).
	run bash -c "grep '^{' '$BATS_TEST_TMPDIR/watch' |
		jq -r '[.type, .object.metadata.name, (.finalStateUnknown // false)] | join(\" \")'"
	assert_output $'ADDED db-1 false\nADDED web-1 false\nADDED web-2 false\nDELETED web-2 true\nADDED after-1 false'
	run cat "$BATS_TEST_TMPDIR/watch"
	assert_line --regexp "too old resource version: [0-9]+ \\([0-9]+\\); relisting"
	assert_line 'expired 1'
	assert_line 'relists 1'
	assert_line --regexp '^backoffs [1-9]'
	# The deltas: a Deleted tombstone for web-2, Sync for the others.
	run bash -c "grep '^{' '$BATS_TEST_TMPDIR/deltas' | jq -r '[.type, .key, .finalStateUnknown] | join(\" \")'"
	assert_line "Deleted $NS/web-2 true"
	assert_line "Added $NS/after-1 false"
	[ "$(grep -c "^Sync $NS/db-1 " <<<"$output")" -eq 2 ]
	# The server's 410 for the old resourceVersion: an in-stream ERROR, as
	# the test server's (test/cli/fakeapi.bats, compact).
	run real_curl -m 5 "/api/v1/namespaces/$NS/pods?watch=1&resourceVersion=$rv"
	assert_output --regexp '^\{"type":"ERROR","object":\{"kind":"Status","apiVersion":"v1","metadata":\{\},"status":"Failure","message":"too old resource version: [0-9]+ \([0-9]+\)","reason":"Expired","code":410\}\}$'
}

@test "serve through a restart: its clients see one clean DELETED and no relist; kubectl reads the cache meanwhile" {
	real_objects
	real_serve_start pods -n "$NS"
	real_bg "$BATS_TEST_TMPDIR/client" "$KINF" watch pods -n "$NS" -o json --stats --server "unix:$SERVE_SOCK"
	local cpid=$BG_PID
	real_bg "$BATS_TEST_TMPDIR/kubectl" kubectl --kubeconfig "$SERVE_KUBECONFIG" get pods -n "$NS" \
		-w --output-watch-events -o json --watch-only
	local kpid=$BG_PID
	wait_until grep -q '"web-1"' "$BATS_TEST_TMPDIR/client"
	sleep 1
	"$REALAPI_DIR/down.sh" --keep-etcd >/dev/null
	etcd_delete_pod db-1
	# The upstream is away: kubectl through serve reads the last state,
	# with a Warning saying since when.
	wait_for 60 bash -c "curl -s --unix-socket '$SERVE_SOCK' http://kinf/readyz | grep -qv '^ok\$'"
	run --separate-stderr kserve get pods -n "$NS" -o name
	assert_success
	assert_line pod/db-1
	[[ $stderr == Warning:* ]]
	real_up
	wait_for 120 grep -q '"DELETED"' "$BATS_TEST_TMPDIR/client"
	wait_for 30 grep -q '"DELETED"' "$BATS_TEST_TMPDIR/kubectl"
	kill -TERM "$cpid" "$kpid"
	wait "$cpid" || true
	run bash -c "grep '^{' '$BATS_TEST_TMPDIR/client' |
		jq -r '[.type, .object.metadata.name, (.finalStateUnknown // false)] | join(\" \")'"
	assert_line 'DELETED db-1 false'
	refute_line --partial 'true'
	run cat "$BATS_TEST_TMPDIR/client"
	assert_line 'relists 0'
	assert_line 'expired 0'
	run bash -c "grep '^{' '$BATS_TEST_TMPDIR/kubectl' | jq -r '[.type, .object.metadata.name] | join(\" \")'"
	assert_output 'DELETED db-1'
	# Straight, kubectl now agrees.
	same_output kserve get pods -n "$NS" -- kreal get pods -n "$NS"
}
