#!/usr/bin/env bats
# Regressions found by the chaos convergence test (test/chaos/run), each
# reduced to the smallest scenario that showed the bug.
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	fakeapi_start
}

teardown_file() {
	fakeapi_stop
}

setup() {
	fakeapi_ctl POST /_fake/faults '{"reset":true}' >/dev/null
	OUT=$BATS_TEST_TMPDIR/out
	ERR=$BATS_TEST_TMPDIR/err
}

teardown() {
	if [[ -n ${KINF_PID:-} ]]; then
		kill -TERM "$KINF_PID" 2>/dev/null || true
		wait "$KINF_PID" 2>/dev/null || true
	fi
}

# wait_lines FILE N: until FILE has N lines (10 s at most).
wait_lines() {
	local i
	for ((i = 0; i < 100; i++)); do
		[[ -f $1 && $(wc -l <"$1") -ge $2 ]] && return 0
		sleep 0.1
	done
	echo "$1 has fewer than $2 lines" >&2
	return 1
}

stat_of() {
	awk -v k="$1" '$1 == k { v = $2 } END { print v + 0 }' "$ERR"
}

# The server answered every watch with 200 and at once the end of the stream
# (as a server shutting down does). kinf re-watched immediately, forever:
# about 19,000 watch requests in 3 seconds (src/reflector.c, watch_once).
# client-go calls that a "very short watch" (under a second, no items): an
# error, so the reflector backs off and relists.
@test "watches that end at once: back off and relist, no re-watch spin" {
	"$KINF" watch pods -A -o json --stats -v --timeout 6s >"$OUT" 2>"$ERR" 3>&- &
	KINF_PID=$!
	wait_lines "$OUT" 7
	fakeapi_ctl POST faults '{"close_watches":{"seconds":3},"drop_watches":true}' >/dev/null
	wait "$KINF_PID"
	unset KINF_PID
	watches=$(stat_of watches)
	echo "watches: $watches" >&2
	((watches >= 2 && watches < 15))
	grep -q 'warning: very short watch' "$ERR"
	# It relisted (and so recovered) after the backoff.
	[[ $(stat_of lists) -ge 2 ]]
}

@test "a short watch with a bookmark in it is a normal close" {
	fakeapi_ctl POST faults '{"bookmark_interval":0.2}' >/dev/null
	"$KINF" watch pods -A -o json --stats -v --watch-timeout 1s --timeout 4s \
		>"$OUT" 2>"$ERR" 3>&-
	fakeapi_ctl POST faults '{"bookmark_interval":60}' >/dev/null
	! grep -q 'very short watch' "$ERR"
	[[ $(stat_of lists) -eq 1 ]]
	[[ $(stat_of watches) -ge 3 ]]
}

# An update kinf learns only from a relist (the watch missed it, the history
# was compacted) was never printed: without --emit-replaced the relist queues
# Sync deltas, and the informer flagged every Sync as a resync notification,
# which `kinf watch` hides without --resync (src/informer.c, process). The
# cache had the new state; the output did not. client-go's shared informer
# calls an update a resync only when the resourceVersion did not change.
@test "an update seen only by a relist is printed as UPDATED" {
	pod=$(kubectl_fake get pods -n default -o name | head -1)
	pod=${pod#pod/}
	"$KINF" watch pods -A -o json --stats -v --dump-on-exit "$BATS_TEST_TMPDIR/dump" \
		>"$OUT" 2>"$ERR" 3>&- &
	KINF_PID=$!
	wait_lines "$OUT" 7
	# The watch goes silent; the change happens; its event leaves the history.
	fakeapi_ctl POST faults '{"stall_watches":{"seconds":3}}' >/dev/null
	rv=$(fakeapi_curl --fail -X PATCH -H 'Content-Type: application/merge-patch+json' \
		--data '{"metadata":{"labels":{"chaos-regression":"relist"}}}' \
		"/api/v1/namespaces/default/pods/$pod" | jq -r .metadata.resourceVersion)
	fakeapi_ctl POST faults '{"compact":true,"drop_watches":true}' >/dev/null
	for ((i = 0; i < 100; i++)); do
		[[ $(grep -c ' listed ' "$ERR") -ge 2 ]] && break
		sleep 0.1
	done
	sleep 0.5
	kill -TERM "$KINF_PID"
	wait "$KINF_PID"
	unset KINF_PID
	grep -q "\"resourceVersion\":\"$rv\"" "$BATS_TEST_TMPDIR/dump"
	run jq -r --arg k "default/$pod" 'select(.key == $k) | "\(.type) \(.resourceVersion)"' "$OUT"
	assert_line "UPDATED $rv"
	kubectl_fake label pod "$pod" -n default chaos-regression- >/dev/null
}
