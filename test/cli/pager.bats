#!/usr/bin/env bats
# A large list in pages (kinf list; the informer's first list, at
# resourceVersion 0, comes whole from the watch cache): past 2 MiB the
# pager parses in a second thread and asks for each next page on a second
# connection while the current one arrives. Pages here are 300 pods (about
# 2.4 MB), so from the second page on every page is asked for early.
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	fakeapi_start --pods 1000 --seed 5
}

teardown_file() {
	fakeapi_stop
}

setup() {
	require_kubectl
	bats_load_library bats-support
	bats_load_library bats-assert
	fakeapi_ctl POST /_fake/faults '{"reset":true}' >/dev/null
	fakeapi_ctl DELETE /_fake/requests >/dev/null
}

list_requests() {
	fakeapi_requests | jq -c 'select(.path == "/api/v1/pods" and .verb == "list")'
}

@test "a large list matches kubectl; each page asked for once, in order" {
	run --separate-stderr "$KINF" list pods -A -o name --chunk-size 300
	list_requests > "$BATS_TEST_TMPDIR/pages"
	assert_success
	[ -z "$stderr" ]
	diff <(printf '%s\n' "$output") <(kubectl_fake get pods -A -o name)
	# 1007 pods: four pages, the first without a token, then three tokens.
	jq -s -e 'length == 4 and all(.status == 200)' "$BATS_TEST_TMPDIR/pages"
	jq -s -e '(.[0].query | test("continue") | not) and
		([.[1:][] | .query | capture("continue=(?<c>[^&]*)").c] | unique | length == 3)' \
		"$BATS_TEST_TMPDIR/pages"
}

@test "the next page is asked for while the one before it still arrives" {
	# Each page trickles in over about half a second: a pager that waits
	# for a page to be in before asking for the next one asks after the
	# server sent that page's last byte.
	fakeapi_ctl POST /_fake/faults '{"gzip":false,"trickle":{"bytes":131072,"delay":0.025}}'
	run --separate-stderr "$KINF" list pods -A -o name --chunk-size 300
	list_requests > "$BATS_TEST_TMPDIR/pages"
	fakeapi_ctl POST /_fake/faults '{"gzip":true,"trickle":null}'
	assert_success
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 1007 ]
	cat "$BATS_TEST_TMPDIR/pages"
	jq -s -e 'length == 4' "$BATS_TEST_TMPDIR/pages"
	jq -s -e '.[2].time < .[1].body_sent and .[3].time < .[2].body_sent' "$BATS_TEST_TMPDIR/pages"
}

@test "-o json of a large list: every object once, byte for byte the server's" {
	run --separate-stderr "$KINF" list pods -A -o json --chunk-size 300 --show-managed-fields
	assert_success
	[ "$(printf '%s\n' "$output" | jq -r '.metadata.namespace + "/" + .metadata.name' | sort -u | wc -l)" -eq 1007 ]
	diff <(printf '%s\n' "$output" | jq -c .) \
		<(fakeapi_curl '/api/v1/pods' | jq -c '.items[] | {apiVersion: "v1", kind: "Pod"} + .')
}

@test "a page asked for early that fails: the pages before it, then its error" {
	fakeapi_ctl POST /_fake/faults '{"fail_next":{"count":1,"status":500,"verb":"list","continue":true,"path":"/api/v1/pods"}}'
	run --separate-stderr "$KINF" list pods -A -o name --chunk-size 300
	[ "$(list_requests | wc -l)" -eq 2 ]
	assert_failure 1
	[ "$stderr" = "kinf: Internal error occurred: injected failure (fakeapi) (500 InternalError)" ]
	diff <(printf '%s\n' "$output") <(kubectl_fake get pods -A -o name | head -300)
}

@test "a page asked for early gets 429: retried after Retry-After, nothing lost" {
	fakeapi_ctl POST /_fake/faults '{"fail_next":{"count":1,"status":429,"retry_after":1,"verb":"list","continue":true,"path":"/api/v1/pods"}}'
	run --separate-stderr "$KINF" list pods -A -o name --chunk-size 300
	list_requests | jq -s -e '[.[].status] == [200, 429, 200, 200, 200]'
	assert_success
	diff <(printf '%s\n' "$output") <(kubectl_fake get pods -A -o name)
}

@test "a page asked for early finds its token expired: one full list for the rest" {
	fakeapi_ctl POST /_fake/faults '{"expire_next_continue":1}'
	run --separate-stderr "$KINF" list pods -A -o name --chunk-size 300
	list_requests | jq -s -e '[.[].status] == [200, 410, 200] and (last.query | test("limit") | not)'
	assert_success
	diff <(printf '%s\n' "$output") <(kubectl_fake get pods -A -o name)
	[[ "$stderr" == *"continue token expired midway"* ]]
}

@test "a page asked for early that the server is slow to start does not lose the one before it" {
	fakeapi_ctl POST /_fake/faults '{"stall":{"seconds":2,"verb":"list","continue":true,"path":"/api/v1/pods"}}'
	run --separate-stderr "$KINF" list pods -A -o name --chunk-size 300
	assert_success
	diff <(printf '%s\n' "$output") <(kubectl_fake get pods -A -o name)
}

@test "a closed pipe ends a large list quietly, without the pages after it" {
	run --separate-stderr bash -c '"$KINF" list pods -A -o json --chunk-size 300 | head -c 100 >/dev/null; echo "status ${PIPESTATUS[0]}"'
	assert_success
	[ "$output" = "status 0" ]
	[ -z "$stderr" ]
	pages=$(list_requests | wc -l)
	echo "asked for $pages of 4 pages"
	[ "$pages" -lt 4 ]
}
