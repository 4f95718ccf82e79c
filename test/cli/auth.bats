#!/usr/bin/env bats
# Authentication against the test API server: bearer token, token file,
# client certificate, exec credential plugins (token, expired token, cert,
# 401 re-run), the viewer's 403, and no credentials over plain http.
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	fakeapi_start
}

teardown_file() {
	fakeapi_stop
}

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
	URL=$(cat "$FAKEAPI_DIR/url")
	CA_B64=$(base64 -w0 < "$FAKEAPI_DIR/ca.crt")
	export PLUGIN_DIR="$BATS_TEST_TMPDIR/plugin"
	mkdir -p "$PLUGIN_DIR"
}

# A kubeconfig with one user, given as YAML lines (indented by 4).
kubeconfig_with_user() {
	cat > "$BATS_TEST_TMPDIR/kubeconfig" <<-EOF
	apiVersion: v1
	kind: Config
	current-context: t
	clusters:
	- name: fake
	  cluster:
	    server: $URL
	    certificate-authority-data: $CA_B64
	contexts:
	- name: t
	  context: {cluster: fake, user: u, namespace: default}
	users:
	- name: u
	  user:
	$1
	EOF
	echo "$BATS_TEST_TMPDIR/kubeconfig"
}

exec_user() {
	# YAML lines: spaces only (no tabs) after the first.
	kubeconfig_with_user "    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: $KINF_SOURCE_ROOT/test/fixtures/exec/kinf-cli-plugin
      interactiveMode: Never
      provideClusterInfo: true
      env:
      - {name: PLUGIN_DIR, value: $PLUGIN_DIR}
      - {name: FAKEAPI_DIR, value: $FAKEAPI_DIR}"
}

@test "bearer token (the admin context)" {
	fakeapi_ctl DELETE /_fake/requests
	run "$KINF" list pods -o name
	assert_success
	fakeapi_requests | jq -s -e 'all(.auth == "Bearer" and .user == "admin")'
}

@test "--tls-server-name: the certificate is checked against that name, as kubectl does" {
	# The test server's certificate names 127.0.0.1 and localhost.
	run "$KINF" list pods -o name --tls-server-name localhost --refresh
	assert_success
	[ "$output" = "$(kubectl_fake get pods -o name --tls-server-name localhost)" ]
	run --separate-stderr "$KINF" list pods --tls-server-name wrong.example --refresh
	assert_failure 1	# a TLS failure, as kubectl's (exit 1)
	[[ "$stderr" == *"wrong.example"* ]]
	run kubectl_fake get pods --tls-server-name wrong.example
	assert_failure
}

@test "--token overrides the kubeconfig's credentials" {
	run --separate-stderr "$KINF" list pods --token nope --refresh
	assert_failure 3
	[[ "$stderr" == *"Unauthorized"* ]]
	run "$KINF" list pods -o name --token "$(cat "$FAKEAPI_DIR/admin-token")"
	assert_success
}

@test "token file, re-read when it changes" {
	cp "$FAKEAPI_DIR/admin-token" "$BATS_TEST_TMPDIR/token"
	kc=$(kubeconfig_with_user "    tokenFile: $BATS_TEST_TMPDIR/token")
	run "$KINF" list pods -o name --kubeconfig "$kc"
	assert_success
	echo garbage > "$BATS_TEST_TMPDIR/token"
	run --separate-stderr "$KINF" list pods -o name --kubeconfig "$kc" --refresh
	assert_failure 3
}

@test "client certificate (the admin-cert context)" {
	fakeapi_ctl DELETE /_fake/requests
	run "$KINF" list pods -o name --context admin-cert
	assert_success
	fakeapi_requests | jq -s -e 'all(.client_cert_cn == "admin" and .auth == "none")'
}

@test "client certificate from files, relative to the kubeconfig" {
	cp "$FAKEAPI_DIR/admin.crt" "$FAKEAPI_DIR/admin.key" "$BATS_TEST_TMPDIR/"
	kc=$(kubeconfig_with_user "    client-certificate: admin.crt
    client-key: admin.key")
	run "$KINF" list pods -o name --kubeconfig "$kc"
	assert_success
}

@test "exec plugin: a token, cached for the whole run" {
	fakeapi_ctl POST /_fake/tokens '{"token":"exec-tok-1","user":"admin"}'
	echo "token:exec-tok-1" > "$PLUGIN_DIR/responses"
	kc=$(exec_user)
	run --separate-stderr "$KINF" list pods -o name --kubeconfig "$kc" --refresh
	assert_success
	[ "$(cat "$PLUGIN_DIR/count")" -eq 1 ]
	# KUBERNETES_EXEC_INFO with the cluster (provideClusterInfo).
	jq -e --arg url "$URL" '.kind == "ExecCredential" and .apiVersion == "client.authentication.k8s.io/v1" and
		.spec.interactive == false and .spec.cluster.server == $url' "$PLUGIN_DIR/info"
}

@test "exec plugin: an expired token is replaced by running the plugin again" {
	fakeapi_ctl POST /_fake/tokens '{"token":"exec-tok-2","user":"admin"}'
	printf 'expired:exec-tok-2\nexpired:exec-tok-2\nexpired:exec-tok-2\n' > "$PLUGIN_DIR/responses"
	kc=$(exec_user)
	run --separate-stderr "$KINF" list pods -o name --kubeconfig "$kc" --refresh
	assert_success
	# Discovery and the list: every request found the credential expired.
	[ "$(cat "$PLUGIN_DIR/count")" -ge 2 ]
}

@test "exec plugin: a client certificate" {
	echo cert > "$PLUGIN_DIR/responses"
	kc=$(exec_user)
	fakeapi_ctl DELETE /_fake/requests
	run --separate-stderr "$KINF" list pods -o name --kubeconfig "$kc" --refresh
	assert_success
	fakeapi_requests | jq -s -e 'all(.client_cert_cn == "admin")'
}

@test "exec plugin: a 401 runs the plugin again once" {
	fakeapi_ctl POST /_fake/tokens '{"token":"exec-tok-3","user":"admin"}'
	printf 'token:revoked\ntoken:exec-tok-3\n' > "$PLUGIN_DIR/responses"
	kc=$(exec_user)
	run --separate-stderr "$KINF" list pods -o name --kubeconfig "$kc" --refresh
	assert_success
	[ "$(cat "$PLUGIN_DIR/count")" -eq 2 ]
}

@test "exec plugin that fails: exit status 3, its stderr passes through" {
	echo fail > "$PLUGIN_DIR/responses"
	kc=$(exec_user)
	run --separate-stderr "$KINF" list pods -o name --kubeconfig "$kc" --refresh
	assert_failure 3
	[[ "$stderr" == *"kinf-cli-plugin: no credentials today"* ]]
	[[ "$stderr" == *"kinf: "* ]]
}

@test "a token that expires on the server: 401 is exit status 3" {
	fakeapi_ctl POST /_fake/tokens '{"token":"short","user":"admin","expires_in":0}'
	run --separate-stderr "$KINF" list pods --token short --refresh
	assert_failure 3
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
}

@test "the viewer gets 403 outside its namespace" {
	run --separate-stderr "$KINF" list pods -A --context viewer
	assert_failure 1
	[[ "$stderr" == *'pods is forbidden: User "viewer" cannot list resource "pods"'* ]]
	[[ "$stderr" == *"(403 Forbidden)" ]]
}

@test "credentials are never sent over plain http" {
	kc=$(kubeconfig_with_user "    token: $(cat "$FAKEAPI_DIR/admin-token")")
	sed -i "s|server: https://|server: http://|" "$kc"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc" --refresh
	assert_failure 3
	[[ "$stderr" == *"refusing to send credentials"*"plain http"* ]]
}

@test "--insecure-skip-tls-verify warns once on stderr" {
	run --separate-stderr "$KINF" list pods -o name --insecure-skip-tls-verify --refresh
	assert_success
	[ "$(printf '%s\n' "$stderr" | grep -c 'TLS verification is off')" -eq 1 ]
}

@test "basic auth (username and password)" {
	fakeapi_ctl POST /_fake/tokens '{"token":"basic:alice:s3cret pw","user":"admin"}'
	kc=$(kubeconfig_with_user "    username: alice
    password: s3cret pw")
	fakeapi_ctl DELETE /_fake/requests
	run --separate-stderr "$KINF" list pods -o name --kubeconfig "$kc" --refresh
	assert_success
	fakeapi_requests | jq -s -e 'all(.auth == "Basic" and .user == "admin")'
	sed -i 's/s3cret pw/wrong/' "$kc"
	run --separate-stderr "$KINF" list pods -o name --kubeconfig "$kc" --refresh
	assert_failure 3
}

@test "the cluster's proxy-url carries the connection (HTTP CONNECT)" {
	/usr/bin/python3 "$KINF_SOURCE_ROOT/test/fixtures/proxy/connect_proxy.py" "$BATS_TEST_TMPDIR" 3>&- &
	proxy=$!
	for _ in $(seq 1 100); do [ -e "$BATS_TEST_TMPDIR/proxy-ready" ] && break; sleep 0.05; done
	kc=$(kubeconfig_with_user "    token: $(cat "$FAKEAPI_DIR/admin-token")")
	sed -i "s|^    server: .*|&\n    proxy-url: $(cat "$BATS_TEST_TMPDIR/proxy-url")|" "$kc"
	run --separate-stderr "$KINF" list pods -o name --kubeconfig "$kc" --refresh
	kill "$proxy"
	assert_success
	grep -q "^CONNECT 127.0.0.1:" "$BATS_TEST_TMPDIR/proxy.log"
	# An unsupported scheme is a kubeconfig error.
	sed -i "s|proxy-url: http://|proxy-url: ftp://|" "$kc"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_failure 3
}

# impersonation_headers: the Impersonate-* headers of the recorded pods
# requests (names lower-cased: Go canonicalizes them), sorted, one set per
# line; the record is cleared.
impersonation_headers() {
	fakeapi_requests | jq -c 'select(.resource == "pods") | .impersonate |
		map([(.[0] | ascii_downcase), .[1]]) | sort' | sort -u
	fakeapi_ctl DELETE /_fake/requests >/dev/null
}

@test "impersonation: the headers kubectl sends, from the kubeconfig and from --as, --as-group, --as-uid" {
	kubectl_fake version --client >/dev/null
	kc=$(kubeconfig_with_user "    token: $(cat "$FAKEAPI_DIR/admin-token")
    as: bob
    as-uid: \"1234\"
    as-groups: [kg1, kg2]
    as-user-extra:
      example.com/scopes: [read, \"write all\"]
      \"a%b c\": [x]
      \"ü\": [yy]
      Upper_Case: [\"\"]
      none: []")
	fakeapi_ctl DELETE /_fake/requests >/dev/null
	for flags in "" "--as alice" "--as-group fg --as-group g2" "--as-group=" "--as-uid 99" \
			"--token $(cat "$FAKEAPI_DIR/admin-token")" "--as= --as-uid= --as-group=x"; do
		# shellcheck disable=SC2086
		kubectl --kubeconfig "$kc" get pods $flags >/dev/null
		want=$(impersonation_headers)
		# shellcheck disable=SC2086
		run "$KINF" list pods --kubeconfig "$kc" $flags -o name
		assert_success
		assert_equal "$(impersonation_headers)" "$want"
		[[ $want == *impersonate-user* ]]
	done
	# the header set itself, for the record
	run "$KINF" list pods --kubeconfig "$kc" --as alice --as-group g -o name
	assert_equal "$(impersonation_headers)" '[["impersonate-extra-%c3%bc","yy"],["impersonate-extra-a%25b%20c","x"],["impersonate-extra-example.com%2fscopes","read"],["impersonate-extra-example.com%2fscopes","write all"],["impersonate-extra-upper_case",""],["impersonate-group","g"],["impersonate-uid","1234"],["impersonate-user","alice"]]'
}

@test "impersonation: uid, groups or extra without a user is refused, as kubectl does" {
	kubectl_fake version --client >/dev/null
	kc=$(kubeconfig_with_user "    token: $(cat "$FAKEAPI_DIR/admin-token")
    as: \"\"
    as-groups: [devs]")
	run --separate-stderr kubectl --kubeconfig "$kc" get pods
	assert_failure
	assert_equal "$stderr" "error: requesting uid, groups or user-extra for u without impersonating a user"
	run --separate-stderr "$KINF" list pods --kubeconfig "$kc"
	assert_failure 3
	assert_equal "$stderr" "kinf: invalid configuration: requesting uid, groups or user-extra for u without impersonating a user"
	# --as makes it whole; a flag alone asks the same
	run "$KINF" list pods --kubeconfig "$kc" --as alice -o name
	assert_success
	run --separate-stderr "$KINF" list pods --as-uid 5
	assert_failure 3
	assert_equal "$stderr" "kinf: invalid configuration: requesting uid, groups or user-extra for admin without impersonating a user"
	# no impersonation at all: no headers
	fakeapi_ctl DELETE /_fake/requests >/dev/null
	run "$KINF" list pods -o name
	assert_success
	assert_equal "$(impersonation_headers)" "[]"
}
