#!/usr/bin/env bats
# kinf deltas: golden files from recorded streams (--from), then scenarios
# against the test API server.
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	export STREAMS="$KINF_SOURCE_ROOT/test/fixtures/streams"
	fakeapi_start
}

teardown_file() {
	fakeapi_stop
}

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
}

golden() {
	local name=$1 want=$2; shift 2
	run --separate-stderr "$KINF" deltas --from "$STREAMS/$name.json" "$@"
	assert_success
	diff -u "$STREAMS/$want" <(printf '%s\n' "$output")
}

@test "golden: relist with tombstones for vanished keys (table)" {
	golden relist-tombstones relist-tombstones.deltas.txt
}

@test "golden: relist with tombstones, --emit-replaced -o json" {
	golden relist-tombstones relist-tombstones.deltas-replaced.json --emit-replaced -o json
}

@test "golden: kubectl --output-watch-events stream (pretty, concatenated)" {
	golden kubectl-events kubectl-events.deltas.txt
}

@test "deltas --from - reads standard input" {
	run --separate-stderr "$KINF" deltas --from - -o json < "$STREAMS/relist-tombstones.json"
	assert_success
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 7 ]
	printf '%s\n' "$output" | jq -e -s 'map(.type) == ["Sync","Deleted","Sync","Updated","Sync","Added","Deleted"]'
}

@test "deltas --from a pipe that stays open ends with --count" {
	run --separate-stderr bash -c "(cat '$STREAMS/kubectl-events.json'; sleep 30) | timeout 20 '$KINF' deltas --from - --count 2 -o json"
	assert_success
	[ "$(printf '%s\n' "$output" | wc -l)" -ge 2 ]
}

@test "deltas --from with a truncated stream fails with the event number" {
	head -c 300 "$STREAMS/kubectl-events.json" > "$BATS_TEST_TMPDIR/cut.json"
	run --separate-stderr "$KINF" deltas --from "$BATS_TEST_TMPDIR/cut.json"
	assert_failure 1
	[[ "$stderr" == *"event 1: truncated at end of input"* ]]
}

@test "deltas --from a missing file is a usage error naming it" {
	run --separate-stderr "$KINF" deltas --from /nonexistent/x.json
	assert_failure 2
	[[ "$stderr" == "kinf: --from /nonexistent/x.json: No such file or directory" ]]
}

@test "deltas rejects -o yaml" {
	run --separate-stderr "$KINF" deltas --from - -o yaml < /dev/null
	assert_failure 2
	[[ "$stderr" == *"kinf deltas prints table or json, not \"yaml\""* ]]
}

@test "--resync queues Sync deltas for cached keys, again and again" {
	require_kubectl
	n=$(kubectl_fake get pods -n default -o name | wc -l)
	run --separate-stderr "$KINF" deltas pods -n default --resync 1s --timeout 3.6s -o json
	assert_success
	# The initial list, then at least two resyncs of every cached key.
	[ "$(printf '%s\n' "$output" | jq -s 'map(select(.initial)) | length')" -eq "$n" ]
	[ "$(printf '%s\n' "$output" | jq -s 'map(select(.initial | not) | select(.type == "Sync")) | length')" -ge $((2 * n)) ]
	printf '%s\n' "$output" | jq -e -s 'map(.type) | unique == ["Sync"]'
}

@test "a relist after 410 queues Replaced (--emit-replaced) and a tombstone for a vanished key" {
	require_kubectl
	kubectl_fake apply -f - >/dev/null <<-EOF
	{"apiVersion":"v1","kind":"Pod","metadata":{"name":"d-gone","namespace":"default"},
	 "spec":{"containers":[{"name":"c","image":"nginx"}]}}
	EOF
	"$KINF" deltas pods -n default --emit-replaced -o json -v > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	for _ in $(seq 1 100); do grep -q "watch /api" "$BATS_TEST_TMPDIR/err" && break; sleep 0.1; done
	sleep 1.2
	# Disconnect, delete while away, forget history: the reconnect gets 410.
	fakeapi_ctl POST /_fake/faults '{"stall":{"seconds":4,"verb":"watch"}}'
	fakeapi_ctl POST /_fake/faults '{"drop_watches":true}'
	kubectl_fake delete pod d-gone -n default --wait=false >/dev/null
	fakeapi_ctl POST /_fake/faults '{"compact":true}'
	for _ in $(seq 1 200); do grep -q '"finalStateUnknown":true' "$BATS_TEST_TMPDIR/out" && break; sleep 0.1; done
	kill -TERM "$pid"
	wait "$pid"
	run jq -c -s 'map(select(.key == "default/d-gone")) | map([.type, .finalStateUnknown])' "$BATS_TEST_TMPDIR/out"
	assert_output '[["Replaced",false],["Deleted",true]]'
	# Every other key was relisted as Replaced after the first population.
	jq -e -s 'map(select(.initial | not) | select(.type == "Replaced")) | length > 0' "$BATS_TEST_TMPDIR/out"
}
