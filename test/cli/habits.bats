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

@test "-L, --label-columns and --show-labels: kubectl's columns, in list and index tables" {
	require_kubectl
	local rows=(
		"pods -n kube-system --show-labels"
		"pods -n kube-system -L app"
		"pods -n kube-system -L=app,tier -L nothere --show-labels"
		"pods -A --label-columns app.kubernetes.io/name,app -o wide --show-labels"
		"pods,deploy -n kube-system -L app"
		"ns -L x --show-labels"
		"pods,deploy -n kube-system -L app --no-headers"
	)
	same_as_kubectl_get_each "${rows[@]}"
	# index prints the same columns for the same objects
	diff <(kinf index pods -A --by namespace=kube-system -L app --show-labels | awk '{ print $1, $2, $(NF-1), $NF }') \
		<(kubectl_fake get pods -A --field-selector metadata.namespace=kube-system -L app --show-labels | awk '{ print $1, $2, $(NF-1), $NF }')
	# as kubectl, not with other output
	run -2 --separate-stderr kinf list pods --show-labels -o name
	[[ $stderr == "kinf: --show-labels goes with table output"* ]] || fail "$stderr"
	run -2 --separate-stderr kinf index pods --by app=web -L app -o json
	[[ $stderr == "kinf: -L goes with table output"* ]] || fail "$stderr"
}

@test "kinf index -o wide: the kind's wide columns, as list -o wide" {
	local type
	for type in pods deploy; do
		diff <(kinf index "$type" -A --by namespace=kube-system -o wide) \
			<(kinf list "$type" -A --field-selector metadata.namespace=kube-system -o wide)
	done
	diff <(kinf index nodes --by field:metadata.name=node-0 -o wide) \
		<(kinf list nodes node-0 -o wide)
}

@test "--ignore-not-found, as kubectl get's" {
	require_kubectl
	local pod row failed=0
	pod=$(kubectl_fake get pods -n kube-system -o name | head -1 | cut -d/ -f2)
	local rows=(
		"pods nothere --ignore-not-found"
		"pods -n nothere --ignore-not-found"
		"pods nothere x -n kube-system --ignore-not-found -o name"
		"pods nothere $pod -n kube-system --ignore-not-found"
		"pods,deploy nothere -n kube-system --ignore-not-found"
		"pods/nothere deploy/coredns -n kube-system --ignore-not-found -o name"
	)
	for row in "${rows[@]}"; do
		# shellcheck disable=SC2086
		same_as_kubectl_get $row || failed=1
		# and nothing on stderr
		# shellcheck disable=SC2086
		[[ -z $("$KINF" list $row 2>&1 >/dev/null) ]] || { echo "kinf list $row: stderr"; failed=1; }
	done
	((failed == 0))
}

@test "--sort-by, as kubectl get's: every output, strings, quantities, numbers, missing fields" {
	require_kubectl
	kubectl_fake create namespace sortns >/dev/null
	local kv
	for kv in a=100m b=1 c=1Gi d=2 e=abc f=512Mi g=-1; do
		kubectl_fake create configmap "q-${kv%%=*}" -n sortns --from-literal="v=${kv#*=}" >/dev/null
	done
	kubectl_fake create configmap q-h -n sortns >/dev/null	# no .data.v
	local rows=(
		"pods -A --sort-by=.metadata.name"
		"pods -A --sort-by .metadata.uid -o wide"
		"pods -A --sort-by={.metadata.uid} -o name"
		"pods -A --sort-by=metadata.uid -o jsonpath={.items[*].metadata.name}"
		"pods -A --sort-by=.metadata.uid -o custom-columns=N:.metadata.name"
		"pods,deploy -A --sort-by=.metadata.uid -o name"
		"pods -A --sort-by=.metadata.uid -L app --show-labels"
		"deploy -A --sort-by=.spec.replicas"
		"cm -n sortns --sort-by=.data.v"
		"cm -n sortns --sort-by=.data.v -o name"
		"pods -n kube-system -o name --sort-by=.metadata.nothere"
	)
	same_as_kubectl_get_each "${rows[@]}"
	# json and yaml: the same objects in the same order as kubectl's List
	diff <(kinf list pods -A -o json --sort-by .metadata.uid | jq -r .metadata.name) \
		<(kubectl_fake get pods -A -o json --sort-by .metadata.uid | jq -r '.items[].metadata.name')
	diff <(kinf list pods -A -o yaml --sort-by .metadata.uid | grep '^  name:') \
		<(kubectl_fake get pods -A -o yaml --sort-by .metadata.uid | grep '^    name:' | sed 's/^  //')
	# A field no object has: an error, as kubectl's -o name says (its tables
	# print an empty one); values that cannot be compared: an error.
	run -1 --separate-stderr kinf list pods -n kube-system --sort-by .metadata.nothere
	assert_output ""
	[[ $stderr == 'kinf: --sort-by: couldn'"'"'t find any field with path "{.metadata.nothere}" in the list of objects' ]]
	run -1 --separate-stderr kinf list pods -A --sort-by .metadata.labels
	[[ $stderr == "kinf: --sort-by: .metadata.labels is not sortable: it holds a map and a map"* ]] ||
		fail "$stderr"
	run -2 --separate-stderr kinf list pods --sort-by '{.a}{.b}'
	[[ $stderr == "kinf: --sort-by: "* ]]
	# index answers sort the same way
	diff <(kinf index pods -A --by app -o name --sort-by .metadata.uid) \
		<(kubectl_fake get pods -A -l app -o name --sort-by .metadata.uid)
	diff <(kinf index cm -n sortns --by namespace=sortns -o name --sort-by .data.v) \
		<(kubectl_fake get cm -n sortns -o name --sort-by .data.v)
}

# A table's lines with the ages (AGE cells: 0s, 5d, 4d23h) and the runs of
# blanks that a column's width makes taken out: a second may pass between
# two watchers' rows.
no_ages() {
	sed -E -e 's/(^| )[0-9]+[smhd]([0-9]+[smhd])?( |$)/\1\3/g' -e 's/ +/ /g' -e 's/ $//'
}

@test "kinf list -w is kubectl get -w: the same output for every -o, --output-watch-events" {
	require_kubectl
	local forms=("" "--output-watch-events" "-o wide --output-watch-events" "-L app --show-labels"
		"-o yaml" "-o yaml --output-watch-events" "-o name" "-o json --output-watch-events"
		"-o json" "--watch-only" "-o jsonpath={.metadata.name}"
		"-o custom-columns=N:.metadata.name,P:.status.phase"
		"--watch-only -o custom-columns=NAME:.metadata.name,P:.status.phase")
	local i pids=() d=$BATS_TEST_TMPDIR args
	for i in "${!forms[@]}"; do
		read -ra args <<<"${forms[i]}"
		"$KINF" list pods -n default -w "${args[@]}" >"$d/kinf.$i" 2>"$d/kinf.$i.err" 3>&- &
		pids+=($!)
		kubectl --kubeconfig "$FAKEAPI_DIR/kubeconfig" get pods -n default -w "${args[@]}" \
			>"$d/kubectl.$i" 2>/dev/null 3>&- &
		pids+=($!)
	done
	# Both have printed the list (but --watch-only): then a pod comes, changes, goes.
	local n
	n=$(kubectl_fake get pods -n default -o name | wc -l)
	wait_until lines_at_least "$d/kinf.0" $((n + 1))
	wait_until lines_at_least "$d/kubectl.0" $((n + 1))
	sleep 0.5	# the others started with them
	kubectl_fake apply -f - >/dev/null <<-EOF
	{"apiVersion":"v1","kind":"Pod","metadata":{"name":"getw","namespace":"default","labels":{"app":"getw"}},
	 "spec":{"nodeName":"node-0","containers":[{"name":"c","image":"nginx:1.25"}]}}
	EOF
	kubectl_fake label pod getw -n default tier=x >/dev/null
	kubectl_fake delete pod getw -n default --wait=false >/dev/null
	wait_until lines_at_least "$d/kinf.0" $((n + 4))
	wait_until lines_at_least "$d/kubectl.0" $((n + 4))
	wait_until lines_at_least "$d/kinf.9" 4
	wait_until lines_at_least "$d/kubectl.9" 4
	sleep 1
	kill "${pids[@]}" 2>/dev/null || true
	wait "${pids[@]}" 2>/dev/null || true
	local failed=0
	for i in "${!forms[@]}"; do
		[[ ! -s $d/kinf.$i.err ]] || { echo "-w ${forms[i]}: $(<"$d/kinf.$i.err")"; failed=1; }
		case ${forms[i]} in
		*json*)
			# kubectl re-encodes (keys sorted, managedFields kept): the same events
			diff <(jq -c '[.type, (.object // .).metadata.name, (.object // .).metadata.resourceVersion]' "$d/kinf.$i") \
				<(jq -c '[.type, (.object // .).metadata.name, (.object // .).metadata.resourceVersion]' "$d/kubectl.$i") ||
				{ echo "-w ${forms[i]} differs"; failed=1; }
			;;
		*yaml*)
			diff <(grep -E '^(---|  name:|type:|object:|    name:)' "$d/kinf.$i") \
				<(grep -E '^(---|  name:|type:|object:|    name:)' "$d/kubectl.$i") ||
				{ echo "-w ${forms[i]} differs"; failed=1; }
			;;
		*custom-columns*)
			# no ages: the widths too, the header aligned with the first block
			diff "$d/kinf.$i" "$d/kubectl.$i" || { echo "-w ${forms[i]} differs"; failed=1; }
			;;
		*)
			diff <(no_ages <"$d/kinf.$i") <(no_ages <"$d/kubectl.$i") ||
				{ echo "-w ${forms[i]} differs"; failed=1; }
			;;
		esac
	done
	((failed == 0))
	# every form saw the pod; the table the change, as MODIFIED, and the end
	for i in "${!forms[@]}"; do
		grep -q getw "$d/kinf.$i" || fail "-w ${forms[i]}: no event of the new pod"
	done
	grep -q '^MODIFIED *getw' "$d/kinf.1"
	grep -q '^DELETED *getw' "$d/kinf.1"
}

@test "kinf list -w: a name not there, a closed pipe" {
	run -1 --separate-stderr timeout 20 "$KINF" list pods nothere -w
	[[ $stderr == 'kinf: pods "nothere" not found'* ]]
	run --separate-stderr timeout 20 bash -c '"$KINF" list pods -A -w | head -1; echo "status ${PIPESTATUS[0]}"'
	assert_line "status 0"
	[[ -z $stderr ]]
}
