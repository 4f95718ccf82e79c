# Shared helpers for test/realapi/*.bats: kinf against a real kube-apiserver
# v1.28.7 (../shared/realapi), run by test/real, which exports REALAPI_DIR
# (the scripts), REAL (the artifacts: binaries, PKI, kubeconfig) and
# REAL_KUBECONFIG, and starts the server first.
#
#   setup_file()    { real_setup_file; real_ns_create; }  # exports NS, a fresh namespace
#   teardown_file() { real_ns_delete; }
#
# kubectl is the judge: kreal runs it against the same server.

load ../cli/helpers

: "${REAL:?run through test/real}"
: "${REALAPI_DIR:?run through test/real}"
REAL_KUBECONFIG=${REAL_KUBECONFIG:-$REAL/kubeconfig}
REAL_URL=https://127.0.0.1:6443
export REAL REALAPI_DIR REAL_KUBECONFIG REAL_URL

# real_setup_file: the real server's kubeconfig and per-file caches (kinf's
# discovery under XDG_CACHE_HOME, kubectl's under KUBECACHEDIR).
real_setup_file() {
	export KUBECONFIG=$REAL_KUBECONFIG
	export XDG_CACHE_HOME=$BATS_FILE_TMPDIR/cache KUBECACHEDIR=$BATS_FILE_TMPDIR/cache/kube
	mkdir -p "$KUBECACHEDIR"
}

# real_bg OUT CMD...: run CMD in the background (stdout and stderr to
# OUT, bats's fd 3 closed), its pid in $BG_PID and remembered, so that
# teardown ends it when the test fails before it waits for it.
real_bg() {
	local out=$1
	shift
	"$@" >"$out" 2>&1 3>&- &
	BG_PID=$!
	echo "$BG_PID" >>"$BATS_TEST_TMPDIR/bg.pids"
}

teardown() {
	local pid
	[[ -e $BATS_TEST_TMPDIR/bg.pids ]] || return 0
	while read -r pid; do
		kill -TERM "$pid" 2>/dev/null || true
	done <"$BATS_TEST_TMPDIR/bg.pids"
}

# real_serve_start TYPES [serve options...]: kinf serve TYPES on the real
# server, a unix socket and a TLS port, its kubeconfig written; exports
# SERVE_DIR, SERVE_SOCK, SERVE_KUBECONFIG, SERVE_PID once it is ready.
# real_serve_stop ends it.
real_serve_start() {
	SERVE_DIR=$BATS_FILE_TMPDIR/serve
	mkdir -p "$SERVE_DIR"
	rm -f "$SERVE_DIR/kubeconfig"
	SERVE_SOCK=$SERVE_DIR/s.sock
	SERVE_KUBECONFIG=$SERVE_DIR/kubeconfig
	"$KINF" serve "$@" --listen "unix:$SERVE_SOCK" --listen tcp:127.0.0.1:0 \
		--write-kubeconfig "$SERVE_KUBECONFIG" >"$SERVE_DIR/log" 2>&1 </dev/null 3>&- &
	SERVE_PID=$!
	export SERVE_DIR SERVE_SOCK SERVE_KUBECONFIG SERVE_PID
	# Started in a test (not setup_file): teardown ends it, as teardown_file,
	# in another process, cannot.
	if [[ -n ${BATS_TEST_NAME:-} ]]; then
		echo "$SERVE_PID" >>"$BATS_TEST_TMPDIR/bg.pids"
	fi
	local i
	for ((i = 0; i < 600; i++)); do
		[[ -s $SERVE_KUBECONFIG &&
			$(curl -s -m 1 --unix-socket "$SERVE_SOCK" http://kinf/readyz 2>/dev/null) == ok ]] &&
			return 0
		kill -0 "$SERVE_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "kinf serve not ready:" >&2
	cat "$SERVE_DIR/log" >&2
	return 1
}

real_serve_stop() {
	[[ -n ${SERVE_PID:-} ]] || return 0
	kill -TERM "$SERVE_PID" 2>/dev/null || true
	wait "$SERVE_PID" 2>/dev/null || true
	unset SERVE_PID
}

# kserve ...: kubectl through the kinf serve real_serve_start started.
kserve() {
	kubectl --kubeconfig "$SERVE_KUBECONFIG" "$@"
}

# kreal ...: kubectl against the real server (the kubeconfig's admin-token
# context unless --context says otherwise).
kreal() {
	kubectl --kubeconfig "$REAL_KUBECONFIG" "$@"
}

# real_curl [curl args...] PATH: an admin-token request with a non-curl
# User-Agent (the apiserver pretty-prints JSON for curl's own).
real_curl() {
	local last=${*: -1}
	local rest=("${@:1:$#-1}")
	curl -sS --cacert "$REAL/pki/ca.crt" -A kinf-test-real/1 \
		-H "Authorization: Bearer $(<"$REAL/pki/admin.token")" "${rest[@]}" \
		"$REAL_URL$last"
}

# real_workload: what most files start from: the real server's kubeconfig
# and caches (real_setup_file), a fresh namespace NS (real_ns_create) with
# the small workload of real_objects in it.
real_workload() {
	real_setup_file
	real_ns_create
	real_objects
}

# real_ns_create [PREFIX]: a fresh namespace (PREFIX-RANDOM, default from the
# file's name) with its default ServiceAccount (no controller makes it);
# exported as NS.
real_ns_create() {
	local prefix=${1:-kinf-real-$(basename "$BATS_TEST_FILENAME" .bats)}
	NS=$prefix-$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')
	kreal create namespace "$NS" >/dev/null
	kreal create serviceaccount default -n "$NS" >/dev/null
	export NS
}

# real_ns_delete [NS]: delete a namespace and all in it now. No
# controller-manager runs: pods bound to a node would wait for a kubelet
# (so they are deleted with grace period 0) and the namespace for its
# finalizer (so it is finalized here).
real_ns_delete() {
	local ns=${1:-${NS:-}}
	[[ -n $ns ]] || return 0
	kreal get ns "$ns" >/dev/null 2>&1 || return 0
	kreal delete pods,deployments,replicasets,configmaps,serviceaccounts,roles,rolebindings --all \
		-n "$ns" --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
	if kreal get crd widgets.example.com >/dev/null 2>&1; then
		kreal delete widgets --all -n "$ns" --wait=false >/dev/null 2>&1 || true
	fi
	kreal delete ns "$ns" --wait=false >/dev/null 2>&1 || true
	kreal get ns "$ns" -o json 2>/dev/null | jq '.spec.finalizers = []' |
		kreal replace --raw "/api/v1/namespaces/$ns/finalize" -f - >/dev/null 2>&1 || true
}

# real_crd: two custom resource types. widgets.example.com (short name wd)
# as the test server has it built in (v1, no printer columns, no
# categories), so that the same requests can go to both; and
# gadgets.example.com (gd), with printer columns (one of priority 1, for
# -o wide) and a served, deprecated v1beta1 whose requests carry a Warning
# header.
real_crd() {
	kreal get crd widgets.example.com gadgets.example.com >/dev/null 2>&1 && return 0
	kreal apply -f - >/dev/null <<-'YAML'
	apiVersion: apiextensions.k8s.io/v1
	kind: CustomResourceDefinition
	metadata: {name: widgets.example.com}
	spec:
	  group: example.com
	  scope: Namespaced
	  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
	  versions:
	  - name: v1
	    served: true
	    storage: true
	    schema:
	      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
	---
	apiVersion: apiextensions.k8s.io/v1
	kind: CustomResourceDefinition
	metadata: {name: gadgets.example.com}
	spec:
	  group: example.com
	  scope: Namespaced
	  names: {plural: gadgets, singular: gadget, kind: Gadget, shortNames: [gd], categories: [all]}
	  versions:
	  - name: v1
	    served: true
	    storage: true
	    schema:
	      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
	    additionalPrinterColumns:
	    - {name: Color, type: string, jsonPath: .spec.color}
	    - {name: Size, type: integer, jsonPath: .spec.size, priority: 1}
	    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
	  - name: v1beta1
	    served: true
	    storage: false
	    deprecated: true
	    deprecationWarning: 'example.com/v1beta1 Gadget is "deprecated"; use example.com/v1'
	    schema:
	      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
	YAML
	kreal wait --for condition=Established crd/widgets.example.com crd/gadgets.example.com \
		--timeout 30s >/dev/null
}

# real_objects [NS [KUBECTL]]: a small workload: 3 pods (one bound to a
# made-up node, labelled app=web), a deployment, 2 configmaps and 2 widgets,
# made by KUBECTL (default kreal; kubectl_fake makes the same on the test
# server, which has the widgets type built in); on the real server 2 gadgets
# too. Documents, not a List:
# kubectl validates a List against /openapi/v2, which the test server lacks.
real_objects() {
	local ns=${1:-$NS} kc=${2:-kreal}
	[[ $kc != kreal ]] || real_crd
	$kc apply -n "$ns" -f - >/dev/null <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: web-1, labels: {app: web, tier: front}}
	spec:
	  nodeName: node-a
	  containers: [{name: web, image: registry.example.com/web:1.0, ports: [{containerPort: 80}]}]
	---
	apiVersion: v1
	kind: Pod
	metadata: {name: web-2, labels: {app: web, tier: front}}
	spec:
	  containers: [{name: web, image: registry.example.com/web:1.0}]
	---
	apiVersion: v1
	kind: Pod
	metadata: {name: db-1, labels: {app: db}}
	spec:
	  containers:
	  - {name: db, image: registry.example.com/db:2.1}
	  - {name: sidecar, image: registry.example.com/sidecar:0.3}
	---
	apiVersion: apps/v1
	kind: Deployment
	metadata: {name: web, labels: {app: web}}
	spec:
	  replicas: 2
	  selector: {matchLabels: {app: web}}
	  template:
	    metadata: {labels: {app: web}}
	    spec: {containers: [{name: web, image: registry.example.com/web:1.0}]}
	---
	apiVersion: v1
	kind: ConfigMap
	metadata: {name: app-config, labels: {app: web}}
	data: {mode: fast, text: "line \"one\"\nline <two> & three"}
	---
	apiVersion: v1
	kind: ConfigMap
	metadata: {name: other}
	data: {a: "1"}
	YAML
	custom_objects Widget | $kc apply -n "$ns" -f - >/dev/null
	[[ $kc != kreal ]] || custom_objects Gadget | kreal apply -n "$ns" -f - >/dev/null
}

# custom_objects KIND: two example.com/v1 objects of KIND (KIND-a labelled
# app=web), as YAML documents.
custom_objects() {
	local kind=$1 lower=${1,,}
	printf 'apiVersion: example.com/v1\nkind: %s\nmetadata: {name: %s-a, labels: {app: web}}\nspec: {color: red, size: 3}\n---\n' "$kind" "$lower"
	printf 'apiVersion: example.com/v1\nkind: %s\nmetadata: {name: %s-b}\nspec: {color: blue, size: 5}\n' "$kind" "$lower"
}

# real_restart [COMMAND...]: restart the apiserver on the same etcd
# (down.sh --keep-etcd, COMMAND while it is down, up.sh). Every watch
# afterwards starts from a resourceVersion the new watch cache does not hold.
real_restart() {
	"$REALAPI_DIR/down.sh" --keep-etcd >/dev/null
	if (($#)); then
		"$@"
	fi
	real_up
}

# real_up: up.sh with no descriptor of bats's open: the apiserver it starts
# outlives the test, and bats waits for every writer of its pipes. up.sh
# gives up after 60 s, and an apiserver filling its watch cache with the
# 115,000 pods bench/run --real loads takes minutes: up.sh again (it starts
# nothing twice), ten times at most.
real_up() {
	(
		for fd in /proc/$BASHPID/fd/*; do
			fd=${fd##*/}
			((fd > 2)) && eval "exec $fd>&-"
		done
		for _ in 1 2 3 4 5 6 7 8 9; do
			"$REALAPI_DIR/up.sh" && exit 0
		done
		exec "$REALAPI_DIR/up.sh"
	) </dev/null >/dev/null 2>&1
}

# wait_for SECONDS COMMAND...: wait_until with a longer limit (a restart
# takes about 20 s to stop the apiserver, and client-go's backoff, which
# kinf follows, grows meanwhile).
wait_for() {
	local limit=$1 i
	shift
	for ((i = 0; i < limit * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	echo "timed out after $limit s waiting for: $*" >&2
	return 1
}

# real_etcdctl ...: etcdctl on the apiserver's etcd.
real_etcdctl() {
	ETCDCTL_API=3 "$REAL/etcd/usr/bin/etcdctl" --endpoints http://127.0.0.1:2379 "$@"
}

# at_least N PATTERN FILE: FILE has N lines or more matching PATTERN (for
# wait_until, which runs it again each time).
at_least() {
	(($(grep -c -- "$2" "$3") >= $1))
}

# same_output CMD_A -- CMD_B: run both (B first: kubectl, slow to start,
# before kinf), fail with a diff unless stdout and exit statuses agree.
# Tables' AGE cells are the server's clock at each request, seconds apart
# on a loaded machine: they may differ by no more than the seconds between
# the two runs (same_but_ages), every other cell must be equal. Tried
# three times, for an exact match first.
same_output() {
	local i
	for i in 1 2 3; do
		same_output_once "$@" 2>"$BATS_TEST_TMPDIR/same.err" && return 0
		sleep 0.3
	done
	cat "$BATS_TEST_TMPDIR/same.err" >&2
	return 1
}

same_output_once() {
	local a=() b=() seen=0 x
	for x in "$@"; do
		if [[ $x == -- && $seen == 0 ]]; then
			seen=1
		elif ((seen)); then
			b+=("$x")
		else
			a+=("$x")
		fi
	done
	local ra=0 rb=0 t0 t1
	t0=$(date +%s.%N)
	"${b[@]}" >"$BATS_TEST_TMPDIR/b.out" 2>"$BATS_TEST_TMPDIR/b.err" || rb=$?
	"${a[@]}" >"$BATS_TEST_TMPDIR/a.out" 2>"$BATS_TEST_TMPDIR/a.err" || ra=$?
	t1=$(date +%s.%N)
	if ((ra != rb)) || ! { cmp -s "$BATS_TEST_TMPDIR/b.out" "$BATS_TEST_TMPDIR/a.out" ||
		same_but_ages "$BATS_TEST_TMPDIR/b.out" "$BATS_TEST_TMPDIR/a.out" "$t0" "$t1"; }; then
		diff -u "$BATS_TEST_TMPDIR/b.out" "$BATS_TEST_TMPDIR/a.out" >&2
		echo "differ: ${a[*]} (status $ra) vs ${b[*]} (status $rb)" >&2
		cat "$BATS_TEST_TMPDIR/a.err" "$BATS_TEST_TMPDIR/b.err" >&2
		return 1
	fi
}

# same_but_ages FILE_B FILE_A T0 T1: the two outputs have the same lines of
# the same cells (split at blanks), except cells that are both kubectl
# durations (5s, 3m2s, 2d4h...) whose difference is at most T1 - T0
# seconds, rounded up (both runs began and ended between T0 and T1; the
# later is the older). Column padding is not compared here: widths follow
# the ages, and the exact comparison before this one checks it.
same_but_ages() {
	python3 - "$@" <<-'PY'
	import math, re, sys
	b, a, t0, t1 = open(sys.argv[1]).read(), open(sys.argv[2]).read(), *map(float, sys.argv[3:5])
	skew = math.ceil(t1 - t0) + 1
	unit = {'y': 365 * 86400, 'd': 86400, 'h': 3600, 'm': 60, 's': 1}
	dur = re.compile(r'^(?:\d+[ydhms])+$')

	def secs(cell):
	    if not dur.match(cell):
	        return None
	    return sum(int(n) * unit[u] for n, u in re.findall(r'(\d+)([ydhms])', cell))
	lb, la = b.splitlines(), a.splitlines()
	if len(lb) != len(la):
	    sys.exit(1)
	for x, y in zip(lb, la):
	    cx, cy = x.split(), y.split()
	    if len(cx) != len(cy):
	        sys.exit(1)
	    for p, q in zip(cx, cy):
	        if p == q:
	            continue
	        sp, sq = secs(p), secs(q)
	        # kubectl's coarser units (3m, 2h) round down: allow one of them.
	        if sp is None or sq is None or abs(sp - sq) > max(skew, 60 if sp >= 600 else 0):
	            sys.exit(1)
	PY
}
