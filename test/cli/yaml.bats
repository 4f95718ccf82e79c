#!/usr/bin/env bats
# -o yaml reads back as the data it came from: a corpus of strings that
# YAML readers like to turn into something else (test/fixtures/yaml), read
# back by PyYAML (pure and libyaml loaders) and by kubectl, and laid out as
# kubectl lays it out (kubectl get -o yaml against the test API server).
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	fakeapi_start
	export FIX="$KINF_SOURCE_ROOT/test/fixtures/yaml"
	{
		"$FIX/objects.sh" "$FIX/strings.json" yaml
		"$FIX/objects.sh" "$FIX/strings-control.json" yamlctl
	} | while IFS= read -r obj; do
		fakeapi_curl -f -o /dev/null -X POST -H 'Content-Type: application/json' \
			--data-binary "$obj" /api/v1/namespaces/default/configmaps
	done
	# As written (jq would round its large integers).
	fakeapi_curl -f -o /dev/null -X POST -H 'Content-Type: application/json' \
		--data-binary "@$FIX/types.json" /apis/example.com/v1/namespaces/default/widgets
}

teardown_file() {
	fakeapi_stop
}

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
}

require_pyyaml() {
	/usr/bin/python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed"
}

# kinf's -o yaml and -o json of RESOURCE [NAME...] into $Y and $J.
both() {
	Y="$BATS_TEST_TMPDIR/out.yaml" J="$BATS_TEST_TMPDIR/out.json"
	kinf list "$@" -n default --show-managed-fields -o yaml > "$Y"
	kinf list "$@" -n default --show-managed-fields -o json > "$J"
}

@test "python3-yaml reads -o yaml back as the JSON, value for value" {
	require_pyyaml
	both cm yaml-values yaml-keys yamlctl-values yamlctl-keys
	[ "$(wc -l < "$J")" -eq 4 ]
	run /usr/bin/python3 "$FIX/readback.py" "$Y" "$J"
	assert_success
	both wd yaml-types
	run /usr/bin/python3 "$FIX/readback.py" "$Y" "$J"
	assert_success
}

@test "kubectl reads -o yaml back as the JSON" {
	require_kubectl
	for r in "cm yaml-values yaml-keys yamlctl-values yamlctl-keys" "wd yaml-types"; do
		both $r
		kubectl_fake create --dry-run=client -o json -f - < "$Y" |
			jq -S -c 'if .kind == "List" then .items[] else . end |
				del(.metadata.managedFields)' > "$BATS_TEST_TMPDIR/kubectl.json"
		jq -S -c 'del(.metadata.managedFields)' "$J" > "$BATS_TEST_TMPDIR/kinf.json"
		# jq's == compares numbers as numbers (-0 is 0, 1.0 is 1).
		jq -n -e --slurpfile a "$BATS_TEST_TMPDIR/kinf.json" \
			--slurpfile b "$BATS_TEST_TMPDIR/kubectl.json" '$a == $b' ||
			diff "$BATS_TEST_TMPDIR/kinf.json" "$BATS_TEST_TMPDIR/kubectl.json"
	done
}

@test "-o yaml is laid out as kubectl's: quotes, literal blocks, key order, folding" {
	require_kubectl
	for r in "cm yaml-values" "wd yaml-types" "cm app-config"; do
		both $r
		kubectl_fake get $r -n default --show-managed-fields -o yaml |
			sed -f "$FIX/kubectl.sed" > "$BATS_TEST_TMPDIR/kubectl.yaml"
		run diff -u "$BATS_TEST_TMPDIR/kubectl.yaml" "$Y"
		assert_success
	done
	# Keys: the same lines. Keys such as "0777", "0xG" and "1.0e+3" have no
	# order in go-yaml's comparison (it is not transitive: 0777 < 0xG <
	# 1.0e+3 < 01:20 < 0777), so kubectl's order of them is its sort
	# algorithm's; every other key sorts as kubectl sorts it.
	both cm yaml-keys
	kubectl_fake get cm yaml-keys -n default --show-managed-fields -o yaml |
		sed -f "$FIX/kubectl.sed" | sort > "$BATS_TEST_TMPDIR/kubectl.yaml"
	run diff -u "$BATS_TEST_TMPDIR/kubectl.yaml" <(sort "$Y")
	assert_success
}

@test "-o yaml: what kubectl prints for the issue's examples" {
	both cm yaml-values
	grep -qx '  v036: "0x1F"' "$Y"
	grep -qx '  v047: "0b101"' "$Y"
	grep -qx '  creationTimestamp: "[0-9T:Z-]*"' "$Y"
	# A multi-line string is a literal block, chomped as its ending asks.
	grep -A2 -x '  v202: |-' "$Y" | grep -qx '    line2'
	grep -qx '  v204: |' "$Y"
	grep -qx '  v205: |+' "$Y"
}
