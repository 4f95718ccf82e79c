#!/usr/bin/env bats
# kinf list against the real kube-apiserver, kubectl on the same server as
# the judge: tables (the server's as=Table), wide, name, json, yaml, paged
# lists, selectors, several types, errors; pods, deployments, configmaps and
# a custom resource (widgets.example.com).

load helpers

setup_file() {
	real_workload
}

teardown_file() {
	real_ns_delete
}

@test "tables: kinf list prints what kubectl get prints, per type and output" {
	local t o
	for t in pods deployments configmaps widgets wd gadgets gd deploy.apps gadgets.v1.example.com; do
		for o in '' wide name; do
			same_output kinf list "$t" -n "$NS" ${o:+-o $o} -- kreal get "$t" -n "$NS" ${o:+-o $o}
		done
	done
	same_output kinf list pods,deploy,cm,wd,gd -n "$NS" -- kreal get pods,deploy,cm,wd,gd -n "$NS"
	same_output kinf list deploy/web pod/web-1 gd/gadget-b -n "$NS" -- \
		kreal get deploy/web pod/web-1 gd/gadget-b -n "$NS"
	# Names in sorted order: kinf prints a table sorted (README), kubectl in
	# the order of the arguments.
	same_output kinf list pods db-1 web-1 -n "$NS" -o wide -- kreal get pods db-1 web-1 -n "$NS" -o wide
}

@test "selectors: label and field selectors select what kubectl's select" {
	local sel
	for sel in app=web 'app in (web,db)' '!tier' 'app,tier=front' 'app!=web'; do
		same_output kinf list pods -n "$NS" -l "$sel" -- kreal get pods -n "$NS" -l "$sel"
		same_output kinf list cm,wd -n "$NS" -l "$sel" -o name -- kreal get cm,wd -n "$NS" -l "$sel" -o name
	done
	for sel in spec.nodeName=node-a spec.nodeName!=node-a status.phase=Pending metadata.name=db-1; do
		same_output kinf list pods -n "$NS" --field-selector "$sel" -- \
			kreal get pods -n "$NS" --field-selector "$sel"
	done
	# Across namespaces, only this file's objects.
	same_output kinf list pods -A --field-selector "metadata.namespace=$NS" -- \
		kreal get pods -A --field-selector "metadata.namespace=$NS"
}

@test "-o json and -o yaml: the objects kubectl prints" {
	local t
	for t in pods deployments configmaps widgets gadgets; do
		diff -u <(kreal get "$t" -n "$NS" -o json | jq -S '.items[]') \
			<(kinf list "$t" -n "$NS" -o json | jq -S .)
	done
	diff -u <(kreal get pod web-1 -n "$NS" -o yaml) <(kinf list pod web-1 -n "$NS" -o yaml)
	diff -u <(kreal get wd widget-a -n "$NS" -o yaml) <(kinf list wd widget-a -n "$NS" -o yaml)
	diff -u <(kreal get cm app-config -n "$NS" -o yaml) <(kinf list cm app-config -n "$NS" -o yaml)
	diff -u <(kreal get deploy web -n "$NS" -o yaml --show-managed-fields) \
		<(kinf list deploy web -n "$NS" -o yaml --show-managed-fields)
}

@test "-o jsonpath and custom-columns: kubectl's templates" {
	local t='{range .items[*]}{.metadata.name}{"\t"}{.spec.containers[*].image}{"\n"}{end}'
	same_output kinf list pods -n "$NS" -o "jsonpath=$t" -- kreal get pods -n "$NS" -o "jsonpath=$t"
	t='NAME:.metadata.name,NODE:.spec.nodeName,PHASE:.status.phase'
	same_output kinf list pods -n "$NS" -o "custom-columns=$t" -- kreal get pods -n "$NS" -o "custom-columns=$t"
	t='{.items[*].spec.color}'
	same_output kinf list gd -n "$NS" -o "jsonpath=$t" -- kreal get gd -n "$NS" -o "jsonpath=$t"
}

@test "paged lists: --chunk-size 1 pages through the real server's continue tokens" {
	local o
	for o in '' name wide; do
		same_output kinf list pods -n "$NS" --chunk-size 1 ${o:+-o $o} -- \
			kreal get pods -n "$NS" --chunk-size 1 ${o:+-o $o}
	done
	diff -u <(kreal get pods -n "$NS" --chunk-size 1 -o json | jq -S '.items[]') \
		<(kinf list pods -n "$NS" --chunk-size 1 -o json | jq -S .)
	same_output kinf list cm,wd,gd -n "$NS" --chunk-size 1 -o name -- kreal get cm,wd,gd -n "$NS" --chunk-size 1 -o name
	# Three pods, a page each (the last page has no continue token).
	# The log alone (stdout's lines would fall between its own).
	run bash -c "'$KINF' list pods -n '$NS' --chunk-size 1 -o name -v=6 2>&1 >/dev/null"
	assert_success
	assert_line --regexp 'list: page 1, 1 items so far, resourceVersion [0-9]+, more$'
	assert_line --regexp 'list: page 3, 3 items so far, resourceVersion [0-9]+$'
	# An informer's first list asks for resourceVersion 0, which the real
	# server answers from its watch cache, whole: limit is ignored there.
	run kinf watch pods -n "$NS" --chunk-size 1 --exit-after-sync --stats -o name
	assert_success
	assert_line 'pages 1'
	assert_line 'items_listed 3'
}

@test "a continue token the server compacted away: kinf lists once more, as client-go's pager" {
	# Page one with curl, then an etcd compaction past its revision: the
	# real server's answer to the token, and kinf's handling of a list
	# that meets it (a token from another process cannot be handed to
	# kinf, so kinf's own case runs under a compaction loop).
	local page cont rev
	page=$(real_curl "/api/v1/namespaces/$NS/pods?limit=1")
	cont=$(jq -r .metadata.continue <<<"$page")
	kreal create configmap "compact-$RANDOM" -n "$NS" >/dev/null	# a revision after the token's
	rev=$(real_etcdctl endpoint status -w json | jq '.[0].Status.header.revision')
	real_etcdctl compact "$rev" >/dev/null
	run real_curl -o /dev/null -w '%{http_code}' "/api/v1/namespaces/$NS/pods?limit=1&continue=$cont"
	assert_output 410
	run real_curl "/api/v1/namespaces/$NS/pods?limit=1&continue=$cont"
	assert_output --partial '"reason":"Expired"'
	assert_output --partial 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.'
	run jq -r .metadata.continue <<<"$output"
	[ -n "$output" ] && [ "$output" != null ]
}

@test "errors: NotFound, unknown types, bad selectors, as kubectl words them" {
	run kinf list pod nope -n "$NS"
	assert_failure 1
	assert_output 'kinf: pods "nope" not found'
	run kreal get pod nope -n "$NS"
	assert_output 'Error from server (NotFound): pods "nope" not found'
	run kinf list wd nope -n "$NS"
	assert_failure 1
	assert_output 'kinf: widgets.example.com "nope" not found'
	run kreal get wd nope -n "$NS"
	assert_output 'Error from server (NotFound): widgets.example.com "nope" not found'
	run kinf list pods -n nope-ns-kinf
	assert_success
	assert_output 'No resources found in nope-ns-kinf namespace.'
	run kinf list bogus
	assert_failure 2
	assert_output --partial 'unknown resource type "bogus"'
	run kinf list pods -n "$NS" --field-selector spec.bogus=x
	assert_failure
	run kreal get pods -n "$NS" --field-selector spec.bogus=x
	assert_output --partial 'field label not supported: spec.bogus'
	run kinf list pods -n "$NS" --field-selector spec.bogus=x
	assert_output --partial 'field label not supported: spec.bogus'
}

@test "Warning headers: a deprecated version's warning once on stderr, as kubectl prints it" {
	run --separate-stderr kreal get gadgets.v1beta1.example.com -n "$NS" -o name
	assert_success
	local want=$stderr
	[[ $want == 'Warning: example.com/v1beta1 Gadget is "deprecated"; use example.com/v1' ]]
	run --separate-stderr kinf list gadgets.v1beta1.example.com -n "$NS" -o name
	assert_success
	[ "$stderr" = "$want" ]
	assert_output $'gadget.example.com/gadget-a\ngadget.example.com/gadget-b'
	# A paged list (a warning on every page) and a watch: still once.
	run --separate-stderr kinf list gadgets.v1beta1.example.com -n "$NS" --chunk-size 1 -o name
	[ "$stderr" = "$want" ]
	run --separate-stderr kinf watch gadgets.v1beta1.example.com -n "$NS" --exit-after-sync -o name
	[ "$stderr" = "$want" ]
}
