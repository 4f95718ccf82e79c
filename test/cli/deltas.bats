#!/usr/bin/env bats
# kinf deltas: golden files from recorded streams (--from), then scenarios
# against the test API server.
bats_require_minimum_version 1.5.0

setup_file() {
	export KINF="${KINF:-$KINF_SOURCE_ROOT/build/cmd/kinf/kinf}"
	export STREAMS="${KINF_SOURCE_ROOT:-$BATS_TEST_DIRNAME/../..}/test/fixtures/streams"
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
	[[ "$stderr" == *"deltas prints table or json output"* ]]
}
