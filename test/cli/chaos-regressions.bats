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
