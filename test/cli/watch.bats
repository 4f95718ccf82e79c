#!/usr/bin/env bats
# kinf watch: golden files from recorded streams, then informer scenarios
# against the test API server with its fault controls. After each scenario
# the cache kinf held (--dump-on-exit) must equal the server's objects, and
# no key's resourceVersion may go backwards in the output.
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	fakeapi_start --pods 30 --seed 3
	export STREAMS="$KINF_SOURCE_ROOT/test/fixtures/streams"
}

teardown_file() {
	fakeapi_stop
}

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
	EV="$BATS_TEST_TMPDIR/events.json"
	fakeapi_ctl POST /_fake/faults '{"reset":true}' >/dev/null
	CACHE="$BATS_TEST_TMPDIR/cache.json"
	ERR="$BATS_TEST_TMPDIR/stderr"
}

teardown() {
	if [ -n "${WATCH_PID:-}" ]; then
		kill -TERM "$WATCH_PID" 2>/dev/null || true
		wait "$WATCH_PID" 2>/dev/null || true
	fi
}

has_event() {	# has_event TYPE NAME
	[ -f "$EV" ] && jq -e -s --arg t "$1" --arg n "$2" \
		'any(.[]; .type == $t and .object.metadata.name == $n)' "$EV" >/dev/null 2>&1
}

start_watch() {
	"$KINF" watch pods -A -o json --dump-on-exit "$CACHE" --stats -v "$@" \
		> "$EV" 2> "$ERR" 3>&- &
	WATCH_PID=$!
	# Synced (a list, or the initial events of a watch-list), then watching.
	wait_until grep -Eq "listed [0-9]+ items|initial events ended" "$ERR"
	wait_until grep -Eq "watch(-list)? /api/v1/pods from" "$ERR"
}

stop_watch() {
	kill -TERM "$WATCH_PID"
	local status=0
	wait "$WATCH_PID" || status=$?
	WATCH_PID=
	[ "$status" -eq 0 ] || { echo "kinf watch exited $status" >&2; cat "$ERR" >&2; return 1; }
}

# The cache equals the server's pods: same keys, resourceVersions, contents.
cache_matches_server() {
	diff <(jq -c 'del(.apiVersion, .kind)' "$CACHE" | jq -s -c 'sort_by(.metadata.namespace + "/" + .metadata.name)[]') \
		<(fakeapi_ctl GET '/_fake/objects?resource=pods' | jq -c 'del(.apiVersion, .kind)' | jq -s -c 'sort_by(.metadata.namespace + "/" + .metadata.name)[]')
}

# No key's resourceVersion goes backwards; no (key, rv, type) printed twice
# but for resyncs (an unchanged object a relist found again), which repeat
# the key's last resourceVersion by definition.
events_are_sane() {
	jq -e -s '
		map(select(.resync | not)) |
		(group_by(.key) | all(map(.resourceVersion | tonumber) as $rvs |
			$rvs == ($rvs | sort))) and
		((map([.key, .resourceVersion, .type]) | length) ==
		 (map([.key, .resourceVersion, .type]) | unique | length))' "$EV" >/dev/null
}

stat_of() {
	awk -v k="$1" '$1 == k { print $2 }' "$ERR"
}

new_pod() {	# new_pod NAME [LABELS-JSON]
	kubectl_fake apply -f - >/dev/null <<-EOF
	{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$1","namespace":"default","labels":${2:-{\}}},
	 "spec":{"nodeName":"node-0","containers":[{"name":"c","image":"nginx:1.25"}]}}
	EOF
}

@test "golden: watch -o json from recorded streams" {
	for f in relist-tombstones kubectl-events; do
		run --separate-stderr "$KINF" watch --from "$STREAMS/$f.json" -o json
		assert_success
		diff -u "$STREAMS/$f.watch.json" <(printf '%s\n' "$output")
		run --separate-stderr "$KINF" watch --from "$STREAMS/$f.json" --timestamps none --color never
		assert_success
		diff -u "$STREAMS/$f.watch.txt" <(printf '%s\n' "$output")
	done
}

# What client-go v1.28 hands a handler after a relist (shared_informer.go:
# addListener marks every listener syncing, only shouldResync on a resync
# tick unmarks it; OnUpdate calls an update with an unchanged
# resourceVersion a sync): every object still there comes as UPDATED with
# that resourceVersion, marked "resync", with or without a resync period;
# --no-resync-events leaves them out. One row per flag set: the flags, then
# the sequence as TYPE KEY RV [initial|resync|unknown].
@test "after a relist: the sequence a client-go handler gets, resyncs marked" {
	local all='ADDED a 5 initial
UPDATED a 5 resync
ADDED b 6 initial
UPDATED b 11
UPDATED b 11 resync
ADDED c 7 initial
UPDATED c 15
ADDED e 8 initial
DELETED e 8 unknown
ADDED d 18'
	local cases=(
		"|$all"
		"--resync 1h|$all"
		"--no-resync-events|$(grep -v resync <<<"$all")"
		"--no-resync-events --resync 1h|$(grep -v resync <<<"$all")"
		"--watch-only|$(grep -v initial <<<"$all")"
	)
	local c flags want
	for c in "${cases[@]}"; do
		flags=${c%%|*}
		want=${c#*|}
		# shellcheck disable=SC2086
		run --separate-stderr "$KINF" watch --from "$STREAMS/relist-resync.json" -o json $flags
		assert_success
		run jq -r '[.type, (.key | sub("default/"; "")), .resourceVersion,
			(if .initial then "initial" elif .resync then "resync"
			 elif .finalStateUnknown then "unknown" else empty end)] | join(" ")' \
			<<<"$output"
		assert_output "$want"
	done
	# The table prints them as the UPDATED they are.
	run --separate-stderr "$KINF" watch --from "$STREAMS/relist-resync.json" --timestamps none
	assert_success
	[ "$(grep -c '^UPDATED' <<<"$output")" -eq 4 ]
}

# kubectl's tabwriter aligns a header with the rows printed with it: under
# --watch-only and --from the header waits for the first rows, not the
# other way round.
header_aligned() {	# header_aligned FILE: line 2's columns start under line 1's
	awk 'NR == 1 { h = $0 } NR == 2 { r = $0; exit }
		END {
			for (i = 2; i <= length(h); i++) {
				if (substr(h, i - 1, 1) == " " && substr(h, i, 1) != " " &&
				    (substr(r, i - 1, 1) != " " || substr(r, i, 1) == " ")) {
					print "column at " i " not aligned:\n" h "\n" r; exit 1
				}
			}
		}' "$1"
}

@test "--watch-only and --from: the header takes its widths from the first rows" {
	run --separate-stderr "$KINF" watch --from "$STREAMS/relist-tombstones.json" \
		--watch-only --timestamps none --color never
	assert_success
	assert_output "$(cat <<-'EOF'
	EVENT     NAMESPACE   NAME   READY   STATUS    RESTARTS   AGE
	DELETED   default     a      0/0               0          <unknown>
	UPDATED   default     b      0/1     Running   0          <unknown>
	UPDATED   default     b      0/0     Running   0          <unknown>
	ADDED     default     c      0/0               0          <unknown>
	DELETED   default     c      0/0               0          <unknown>
	  (final state unknown)
	EOF
	)"
	require_kubectl
	"$KINF" watch pods -n default --watch-only --timestamps none -v > "$EV" 2> "$ERR" 3>&- &
	WATCH_PID=$!
	wait_until grep -Eq "watch /api/v1/namespaces/default/pods from" "$ERR"
	new_pod w-a-rather-long-pod-name-for-the-name-column
	wait_until lines_at_least "$EV" 2
	stop_watch
	header_aligned "$EV"
	kubectl_fake delete pod w-a-rather-long-pod-name-for-the-name-column -n default --wait=false >/dev/null
}

@test "create, update, delete are seen in order" {
	require_kubectl
	start_watch
	new_pod w-order '{"app":"order"}'
	kubectl_fake label pod w-order -n default step=two >/dev/null
	kubectl_fake delete pod w-order -n default --wait=false >/dev/null
	wait_until has_event DELETED w-order
	stop_watch
	run jq -r 'select(.object.metadata.name == "w-order") | .type' "$EV"
	assert_output $'ADDED\nUPDATED\nDELETED'
	# The initial list's events are marked initial, later ones are not.
	jq -e -s 'map(select(.object.metadata.name == "w-order")) | all(.initial != true)' "$EV"
	jq -e -s 'map(select(.initial)) | length == '"$(stat_of items_listed)" "$EV"
	cache_matches_server
	events_are_sane
}

@test "a dropped watch stream reconnects from the last resourceVersion without a relist" {
	require_kubectl
	start_watch
	new_pod w-drop1
	wait_until has_event ADDED w-drop1
	fakeapi_ctl POST /_fake/faults '{"drop_watches":true}'
	new_pod w-drop2
	wait_until has_event ADDED w-drop2
	stop_watch
	[ "$(stat_of lists)" -eq 1 ]
	[ "$(stat_of watches)" -ge 2 ]
	# No event twice.
	[ "$(jq -s 'map(select(.object.metadata.name == "w-drop1")) | length' "$EV")" -eq 1 ]
	cache_matches_server
	events_are_sane
	kubectl_fake delete pod w-drop1 w-drop2 -n default --wait=false >/dev/null
}

@test "history compacted while objects are deleted: relist and tombstones for exactly those" {
	require_kubectl
	new_pod w-gone1
	new_pod w-gone2
	new_pod w-stays
	start_watch
	wait_until has_event ADDED w-stays
	# A watch that ends within a second with nothing in it is client-go's
	# "very short watch" (a relist): let this one live longer than that.
	sleep 1.2
	# Break the stream while deletions happen, and forget history so the
	# reconnect from the old resourceVersion gets 410 Gone.
	fakeapi_ctl POST /_fake/faults '{"stall":{"seconds":6,"verb":"watch"}}'
	fakeapi_ctl POST /_fake/faults '{"drop_watches":true}'
	kubectl_fake delete pod w-gone1 w-gone2 -n default --wait=false >/dev/null
	fakeapi_ctl POST /_fake/faults '{"compact":true}'
	wait_until has_event DELETED w-gone2
	wait_until has_event DELETED w-gone1
	stop_watch
	[ "$(stat_of relists)" -ge 1 ]
	[ "$(stat_of expired)" -ge 1 ]
	run jq -r -s 'map(select(.type == "DELETED" and .finalStateUnknown)) | map(.object.metadata.name) | sort | join(" ")' "$EV"
	assert_output "w-gone1 w-gone2"
	cache_matches_server
	events_are_sane
	kubectl_fake delete pod w-stays -n default --wait=false >/dev/null
}

@test "an in-stream ERROR 410 leads to a relist at the last resourceVersion" {
	require_kubectl
	start_watch
	fakeapi_ctl DELETE /_fake/requests
	fakeapi_ctl POST /_fake/faults '{"compact":true}'
	new_pod w-410
	fakeapi_ctl POST /_fake/faults '{"drop_watches":true}'
	wait_until has_event ADDED w-410
	kubectl_fake delete pod w-410 -n default --wait=false >/dev/null
	wait_until has_event DELETED w-410
	stop_watch
	cache_matches_server
	events_are_sane
}

@test "a relist: every pod still there comes once more as a resync UPDATED" {
	require_kubectl
	start_watch
	new_pod w-resync
	wait_until has_event ADDED w-resync
	sleep 1.2	# not a "very short watch"
	# The reconnect is told 410 Gone: kinf relists, and finds every pod as
	# it last saw it.
	fakeapi_ctl POST /_fake/faults '{"fail_next":{"count":1,"status":410,"verb":"watch"}}'
	fakeapi_ctl POST /_fake/faults '{"drop_watches":true}'
	local n
	n=$(fakeapi_ctl GET '/_fake/objects?resource=pods' | jq -s length)
	wait_until resyncs_at_least "$n"
	stop_watch
	[ "$(stat_of relists)" -ge 1 ]
	# Each is an UPDATED at the resourceVersion last printed for its key.
	jq -e -s 'all(group_by(.key)[]; . as $ev | all(range(1; $ev | length);
		($ev[.].resync | not) or
		($ev[.].type == "UPDATED" and
		 $ev[.].resourceVersion == $ev[. - 1].resourceVersion)))' "$EV"
	jq -e -s 'map(select(.object.metadata.name == "w-resync")) | map(.type) ==
		["ADDED", "UPDATED"] and .[1].resync' "$EV"
	cache_matches_server
	events_are_sane
	kubectl_fake delete pod w-resync -n default --wait=false >/dev/null
}

resyncs_at_least() {
	[ "$(jq -s 'map(select(.resync)) | length' "$EV")" -ge "$1" ]
}

@test "500s and 429 with Retry-After: back off and recover" {
	require_kubectl
	fakeapi_ctl POST /_fake/faults '{"fail_next":{"count":2,"status":500,"verb":"watch"}}'
	start_watch
	fakeapi_ctl POST /_fake/faults '{"fail_next":{"count":2,"status":429,"retry_after":1,"verb":"watch"}}'
	fakeapi_ctl POST /_fake/faults '{"drop_watches":true}'
	new_pod w-retry
	wait_until has_event ADDED w-retry
	kubectl_fake delete pod w-retry -n default --wait=false >/dev/null
	wait_until has_event DELETED w-retry
	stop_watch
	[ "$(stat_of backoffs)" -ge 1 ]
	cache_matches_server
	events_are_sane
}

@test "a truncated event and an invalid JSON line: re-watch, nothing lost" {
	require_kubectl
	start_watch
	# The faults hit the next watch request: drop the current one to get it
	# (after a second, so that it is not a "very short watch").
	sleep 1.2
	fakeapi_ctl POST /_fake/faults '{"truncate_next_watch":true}'
	fakeapi_ctl POST /_fake/faults '{"drop_watches":true}'
	new_pod w-trunc
	wait_until has_event ADDED w-trunc
	sleep 1.2
	fakeapi_ctl POST /_fake/faults '{"invalid_json_next_watch":true}'
	fakeapi_ctl POST /_fake/faults '{"drop_watches":true}'
	kubectl_fake label pod w-trunc -n default x=y >/dev/null
	wait_until has_event UPDATED w-trunc
	kubectl_fake delete pod w-trunc -n default --wait=false >/dev/null
	wait_until has_event DELETED w-trunc
	stop_watch
	fakeapi_ctl GET /_fake/faults | jq -e '.truncate_next_watch == 0 and .invalid_json_next_watch == 0'
	[ "$(stat_of watches)" -ge 3 ]
	cache_matches_server
	events_are_sane
}

# A stream that has brought a MiB is decoded in a second thread (the
# blast's 600 events are about 3 MB): its faults must end the watch as they
# do in one thread, after every event that came before them. The blast's
# events do not change the server's store, so only a relist brings the
# cache back to it.
blast_then() {	# blast_then FAULT: sets BLAST_TO, the last event's resourceVersion
	BLAST_TO=$(fakeapi_ctl POST /_fake/blast "{\"count\":600,\"then\":\"$1\"}" | jq -r .to)
	wait_until updated_at_least 600
}

updated_at_least() {
	[ "$(jq -s '[.[] | select(.type == "UPDATED")] | length' "$EV")" -ge "$1" ]
}

rewatched_from() {
	grep -q "watch /api/v1/pods from resourceVersion \"$1\"" "$ERR"
}

initial_events_printed() {	# as many initial events as the server has pods
	[ "$(jq -s 'map(select(.initial)) | length' "$EV")" -eq \
		"$(fakeapi_ctl GET '/_fake/objects?resource=pods' | jq -s length)" ]
}

relisted_after() {	# relisted_after LINE: a list completed after it in the log
	grep -A100 -- "$1" "$ERR" | grep -Eq "listed [0-9]+ items"
}

@test "a busy stream, then an in-stream 410: every event first, then a relist" {
	require_kubectl
	start_watch
	blast_then gone
	wait_until grep -q "watch: too old resource version: $BLAST_TO .*; relisting" "$ERR"
	wait_until relisted_after relisting
	# "listed" is the list's arrival, not the informer's processing of it:
	# a pod made after it comes through the same queue behind the relist's
	# deltas, so its events mean the cache has all of them.
	new_pod w-after-blast
	wait_until has_event ADDED w-after-blast
	kubectl_fake delete pod w-after-blast -n default --wait=false >/dev/null
	wait_until has_event DELETED w-after-blast
	stop_watch
	[ "$(stat_of relists)" -ge 1 ]
	cache_matches_server
}

@test "a busy stream, then a line that is not JSON on a quiet stream: re-watch at once" {
	start_watch
	blast_then invalid_json
	# Not after --idle-timeout (60 s): the decoding thread ends the transfer.
	wait_until grep -q "event 601: the line ends inside a JSON value; retrying in" "$ERR"
	wait_until rewatched_from "$BLAST_TO"
	stop_watch
	[ "$(stat_of backoffs)" -ge 1 ]
	[ "$(jq -s '[.[] | select(.type == "UPDATED")] | length' "$EV")" -eq 600 ]
}

@test "a busy stream cut in the middle of an event: re-watch from the last one" {
	start_watch
	blast_then cut
	wait_until rewatched_from "$BLAST_TO"
	stop_watch
	grep -q "transfer closed with outstanding read data remaining; retrying in" "$ERR"
	[ "$(stat_of backoffs)" -ge 1 ]
	[ "$(jq -s '[.[] | select(.type == "UPDATED")] | length' "$EV")" -eq 600 ]
}

@test "a busy stream stopped midway: kinf exits at once" {
	start_watch
	fakeapi_ctl POST /_fake/blast '{"count":100000}' >/dev/null
	wait_until updated_at_least 1000
	stop_watch
}

@test "--watch-list: initial events through sendInitialEvents, then the same stream" {
	require_kubectl
	fakeapi_ctl DELETE /_fake/requests
	start_watch --watch-list
	new_pod w-wl
	wait_until has_event ADDED w-wl
	kubectl_fake delete pod w-wl -n default --wait=false >/dev/null
	wait_until has_event DELETED w-wl
	stop_watch
	fakeapi_requests > "$BATS_TEST_TMPDIR/requests"
	jq -e -s '[.[] | select(.path == "/api/v1/pods" and .verb == "list")] | length == 0' "$BATS_TEST_TMPDIR/requests" ||
		{ jq -c '[.path, .verb, .query, .user_agent]' "$BATS_TEST_TMPDIR/requests"; false; }
	fakeapi_requests | jq -s -e '[.[] | select(.path == "/api/v1/pods")][0].query | test("sendInitialEvents=true") and test("resourceVersionMatch=NotOlderThan")'
	[ "$(stat_of watch_list_fallbacks)" -eq 0 ]
	cache_matches_server
	events_are_sane
}

@test "--watch-list refused by the server: falls back to a paginated list" {
	fakeapi_ctl POST /_fake/faults '{"watch_list":false}'
	fakeapi_ctl DELETE /_fake/requests
	start_watch --watch-list
	# Listed and watching, but the list's deltas may not be popped into
	# the cache yet: their events printed mean they are.
	wait_until initial_events_printed
	stop_watch
	fakeapi_ctl POST /_fake/faults '{"watch_list":true}'
	[ "$(stat_of watch_list_fallbacks)" -ge 1 ]
	[ "$(fakeapi_requests | jq -s '[.[] | select(.path == "/api/v1/pods" and .verb == "list")] | length')" -ge 1 ]
	cache_matches_server
}

@test "--exit-after-sync, --count and --timeout end with status 0" {
	require_kubectl
	run --separate-stderr "$KINF" watch pods -A --exit-after-sync -o name
	assert_success
	[ "$(printf '%s\n' "$output" | wc -l)" -eq "$(kubectl_fake get pods -A -o name | wc -l)" ]
	run --separate-stderr "$KINF" watch pods -A --count 3 -o json
	assert_success
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 3 ]
	run --separate-stderr timeout 20 "$KINF" watch pods -A --timeout 1s -o name
	assert_success
}

@test "--watch-only skips the initial list; a single name watches one object" {
	require_kubectl
	new_pod w-one
	start_watch --watch-only
	kubectl_fake label pod w-one -n default k=v >/dev/null
	wait_until has_event UPDATED w-one
	stop_watch
	jq -e -s 'all(.initial != true)' "$EV"
	run --separate-stderr "$KINF" watch pods w-one -n default --exit-after-sync -o name
	assert_success
	assert_output "pod/w-one"
	kubectl_fake delete pod w-one -n default --wait=false >/dev/null
}

@test "--old and --diff on updates" {
	require_kubectl
	new_pod w-diff '{"app":"a"}'
	start_watch --watch-only --old --diff
	kubectl_fake label pod w-diff -n default --overwrite app=b >/dev/null
	wait_until has_event UPDATED w-diff
	stop_watch
	jq -e -s 'map(select(.type == "UPDATED" and .key == "default/w-diff"))[0] |
		.oldObject.metadata.labels.app == "a" and .object.metadata.labels.app == "b" and
		(.diff | any(.path == ".metadata.labels.app" and .old == "a" and .new == "b")) and
		(.diff | all(.path != ".metadata.resourceVersion"))' "$EV"
	kubectl_fake delete pod w-diff -n default --wait=false >/dev/null
}

@test "--diff of a listed object's first update shows only what changed" {
	require_kubectl
	# Listed objects lack apiVersion and kind, watch events carry them:
	# not a change (issue 13, item 2).
	new_pod w-ldiff '{"app":"a"}'
	start_watch --watch-only --diff
	kubectl_fake label pod w-ldiff -n default --overwrite app=b >/dev/null
	wait_until has_event UPDATED w-ldiff
	stop_watch
	run jq -c -s 'map(select(.type == "UPDATED" and .key == "default/w-ldiff"))[0].diff' "$EV"
	assert_output '[{"path":".metadata.labels.app","old":"a","new":"b"}]'
	# The table's diff lines too.
	"$KINF" watch pods w-ldiff -n default --watch-only --diff --timestamps none -v \
		> "$BATS_TEST_TMPDIR/table" 2> "$ERR" 3>&- &
	WATCH_PID=$!
	wait_until grep -Eq "watch(-list)? /api/v1/namespaces/default/pods" "$ERR"
	kubectl_fake label pod w-ldiff -n default --overwrite app=c >/dev/null
	wait_until grep -q '^    ' "$BATS_TEST_TMPDIR/table"
	stop_watch
	run grep '^    ' "$BATS_TEST_TMPDIR/table"
	assert_output '    .metadata.labels.app: "b" → "c"'
	kubectl_fake delete pod w-ldiff -n default --wait=false >/dev/null
}

@test "--diff-all shows managedFields changes; printed objects still leave them out" {
	require_kubectl
	new_pod w-dall '{"app":"a"}'
	start_watch --watch-only --diff-all --old
	kubectl_fake label pod w-dall -n default --overwrite app=b >/dev/null
	wait_until has_event UPDATED w-dall
	stop_watch
	jq -e -s 'map(select(.type == "UPDATED" and .key == "default/w-dall"))[0] |
		(.diff | any(.path | startswith(".metadata.managedFields"))) and
		(.diff | any(.path == ".metadata.resourceVersion")) and
		(.object.metadata | has("managedFields") | not) and
		(.oldObject.metadata | has("managedFields") | not)' "$EV"
	# The cache kept them (--dump-on-exit and --diff-all both read them).
	jq -e -s 'map(select(.metadata.name == "w-dall"))[0].metadata.managedFields | length > 0' "$CACHE"
	kubectl_fake delete pod w-dall -n default --wait=false >/dev/null
}

@test "watch events leave managedFields out of their objects, as the list's" {
	require_kubectl
	new_pod w-mf
	# No --dump-on-exit: the cache itself goes without them.
	"$KINF" watch pods w-mf -n default --watch-only -o json -v \
		> "$BATS_TEST_TMPDIR/ev" 2> "$ERR" 3>&- &
	WATCH_PID=$!
	wait_until grep -Eq "watch(-list)? /api/v1/namespaces/default/pods" "$ERR"
	kubectl_fake label pod w-mf -n default --overwrite k=v >/dev/null
	wait_until grep -q UPDATED "$BATS_TEST_TMPDIR/ev"
	stop_watch
	jq -e -s 'length > 0 and all(.object.metadata | has("managedFields") | not)' \
		"$BATS_TEST_TMPDIR/ev"
	kubectl_fake delete pod w-mf -n default --wait=false >/dev/null
}

@test "a slow reader loses nothing and sees events in order" {
	require_kubectl
	start_watch --watch-only
	kill -STOP "$WATCH_PID"
	for i in 1 2 3 4 5; do new_pod "w-slow-$i"; done
	kubectl_fake delete pod w-slow-1 w-slow-2 w-slow-3 w-slow-4 w-slow-5 -n default --wait=false >/dev/null
	kill -CONT "$WATCH_PID"
	wait_until has_event DELETED w-slow-5
	stop_watch
	for i in 1 2 3 4 5; do
		run jq -r --arg n "w-slow-$i" 'select(.object.metadata.name == $n) | .type' "$EV"
		assert_output $'ADDED\nDELETED'
	done
	cache_matches_server
	events_are_sane
}

@test "a closed stdout ends quietly" {
	run --separate-stderr bash -c "'$KINF' watch pods -A -o name | head -2"
	assert_success
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 2 ]
	[ -z "$stderr" ]
}

@test "SIGINT ends a watch cleanly with status 0 and flushed output" {
	start_watch
	kill -INT "$WATCH_PID"
	wait "$WATCH_PID"
	WATCH_PID=
	[ "$(wc -l < "$EV")" -ge 1 ]
	tail -c1 "$EV" | od -c | grep -q '\\n'
}

@test "403 for the viewer outside its namespace is an error before sync" {
	run --separate-stderr timeout 20 "$KINF" watch pods -A --context viewer
	assert_failure 1
	[[ "$stderr" == *"forbidden"* ]]
}

@test "kubectl get pods -w against the test server sees a created pod" {
	require_kubectl
	kubectl_fake get pods -n default -w --request-timeout=8s > "$BATS_TEST_TMPDIR/kubectl.out" 2>&1 3>&- &
	kpid=$!
	sleep 1
	new_pod w-kubectl
	wait_until grep -q w-kubectl "$BATS_TEST_TMPDIR/kubectl.out"
	kill "$kpid" 2>/dev/null || true
	wait "$kpid" 2>/dev/null || true
	kubectl_fake delete pod w-kubectl -n default --wait=false >/dev/null
}

@test "event types are coloured only when asked or on a terminal without NO_COLOR" {
	run --separate-stderr "$KINF" watch --from "$STREAMS/kubectl-events.json" --timestamps none --color always
	assert_success
	[[ "$output" == *$'\e[32mADDED\e[0m'* ]]
	[[ "$output" == *$'\e[31mDELETED\e[0m'* ]]
	run --separate-stderr "$KINF" watch --from "$STREAMS/kubectl-events.json" --timestamps none
	[[ "$output" != *$'\e['* ]]
	command -v script >/dev/null || skip "script(1) not installed"
	run script -qec "'$KINF' watch --from '$STREAMS/kubectl-events.json' --timestamps none" /dev/null
	[[ "$output" == *$'\e[32mADDED'* ]]
	run env NO_COLOR=1 script -qec "'$KINF' watch --from '$STREAMS/kubectl-events.json' --timestamps none" /dev/null
	[[ "$output" != *$'\e[32m'* ]]
}

@test "--timestamps none, local, utc, rfc3339" {
	run "$KINF" watch --from "$STREAMS/kubectl-events.json" --timestamps utc --no-headers
	assert_success
	[[ "${lines[0]}" =~ ^[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z\ +ADDED ]]
	run "$KINF" watch --from "$STREAMS/kubectl-events.json" --timestamps local --no-headers
	[[ "${lines[0]}" =~ ^[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\ +ADDED ]]
	run "$KINF" watch --from "$STREAMS/kubectl-events.json" --timestamps rfc3339 --no-headers
	[[ "${lines[0]}" =~ ^20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-9:.]+Z\ +ADDED ]]
	run "$KINF" watch --from "$STREAMS/kubectl-events.json" -o json --timestamps utc
	printf '%s\n' "$output" | jq -e -s 'all(.time | test("^20[0-9-]+T[0-9:.]+Z$"))'
	run "$KINF" watch --from "$STREAMS/kubectl-events.json" -o json
	printf '%s\n' "$output" | jq -e -s 'all(has("time") | not)'
	run "$KINF" watch --from "$STREAMS/kubectl-events.json" --timestamps sometimes
	assert_failure 2
}

@test "-o jsonpath runs per event; custom-columns print a header and a row per event" {
	require_kubectl
	run --separate-stderr "$KINF" watch pods -n default --exit-after-sync -o 'jsonpath={.metadata.name}{"\n"}'
	assert_success
	diff <(printf '%s\n' "$output") <(kubectl_fake get pods -n default -o 'jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}')
	run --separate-stderr "$KINF" watch pods -n default --exit-after-sync -o custom-columns=N:.metadata.name,P:.status.phase
	assert_success
	diff <(printf '%s\n' "$output") <(kubectl_fake get pods -n default -o custom-columns=N:.metadata.name,P:.status.phase)
}

# kubectl get takes -w, --watch and --watch-only: kinf list -w is that
# (habits.bats compares it with kubectl), not kinf watch.
@test "list -w is kubectl get -w: kinf watch's options are refused, saying so" {
	run -2 --separate-stderr "$KINF" list pods -n default -w --exit-after-sync -o json
	[[ $stderr == "kinf: option '--exit-after-sync' is kinf watch's: kinf list -w is kubectl get -w"* ]] ||
		fail "$stderr"
	# A value is not taken for -w; more than one name is refused.
	run --separate-stderr "$KINF" list pods -l -w
	[ "$status" -eq 2 ]
	[[ $stderr == *'-l: invalid selector "-w"'* ]]
	run --separate-stderr "$KINF" list pods a b -w
	[ "$status" -eq 2 ]
	[[ $stderr == "kinf: list -w watches one resource type and at most one NAME"* ]]
	run -2 --separate-stderr "$KINF" list pods,deploy -Aw
	run -2 --separate-stderr "$KINF" list pods -w --sort-by .metadata.name
	[[ $stderr == "kinf: --sort-by does not go with -w"* ]]
}

# kubectl get -w -o wide: the wide columns in each row. Fields are split on
# the tables' 3-space padding; AGE is left out (a second may pass).
wide_rows() {	# wide_rows DROP...: stdin's rows as tab-separated fields, without fields DROP
	sed -E 's/ {3,}/\t/g' | awk -F '\t' -v drop="$*" '
		BEGIN { n = split(drop, d, " "); for (i = 1; i <= n; i++) skip[d[i]] = 1 }
		{ line = ""; for (i = 1; i <= NF; i++) if (!(i in skip)) line = line "\t" $i; print line }'
}

@test "watch -o wide has kubectl get -o wide's columns" {
	require_kubectl
	local res drop_kubectl drop_kinf
	for res in "pods 6 1,7" "deployments 6 1,7" "nodes 4 1,5"; do
		set -- $res
		local ns=-A
		[ "$1" = nodes ] && ns=
		run --separate-stderr "$KINF" watch "$1" $ns -o wide --exit-after-sync --timestamps none
		assert_success
		diff <(kubectl_fake get "$1" $ns -o wide | wide_rows "$2") \
			<(printf '%s\n' "$output" | wide_rows ${3//,/ })
	done
	# Without -o wide, the usual columns, RESTARTS "N (AGE ago)" as kubectl's.
	run --separate-stderr "$KINF" watch pods -A --exit-after-sync --timestamps none
	assert_success
	[[ $output == *" ago)"* ]]
	diff <(kubectl_fake get pods -A | wide_rows 6) <(printf '%s\n' "$output" | wide_rows 1 7)
}

# kubectl get -w -o yaml: YAML documents separated by "---"; each event of
# -o json, its object as kinf list -o yaml prints it.
@test "watch -o yaml prints each event as a YAML document" {
	run --separate-stderr "$KINF" watch deploy -A -o yaml --exit-after-sync
	assert_success
	local yaml=$output n
	n=$("$KINF" watch deploy -A -o json --exit-after-sync | wc -l)
	[ "$n" -ge 2 ]
	[ "$(grep -c '^---$' <<<"$yaml")" -eq $((n - 1)) ]
	[[ ${lines[0]} != --- ]]
	# The top-level keys of each document, sorted as kubectl sorts them.
	[ "$(grep -E '^[a-zA-Z]+:' <<<"$yaml" | sed 's/:.*//' | sort | uniq -c | awk '{ print $1 " " $2 }' | tr '\n' ' ')" = \
		"$n context $n initial $n key $n object $n resource $n resourceVersion $n type " ]
	grep -qx 'type: ADDED' <<<"$yaml"
	# The objects, taken out and de-indented, are kinf list -o yaml's.
	diff <(awk '/^object:/ { f = 1; next } /^[a-zA-Z-]/ { if (f) print "---"; f = 0 } f { sub(/^  /, ""); print }' <<<"$yaml" | sed '$d') \
		<("$KINF" list deploy -A -o yaml)
}
