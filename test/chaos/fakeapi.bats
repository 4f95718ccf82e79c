#!/usr/bin/env bats
# The test API server's pieces the chaos test relies on (test/fakeapi/README.md):
# --state (a restart with the same data), the expire_next_continue,
# stall_watches and close_watches faults, and churn's relabel.
bats_require_minimum_version 1.5.0

load ../cli/helpers

setup_file() {
	fakeapi_start --pods 20
}

teardown_file() {
	fakeapi_stop
}

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
	fakeapi_ctl POST faults '{"reset":true}' >/dev/null
}

# A GET of the API with the admin token, body on stdout.
api() {
	fakeapi_curl --fail "$1"
}

# A server of its own (one started in a test ends with the test's process).
@test "--state: a restart keeps objects, bytes, resourceVersions, history and tokens" {
	SRV_DIR=$BATS_TEST_TMPDIR/srv
	state=$BATS_TEST_TMPDIR/state.json
	fakeapi_start --dir "$SRV_DIR" --pods 20 --state "$state"
	fakeapi_ctl POST churn '{"create":3,"update":5,"relabel":2,"delete":2,"seed":7}' >/dev/null
	before_rv=$(fakeapi_ctl GET state | jq .resourceVersion)
	fakeapi_ctl GET '/_fake/objects?resource=pods' >"$BATS_TEST_TMPDIR/before"
	old_token=$(<"$SRV_DIR/admin-token")
	port=${FAKEAPI_URL##*:}
	fakeapi_stop
	[ -s "$state" ]
	fakeapi_start --dir "$SRV_DIR" --port "$port" --state "$state"
	[ "${FAKEAPI_URL##*:}" = "$port" ]
	[ "$(<"$SRV_DIR/admin-token")" = "$old_token" ]
	fakeapi_ctl GET '/_fake/objects?resource=pods' >"$BATS_TEST_TMPDIR/after"
	cmp "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	[ "$(fakeapi_ctl GET state | jq .resourceVersion)" = "$before_rv" ]
	# The event window survived: a watch from an older resourceVersion
	# replays the changes instead of answering 410.
	from=$((before_rv - 5))
	run api "/api/v1/pods?watch=1&resourceVersion=$from&timeoutSeconds=1"
	assert_success
	[ "$(grep -c '"type":"ERROR"' <<<"$output")" -eq 0 ]
	[ "$(grep -c '"type":"\(ADDED\|MODIFIED\|DELETED\)"' <<<"$output")" -eq 5 ]
	# The old credentials (kubeconfig, client certificate CA) still work.
	run kubectl_fake get pods -A -o name
	assert_success
	[ "${#lines[@]}" -eq "$(wc -l <"$BATS_TEST_TMPDIR/after")" ]
	fakeapi_stop
}

@test "without a state file the server generates data and writes one at exit" {
	local dir=$BATS_TEST_TMPDIR/other
	fakeapi_start --dir "$dir" --state "$dir/state.json"
	[ ! -e "$dir/state.json" ]
	[ "$(fakeapi_ctl GET state | jq .objects.pods)" -eq 7 ]
	fakeapi_stop
	[ "$(jq '.resources.pods.objects | length' "$dir/state.json")" -eq 7 ]
}

@test "expire_next_continue: the next continue token gets 410 Expired, then tokens work" {
	run api "/api/v1/pods?limit=5"
	assert_success
	token=$(jq -r .metadata.continue <<<"$output")
	[ -n "$token" ] && [ "$token" != null ]
	fakeapi_ctl POST faults '{"expire_next_continue":1}' >/dev/null
	run fakeapi_curl "/api/v1/pods?limit=5&continue=$token"
	assert_success
	[ "$(jq -r .code <<<"$output")" = 410 ]
	[ "$(jq -r .reason <<<"$output")" = Expired ]
	[ "$(jq -r '.metadata.continue | length > 0' <<<"$output")" = true ]
	run api "/api/v1/pods?limit=5&continue=$token"
	assert_success
	[ "$(jq '.items | length' <<<"$output")" -eq 5 ]
	[ "$(fakeapi_ctl GET faults | jq .expire_next_continue)" -eq 0 ]
}

# Bookmarks flow every 0.3 s, then nothing for 9 s. (curl's low-speed check
# averages over about 5 s, so a client with --idle-timeout 1s notices after
# about 6 s.) As the apiserver's, the test server's bookmarks go only to
# watches that began before the resource's last change: one is made.
@test "stall_watches: open watches go silent, a client's idle timeout notices" {
	fakeapi_ctl POST faults '{"bookmark_interval":0.3}' >/dev/null
	"$KINF" watch pods -A -o json --stats -v=3 --idle-timeout 1s --timeout 12s \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	sleep 0.8
	fakeapi_ctl POST churn '{"resource":"pods","namespace":"kube-system","relabel":1,"seed":3}' >/dev/null
	sleep 0.7
	fakeapi_ctl POST faults '{"stall_watches":{"seconds":9}}' >/dev/null
	[ "$(fakeapi_ctl GET faults | jq '.stall_watches > 8')" = true ]
	# The watch kinf opened after the silence began: a change after it.
	sleep 9.3
	fakeapi_ctl POST churn '{"resource":"pods","namespace":"kube-system","relabel":1,"seed":4}' >/dev/null
	wait "$pid"
	fakeapi_ctl POST faults '{"bookmark_interval":60}' >/dev/null
	grep -q "watch idle" "$BATS_TEST_TMPDIR/err" || { cat "$BATS_TEST_TMPDIR/err" >&2; false; }
	# Bookmarks before and after the silence, none during it.
	run awk '/bookmark at/ { split($2, t, ":"); s = t[1] * 3600 + t[2] * 60 + t[3];
		if (last && s - last > gap) gap = s - last; last = s }
		END { print gap; exit !(gap >= 6) }' "$BATS_TEST_TMPDIR/err"
	echo "longest gap between bookmarks: $output s" >&2
	assert_success
}

@test "close_watches: new watches end at once, lists are served" {
	fakeapi_ctl POST faults '{"close_watches":{"seconds":3}}' >/dev/null
	start=$(date +%s%N)
	run api "/api/v1/pods?watch=1&timeoutSeconds=30"
	assert_success
	assert_output ""
	(( ($(date +%s%N) - start) / 1000000 < 1000 ))
	run api "/api/v1/pods"
	assert_success
	[ "$(fakeapi_ctl GET faults | jq '.close_watches > 0')" = true ]
	fakeapi_ctl POST faults '{"reset":true}' >/dev/null
	[ "$(fakeapi_ctl GET faults | jq .close_watches)" = 0 ]
}

@test "churn relabel: label chaos moves between a, b and c" {
	run fakeapi_ctl POST churn '{"relabel":4,"seed":3}'
	assert_success
	[ "$(jq '.relabeled | length' <<<"$output")" -eq 4 ]
	key=$(jq -r '.relabeled[0]' <<<"$output")
	run api "/api/v1/namespaces/${key%/*}/pods/${key#*/}"
	assert_success
	[[ $(jq -r '.metadata.labels.chaos' <<<"$output") =~ ^[abc]$ ]]
}

@test "churn in a namespace without objects: minimal ones, and copies of them keep short names" {
	# No deployments in pod-ns-3: the first is a minimal one named churn-X,
	# the copies of copies churn-Y (not churn-X-churn-Y-...).
	for i in 1 2 3 4 5 6; do
		fakeapi_ctl POST churn '{"resource":"deployments","namespace":"pod-ns-3","create":5,"seed":'$i'}' >/dev/null
	done
	run fakeapi_ctl GET '/_fake/objects?resource=deployments&namespace=pod-ns-3'
	assert_success
	[ "$(jq -s length <<<"$output")" = 30 ]
	jq -e -s 'all(.[]; .metadata.name | test("^churn-[a-z0-9]{5}$"))' <<<"$output"
}
