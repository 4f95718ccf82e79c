#!/usr/bin/env bats
# kubectl through kinf serve and straight to test/fakeapi (issue 22): every
# read command prints the same stdout and stderr (server URLs aside) and
# exits the same, its follow-up requests included (namespaces, /version,
# OpenAPI); every write gets serve's 405 and no other error. Serve caches
# every type fakeapi has but namespaces, whose reads it forwards. get of
# every kind, -o wide too, prints each kind's columns as the apiserver's
# printers do (serve's src/kindcols/, fakeapi's tables.py).

load helpers

setup_file() {
	require_kubectl
	fakeapi_start
	# Objects of the kinds fakeapi has none of, with what their columns show.
	kubectl_fake create -f - >/dev/null <<-'EOF'
	apiVersion: v1
	kind: Service
	metadata: {name: web, namespace: default}
	spec:
	  selector: {app: web, tier: fe}
	  ports: [{name: http, port: 80, targetPort: 8080}, {name: dns, port: 53, protocol: UDP}]
	---
	apiVersion: v1
	kind: Service
	metadata: {name: edge, namespace: default}
	spec: {type: LoadBalancer, externalIPs: [198.51.100.7], ports: [{port: 443, nodePort: 30443}]}
	---
	apiVersion: v1
	kind: Service
	metadata: {name: db, namespace: viewer-ns}
	spec: {type: ExternalName, externalName: db.example.com}
	---
	apiVersion: v1
	kind: ServiceAccount
	metadata: {name: robot, namespace: default}
	secrets: [{name: a}, {name: b}]
	---
	apiVersion: rbac.authorization.k8s.io/v1
	kind: ClusterRole
	metadata: {name: reader}
	rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
	---
	apiVersion: rbac.authorization.k8s.io/v1
	kind: ClusterRoleBinding
	metadata: {name: readers}
	roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
	subjects:
	- {kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}
	- {kind: Group, name: devs, apiGroup: rbac.authorization.k8s.io}
	- {kind: ServiceAccount, name: robot, namespace: default}
	EOF
	kubectl_fake patch service edge -n default --subresource=status --type=merge \
		-p '{"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.10"},{"hostname":"lb.example.com"}]}}}' >/dev/null
	SERVE_DIR=$BATS_FILE_TMPDIR/serve
	serve_start_in "$SERVE_DIR" configmaps,events,nodes,pods,serviceaccounts,services,deployments,clusterroles,clusterrolebindings,widgets -A
	SERVE_URL=$(sed -n 's/^ *server: "\(.*\)"/\1/p' "$SERVE_DIR/kubeconfig")
	POD=$(kubectl --kubeconfig "$FAKEAPI_DIR/kubeconfig" get pods -n default -o name |
		grep backup)
	export SERVE_DIR SERVE_URL POD
}

teardown_file() {
	serve_stop_in "$SERVE_DIR"
	fakeapi_stop
}

# run_kubectl DIR KUBECONFIG ARGS...: kubectl's stdout, stderr and status into DIR.
run_kubectl() {
	local dir=$1 kc=$2
	shift 2
	mkdir -p "$dir"
	local rc=0
	KUBECACHEDIR=$BATS_FILE_TMPDIR/kcache kubectl --kubeconfig "$kc" "$@" \
		>"$dir/out" 2>"$dir/err" </dev/null || rc=$?
	sed -i "s#$FAKEAPI_URL#URL#g; s#$SERVE_URL#URL#g" "$dir/out" "$dir/err"
	echo "$rc" >"$dir/rc"
}

# both NAME ARGS...: kubectl ARGS straight and through serve, at once.
both() {
	local name=$1
	shift
	run_kubectl "$BATS_TEST_TMPDIR/$name/direct" "$FAKEAPI_DIR/kubeconfig" "$@" &
	run_kubectl "$BATS_TEST_TMPDIR/$name/serve" "$SERVE_DIR/kubeconfig" "$@"
	wait $!
}

# same_answer NAME: the two runs of NAME printed and exited alike.
same_answer() {
	local d=$BATS_TEST_TMPDIR/$1
	cmp -s "$d/direct/out" "$d/serve/out" && cmp -s "$d/direct/err" "$d/serve/err" &&
		cmp -s "$d/direct/rc" "$d/serve/rc"
}

@test "servekubectl: every read prints through serve what it prints straight to the server" {
	local rows=(
		"get pods -A"
		"get pods -n default -o wide"
		"get pods -n default -o yaml"
		"get pods -A -o json"
		"get pods -n default -o name"
		"get pods -n default -o jsonpath={.items[*].spec.nodeName}"
		"get pods -n default -o custom-columns=NAME:.metadata.name,PHASE:.status.phase"
		"get pods -n default --show-labels --sort-by=.metadata.name"
		"get pods -A -l app=web --field-selector status.phase=Running"
		"get deployments,nodes,configmaps -A"
		"get configmaps,events,nodes,pods,serviceaccounts,services,deployments,clusterroles,clusterrolebindings,widgets -A"
		"get configmaps,events,nodes,pods,serviceaccounts,services,deployments,clusterroles,clusterrolebindings,widgets -A -o wide"
		"get ns -o wide"
		"get all -n default"
		"get widgets -n default -o yaml"
		"get ns"
		"get ns default -o json"
		"get pod nope -n default"
		"get pod nope -n viewer-ns"
		"get pod nope -n no-such-ns"
		"get pods --field-selector spec.bogus=1"
		"get pods -n default -l app===web"
		"get pods -A -l tier=-web,app"
		"get nosuchtype"
		"describe $POD -n default"
		"describe deployment web -n default"
		"explain pods"
		"explain deployments.spec.strategy --recursive"
		"explain pods.spec.containers.image --output plaintext-openapiv2"
		"explain widgets"
		"version"
		"version -o json"
		"api-resources"
		"api-resources --namespaced=false -o name"
		"api-versions"
		"wait --for=condition=Ready pod -l app=web -n default --timeout=10s"
		"wait --for=jsonpath={.status.phase}=Succeeded $POD -n default --timeout=10s"
		"get --raw /api/v1/namespaces/default/pods/${POD#pod/}"
		"get --raw /version"
		"get --raw /openapi/v3"
		"events -A"
		"events -n default --for $POD"
		"events -A --types=Warning -o yaml"
	)
	local failed=() i
	# Two kubectls at a time (each row's pair); a row that differs is asked
	# again once, for an AGE that turned over between the two.
	for i in "${!rows[@]}"; do
		# shellcheck disable=SC2086
		both "row$i" ${rows[$i]}
		if ! same_answer "row$i"; then
			# shellcheck disable=SC2086
			both "row$i" ${rows[$i]}
			same_answer "row$i" || failed+=("$i")
		fi
	done
	for i in "${failed[@]}"; do
		local d=$BATS_TEST_TMPDIR/row$i
		echo "# kubectl ${rows[$i]}: status $(<"$d/direct/rc") straight, $(<"$d/serve/rc") through serve" >&2
		diff "$d/direct/out" "$d/serve/out" | head -10 | cut -c1-300 >&2
		diff "$d/direct/err" "$d/serve/err" | head -10 | cut -c1-300 >&2
	done
	((${#failed[@]} == 0)) || fail "${#failed[@]} of ${#rows[@]} kubectl commands answer differently through serve"
	# Not vacuous: the rows ran as meant, and the errors were errors.
	local -A at
	for i in "${!rows[@]}"; do
		at[${rows[$i]}]=$BATS_TEST_TMPDIR/row$i/serve
	done
	[[ -s ${at[get pods -A]}/out ]] || fail "kubectl get pods -A printed nothing"
	[[ $(<"${at[get pod nope -n viewer-ns]}/err") == 'Error from server (NotFound): pods "nope" not found' ]] ||
		fail "a NotFound in a namespace is not worded as the upstream words it"
	[[ $(<"${at[get pod nope -n no-such-ns]}/err") == 'Error from server (NotFound): namespaces "no-such-ns" not found' ]] ||
		fail "the namespace of a NotFound is not the upstream's"
	grep -q '^Server Version: v1\.' "${at[version]}/out" ||
		fail "kubectl version through serve has no server version"
	grep -q '^KIND: *Pod$' "${at[explain pods]}/out" || fail "kubectl explain pods printed no kind"
	local all="get configmaps,events,nodes,pods,serviceaccounts,services,deployments,clusterroles,clusterrolebindings,widgets -A"
	grep -Eq '^default +service/edge +LoadBalancer +10\.96\.[0-9.]+ +203\.0\.113\.10,lb\.example\.com,198\.51\.100\.7 +443:30443/TCP ' \
		"${at[$all]}/out" || fail "services have not their own columns"
	grep -Eq '^ +clusterrolebinding.rbac.authorization.k8s.io/readers +ClusterRole/reader +[0-9]+s +alice +devs +default/robot$' \
		"${at[$all -o wide]}/out" || fail "-o wide has not a binding's subjects"
	# fakeapi has no CustomResourceDefinitions: serve says so, and prints widgets as a CRD without columns.
	grep -q '^kinf: serve: context "admin": widgets.example.com: its Tables have NAME and AGE only: reading its CustomResourceDefinition: ' \
		"$SERVE_DIR/log" || fail "serve did not say it has no CRD for widgets"
}

@test "servekubectl: get -w prints through serve what it prints straight, a change upstream included" {
	local d=$BATS_TEST_TMPDIR
	for side in direct serve; do
		local kc=$FAKEAPI_DIR/kubeconfig
		[[ $side == serve ]] && kc=$SERVE_DIR/kubeconfig
		KUBECACHEDIR=$d/cache-$side kubectl --kubeconfig "$kc" get pods -n viewer-ns -w \
			>"$d/$side.out" 2>"$d/$side.err" 3>&- &
		echo $! >"$d/$side.pid"
	done
	wait_until grep -q '^viewer-app' "$d/direct.out"
	wait_until grep -q '^viewer-app' "$d/serve.out"
	kubectl_fake run servekubectl-w --image=nginx -n viewer-ns >/dev/null
	wait_until grep -q '^servekubectl-w ' "$d/direct.out"
	wait_until grep -q '^servekubectl-w ' "$d/serve.out"
	kill "$(<"$d/direct.pid")" "$(<"$d/serve.pid")"
	kubectl_fake delete pod servekubectl-w -n viewer-ns --wait=false >/dev/null
	# Ages aside: the two tables are printed a moment apart.
	run diff <(awk '{ $NF = ""; print }' "$d/direct.out") <(awk '{ $NF = ""; print }' "$d/serve.out")
	assert_success
	run cat "$d/direct.err" "$d/serve.err"
	assert_output ''
}

@test "servekubectl: every write gets serve's 405 MethodNotAllowed, its first and only error" {
	local d=$BATS_TEST_TMPDIR
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: brand-new\n  namespace: default\ndata:\n  a: b\n' >"$d/new.yaml"
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  namespace: default\ndata:\n  LOG_LEVEL: debug\n' >"$d/changed.yaml"
	local rows=(
		"create -f $d/new.yaml"
		"apply -f $d/new.yaml"
		"apply -f $d/changed.yaml"
		"patch configmap app-config -n default -p {\"data\":{\"x\":\"y\"}}"
		"delete configmap app-config -n default"
		"scale deployment web -n default --replicas=5"
		"label $POD -n default a=b"
		"edit configmap app-config -n default"
		"create configmap x -n default --from-literal=a=b"
	)
	local failed=0 i
	for i in "${!rows[@]}"; do
		local rc=0
		# shellcheck disable=SC2086
		EDITOR="sed -i s/info/warn/" KUBECACHEDIR=$d/cache kubectl --kubeconfig "$SERVE_DIR/kubeconfig" \
			${rows[$i]} >"$d/out" 2>"$d/err" </dev/null || rc=$?
		local errors
		errors=$(grep -c -E '^(error|Error|E[0-9]{4} )' "$d/err" || true)
		if ((rc != 1 || errors != 1)) ||
				! grep -q 'the server does not allow this method on the requested resource: kinf serve is a read-only cache of context "admin"' "$d/err" ||
				grep -q -i -E 'openapi|not found|NotFound' "$d/err"; then
			echo "# kubectl ${rows[$i]}: status $rc, $errors error lines:" >&2
			cat "$d/err" >&2
			failed=$((failed + 1))
		fi
	done
	((failed == 0)) || fail "$failed of ${#rows[@]} writes are not refused with the 405 alone"
	# Refused means not done: the upstream is as it was.
	run kubectl_fake get configmap app-config -n default -o jsonpath='{.data.LOG_LEVEL}'
	assert_output info
}
