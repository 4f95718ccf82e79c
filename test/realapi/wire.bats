#!/usr/bin/env bats
# The test server against the real one: test/realapi/wirediff.py sends the
# same requests (lists, gets, Tables, errors, discovery, watches, RBAC) to a
# real kube-apiserver v1.28.7 and to test/fakeapi holding the same objects,
# and fails on any difference not listed in wirediff-known.txt (versions).
# What it found is fixed in the test server and checked in CI
# (test/cli/fakeapi.bats; test/fakeapi/README.md lists it).

load helpers

setup_file() {
	fakeapi_start
	real_setup_file
	real_ns_create kinf-real-wire
	real_objects "$NS" kreal
	kubectl_fake create namespace "$NS" >/dev/null
	real_objects "$NS" kubectl_fake
}

teardown_file() {
	fakeapi_stop
	real_ns_delete
}

@test "the test server answers every request of wirediff.py as the real server does" {
	run python3 "$BATS_TEST_DIRNAME/wirediff.py" --ns "$NS" \
		--real "$REAL_URL,$REAL/pki/ca.crt,$REAL/pki/admin.token,$REAL/pki/viewer.token" \
		--fake "$FAKEAPI_URL,$FAKEAPI_DIR/ca.crt,$FAKEAPI_DIR/admin-token,$FAKEAPI_DIR/viewer-token"
	echo "$output"
	assert_success
}

# first_list NAME [kinf options...]: the first list request kinf makes for
# NAME (its group, version, resource and scope, as resolved).
first_list() {
	local n=$1
	shift
	"$KINF" list "$n" -A -o name --chunk-size 1 -v=6 "$@" 2>&1 |
		grep -m1 -o 'GET [^ ]*[?&]limit=1[^ ]*' | sed 's|^GET [a-z]*://127.0.0.1:[0-9]*||'
}

@test "discovery: kinf resolves names alike from aggregated and from legacy documents" {
	local names=(po pods pod Pod deploy deployments.apps deployments.v1.apps cm configmaps
		wd widgets widget widgets.example.com gd gadgets.v1.example.com gadgets.v1beta1.example.com
		ns no nodes svc sa rs ev events.events.k8s.io ing hpa cronjobs.batch crd leases
		flowschemas.v1beta2.flowcontrol.apiserver.k8s.io)
	local n
	"$KINF" list pods -n "$NS" --refresh >/dev/null	# discovery fetched once, then cached
	for n in "${names[@]}"; do
		echo "$n $(first_list "$n")"
	done >"$BATS_FILE_TMPDIR/aggregated"
	# The same names through a stand-in that hides aggregated discovery.
	real_bg "$BATS_FILE_TMPDIR/legacy.log" python3 "$BATS_TEST_DIRNAME/legacyproxy.py" \
		--real "$REAL_URL" --ca "$REAL/pki/ca.crt" --token "$REAL/pki/admin.token" \
		--port-file "$BATS_FILE_TMPDIR/legacy.port"
	local pid=$BG_PID
	wait_until test -s "$BATS_FILE_TMPDIR/legacy.port"
	cat >"$BATS_FILE_TMPDIR/legacy.kubeconfig" <<-KC
	apiVersion: v1
	kind: Config
	clusters: [{name: legacy, cluster: {server: "http://127.0.0.1:$(<"$BATS_FILE_TMPDIR/legacy.port")"}}]
	contexts: [{name: legacy, context: {cluster: legacy}}]
	current-context: legacy
	KC
	"$KINF" list pods -n "$NS" --refresh --kubeconfig "$BATS_FILE_TMPDIR/legacy.kubeconfig" >/dev/null
	for n in "${names[@]}"; do
		echo "$n $(first_list "$n" --kubeconfig "$BATS_FILE_TMPDIR/legacy.kubeconfig")"
	done >"$BATS_FILE_TMPDIR/legacy"
	kill "$pid"
	wait "$pid" || true
	# The stand-in answered /apis with the APIGroupList, and kinf read the
	# groups' documents.
	grep -q '^GET /apis 200 application/json$' "$BATS_FILE_TMPDIR/legacy.log"
	grep -q '^GET /apis/apps/v1 200' "$BATS_FILE_TMPDIR/legacy.log"
	! grep -q ' $' "$BATS_FILE_TMPDIR/aggregated"	# every name resolved
	diff -u "$BATS_FILE_TMPDIR/aggregated" "$BATS_FILE_TMPDIR/legacy"
}
