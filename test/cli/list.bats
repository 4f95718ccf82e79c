#!/usr/bin/env bats
# kinf list against the test API server; kubectl is the judge.
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	fakeapi_start --pods 60 --seed 7
}

teardown_file() {
	fakeapi_stop
}

setup() {
	require_kubectl
	bats_load_library bats-support
	bats_load_library bats-assert
}

# Same rows as kubectl get (AGE columns can tick between the two runs).
same_as_kubectl() {
	local kinf_out kubectl_out
	kinf_out=$("$KINF" list "$@")
	kubectl_out=$(kubectl_fake get "$@")
	diff -u <(printf '%s\n' "$kubectl_out") <(printf '%s\n' "$kinf_out")
}

@test "list pods -A matches kubectl get pods -A" {
	same_as_kubectl pods -A
}

@test "list pods in the context's namespace matches kubectl" {
	same_as_kubectl pods
	same_as_kubectl pods -n kube-system
}

@test "list deployments, nodes and the custom resource match kubectl" {
	same_as_kubectl deploy -A
	same_as_kubectl nodes
	same_as_kubectl wd
	same_as_kubectl widgets.example.com -o wide
}

@test "list -o wide and --no-headers match kubectl" {
	same_as_kubectl pods -A -o wide
	same_as_kubectl pods --no-headers
}

@test "list -o json gives the same objects as kubectl -o json, one per line" {
	run --separate-stderr "$KINF" list pods -A -o json
	assert_success
	diff <(printf '%s\n' "$output" | jq -S .) \
		<(kubectl_fake get pods -A -o json | jq -S '.items[]')
	diff <("$KINF" list pods -A -o json --show-managed-fields | jq -S .) \
		<(kubectl_fake get pods -A -o json --show-managed-fields | jq -S '.items[]')
	# One compact object per line, each with apiVersion and kind.
	printf '%s\n' "$output" | while read -r line; do
		[ "$(jq -r '.apiVersion + " " + .kind' <<<"$line")" = "v1 Pod" ]
	done
}

@test "list -o json for deployments and widgets fills in apiVersion and kind" {
	run "$KINF" list deploy -A -o json
	assert_success
	[ "$(printf '%s\n' "$output" | jq -r .apiVersion | sort -u)" = "apps/v1" ]
	run "$KINF" list wd -o json
	assert_success
	[ "$(printf '%s\n' "$output" | jq -r '.apiVersion + "/" + .kind' | sort -u)" = "example.com/v1/Widget" ]
}

@test "list -o json keeps the server's bytes exactly" {
	url=$(cat "$FAKEAPI_DIR/url")
	token=$(cat "$FAKEAPI_DIR/admin-token")
	curl -sf --cacert "$FAKEAPI_DIR/ca.crt" -H "Authorization: Bearer $token" \
		"$url/api/v1/namespaces/kube-system/pods" | jq -c '.items[] | del(.apiVersion, .kind)' > "$BATS_TEST_TMPDIR/server"
	"$KINF" list pods -n kube-system -o json --show-managed-fields |
		jq -c 'del(.apiVersion, .kind)' > "$BATS_TEST_TMPDIR/kinf"
	diff "$BATS_TEST_TMPDIR/server" "$BATS_TEST_TMPDIR/kinf"
	# Without managedFields: the rest of the bytes as they were.
	"$KINF" list pods -n kube-system -o json | jq -c 'del(.apiVersion, .kind)' > "$BATS_TEST_TMPDIR/kinf"
	diff <(jq -c 'del(.metadata.managedFields)' "$BATS_TEST_TMPDIR/server") "$BATS_TEST_TMPDIR/kinf"
}

@test "list -o name and -o yaml" {
	run "$KINF" list pods -n kube-system -o name
	assert_success
	diff <(printf '%s\n' "$output") <(kubectl_fake get pods -n kube-system -o name)
	run "$KINF" list deploy -n default -o yaml
	assert_success
	[[ "$output" == *"apiVersion: apps/v1"* ]]
	[[ "$output" == *"kind: Deployment"* ]]
	# Every document parses back to the same object.
	[ "$(printf '%s\n' "$output" | grep -c '^kind: Deployment')" -eq \
		"$(kubectl_fake get deploy -n default -o name | wc -l)" ]
}

@test "managedFields: left out of json and yaml unless --show-managed-fields, as kubectl" {
	pod=$(kubectl_fake get pods -n pod-ns-0 -o name | head -1)
	pod=${pod#pod/}
	run "$KINF" list pods -n pod-ns-0 -o json
	assert_success
	printf '%s\n' "$output" | jq -e -s 'length > 0 and all(.metadata | has("managedFields") | not)'
	run "$KINF" list pods -n pod-ns-0 -o json --show-managed-fields
	printf '%s\n' "$output" | jq -e -s 'all(.metadata.managedFields | length == 2)'
	# The same text as kubectl's, with and without.
	diff -u <(kubectl_fake get pod "$pod" -n pod-ns-0 -o yaml) \
		<("$KINF" list pods "$pod" -n pod-ns-0 -o yaml)
	diff -u <(kubectl_fake get pod "$pod" -n pod-ns-0 -o yaml --show-managed-fields) \
		<("$KINF" list pods "$pod" -n pod-ns-0 -o yaml --show-managed-fields)
	# Templates see them, as kubectl's.
	run "$KINF" list pods "$pod" -n pod-ns-0 -o 'jsonpath={.metadata.managedFields[0].manager}'
	assert_output "$(kubectl_fake get pods "$pod" -n pod-ns-0 -o 'jsonpath={.metadata.managedFields[0].manager}')"
	# The informer commands print them as list does.
	for cmd in "watch pods" "deltas pods" "index pods --by app"; do
		run "$KINF" $cmd -n pod-ns-0 --exit-after-sync -o json
		assert_success
		printf '%s\n' "$output" | jq -e -s 'length > 0 and all((.object // .).metadata | has("managedFields") | not)'
		run "$KINF" $cmd -n pod-ns-0 --exit-after-sync -o json --show-managed-fields
		printf '%s\n' "$output" | jq -e -s 'all((.object // .).metadata.managedFields | length == 2)'
	done
	# Kept in the cache for what reads them, left out of what prints.
	run "$KINF" watch pods -n pod-ns-0 --exit-after-sync -o json --dump-on-exit "$BATS_TEST_TMPDIR/dump"
	printf '%s\n' "$output" | jq -e -s 'all((.object // .).metadata | has("managedFields") | not)'
	jq -e -s 'length > 0 and all(.metadata.managedFields | length == 2)' "$BATS_TEST_TMPDIR/dump"
	run "$KINF" watch pod/"$pod" -n pod-ns-0 --timeout 5s \
		--for 'jsonpath={.metadata.managedFields[0].manager}=kube-controller-manager'
	assert_success
	run "$KINF" index pods -n pod-ns-0 -o name \
		--by 'field:metadata.managedFields[*].manager=kube-controller-manager'
	assert_output "$(kubectl_fake get pods -n pod-ns-0 -o name)"
}

@test "list pages with --chunk-size and follows continue tokens" {
	fakeapi_ctl DELETE /_fake/requests
	run "$KINF" list pods -A -o name --chunk-size 7
	assert_success
	fakeapi_requests | jq -c 'select(.path == "/api/v1/pods" and .verb == "list")' > "$BATS_TEST_TMPDIR/pages"
	[ "$(printf '%s\n' "$output" | wc -l)" -eq "$(kubectl_fake get pods -A -o name | wc -l)" ]
	[ "$(wc -l < "$BATS_TEST_TMPDIR/pages")" -gt 5 ]
	jq -s -e '.[0].query | test("limit=7")' "$BATS_TEST_TMPDIR/pages"
	# The resourceVersion goes only with the first page; the others carry continue.
	jq -s -e '.[1:] | all(.query | test("continue=") and (test("resourceVersion=") | not))' "$BATS_TEST_TMPDIR/pages"
}

@test "list with --chunk-size 0 makes one request without limit" {
	fakeapi_ctl DELETE /_fake/requests
	run "$KINF" list pods -A -o name --chunk-size 0
	assert_success
	fakeapi_requests | jq -s -e '[.[] | select(.path == "/api/v1/pods" and .verb == "list")] | length == 1'
	fakeapi_requests | jq -s -e '[.[] | select(.path == "/api/v1/pods" and .verb == "list")][0].query | test("limit") | not'
}

@test "an expired continue token falls back to one full list" {
	fakeapi_ctl DELETE /_fake/requests
	# The first continue token presented gets 410 Expired.
	fakeapi_ctl POST /_fake/faults '{"expire_next_continue":1}'
	run --separate-stderr "$KINF" list pods -A -o name --chunk-size 10 -v
	assert_success
	fakeapi_requests | jq -c 'select(.path == "/api/v1/pods" and .verb == "list")' > "$BATS_TEST_TMPDIR/pages"
	[ "$(printf '%s\n' "$output" | wc -l)" -eq "$(kubectl_fake get pods -A -o name | wc -l)" ]
	# The first page was printed already: the full list adds only the rest.
	[ "$(printf '%s\n' "$output" | sort -u | wc -l)" -eq "$(printf '%s\n' "$output" | wc -l)" ]
	diff <(printf '%s\n' "$output") <(kubectl_fake get pods -A -o name)
	[[ "$stderr" == *"continue token expired"* ]]
	[[ "$stderr" == *"kinf: warning: the list's continue token expired midway; the items after that come from a second, full list (resourceVersion "* ]]
	jq -s -e '.[1].status == 410' "$BATS_TEST_TMPDIR/pages"
	jq -s -e 'last | .query | test("limit") | not' "$BATS_TEST_TMPDIR/pages"
}

@test "an expired continue token before anything printed (a table) says nothing" {
	fakeapi_ctl POST /_fake/faults '{"expire_next_continue":1}'
	run --separate-stderr "$KINF" list pods -A --chunk-size 10
	assert_success
	[ -z "$stderr" ]
	[ "$(printf '%s\n' "$output" | wc -l)" -eq "$(( $(kubectl_fake get pods -A -o name | wc -l) + 1 ))" ]
}

@test "-o json prints each page as it comes and stops at a closed pipe" {
	fakeapi_ctl DELETE /_fake/requests
	# head exits after the first page: kinf's next write fails and it ends
	# quietly, without asking for the remaining pages. The continued pages
	# come slowly, so a loaded machine cannot fetch them all before head
	# has exited.
	fakeapi_ctl POST /_fake/faults '{"stall":{"seconds":0.3,"count":1000,"verb":"list","path":"/api/v1/pods","continue":true}}'
	run --separate-stderr bash -c '"$KINF" list pods -A -o name --chunk-size 2 | head -1; echo "status ${PIPESTATUS[0]}"'
	fakeapi_ctl POST /_fake/faults '{"reset":true}'
	assert_success
	[ "${lines[0]}" = "$(kubectl_fake get pods -A -o name | head -1)" ]
	[ "${lines[1]}" = "status 0" ]
	[ -z "$stderr" ]
	pages=$(fakeapi_requests | jq -s '[.[] | select(.path == "/api/v1/pods" and .verb == "list")] | length')
	all=$(( ($(kubectl_fake get pods -A -o name | wc -l) + 1) / 2 ))
	echo "asked for $pages of $all pages"
	[ "$pages" -lt "$all" ]
}

@test "a reader that stops reading does not stall the transfer" {
	# 500 KB of output, more than a pipe and stdio hold. While the reader
	# does not read, the pages keep coming (the queue holds the items): a
	# stalled transfer would meet --idle-timeout or the server's timeout.
	fakeapi_ctl DELETE /_fake/requests
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	"$KINF" list pods -A -o json --chunk-size 5 > "$BATS_TEST_TMPDIR/fifo" 2> "$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	exec 4< "$BATS_TEST_TMPDIR/fifo"
	all=$(( ($(kubectl_fake get pods -A -o name | wc -l) + 4) / 5 ))
	pages() { fakeapi_requests | jq -s '[.[] | select(.path == "/api/v1/pods" and .verb == "list")] | length'; }
	# Up to 30 s: the loop ends as soon as they are all asked for, and an
	# ASan build on a loaded machine took over 10 s once.
	for _ in $(seq 1 300); do
		[ "$(pages)" -ge "$all" ] && break
		sleep 0.1
	done
	echo "$(pages) of $all pages while nobody read"
	[ "$(pages)" -ge "$all" ]
	[ "$(wc -l <&4)" -eq "$(kubectl_fake get pods -A -o name | wc -l)" ]
	exec 4<&-
	wait "$pid"
	[ ! -s "$BATS_TEST_TMPDIR/err" ]
}

@test "an output error that is not a closed pipe is reported" {
	[ -w /dev/full ] || skip "no /dev/full"
	run --separate-stderr bash -c '"$KINF" list pods -A -o json --chunk-size 5 >/dev/full'
	assert_failure 1
	[ "$stderr" = "kinf: writing output: No space left on device" ]
}

@test "label and field selectors are sent to the server" {
	same_as_kubectl pods -A -l app=web
	same_as_kubectl pods -A --field-selector spec.nodeName=node-1
	fakeapi_ctl DELETE /_fake/requests
	"$KINF" list pods -A -l 'app in (web)' -o name >/dev/null
	fakeapi_requests | jq -s -e '[.[] | select(.path == "/api/v1/pods" and .verb == "list")][0].query | test("labelSelector=app%20in%20%28web%29")'
}

@test "names as arguments" {
	name=$(kubectl_fake get pods -n default -o name | head -1 | cut -d/ -f2)
	run "$KINF" list pods "$name" -o name
	assert_success
	assert_output "pod/$name"
	run --separate-stderr "$KINF" list pods nosuchpod
	assert_failure 1
	[ "$stderr" = 'kinf: pods "nosuchpod" not found' ]
	# A grouped type is named with its group, as the apiserver's NotFound
	# names it and kubectl prints it (found against the real server).
	for t in deploy wd; do
		run --separate-stderr "$KINF" list "$t" nosuch
		assert_failure 1
		want=$(kubectl_fake get "$t" nosuch 2>&1 || true)
		[ "$stderr" = "kinf: ${want#Error from server (NotFound): }" ]
	done
	[ "$stderr" = 'kinf: widgets.example.com "nosuch" not found' ]
}

@test "resource names resolve as kubectl resolves them" {
	for r in po pod pods Pod deploy deployments.apps deployments.v1.apps wd widget widgets.example.com no ns cm; do
		run "$KINF" list "$r" -A -o name
		assert_success
	done
	run "$KINF" list deployments.v1.apps -A -o name
	diff <(printf '%s\n' "$output") <(kubectl_fake get deployments.v1.apps -A -o name)
}

@test "cluster-scoped resources ignore -n" {
	run "$KINF" list nodes -n kube-system -o name
	assert_success
	[ "$(printf '%s\n' "$output" | wc -l)" -eq "$(kubectl_fake get nodes -o name | wc -l)" ]
}

@test "a second run uses the discovery cache and makes one request" {
	"$KINF" list pods -o name >/dev/null
	fakeapi_ctl DELETE /_fake/requests
	"$KINF" list pods -o name >/dev/null
	[ "$(fakeapi_requests | jq -s 'length')" -eq 1 ]
	fakeapi_ctl DELETE /_fake/requests
	"$KINF" list pods -o name --refresh >/dev/null
	[ "$(fakeapi_requests | jq -s 'length')" -gt 1 ]
}

@test "requests carry kinf's User-Agent and ask for gzip and Tables" {
	fakeapi_ctl DELETE /_fake/requests
	"$KINF" list pods >/dev/null
	fakeapi_requests | jq -s -e '.[-1].user_agent | startswith("kinf/")'
	fakeapi_requests | jq -s -e '.[-1].accept | test("as=Table")'
}

@test "a plain List for a Table request: the items in local columns, as kubectl" {
	# A server (an aggregated API) that prints no Tables answers the Accept
	# header's last choice, application/json: a plain List.
	fakeapi_ctl POST /_fake/faults '{"tables":false}' >/dev/null
	local rc=0
	{
		for args in "widgets -A" "widgets -n default" "widgets -n default -o wide" \
			"widgets -A --no-headers" "widgets widget-b -n default"; do
			# shellcheck disable=SC2086
			same_as_kubectl $args || { echo "args: $args" >&2; false; }
		done &&
		"$KINF" list widgets -A | grep -q "widget-a" &&
		run --separate-stderr "$KINF" list pods -n default &&
		[[ "${lines[0]}" =~ ^NAME\ +READY\ +STATUS\ +RESTARTS\ +AGE$ ]] &&
		[ "${#lines[@]}" -eq $(($(kubectl_fake get pods -n default --no-headers | wc -l) + 1)) ] &&
		[ -z "$stderr" ]
	} || rc=1
	fakeapi_ctl POST /_fake/faults '{"tables":true}' >/dev/null
	fakeapi_requests | jq -s -e '[.[] | select(.resource == "widgets")][-1].accept | test("as=Table")'
	return "$rc"
}

@test "empty namespace says so on stderr" {
	run --separate-stderr "$KINF" list pods -n viewer-empty
	[[ "$stderr" == *"No resources found"* ]] || [[ "$stderr" == *"not found"* ]]
}

@test "--version, --help and list --help" {
	run "$KINF" --version
	assert_success
	[[ "$output" == "kinf "* ]]
	run "$KINF" --help
	assert_success
	[[ "$output" == *"Usage: kinf [OPTIONS] COMMAND"* ]]
	run "$KINF" list --help
	assert_success
	[[ "$output" == *"--chunk-size"* ]]
	run "$KINF"
	assert_success
	[[ "$output" == *"Commands:"* ]]
}

# kubectl takes its flags before the command and after it, into one flag
# set, the last one winning: `alias k='kinf -n team'` works.
@test "shared options before the command, as kubectl takes them" {
	local want
	want=$("$KINF" list pods -n kube-system -o name)
	[[ $want == pod/coredns-* ]]
	run --separate-stderr "$KINF" -n kube-system list pods -o name
	assert_success
	assert_output "$want"
	run --separate-stderr "$KINF" -n kube-system -o name --context admin list pods
	assert_success
	assert_output "$want"
	run --separate-stderr "$KINF" --namespace=kube-system -oname list pods
	assert_success
	assert_output "$want"
	# After the command wins, whatever came before.
	run --separate-stderr "$KINF" -n viewer-ns -o json list pods -n kube-system -o name
	assert_success
	assert_output "$want"
	# Every shared option is taken there: a wrong one shows it was used.
	run --separate-stderr "$KINF" --kubeconfig "$BATS_TEST_TMPDIR/none" list pods
	[ "$status" -eq 3 ]
	[[ $stderr == *none* ]]
	run --separate-stderr "$KINF" --context nope list pods
	[ "$status" -eq 3 ]
	[[ $stderr == *nope* ]]
	run --separate-stderr "$KINF" -A -l app=web --field-selector status.phase=Running \
		--no-headers --chunk-size 1 --request-timeout 10s --idle-timeout 10s \
		--max-object-size 1M --max-depth 64 --refresh -v0 list pods
	assert_success
	assert_output "$("$KINF" list pods -A -l app=web --field-selector status.phase=Running --no-headers)"
	run --separate-stderr "$KINF" -n kube-system watch pods --exit-after-sync -o name
	assert_success
	assert_output "$want"
	run --separate-stderr "$KINF" -o json --client version
	[ "$status" -eq 2 ]	# --client is version's own
	run --separate-stderr "$KINF" -o json version --client
	assert_success
	[[ $output == '{"clientVersion":'* ]]
	# Help and version stay where they were.
	run --separate-stderr "$KINF" -n x --help
	assert_success
	[[ $output == *"Commands:"* ]]
	run --separate-stderr "$KINF" -n x --version
	assert_success
	[[ $output == "kinf "* ]]
}

@test "-o jsonpath gives what kubectl gives for the same template" {
	name=$(kubectl_fake get pods -n default -o name | head -1 | cut -d/ -f2)
	while IFS= read -r t; do
		diff <("$KINF" list pods -A -o "jsonpath=$t") <(kubectl_fake get pods -A -o "jsonpath=$t") ||
			{ echo "template: $t" >&2; return 1; }
	done <<-'EOF'
	{.items[*].metadata.name}
	{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\t"}{.status.phase}{"\n"}{end}
	{.items[0].metadata.labels}
	{.items[?(@.status.phase=="Running")].metadata.name}
	{..image}
	{.items[-1:].spec.containers[0].ports}
	{.items[*].status.containerStatuses[*].restartCount}
	{.kind} {.apiVersion}
	EOF
	# One named object: the template runs over the object, not a List.
	diff <("$KINF" list pods "$name" -o 'jsonpath={.metadata.name} {.spec.nodeName}') \
		<(kubectl_fake get pods "$name" -o 'jsonpath={.metadata.name} {.spec.nodeName}')
}

@test "templates over a list of many pages print what kubectl prints, as one List" {
	# Pages of 7: kinf hands the template the items one tree at a time;
	# what it prints is kubectl's (and was kinf's with the whole List in
	# one tree), whole-List and random-access templates too. A "+" runs
	# the template as jsonpath-as-json too.
	local o t json
	while IFS= read -r t; do
		json=${t%%"{"*}
		t=${t#"$json"}
		for o in jsonpath ${json:+jsonpath-as-json}; do
			diff <("$KINF" list pods -A --chunk-size 7 -o "$o=$t") \
				<(kubectl_fake get pods -A --chunk-size 7 -o "$o=$t" 2>&1) ||
				{ echo "-o $o=$t" >&2; return 1; }
		done
	done <<-'EOF'
	+{.items[*].metadata.name}
	{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\t"}{.status.phase}{"\n"}{end}
	+{.items[0].metadata.name} {.items[-1].metadata.name} {.items[9].spec.nodeName} {.items[-60].kind}
	+{.items[2:5].metadata.name} {.items[-3:].metadata.name} {.items[:-55].metadata.name} {.items[50:60].metadata.name}
	{.items[?(@.status.phase=="Running")].metadata.name}
	{..image}
	{..metadata.name}
	{.kind} {.apiVersion} {.metadata} {.items[3]}
	+{range .items[*]}{.metadata.name}:{range .spec.containers[*]}{.name},{end};{end}
	{range .items[-2:]}{.metadata.name}>{.spec.nodeName}{"\n"}{end}
	{.items[*].spec.containers[0].ports}
	+{.items}
	{$}
	EOF
	# Custom columns keep a row per item; with --sort-by too, and a
	# template sorted (the keys first, then the items in order). Keys
	# without ties: kubectl's sort is not stable, kinf's is.
	o='custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,IMAGES:.spec.containers[*].image'
	for sort in '' --sort-by=.metadata.uid; do
		# shellcheck disable=SC2086
		diff <("$KINF" list pods -A --chunk-size 7 $sort -o "$o") \
			<(kubectl_fake get pods -A --chunk-size 7 $sort -o "$o") || { echo "$sort" >&2; return 1; }
	done
	o='jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}'
	diff <("$KINF" list pods -A --chunk-size 7 --sort-by=.metadata.uid -o "$o") \
		<(kubectl_fake get pods -A --chunk-size 7 --sort-by=.metadata.uid -o "$o")
	# A continue token that expires midway: the rows of the one full list, each once.
	fakeapi_ctl POST /_fake/faults '{"expire_next_continue":1}'
	o='custom-columns=NAME:.metadata.name,NS:.metadata.namespace'
	diff <("$KINF" list pods -A --chunk-size 7 -o "$o" 2>/dev/null) <(kubectl_fake get pods -A -o "$o")
	fakeapi_ctl POST /_fake/faults '{"expire_next_continue":1}'
	o='jsonpath={.items[*].metadata.name}'
	diff <("$KINF" list pods -A --chunk-size 7 -o "$o" 2>/dev/null) <(kubectl_fake get pods -A -o "$o")
}

@test "-o custom-columns gives what kubectl gives for the same spec" {
	for spec in 'NAME:.metadata.name,NODE:.spec.nodeName' \
		'N:metadata.name,IMAGES:.spec.containers[*].image,LABELS:.metadata.labels,NONE:.nope' \
		'PORTS:.spec.containers[0].ports,RESTARTS:.status.containerStatuses[*].restartCount'; do
		diff <("$KINF" list pods -A -o "custom-columns=$spec") <(kubectl_fake get pods -A -o "custom-columns=$spec")
		diff <("$KINF" list deploy -A -o "custom-columns=$spec" --no-headers) \
			<(kubectl_fake get deploy -A -o "custom-columns=$spec" --no-headers)
	done
}

@test "kubectl's JSONPath escapes: dotted label keys in jsonpath and custom-columns" {
	kubectl_fake apply -f - >/dev/null <<-'EOF'
	{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"esc-1","namespace":"default",
	 "labels":{"app.kubernetes.io/name":"web","app.kubernetes.io/part-of":"shop"}},
	 "data":{"k.e.y":"v1","with space":"v2","x:y":"v3"}}
	EOF
	while IFS= read -r t; do
		diff <("$KINF" list cm -o "jsonpath=$t") <(kubectl_fake get cm -o "jsonpath=$t") ||
			{ echo "template: $t" >&2; return 1; }
		diff <("$KINF" list cm esc-1 -o "jsonpath=$t") <(kubectl_fake get cm esc-1 -o "jsonpath=$t") ||
			{ echo "template (one object): $t" >&2; return 1; }
	done <<-'EOF'
	{range .items[*]}{.metadata.name}={.metadata.labels.app\.kubernetes\.io/name}{"\n"}{end}
	{.metadata.labels.app\.kubernetes\.io/part-of} {.data.k\.e\.y} {.data.with\ space} {.data.x:y}
	{.items[*].metadata.labels['app\.kubernetes\.io/name']}
	{.items[*].metadata.labels['app.kubernetes.io/name']}
	{.items[?(@.metadata.labels.app\.kubernetes\.io/name=="web")].metadata.name}
	{..k\.e\.y}{"\x41\u00e9\101\t"}{'it\'s'}
	EOF
	[ "$("$KINF" list cm esc-1 -o 'jsonpath={.metadata.labels.app\.kubernetes\.io/name}')" = web ]
	spec='NAME:.metadata.name,APP:.metadata.labels.app\.kubernetes\.io/name,KEY:{.data.k\.e\.y}'
	diff <("$KINF" list cm -A -o "custom-columns=$spec") <(kubectl_fake get cm -A -o "custom-columns=$spec")
	kubectl_fake delete cm esc-1 -n default >/dev/null
}

@test "JSONPath literals and identifiers as kubectl reads them" {
	# Numbers, true/false and strings print as kubectl prints them.
	while IFS= read -r t; do
		diff <("$KINF" list widgets -A -o "jsonpath=$t") <(kubectl_fake get widgets -A -o "jsonpath=$t") ||
			{ echo "template: $t" >&2; return 1; }
	done <<-'EOF'
	{123}{"\n"}
	{-4} {+5} {007} {1.50} {1.} {+.5} {0.00001} {1000000.0} {1234567.0} {99999999999999999999}
	{true} {false} {"text"} {'it\'s'}
	{.items[*].metadata.name 7}|{.nope 7}|{7 .kind}|{"x" .kind}|{.kind "x"}|{true.x}
	{range .items[*]}{.metadata.name}={1}{"\n"}{end}
	EOF
	# kubectl refuses these (exit 1 as it runs the template); kinf refuses
	# them as it parses it, for the same reason, as a usage error.
	while IFS='|' read -r t why; do
		run --separate-stderr kubectl_fake get widgets -A -o "jsonpath=$t"
		assert_failure 1
		[[ "$stderr" == *"$why"* ]] || { echo "kubectl, $t: $stderr" >&2; return 1; }
		run --separate-stderr "$KINF" list widgets -A -o "jsonpath=$t"
		assert_failure 2
		[ -z "$output" ]
		[[ "$stderr" == "kinf: jsonpath \"$t\": $why at position "* ]] ||
			{ echo "kinf, $t: $stderr" >&2; return 1; }
	done <<-'EOF'
	{metadata.name}|unrecognized identifier metadata
	{.kind}{foo}|unrecognized identifier foo
	{1e3}|unrecognized identifier e3
	{-}|cannot parse number -
	{1.2.3}|cannot parse number 1.2.3
	EOF
}

@test "custom-columns paths relaxed as kubectl relaxes them" {
	spec='A:metadata.name,B:.metadata.name,C:{metadata.name},D:{.metadata.name},E:..name,F:.metadata.name 7'
	diff <("$KINF" list widgets -A -o "custom-columns=$spec") <(kubectl_fake get widgets -A -o "custom-columns=$spec")
	for spec in 'N:{.metadata.labels.a\}b}' 'N:{.metadata.name} {.kind}'; do
		run --separate-stderr kubectl_fake get widgets -A -o "custom-columns=$spec"
		assert_failure 1
		[[ "$stderr" == *"unexpected path string, expected a 'name1.name2'"* ]]
		run --separate-stderr "$KINF" list widgets -A -o "custom-columns=$spec"
		assert_failure 2
		[[ "$stderr" == "kinf: unexpected path string \"${spec#N:}\", expected a 'name1.name2'"* ]]
	done
}

@test "bad templates are usage errors" {
	run --separate-stderr "$KINF" list pods -o 'jsonpath={.items[0'
	assert_failure 2
	[[ "$stderr" == 'kinf: jsonpath "{.items[0": '* ]]
	run --separate-stderr "$KINF" list pods -o custom-columns=NAME
	assert_failure 2
	[[ "$stderr" == "kinf: unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"* ]]
}

@test "the server's Warning headers on stderr as kubectl prints them: 299 only, once each, stdout untouched" {
	fakeapi_ctl POST faults '{"warnings":["299 - \"apps/v1beta1 is deprecated\"","299 kube-apiserver \"quoted \\\"text\\\" and a \\\\ backslash\" \"Wed, 27 Nov 2026 03:00:00 GMT\", 299 - \"second in one header\"","199 - \"not 299: not shown\"","299 - \"\"","299 - \"apps/v1beta1 is deprecated\"","garbage","299 - \"after garbage\"","299 x \"ünïcode ✓\""]}'
	run --separate-stderr kubectl_fake get pods -n default
	kubectl_stderr=$stderr
	kubectl_stdout=$output
	run --separate-stderr "$KINF" list pods -n default
	fakeapi_ctl POST faults '{"warnings":[]}' >/dev/null
	assert_success
	[[ $output == "$kubectl_stdout" ]] || fail "stdout differs from kubectl's"
	diff -u <(grep '^Warning: ' <<<"$kubectl_stderr") <(printf '%s\n' "$stderr")
	assert_equal "$stderr" 'Warning: apps/v1beta1 is deprecated
Warning: quoted "text" and a \ backslash
Warning: second in one header
Warning: after garbage
Warning: ünïcode ✓'
}

@test "a watch shows the Warning of its requests once, at the start, and its events on stdout" {
	fakeapi_ctl POST faults '{"warnings":["299 - \"watch me\""]}'
	run --separate-stderr "$KINF" watch pods -n default --exit-after-sync -o name
	fakeapi_ctl POST faults '{"warnings":[]}' >/dev/null
	assert_success
	assert_equal "$stderr" 'Warning: watch me'
	[[ -n $output && $output != *Warning* ]]
}

@test "a hostile server's warnings: escapes shown escaped, a long one cut, at most 32 different ones" {
	python3 -c '
import json
w = ["299 - \"\x1b]0;pwned\x07\x1b[2J bell\x7f \u0085\u202eevil\""]
w.append("299 - \"%s\"" % ("x" * 100000))
w += ["299 - \"flood %d\"" % i for i in range(300)]
print(json.dumps({"warnings": w}))' > "$BATS_TEST_TMPDIR/faults.json"
	fakeapi_ctl POST faults "$(<"$BATS_TEST_TMPDIR/faults.json")" >/dev/null
	run --separate-stderr "$KINF" list pods -n default -o name
	fakeapi_ctl POST faults '{"warnings":[]}' >/dev/null
	assert_success
	[[ $output == pod/* ]]
	assert_equal "$(grep -c . <<<"$stderr")" 33
	assert_equal "$(sed -n 1p <<<"$stderr")" 'Warning: ^[]0;pwned^G^[[2J bell^? \u0085\u202eevil'
	assert_equal "$(sed -n 2p <<<"$stderr")" "Warning: $(printf 'x%.0s' {1..1024})..."
	assert_equal "$(sed -n 32p <<<"$stderr")" 'Warning: flood 29'
	assert_equal "$(sed -n 33p <<<"$stderr")" 'kinf: the server sent more than 32 different warnings; the rest are not shown'
}
