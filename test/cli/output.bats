#!/usr/bin/env bats
# Where output goes and what status it ends with: a closed pipe ends every
# command and output quietly (kubectl dies of SIGPIPE there, silently),
# "No resources found" goes to stderr for every empty answer, and a 200
# whose body is a Status saying Failure is an error, as client-go makes it.

load helpers

setup_file() {
	# 100 pods: every output is larger than stdio's buffer (64 KiB for
	# kinf list's), so a write fails while printing, not only at the end.
	fakeapi_start --pods 100 --namespaces 2
}

teardown_file() {
	fakeapi_stop
}

teardown() {
	bad_stop
}

@test "a closed pipe ends every command and output quietly, with status 0" {
	local outputs=("" "-o wide" "-o yaml" "-o json" "-o name"
		"-o jsonpath={.items[*].metadata.name}" "-o custom-columns=N:.metadata.name")
	local lines=() o
	for o in "${outputs[@]}"; do
		lines+=("list pods -A $o")
	done
	lines+=("list pods,deploy,cm -A" "list pods -n pod-ns-0,pod-ns-1"
		"list pods,deploy -n pod-ns-0,pod-ns-1 -o yaml"
		"watch pods -A --exit-after-sync" "watch pods -A --exit-after-sync -o yaml"
		"watch pods -A --exit-after-sync -o json" "watch pods -A --exit-after-sync -o wide"
		"deltas pods -A --exit-after-sync" "deltas pods -A --exit-after-sync -o json"
		"index pods -A --by namespace=pod-ns-0" "index pods -A --by namespace=pod-ns-0 -o yaml"
		"index pods -A --by namespace=pod-ns-0 -o wide" "index pods -A --values node"
		"index pods -A --keys --by namespace=pod-ns-0" "version -o yaml" "list --help")
	# stdout a pipe whose reader is gone before the first write: every
	# write fails, whatever the size (as once `| head -1` has exited).
	# One python for all the lines; it prints those that were not quiet.
	run /usr/bin/python3 -c 'import os, shlex, subprocess, sys
for line in sys.argv[2:]:
    r, w = os.pipe()
    os.close(r)
    p = subprocess.run([sys.argv[1]] + shlex.split(line), stdout=w, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, timeout=60)
    os.close(w)
    if p.returncode != 0 or p.stderr:
        print("kinf %s, its pipe closed: status %d: %s" % (line, p.returncode, p.stderr.decode()))
' "$KINF" "${lines[@]}"
	assert_success
	assert_output ""
}

@test "a 20,000-pod table | head -1 is quiet, and -o wide | true, -o yaml | head -1" {
	bad_start many-items:20000
	local o err
	for o in "" "-o wide" "-o yaml" "-o name"; do
		# shellcheck disable=SC2086
		err=$(bash -c '"$KINF" list pods $1 | head -1 >/dev/null; echo "status ${PIPESTATUS[0]}" >&2' \
			_ "$o" 2>&1)
		[[ $err == "status 0" ]] || fail "kinf list pods $o | head -1: $err"
		err=$(bash -c '"$KINF" list pods $1 | true; echo "status ${PIPESTATUS[0]}" >&2' _ "$o" 2>&1)
		[[ $err == "status 0" ]] || fail "kinf list pods $o | true: $err"
	done
	# The table was long: it was cut, not short.
	run bash -c '"$KINF" list pods | wc -l'
	assert_output 20001
}

@test "an output error that is not a closed pipe still says so, for every output" {
	[ -w /dev/full ] || skip "no /dev/full"
	local o
	for o in "" "-o wide" "-o yaml" "-o json" "-o name" "-o jsonpath={.items[*].metadata.name}" \
			"-o custom-columns=N:.metadata.name"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$KINF" list pods -A $o
		assert_success
		# shellcheck disable=SC2086
		run --separate-stderr bash -c '"$KINF" list pods -A $1 >/dev/full' _ "$o"
		assert_failure 1
		[[ $stderr == *"No space left on device"* ]] || fail "-o $o: $stderr"
	done
}

@test "the man page says what a closed pipe ends with" {
	grep -q 'closed pipe' "$KINF_SOURCE_ROOT/man/kinf.1.scd"
	tr '\n' ' ' <"$KINF_SOURCE_ROOT/man/kinf.1.scd" | grep -q 'closed pipe[^.]*0 when all was well'
}

@test "No resources found goes to stderr for every empty answer, as kubectl's" {
	local row out err
	# kinf list words | kubectl's stderr for the same words (a table)
	local rows=(
		"pods -n nothere"
		"pods -A -l app=none"
		"pods -n nothere -o wide"
		"pods,deploy -n nothere"
		"pods,deploy -A -l app=none"
	)
	for row in "${rows[@]}"; do
		# shellcheck disable=SC2086
		run --separate-stderr kinf list $row
		assert_success
		assert_output ""
		# shellcheck disable=SC2086
		[[ $stderr == "$(kubectl_fake get $row 2>&1 >/dev/null)" ]] ||
			fail "kinf list $row: stderr \"$stderr\", kubectl's \"$(kubectl_fake get $row 2>&1 >/dev/null)\""
	done
	# Several namespaces: said once, naming none (kubectl cannot say it).
	run --separate-stderr kinf list pods,deploy -n nothere,neither
	assert_success
	assert_output ""
	[[ $stderr == "No resources found" ]]
	# Formats that print data print none, and say nothing, as kubectl's
	# -o name (json and yaml are bare objects: none).
	for o in name json yaml; do
		run --separate-stderr kinf list pods -n nothere -o $o
		assert_success
		assert_output ""
		[[ -z $stderr ]]
	done
	# index: an empty answer is not a header alone
	run --separate-stderr kinf index pods -n nothere --values node
	assert_success
	assert_output ""
	[[ $stderr == "No resources found" ]]
	run --separate-stderr kinf index pods -A --by node=nothere
	assert_success
	assert_output ""
	[[ $stderr == "No resources found" ]]
	# A server's "items": null is an empty list like any other.
	bad_start items-null
	for o in "" "-o wide"; do
		# shellcheck disable=SC2086
		run --separate-stderr kinf list pods $o
		assert_success
		assert_output ""
		[[ $stderr == "No resources found in default namespace." ]]
	done
	# index watches after its list, and this server answers the watch with
	# its List too: a warning about that may come first.
	run --separate-stderr kinf index pods --values node
	assert_success
	assert_output ""
	[[ ${stderr##*$'\n'} == "No resources found" ]]
	[[ $(grep -vc "a List in a watch stream; retrying" <<<"$stderr") == 1 ]]
}

@test "a 200 whose body is a Status saying Failure is an error, as client-go makes it" {
	bad_start status-200:403
	local line
	for line in "list pods" "list pods -o json" "list pods -o name" "watch pods --exit-after-sync" \
		"index pods --values node" "deltas pods --exit-after-sync"; do
		# shellcheck disable=SC2086
		run --separate-stderr timeout 30 "$KINF" $line
		assert_failure 1
		[[ $line == deltas* ]] || assert_output ""	# (its header comes first)
		[[ $stderr == 'kinf: pods is forbidden: User "bad" cannot list resource "pods" in API group "" in the namespace "default" (403 Forbidden)'* ]] ||
			fail "kinf $line: $stderr"
	done
	run --separate-stderr kubectl get pods
	assert_failure
	[[ $stderr == *'pods is forbidden'* ]]
}
