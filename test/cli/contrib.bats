#!/usr/bin/env bats
# contrib/: the systemd user unit and the Kubernetes manifest for kinf
# serve, checked as far as this machine can: kubectl applies the manifest
# (client-side dry run, against the test server), systemd-analyze reads the
# unit, and the unit's command line runs and serves kubectl.

load helpers

setup_file() {
	fakeapi_start
}

teardown_file() {
	fakeapi_stop
}

MANIFEST=$KINF_SOURCE_ROOT/contrib/kubernetes/kinf-serve.yaml
UNIT=$KINF_SOURCE_ROOT/contrib/systemd/kinf-serve.service

@test "contrib: kubectl applies the Kubernetes manifest (client-side dry run)" {
	# The test server serves no OpenAPI schemas, so kubectl's schema
	# validation is off; the kinds, versions and scopes are checked.
	run kubectl_fake apply --dry-run=client --validate=false -f "$MANIFEST"
	assert_success
	assert_output - <<-'OUT'
	namespace/kinf created (dry run)
	serviceaccount/kinf-serve created (dry run)
	clusterrole.rbac.authorization.k8s.io/kinf-serve-reader created (dry run)
	clusterrolebinding.rbac.authorization.k8s.io/kinf-serve-reader created (dry run)
	deployment.apps/kinf-serve created (dry run)
	service/kinf-serve created (dry run)
	OUT
}

@test "contrib: the manifest's ClusterRole grants get, list and watch on what serve caches and the namespaces it asks for, nothing more" {
	run python3 - "$MANIFEST" <<-'PY'
	import sys, yaml
	docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
	role = next(d for d in docs if d["kind"] == "ClusterRole")
	dep = next(d for d in docs if d["kind"] == "Deployment")
	args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
	assert args[0] == "serve", args
	served = set(args[1].split(","))
	granted = set()
	for rule in role["rules"]:
	    assert sorted(rule["verbs"]) == ["get", "list", "watch"], rule
	    granted |= set(rule["resources"])
	# Namespaced types served, namespaces not: serve forwards their reads.
	assert served | {"namespaces"} == granted, (served, granted)
	sa = dep["spec"]["template"]["spec"]["serviceAccountName"]
	binding = next(d for d in docs if d["kind"] == "ClusterRoleBinding")
	assert binding["subjects"][0]["name"] == sa, binding
	print("ok", sorted(served))
	PY
	assert_success
	assert_output "ok ['configmaps', 'deployments', 'pods']"
}

# The unit's ExecStart with systemd's specifiers and environment put in,
# kinf at $KINF: one line, for bash.
unit_command() {
	python3 - "$UNIT" "$KINF" <<-'PY'
	import os, re, shlex, sys
	text = open(sys.argv[1]).read().replace("\\\n", " ")
	env = {}
	for m in re.finditer(r"^Environment=(.*)$", text, re.M):
	    for word in shlex.split(m.group(1)):
	        k, v = word.split("=", 1)
	        env[k] = v
	cmd = re.search(r"^ExecStart=(.*)$", text, re.M).group(1)
	cmd = cmd.replace("%t", os.environ["XDG_RUNTIME_DIR"]).replace("%h", os.environ["HOME"])
	cmd = re.sub(r"\$\{(\w+)\}", lambda m: shlex.quote(env[m.group(1)]), cmd)
	cmd = re.sub(r"\$(\w+)", lambda m: env[m.group(1)], cmd)
	print(cmd.replace("/usr/local/bin/kinf", shlex.quote(sys.argv[2]), 1))
	PY
}

@test "contrib: systemd-analyze verifies the user unit" {
	command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"
	export XDG_RUNTIME_DIR=$BATS_TEST_TMPDIR/run
	mkdir -m 700 "$XDG_RUNTIME_DIR"
	sed "s|/usr/local/bin/kinf|$KINF|" "$UNIT" > "$BATS_TEST_TMPDIR/kinf-serve.service"
	run systemd-analyze verify --user "$BATS_TEST_TMPDIR/kinf-serve.service"
	# The man page is not installed here; anything else is a finding.
	run grep -v "man kinf(1)" <<< "$output"
	assert_output ""
}

@test "contrib: the unit's command line serves kubectl through the kubeconfig it writes" {
	require_kubectl
	export XDG_RUNTIME_DIR=$BATS_TEST_TMPDIR/run HOME=$BATS_TEST_TMPDIR/home
	mkdir -m 700 "$XDG_RUNTIME_DIR" && mkdir -p "$HOME/.kube"
	cmd=$(unit_command)
	bash -c "$cmd --timeout 60s" 2> "$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	for _ in $(seq 1 200); do
		[ -s "$HOME/.kube/kinf.yaml" ] && [ -S "$XDG_RUNTIME_DIR/kinf/serve.sock" ] && break
		sleep 0.1
	done
	run kubectl --kubeconfig "$HOME/.kube/kinf.yaml" get pods -A -o name
	# The probes the manifest's Deployment has, as the kubelet sends them:
	# HTTPS without verifying the certificate, without a token.
	server=$(sed -n 's/^ *server: "\(https:.*\)"/\1/p' "$HOME/.kube/kinf.yaml" | head -n 1)
	probes=$(python3 - "$MANIFEST" <<-'PY'
	import sys, yaml
	dep = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "Deployment")
	c = dep["spec"]["template"]["spec"]["containers"][0]
	for probe in ("readinessProbe", "livenessProbe"):
	    g = c[probe]["httpGet"]
	    assert g["scheme"] == "HTTPS" and g["port"] == "https", g
	    print(g["path"])
	PY
	)
	[ "$probes" = "$(printf '/readyz\n/livez')" ] || fail "probes: $probes"
	for p in $probes; do
		[ "$(curl -sk -w ' %{http_code}' "$server$p")" = "ok 200" ] || fail "$p: not ok"
	done
	kubectl_output=$output
	kill -TERM "$pid"
	wait "$pid"
	assert_success
	[ "$kubectl_output" = "$(kubectl_fake get pods -A -o name)" ]
	[ "$(stat -c %a "$HOME/.kube/kinf.yaml")" = 600 ]
}
