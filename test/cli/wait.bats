#!/usr/bin/env bats
# kinf watch --for: the informer's answer to kubectl wait, and the exit
# statuses scripts rely on (0 met, 2 usage, 4 timed out).
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	fakeapi_start
}

teardown_file() {
	fakeapi_stop
}

setup() {
	require_kubectl
	bats_load_library bats-support
	bats_load_library bats-assert
}

new_pod() {	# new_pod NAME [PHASE]
	kubectl_fake apply -f - >/dev/null <<-EOF
	{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$1","namespace":"default","labels":{"wait":"yes"}},
	 "spec":{"containers":[{"name":"c","image":"nginx"}]}}
	EOF
}

@test "--for condition=Ready on one object (TYPE/NAME and TYPE NAME)" {
	name=$(kubectl_fake get pods -n default -l app=web -o name | head -1 | cut -d/ -f2)
	run --separate-stderr "$KINF" watch "pods/$name" --for condition=Ready
	assert_success
	assert_output "pod/$name condition met"
	run --separate-stderr "$KINF" watch pod "$name" --for condition=ready=true
	assert_success
}

@test "--for create waits for an object that does not exist yet" {
	(sleep 1; new_pod wait-create) 3>&- &
	run --separate-stderr "$KINF" watch pods/wait-create --for create --timeout 20s
	wait
	assert_success
	assert_output "pod/wait-create condition met"
}

@test "--for delete returns when the object goes" {
	new_pod wait-delete
	(sleep 1; kubectl_fake delete pod wait-delete -n default --wait=false >/dev/null) 3>&- &
	run --separate-stderr "$KINF" watch pods/wait-delete --for delete --timeout 20s
	wait
	assert_success
	assert_output "pod/wait-delete condition met"
}

@test "--for jsonpath with a value, and several --for ANDed" {
	new_pod wait-jp
	(sleep 1; kubectl_fake label pod wait-jp -n default stage=ready >/dev/null) 3>&- &
	run --separate-stderr "$KINF" watch pods/wait-jp --for create \
		--for 'jsonpath={.metadata.labels.stage}=ready' --timeout 20s
	wait
	assert_success
	assert_output "pod/wait-jp condition met"
	kubectl_fake delete pod wait-jp -n default --wait=false >/dev/null
}

@test "--for jsonpath with kubectl's escapes: a dotted label key" {
	kubectl_fake apply -f - >/dev/null <<-'EOF'
	{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"wait-esc","namespace":"default",
	 "labels":{"app.kubernetes.io/name":"web"}}}
	EOF
	for tool in kinf kubectl; do
		if [ $tool = kinf ]; then
			run --separate-stderr "$KINF" watch cm/wait-esc \
				--for 'jsonpath={.metadata.labels.app\.kubernetes\.io/name}=web' --timeout 5s
		else
			run --separate-stderr kubectl_fake wait cm/wait-esc -n default \
				--for 'jsonpath={.metadata.labels.app\.kubernetes\.io/name}=web' --timeout 5s
		fi
		assert_success
		assert_output "configmap/wait-esc condition met"
	done
	run --separate-stderr "$KINF" watch cm/wait-esc \
		--for 'jsonpath={.metadata.labels.app\.kubernetes\.io/name}=db' --timeout 0
	assert_failure 4
	[[ "$stderr" == *': configmap/wait-esc: {.metadata.labels.app\.kubernetes\.io/name}=web' ]]
	kubectl_fake delete cm wait-esc -n default >/dev/null
}

@test "--for jsonpath= split and relaxed as kubectl wait does" {
	# met for both: kubectl's relaxed paths ({metadata.name} gains its dot)
	for f in 'jsonpath={metadata.name}=widget-a' 'jsonpath=metadata.name=widget-a' \
		"jsonpath={.metadata.name}='widget-a'" 'jsonpath={..name}=widget-a' \
		'jsonpath={.metadata.labels.app}'; do
		run --separate-stderr kubectl_fake wait widgets/widget-a -n default --for "$f" --timeout 5s
		assert_success
		run --separate-stderr "$KINF" watch widgets/widget-a -n default --for "$f" --timeout 5s
		assert_success
		assert_output "widget.example.com/widget-a condition met"
	done
	# refused by both, for the same reason: a brace inside the path (an
	# escaped one too), "=" inside it, a second "=", no value, no path
	while IFS='|' read -r f why; do
		run --separate-stderr kubectl_fake wait widgets/widget-a -n default --for "$f" --timeout 1s
		assert_failure 1
		[[ "$stderr" == *"$why"* ]] || { echo "kubectl, $f: $stderr" >&2; return 1; }
		run --separate-stderr "$KINF" watch widgets/widget-a -n default --for "$f" --timeout 1s
		assert_failure 2
		[[ "$stderr" == "kinf: --for \"$f\": "*"$why"* ]] || { echo "kinf, $f: $stderr" >&2; return 1; }
	done <<-'EOF'
	jsonpath={.metadata.labels.a\}b}=x|expected a 'name1.name2' or '.name1.name2' or '{name1.name2}'
	jsonpath={.metadata.labels.a\{b}=x|expected a 'name1.name2' or '.name1.name2' or '{name1.name2}'
	jsonpath={.metadata.name} {.kind}=x|expected a 'name1.name2' or '.name1.name2' or '{name1.name2}'
	jsonpath={.metadata.labels.app}==widgets|expected a 'name1.name2' or '.name1.name2' or '{name1.name2}'
	jsonpath={.metadata.labels.a\=b}=x|jsonpath wait format must be
	jsonpath={.metadata.name}=widget-a=b|jsonpath wait format must be
	jsonpath={.metadata.name}=|jsonpath wait has to have a value after equal sign
	jsonpath=|jsonpath expression cannot be empty
	EOF
}

@test "--all with -l waits for every matching object" {
	run --separate-stderr "$KINF" watch pods -l app=web --all --for condition=Ready --timeout 10s
	assert_success
	[ "${#lines[@]}" -eq "$(kubectl_fake get pods -l app=web -o name | wc -l)" ]
	[[ "${lines[0]}" == *" condition met" ]]
}

# A Deployment "roll" whose rollout the test drives by patching its status,
# as the deployment controller would (the test server runs no controllers).
roll_status() {	# roll_status OBSERVED REPLICAS UPDATED AVAILABLE [PROGRESSING_REASON]
	local reason=${5:-NewReplicaSetAvailable}
	kubectl_fake patch deploy roll -n default --subresource=status --type=merge -p "{\"status\":{
		\"observedGeneration\":$1,\"replicas\":$2,\"updatedReplicas\":$3,\"readyReplicas\":$4,
		\"availableReplicas\":$4,\"conditions\":[
		{\"type\":\"Available\",\"status\":\"True\",\"reason\":\"MinimumReplicasAvailable\"},
		{\"type\":\"Progressing\",\"status\":\"True\",\"reason\":\"$reason\"}]}}" >/dev/null
}

new_roll() {
	kubectl_fake delete deploy roll -n default --ignore-not-found >/dev/null
	kubectl_fake create deployment roll -n default --image=nginx:1.25 --replicas=3 >/dev/null
	roll_status 1 3 3 3
}

# kinf's --for rollout --timeout 0 against kubectl rollout status --watch=false.
same_verdict() {	# same_verdict EXPECTED_STATUS KUBECTL_MESSAGE KINF_REASON
	run --separate-stderr kubectl_fake rollout status deploy/roll -n default --watch=false
	[[ "$output" == "$2" ]] || { echo "kubectl: $output" >&2; return 1; }
	run --separate-stderr "$KINF" watch deploy/roll --for rollout --timeout 0
	[ "$status" -eq "$1" ] || { echo "kinf status $status: $stderr" >&2; return 1; }
	if [ "$1" -eq 0 ]; then
		[ "$output" = "deployment.apps/roll condition met" ]
	else
		[ "$stderr" = "kinf: timed out waiting for rollout: deployment.apps/roll: $3" ] ||
			{ echo "kinf: $stderr" >&2; return 1; }
	fi
}

@test "--for rollout: each stage of a rollout as kubectl rollout status judges it" {
	new_roll
	same_verdict 0 'deployment "roll" successfully rolled out'
	kubectl_fake set image deploy/roll -n default nginx=nginx:1.26 >/dev/null
	same_verdict 4 'Waiting for deployment spec update to be observed...' 'spec update not observed yet'
	# condition=Available is already true: the false success in CI.
	run --separate-stderr "$KINF" watch deploy/roll --for condition=Available --timeout 0
	assert_success
	roll_status 2 4 1 3
	same_verdict 4 'Waiting for deployment "roll" rollout to finish: 1 out of 3 new replicas have been updated...' \
		'1 out of 3 new replicas have been updated'
	roll_status 2 4 3 3
	same_verdict 4 'Waiting for deployment "roll" rollout to finish: 1 old replicas are pending termination...' \
		'1 old replicas are pending termination'
	roll_status 2 3 3 2
	same_verdict 4 'Waiting for deployment "roll" rollout to finish: 2 of 3 updated replicas are available...' \
		'2 of 3 updated replicas are available'
	roll_status 2 3 3 3
	same_verdict 0 'deployment "roll" successfully rolled out'
}

@test "--for rollout waits through a rollout where condition=Available returns at once" {
	new_roll
	kubectl_fake set image deploy/roll -n default nginx=nginx:1.26 >/dev/null
	"$KINF" watch deploy/roll --for condition=Available --timeout 20s >"$BATS_TEST_TMPDIR/avail" 3>&- &
	avail=$!
	"$KINF" watch deploy/roll --for rollout --timeout 20s >"$BATS_TEST_TMPDIR/roll" 3>&- &
	roll=$!
	wait "$avail"
	[ "$(cat "$BATS_TEST_TMPDIR/avail")" = "deployment.apps/roll condition met" ]
	for stage in '2 4 1 3' '2 4 3 3' '2 3 3 2'; do
		sleep 0.3
		kill -0 "$roll"	# still waiting
		roll_status $stage
	done
	sleep 0.3
	kill -0 "$roll"
	[ ! -s "$BATS_TEST_TMPDIR/roll" ]
	roll_status 2 3 3 3
	wait "$roll"
	[ "$(cat "$BATS_TEST_TMPDIR/roll")" = "deployment.apps/roll condition met" ]
}

@test "--for rollout: a progress deadline exceeded fails at once with status 5, as kubectl fails" {
	new_roll
	kubectl_fake set image deploy/roll -n default nginx=nginx:1.27 >/dev/null
	roll_status 2 4 1 3 ProgressDeadlineExceeded
	run --separate-stderr kubectl_fake rollout status deploy/roll -n default --watch=false
	assert_failure 1
	[[ "$stderr" == *'deployment "roll" exceeded its progress deadline'* ]]
	SECONDS=0
	run --separate-stderr "$KINF" watch deploy/roll --for rollout --timeout 20s
	assert_failure 5
	[ "$SECONDS" -lt 10 ]
	[ "$stderr" = "kinf: rollout failed: deployment.apps/roll: exceeded its progress deadline" ]
	kubectl_fake delete deploy roll -n default >/dev/null
}

@test "--for rollout on a kind without a rollout status is a usage error" {
	run --separate-stderr "$KINF" watch pods/x --for rollout
	assert_failure 2
	[[ "$stderr" == "kinf: --for rollout: Pod has no rollout status (Deployment, StatefulSet or DaemonSet)"* ]]
}

@test "--for with -l waits for every match without --all, as kubectl wait -l" {
	n=$(kubectl_fake get pods -l app=web -o name | wc -l)
	run --separate-stderr "$KINF" watch pods -l app=web --for condition=Ready --timeout 10s
	assert_success
	[ "${#lines[@]}" -eq "$n" ]
	run --separate-stderr "$KINF" watch pods --field-selector status.phase=Running --for condition=Ready --timeout 10s
	assert_success
	[ "${#lines[@]}" -eq "$(kubectl_fake get pods --field-selector status.phase=Running -o name | wc -l)" ]
	# One not ready among the matches: the wait names it.
	new_pod wait-sel
	kubectl_fake label pod wait-sel -n default app=web >/dev/null
	run --separate-stderr "$KINF" watch pods -l app=web --for condition=Ready --timeout 0
	assert_failure 4
	[ "$stderr" = "kinf: timed out waiting for condition=Ready: pod/wait-sel: no Ready condition" ]
	kubectl_fake delete pod wait-sel -n default --wait=false >/dev/null
}

@test "--for with -l or --all and no match fails at once, as kubectl wait does (not for delete)" {
	for sel in "-l app=none" "-A -l app=none" "-n viewer-ns --field-selector metadata.name=nope" \
			"-n kube-public --all"; do
		for f in condition=Ready 'jsonpath={.status.phase}=Running' create; do
			# shellcheck disable=SC2086
			run --separate-stderr kubectl_fake wait pods $sel --for "$f" --timeout 20s
			assert_failure 1
			assert_equal "$stderr" "error: no matching resources found"
			start=$SECONDS
			# shellcheck disable=SC2086
			run --separate-stderr "$KINF" watch pods $sel --for "$f" --timeout 20s
			assert_failure 1
			assert_equal "$stderr" "kinf: no matching resources found"
			assert_equal "$output" ""
			(( SECONDS - start < 10 ))
		done
		# nothing to delete: done at once
		# shellcheck disable=SC2086
		run kubectl_fake wait pods $sel --for delete --timeout 20s
		assert_success
		start=$SECONDS
		# shellcheck disable=SC2086
		run "$KINF" watch pods $sel --for delete --timeout 20s
		assert_success
		(( SECONDS - start < 10 ))
	done
}

@test "--timeout 0 checks once; not met is exit status 4 naming the objects" {
	run --separate-stderr "$KINF" watch pods/wait-nope --for create --timeout 0
	assert_failure 4
	[ "$stderr" = 'kinf: timed out waiting for create: pod/wait-nope: not found' ]
	name=$(kubectl_fake get pods -n default -l app=web -o name | head -1 | cut -d/ -f2)
	run --separate-stderr "$KINF" watch "pods/$name" --for 'jsonpath={.status.phase}=Failed' --timeout 1s
	assert_failure 4
	[ "$stderr" = "kinf: timed out after 1s waiting for jsonpath={.status.phase}=Failed: pod/$name: {.status.phase}=Running" ]
}

@test "SIGINT or SIGTERM during --for is 128 + signal, saying what was not true" {
	new_pod wait-int
	for sig in INT TERM; do
		"$KINF" watch pods/wait-int --for delete --timeout 60s -v \
			> "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" 3>&- &
		pid=$!
		wait_until grep -q "watch /api/v1/namespaces/default/pods" "$BATS_TEST_TMPDIR/err"
		kill -"$sig" "$pid"
		status=0
		wait "$pid" || status=$?
		expected=130
		[ "$sig" = INT ] || expected=143
		[ "$status" -eq "$expected" ]
		grep -qx "kinf: interrupted (SIG$sig) waiting for delete: pod/wait-int: still exists" "$BATS_TEST_TMPDIR/err" ||
			{ cat "$BATS_TEST_TMPDIR/err"; false; }
		[ ! -s "$BATS_TEST_TMPDIR/out" ]
	done
}

@test "bad --for and missing targets are usage errors" {
	run --separate-stderr "$KINF" watch pods/x --for sometime
	assert_failure 2
	[[ "$stderr" == 'kinf: --for "sometime": expected create, delete'* ]]
	run --separate-stderr "$KINF" watch pods --for create
	assert_failure 2
	[[ "$stderr" == *"--for needs one object"* ]]
	run --separate-stderr "$KINF" watch pods/x --all --for create
	assert_failure 2
	run --separate-stderr "$KINF" watch pods --all
	assert_failure 2
}

@test "exit statuses: 0 ok, 1 API error, 2 usage, 3 credentials, 4 timeout" {
	run "$KINF" list pods -o name
	assert_success
	run "$KINF" list pods -A --context viewer
	assert_failure 1
	run "$KINF" list pods --bogus
	assert_failure 2
	run "$KINF" list pods --context nosuch
	assert_failure 3
	run "$KINF" watch pods/none --for create --timeout 0
	assert_failure 4
	# The same table is in the README and the man page.
	for n in 0 1 2 3 4; do
		grep -q "^| $n |" "$KINF_SOURCE_ROOT/README.md"
	done
	grep -q "EXIT STATUS" "$KINF_SOURCE_ROOT/man/kinf.1.scd"
}

@test "kinf version prints the server's version too" {
	run --separate-stderr "$KINF" version
	assert_success
	assert_line "Client Version: kinf $(sed -n "s/.*version: '\([^']*\)'.*/\1/p" "$KINF_SOURCE_ROOT/meson.build" | head -1)"
	assert_line --partial "Server Version: v1."
	run --separate-stderr "$KINF" version -o json
	assert_success
	jq -e '.clientVersion.gitVersion and .serverVersion.gitVersion' <<<"$output"
	run --separate-stderr "$KINF" version --client --kubeconfig /nonexistent
	assert_success
}

# kubectl version -o json's clientVersion (version.Info), with the compiler
# where kubectl has Go's; -o yaml the same, keys sorted as kubectl's.
@test "kinf version -o json and -o yaml: kubectl's fields, the commit, the platform" {
	run --separate-stderr "$KINF" version -o json
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	local json=$output
	jq -e '.clientVersion | keys_unsorted == ["major", "minor", "gitVersion",
		"gitCommit", "gitTreeState", "buildDate", "compiler", "platform"]' <<<"$json"
	jq -e '.serverVersion.gitVersion == "v1.32.0" and .serverVersion.platform' <<<"$json"
	local v
	v=$(sed -n "s/.*version: '\([^']*\)'.*/\1/p" "$KINF_SOURCE_ROOT/meson.build" | head -1)
	jq -e --arg v "$v" '.clientVersion | .gitVersion == "v" + $v and
		.major + "." + .minor == ($v | split(".")[:2] | join("."))' <<<"$json"
	jq -e --arg p "$(uname -s | tr A-Z a-z)/$(dpkg --print-architecture 2>/dev/null || uname -m)" \
		'.clientVersion.platform == $p' <<<"$json"
	jq -e '.clientVersion.compiler | test("^(gcc|clang) [0-9]")' <<<"$json"
	if git -C "$KINF_SOURCE_ROOT" rev-parse --show-toplevel >/dev/null 2>&1; then
		# Built from this checkout: a commit of it, its state and date.
		local c
		c=$(jq -r .clientVersion.gitCommit <<<"$json")
		[[ $c =~ ^[0-9a-f]{40}$ ]]
		git -C "$KINF_SOURCE_ROOT" cat-file -e "$c^{commit}"
		jq -e '.clientVersion | (.gitTreeState == "clean" or .gitTreeState == "dirty") and
			(.buildDate | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$"))' <<<"$json"
	fi
	run --separate-stderr "$KINF" version -o yaml
	assert_success
	# The keys sorted, the values those of -o json (quotes taken off).
	diff <(awk '/^clientVersion:/ { f = 1; next } /^[^ ]/ { f = 0 }
			f { k = $1; sub(/:$/, "", k); v = $0; sub(/^ *[A-Za-z]+: */, "", v)
			    gsub(/^["\x27]|["\x27]$/, "", v); print k "=" v }' <<<"$output") \
		<(jq -r '.clientVersion | to_entries | sort_by(.key)[] | "\(.key)=\(.value)"' <<<"$json")
	[[ $output == *$'\nserverVersion:\n'* ]]
	run --separate-stderr "$KINF" version --client -o yaml
	assert_success
	refute_output --partial serverVersion
	run --separate-stderr "$KINF" version -o wide
	[ "$status" -eq 2 ]
}

@test "a progress line on a terminal during a long list, erased after" {
	command -v script >/dev/null || skip "script(1) not installed"
	run script -qec "'$KINF' list pods -A --chunk-size 2 -o name >/dev/null" /dev/null
	assert_success
	[[ "$output" == *"listed "*" pods ("*" pages)..."* ]]
	[[ "$output" == *$'\r\e[K' ]]
	# Not on a pipe.
	run --separate-stderr "$KINF" list pods -A --chunk-size 2 -o name
	[ -z "$stderr" ]
}
