#!/usr/bin/env bats
# RBAC on the real kube-apiserver: the viewer contexts (token and client
# certificate), bound to ClusterRole view in namespace default only; 403
# wording and exit statuses against kubectl's; -A --accessible with its
# SelfSubjectAccessReviews; impersonation.

load helpers

setup_file() {
	real_workload
	real_objects default	# the viewer's namespace
	# Namespace listing for a group the admin may impersonate viewer with:
	# -A --accessible needs it (namespaces are cluster-scoped).
	kreal apply -f - >/dev/null <<-'YAML'
	apiVersion: rbac.authorization.k8s.io/v1
	kind: ClusterRole
	metadata: {name: kinf-real-namespace-lister}
	rules: [{apiGroups: [""], resources: [namespaces], verbs: [get, list, watch]}]
	---
	apiVersion: rbac.authorization.k8s.io/v1
	kind: ClusterRoleBinding
	metadata: {name: kinf-real-namespace-lister}
	roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kinf-real-namespace-lister}
	subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "kinf:namespace-listers"}]
	YAML
}

teardown_file() {
	real_ns_delete
	kreal delete -n default --ignore-not-found --grace-period=0 --force pod/web-1 pod/web-2 \
		pod/db-1 deploy/web cm/app-config cm/other wd/widget-a wd/widget-b gd/gadget-a \
		gd/gadget-b >/dev/null 2>&1 || true
}

@test "403: the same words as kubectl, exit status 1, for each viewer context" {
	local c args
	for c in viewer viewer-cert; do
		for args in "pods -A" "pods -n kube-system" "pods -n $NS" "nodes" "deploy -A" "gadgets -A"; do
			# shellcheck disable=SC2086
			run --separate-stderr kinf list $args --context "$c"
			assert_failure 1
			local mine=$stderr
			# shellcheck disable=SC2086
			run --separate-stderr kreal get $args --context "$c"
			assert_failure 1
			[ "$mine" = "kinf: ${stderr#Error from server (Forbidden): } (403 Forbidden)" ]
		done
		# Allowed in default: the same table.
		same_output kinf list pods,deploy,cm,gd -n default --context "$c" -- \
			kreal get pods,deploy,cm,gd -n default --context "$c"
	done
	# A watch: the 403 once, exit 1; in default it works.
	run --separate-stderr kinf watch pods -n kube-system --context viewer --exit-after-sync -o name
	assert_failure 1
	[[ $stderr == *'pods is forbidden: User "viewer" cannot list resource "pods" in API group "" in the namespace "kube-system" (403 Forbidden)' ]]
	run --separate-stderr kinf watch pods -n default,kube-system --context viewer --exit-after-sync -o name
	assert_failure 1
	diff -u <(kreal get pods -n default -o name) <(printf '%s\n' "$output")
	[ "$(grep -c forbidden <<<"$stderr")" -eq 1 ]
	[[ $stderr == 'kinf: pods in namespace "kube-system": pods is forbidden: '* ]]
}

@test "-A --accessible: namespaces are cluster-scoped, so a viewer of one namespace gets a clear 403" {
	run --separate-stderr kinf list pods -A --accessible --context viewer
	assert_failure 1
	[ "$stderr" = 'kinf: --accessible: namespaces: namespaces is forbidden: User "viewer" cannot list resource "namespaces" in API group "" at the cluster scope (403 Forbidden)' ]
	run --separate-stderr kinf watch pods -A --accessible --context viewer --exit-after-sync -o name
	assert_failure 1
	[[ $stderr == *'namespaces is forbidden: User "viewer" cannot list resource "namespaces"'* ]]
}

@test "-A --accessible: with namespaces listable, default alone, as kubectl auth can-i says" {
	local as=(--as viewer --as-group kinf:namespace-listers --as-group system:authenticated)
	[ "$(kreal auth can-i list pods -A "${as[@]}")" = no ]
	[ "$(kreal auth can-i list pods -n default "${as[@]}")" = yes ]
	[ "$(kreal auth can-i list pods -n "$NS" "${as[@]}")" = no ]
	run --separate-stderr kinf list pods,cm -A --accessible "${as[@]}" -v=1
	assert_success
	same_output kinf list pods,cm -A --accessible "${as[@]}" -- \
		kreal get pods,cm -A --field-selector metadata.namespace=default
	run --separate-stderr kinf watch pods,configmaps -A --accessible "${as[@]}" --exit-after-sync -o name
	assert_success
	diff -u <(kreal get pods,configmaps -n default -o name | sort) <(sort <<<"$output")
	run --separate-stderr kinf index pods -A --accessible "${as[@]}" --values app -o json
	assert_success
	diff -u <(kreal get pods -n default -o json | jq -r '[.items[].metadata.labels.app // empty] | group_by(.) | map("\(.[0]) \(length)") | .[]' | sort) \
		<(jq -r '"\(.value) \(.count)"' <<<"$output" | sort)
	# An admin: one list over every namespace.
	run --separate-stderr kinf list pods -A --accessible --field-selector "metadata.namespace=$NS" -o name
	assert_success
	diff -u <(kreal get pods -n "$NS" -o name) <(printf '%s\n' "$output")
}

@test "impersonation: --as and --as-group reach the server as kubectl sends them" {
	same_output kinf list pods -n default --as viewer -- kreal get pods -n default --as viewer
	run --separate-stderr kinf list pods -n kube-system --as viewer
	assert_failure 1
	[[ $stderr == *'User "viewer" cannot list resource "pods"'* ]]
	# The viewer may not impersonate: 403 naming impersonation.
	run --separate-stderr kinf list pods -n default --context viewer --as admin
	assert_failure 1
	local mine=$stderr
	run --separate-stderr kreal get pods -n default --context viewer --as admin
	[ "$mine" = "kinf: ${stderr#Error from server (Forbidden): } (403 Forbidden)" ]
}

@test "401: a token the server does not know is a credentials error, exit status 3" {
	run --separate-stderr kinf list pods -n default --token nope
	assert_failure 3
	[[ $stderr == *'Unauthorized'* ]]
	run --separate-stderr kreal get pods -n default --token nope
	assert_failure 1
	assert_equal "$stderr" 'error: You must be logged in to the server (Unauthorized)'
}
