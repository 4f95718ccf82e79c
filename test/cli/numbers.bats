#!/usr/bin/env bats
# Numbers past int64 and float64's precision (issue 21): a custom resource
# holding them (test/fixtures/numbers/widget.json, created as a client
# would, so the test server re-encodes it as kube-apiserver does) goes
# through every output, watch, index and serve with no object lost and no
# number changed; where a value is formatted, as kubectl formats it. A
# recorded stream (stream.json) brings literals no Go server writes, and
# one beyond float64's range.
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	fakeapi_start
	export FIX="$KINF_SOURCE_ROOT/test/fixtures/numbers"
	export WD=/apis/example.com/v1/namespaces/default/widgets
	fakeapi_curl -f -o /dev/null -X POST -H 'Content-Type: application/json' \
		--data-binary "@$FIX/widget.json" "$WD"
	# The columns every number of the object shows in (kubectl's %v).
	local c=N:.metadata.name k
	for k in big bigneg e20 e20int e21 exact exactneg exp expneg huge list max maxf \
			min negzero negzerof one past small tiny under; do
		c+=",${k^^}:.spec.$k"
	done
	export COLS=$c
}

teardown_file() {
	# What the tests started in the background, should one have failed
	# before stopping it (a test's variables do not reach here: pid files).
	local p
	for p in $(cat "$BATS_FILE_TMPDIR/serve/pid" "$BATS_FILE_TMPDIR/pids" 2>/dev/null); do
		kill -TERM "$p" 2>/dev/null || true
	done
	fakeapi_stop
}

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
}

# The "spec":{...} of JSON text on stdin (spec is flat but for a list).
spec_of() {
	grep -o '"spec":{[^}]*}'
}

# kubectl's answer and kinf's, the same: same COMMAND ARGS for both
# (kinf list for kubectl get).
same_as_kubectl() {
	local want got
	want=$(kubectl_fake get "$@")
	got=$(kinf list "$@")
	[[ $got == "$want" ]] || { diff <(echo "$want") <(echo "$got") >&2; return 1; }
}

@test "the test server stores and serves numbers as kube-apiserver does" {
	# What sigs.k8s.io/json (PreserveInts) and encoding/json make of the
	# fixture, twice (the create, then the read back from storage).
	run fakeapi_curl -f "$WD/numbers"
	assert_success
	[[ $(spec_of <<<"$output") == "$(<"$FIX/served-spec.json")" ]]
	# Beyond float64: refused with the real server's message.
	run fakeapi_curl -X POST -H 'Content-Type: application/json' --data-binary \
		'{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"x"},"spec":{"a":1e400}}' "$WD"
	assert_output --partial '"message":"Widget in version \"v1\" cannot be handled as a Widget: json: cannot unmarshal number 1e400 into Go value of type float64","reason":"BadRequest","code":400}'
}

@test "-o json: the object as the server sent it, every literal kept" {
	run --separate-stderr kinf list widgets numbers -n default -o json
	assert_success
	[[ $(spec_of <<<"$output") == "$(<"$FIX/served-spec.json")" ]]
	run --separate-stderr kinf list widgets -n default -l numbers=yes -o json
	[[ $(spec_of <<<"$output") == "$(<"$FIX/served-spec.json")" ]]
}

@test "-o yaml: the literals, never rounded through a float64 (kubectl's are)" {
	run --separate-stderr kinf list widgets numbers -n default -o yaml
	assert_success
	local line
	for line in 'big: 12345678901234567000' 'bigneg: -12345678901234567000' \
			'e20: 100000000000000000000' 'e21: 1.0e+21' 'exact: 9007199254740993' \
			'exactneg: -9007199254740993' 'expneg: -0.0025' 'huge: 1.0e+300' \
			'max: 9223372036854775807' 'maxf: 1.7976931348623157e+308' \
			'min: -9223372036854775808' 'past: 9223372036854776000' 'small: 0.00001' \
			'tiny: 1.0e-7' '- 100000000000000000000' '- 12345678901234567000'; do
		assert_line "  $line"
	done
	# A YAML 1.1 reader takes each as the number the JSON holds.
	if /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
		kinf list widgets numbers -n default -o yaml > "$BATS_TEST_TMPDIR/y"
		kinf list widgets numbers -n default -o json > "$BATS_TEST_TMPDIR/j"
		run /usr/bin/python3 "$KINF_SOURCE_ROOT/test/fixtures/yaml/readback.py" \
			"$BATS_TEST_TMPDIR/y" "$BATS_TEST_TMPDIR/j"
		assert_success
	fi
}

@test "custom-columns and jsonpath print what kubectl prints (Go's %v)" {
	require_kubectl
	same_as_kubectl widgets -n default -o "custom-columns=$COLS"
	same_as_kubectl widgets numbers -n default -o "custom-columns=$COLS"
	same_as_kubectl widgets -n default -o \
		'jsonpath={range .items[*]}{.metadata.name} {.spec.big} {.spec.e20} {.spec.exact} {.spec.tiny} {.spec.list} {.spec.negzero}{"\n"}{end}'
	# Maps and lists as encoding/json writes them.
	same_as_kubectl widgets numbers -n default -o 'jsonpath={.spec}'
	same_as_kubectl widgets numbers -n default -o 'jsonpath={.spec.list[*]} {.spec.list}'
	# A filter compares exactly (9007199254740993 is not ...992).
	run --separate-stderr kinf list widgets -n default -o \
		'jsonpath={.items[?(@.spec.exact==9007199254740993)].metadata.name}/{.items[?(@.spec.exact==9007199254740992)].metadata.name}/{.items[?(@.spec.e20==1e20)].metadata.name}'
	assert_output 'numbers//numbers'
	run --separate-stderr kinf list widgets numbers -n default -o 'jsonpath={.spec.big} {.spec.e20} {.spec.exact}'
	assert_output '1.2345678901234567e+19 1e+20 9007199254740993'
}

@test "tables, selectors, watch, index and --sort-by keep the object" {
	run --separate-stderr kinf list widgets -n default
	assert_line --regexp '^numbers +[0-9]'
	run --separate-stderr kinf list widgets -n default -o wide -l numbers=yes
	assert_line --regexp '^numbers +[0-9]'
	run --separate-stderr kinf list widgets -n default --field-selector metadata.name=numbers -o name
	assert_output widget.example.com/numbers
	run --separate-stderr kinf watch widgets -n default --exit-after-sync --timestamps none
	assert_success
	assert_line --regexp '^ADDED +numbers +[0-9]'
	run --separate-stderr kinf watch widgets -n default --exit-after-sync -o wide
	assert_line --regexp ' numbers +[0-9]'
	run --separate-stderr kinf watch widgets -n default --exit-after-sync -o "custom-columns=$COLS"
	assert_success
	if command -v kubectl >/dev/null; then
		[[ $output == "$(kubectl_fake get widgets -n default -o "custom-columns=$COLS")" ]]
	fi
	run --separate-stderr kinf watch widgets -n default --exit-after-sync \
		-o 'jsonpath={.metadata.name} {.spec.past}{"\n"}'
	assert_line 'numbers 9.223372036854776e+18'
	run --separate-stderr kinf watch widgets -n default --exit-after-sync -o yaml
	assert_line '    e20: 100000000000000000000'
	# Index keys are the literals as sent.
	run --separate-stderr kinf index widgets -n default --by field:spec.e20=100000000000000000000
	assert_success
	assert_line --regexp '^numbers +[0-9]'
	run --separate-stderr kinf index widgets -n default --by field:spec.big=12345678901234567000 -o json
	[[ $(spec_of <<<"$output") == "$(<"$FIX/served-spec.json")" ]]
	run --separate-stderr kinf index widgets -n default --values field:spec.exact
	assert_line --regexp '^9007199254740993 +1$'
	run --separate-stderr kinf index widgets -n default --by numbers=yes -o 'custom-columns=N:.metadata.name,B:.spec.big'
	assert_line --regexp '^numbers +1.2345678901234567e\+19$'
	# --sort-by: the objects without the field first, as kubectl's, then it.
	run --separate-stderr kinf list widgets -n default --sort-by .spec.big -o name
	assert_success
	[[ ${lines[2]} == widget.example.com/numbers ]]
}

@test "list -w, as kubectl get -w: the list and the events show the object" {
	run --separate-stderr timeout 2 "$KINF" list widgets -n default -w -o "custom-columns=$COLS"
	assert_line --regexp '^numbers +1.2345678901234567e\+19 +-1.2345678901234567e\+19 +1e\+20 '
	local out=$BATS_TEST_TMPDIR
	fakeapi_ctl DELETE requests >/dev/null
	"$KINF" list widgets numbers -n default --watch-only \
		-o 'jsonpath={.spec.big} {.spec.e20} {.metadata.labels.touch}{"\n"}' > "$out/jp" 2>&1 3>&- &
	local p1=$!
	echo "$p1" >> "$BATS_FILE_TMPDIR/pids"
	"$KINF" list widgets -n default --watch-only > "$out/table" 2>&1 3>&- &
	local p2=$!
	echo "$p2" >> "$BATS_FILE_TMPDIR/pids"
	wait_until eval '[[ $(fakeapi_requests | grep -c "\"verb\":\"watch\",\"resource\":\"widgets\"") -ge 2 ]]'
	fakeapi_curl -f -o /dev/null -X PATCH -H 'Content-Type: application/merge-patch+json' \
		--data-binary '{"metadata":{"labels":{"touch":"1"}}}' "$WD/numbers"
	wait_until grep -q ' 1$' "$out/jp"
	wait_until grep -q '^numbers ' "$out/table"
	kill "$p1" "$p2"
	wait "$p1" "$p2" || true
	run cat "$out/jp"
	assert_output '1.2345678901234567e+19 1e+20 1'
}

@test "--for jsonpath sees the object, as kubectl wait does" {
	run --separate-stderr kinf watch widgets numbers -n default --for 'jsonpath={.spec.e20}=1e+20' --timeout 20s
	assert_success
	run --separate-stderr kinf watch widgets numbers -n default --for 'jsonpath={.spec.big}=1.2345678901234567e+19' --timeout 20s
	assert_success
	if command -v kubectl >/dev/null; then
		kubectl_fake wait widgets/numbers -n default --for 'jsonpath={.spec.e20}=1e+20' --timeout 20s
	fi
}

@test "--diff shows a change beyond float64's precision, with the literals" {
	"$KINF" watch widgets numbers -n default --watch-only --diff -o json -v \
		> "$BATS_TEST_TMPDIR/ev" 2> "$BATS_TEST_TMPDIR/err" 3>&- &
	local pid=$!
	echo "$pid" >> "$BATS_FILE_TMPDIR/pids"
	ERR=$BATS_TEST_TMPDIR/err wait_until grep -Eq 'watch /apis/example.com/v1/namespaces/default/widgets.* from' "$BATS_TEST_TMPDIR/err"
	fakeapi_curl -f -o /dev/null -X PATCH -H 'Content-Type: application/merge-patch+json' \
		--data-binary '{"spec":{"exact":9007199254740992,"e20":1e21}}' "$WD/numbers"
	wait_until grep -q '"type":"UPDATED"' "$BATS_TEST_TMPDIR/ev"
	kill -TERM "$pid"
	wait "$pid" || true
	run grep -o '"diff":.*' "$BATS_TEST_TMPDIR/ev"
	assert_output '"diff":[{"path":".metadata.generation","old":1,"new":2},{"path":".spec.e20","old":100000000000000000000,"new":1e+21},{"path":".spec.exact","old":9007199254740993,"new":9007199254740992}]}'
	fakeapi_curl -f -o /dev/null -X PATCH -H 'Content-Type: application/merge-patch+json' \
		--data-binary '{"spec":{"exact":9007199254740993,"e20":1e20}}' "$WD/numbers"
}

@test "recorded literals no Go server writes: kept by json and yaml, Go's values elsewhere" {
	run --separate-stderr kinf watch --from "$FIX/stream.json" -o json
	assert_success
	[[ $(grep -o '"object":.*' <<<"$output" | sed 's/}$//') == "$(grep -o '"object":.*' "$FIX/stream.json" | sed 's/}$//')" ]]
	run --separate-stderr kinf watch --from "$FIX/stream.json" -o yaml
	assert_success
	assert_line '    big: 12345678901234567890'
	assert_line '    dec: 1.50'
	assert_line '    e: 1.0E+2'
	assert_line '    negzero: -0'
	assert_line '    - -0.0'
	assert_line '    - 1.0e+400'
	run --separate-stderr kinf watch --from "$FIX/stream.json" --timestamps none
	assert_success
	assert_line --regexp '^ADDED +default +raw '
	assert_line --regexp '^ADDED +default +toobig '
	run --separate-stderr kinf index widgets --from "$FIX/stream.json" --by field:spec.big=12345678901234567890 --keys
	assert_output default/raw
}

@test "a number beyond float64's range: the object and the field named, the others printed" {
	run --separate-stderr kinf watch --from "$FIX/stream.json" \
		-o 'jsonpath={.metadata.name} {.spec.big} {.spec.dec} {.spec.e} {.spec.x}{"\n"}'
	assert_failure 1
	assert_output 'raw 1.2345678901234567e+19 1.5 100 [100000000000000000000,-0]'
	[[ $stderr == 'kinf: object "default/toobig": field .spec.huge[1]: number 1e400 is beyond float64'"'"'s range' ]]
	run --separate-stderr kinf watch --from "$FIX/stream.json" -o 'custom-columns=N:.metadata.name,A:.spec.a'
	assert_failure 1
	assert_output $'N     A\nraw   <none>'
	[[ $stderr == *'object "default/toobig": field .spec.huge[1]: number 1e400'* ]]
	run --separate-stderr kinf watch --from "$FIX/stream.json" --for 'jsonpath={.spec.a}=1' --all --timeout 5s
	assert_failure
	[[ $stderr == *'object "default/toobig": field .spec.huge[1]: number 1e400 is beyond float64'* ]]
	[[ $stderr != *'out of memory'* ]]
}

serve_up() {
	local dir=$BATS_FILE_TMPDIR/serve
	mkdir -p "$dir"
	"$KINF" serve widgets -A --listen tcp:127.0.0.1:0 --write-kubeconfig "$dir/kubeconfig" \
		>"$dir/log" 2>&1 </dev/null 3>&- &
	SERVE_PID=$!
	echo "$SERVE_PID" > "$dir/pid"
	export SERVE_PID SERVE_KC=$dir/kubeconfig
	ERR=$dir/log wait_until grep -q 'listening on' "$dir/log"
	wait_until test -s "$dir/kubeconfig"
}

# kubectl through kinf serve.
kserve() {
	KUBECACHEDIR=$BATS_FILE_TMPDIR/kcache-serve kubectl --kubeconfig "$SERVE_KC" "$@"
}

@test "serve: kubectl reads through it what it reads from the server" {
	require_kubectl
	serve_up
	local a
	# Tables without the AGE column (two clocks read it a moment apart).
	for a in "get widgets -n default" "get widgets -n default -o wide" \
			"get widgets numbers -n default"; do
		run --separate-stderr kserve $a
		assert_success
		[[ $(awk '{ $2 = ""; print }' <<<"$output") == \
			"$(kubectl_fake $a | awk '{ $2 = ""; print }')" ]]
	done
	for a in "get widgets -n default -o json" "get widgets numbers -n default -o yaml" \
			"get widgets -n default -o custom-columns=$COLS" \
			"get widgets numbers -n default -o jsonpath={.spec}"; do
		run --separate-stderr kserve $a
		assert_success
		[[ $output == "$(kubectl_fake $a)" ]] || { diff <(kubectl_fake $a) <(echo "$output"); false; }
	done
	# The literals on serve's own wire: a list, a get, a watch.
	local url
	url=$(kserve config view --minify -o 'jsonpath={.clusters[0].cluster.server}')
	local tok
	tok=$(kserve config view --minify --raw -o 'jsonpath={.users[0].user.token}')
	for q in "?labelSelector=numbers%3Dyes" /numbers \
			"?watch=1&timeoutSeconds=1&labelSelector=numbers%3Dyes"; do
		run curl -sS -k -H "Authorization: Bearer $tok" "$url$WD$q"
		[[ $(spec_of <<<"$output") == "$(<"$FIX/served-spec.json")" ]]
	done
	# Tables, listed and watched: the row is there (never a 500).
	for q in "?labelSelector=numbers%3Dyes" "?watch=1&timeoutSeconds=1&labelSelector=numbers%3Dyes"; do
		run curl -sS -k -H "Authorization: Bearer $tok" \
			-H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' "$url$WD$q"
		assert_output --partial '"rows":[{"cells":["numbers",'
	done
}
