#!/usr/bin/env bats
# The everyday options a kubectl user reaches for, each against kubectl get
# with the same words: kinf get, -o jsonpath-as-json, Go templates (refused,
# pointing to what does the same).

load helpers

setup_file() {
	fakeapi_start --pods 12 --namespaces 2 --seed 4
}

teardown_file() {
	fakeapi_stop
}

@test "kinf get is kinf list" {
	require_kubectl
	run kinf get pods -A
	assert_success
	assert_output "$("$KINF" list pods -A)"
	same_as_kubectl_get pods -n kube-system
	run "$KINF" get --help
	assert_output "$("$KINF" list --help)"
}

@test "-o jsonpath-as-json prints what kubectl prints" {
	require_kubectl
	local pod t failed=0
	pod=$(kubectl_fake get pods -n default -o name | head -1 | cut -d/ -f2)
	local templates=(
		'{.items[*].metadata.name}'
		'{.items[0].metadata.labels}'
		'{range .items[*]}{.metadata.name}{"\n"}{end}'
		'{.items[*].spec.containers[0].ports}{.kind}'
		'{.nothere}'
		'text{.kind}<&>'
		'{.items[0].metadata}'
		'{.items[*].status.containerStatuses[0].restartCount}'
	)
	for t in "${templates[@]}"; do
		same_as_kubectl_get pods -A -o "jsonpath-as-json=$t" || failed=1
	done
	same_as_kubectl_get pods "$pod" -n default -o 'jsonpath-as-json={.metadata.name}{.spec}' ||
		failed=1
	same_as_kubectl_get deploy,cm -n default -o 'jsonpath-as-json={.items[*].metadata.name}' ||
		failed=1
	((failed == 0))
	# index and watch run it as they run -o jsonpath: over a List, each event's object
	run kinf index pods -A --by namespace=kube-system -o 'jsonpath-as-json={.items[*].metadata.name}'
	assert_success
	assert_output "$(kubectl_fake get pods -n kube-system -o 'jsonpath-as-json={.items[*].metadata.name}')"
	run kinf watch pods -n kube-system --exit-after-sync -o 'jsonpath-as-json={.metadata.name}'
	assert_success
	assert_output "$(kubectl_fake get pods -n kube-system -o 'jsonpath-as-json={range .items[*]}{.metadata.name}{end}')"
}

@test "-o go-template and its kin: a usage error naming jsonpath and custom-columns" {
	local f
	for f in 'go-template={{.metadata.name}}' go-template 'go-template-file=/t' \
		'template={{.}}' 'templatefile=/t'; do
		run -2 --separate-stderr kinf list pods -o "$f"
		[[ $stderr == "kinf: -o ${f%%=*}: kinf has no Go templates; use -o jsonpath=TEMPLATE"*"custom-columns="* ]] ||
			fail "-o $f: $stderr"
	done
	run -2 --separate-stderr kinf watch pods -o=go-template={{.}}
	[[ $stderr == *"use -o jsonpath=TEMPLATE"* ]]
}
