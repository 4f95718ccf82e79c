#!/usr/bin/env bats
# The shell completions: bash by calling its completion function with
# COMP_WORDS/COMP_CWORD set, as bash does; fish with `complete -C` and zsh
# through a pseudo-terminal when those shells are installed, syntax only
# otherwise.
bats_require_minimum_version 1.5.0

# The test API server, for what only a cluster knows (object names, label
# keys): the tests that use it point KUBECONFIG at it themselves.
setup_file() {
	load helpers
	fakeapi_start
	export KINF_SOURCE_ROOT=${KINF_SOURCE_ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
	export KINF=${KINF:-$KINF_SOURCE_ROOT/build/cmd/kinf/kinf}
	export FAKE_KUBECONFIG=$KUBECONFIG FAKE_CACHE=$XDG_CACHE_HOME
}

teardown_file() {
	load helpers
	fakeapi_stop
}

# Use the test API server (and its discovery cache) from here on.
use_fake() {
	export KUBECONFIG=$FAKE_KUBECONFIG XDG_CACHE_HOME=$FAKE_CACHE
}

# Candidates of kinf __complete, without the directive line.
complete_kinf() {
	"$KINF" __complete "$@" | sed '/^:[0-9]*$/d'
}

setup() {
	export BATS_LIB_PATH=${BATS_LIB_PATH:-/usr/lib/bats}
	bats_load_library bats-support
	bats_load_library bats-assert
	ROOT=${KINF_SOURCE_ROOT:-$BATS_TEST_DIRNAME/../..}
	BASH_COMP=$ROOT/completions/bash/kinf
	ZSH_COMP=$ROOT/completions/zsh/_kinf
	FISH_COMP=$ROOT/completions/fish/kinf.fish
	T=$BATS_TEST_TMPDIR
	# Nothing from the person running the tests.
	export HOME=$T/home
	mkdir -p "$HOME"
	unset KUBECONFIG XDG_CACHE_HOME
	make_kubeconfig
	make_discovery_cache
}

make_kubeconfig() {
	cat >"$T/kubeconfig" <<'EOF'
apiVersion: v1
kind: Config
clusters:
- cluster:
    server: https://127.0.0.1:6443
  name: cluster-one
contexts:
- context:
    cluster: cluster-one
    user: alice
    namespace: team-a
  name: dev-east
- name: "prod-west"   # quoted, name first
  context:
    cluster: cluster-one
    user: alice
current-context: dev-east
users:
- name: alice
  user:
    token: not-a-secret
EOF
	cat >"$T/other-kubeconfig" <<'EOF'
apiVersion: v1
kind: Config
contexts:
  - name: staging
    context:
      cluster: c
      user: u
clusters: []
users:
  - name: not-a-context
EOF
}

# Two servers' caches: one compact as kinf writes it, one pretty-printed.
make_discovery_cache() {
	local d=$T/cache/kinf/discovery
	mkdir -p "$d/127.0.0.1_6443" "$d/other.example_443"
	cat >"$d/127.0.0.1_6443/discovery.json" <<'EOF'
{"kind":"KinfDiscoveryCache","version":1,"server":"https://127.0.0.1:6443","fetchTime":1700000000,"discovery":{"apiVersion":"apidiscovery.k8s.io/v2","kind":"APIGroupDiscoveryList","items":[{"metadata":{"name":""},"versions":[{"version":"v1","freshness":"Current","resources":[{"resource":"pods","responseKind":{"group":"","version":"v1","kind":"Pod"},"scope":"Namespaced","singularResource":"pod","verbs":["get","list","watch"],"shortNames":["po"]},{"resource":"namespaces","responseKind":{"group":"","version":"v1","kind":"Namespace"},"scope":"Cluster","singularResource":"namespace","verbs":["get","list","watch"],"shortNames":["ns"]}]}]},{"metadata":{"name":"apps"},"versions":[{"version":"v1","freshness":"Current","resources":[{"resource":"deployments","responseKind":{"group":"apps","version":"v1","kind":"Deployment"},"scope":"Namespaced","singularResource":"deployment","verbs":["get","list","watch"],"shortNames":["deploy"]}]}]}]}}
EOF
	cat >"$d/other.example_443/discovery.json" <<'EOF'
{
  "kind": "KinfDiscoveryCache",
  "version": 1,
  "server": "https://other.example:443",
  "fetchTime": 1700000000,
  "discovery": {
    "items": [
      {
        "metadata": { "name": "example.com" },
        "versions": [
          {
            "version": "v1",
            "resources": [
              { "resource": "widgets", "scope": "Namespaced",
                "responseKind": { "group": "example.com", "version": "v1", "kind": "Widget" } },
              { "resource": "pods", "scope": "Namespaced" }
            ]
          }
        ]
      }
    ]
  }
}
EOF
}

# A directory of commands that fail, put first in PATH to force fallbacks.
fail_command() {
	mkdir -p "$T/fakebin"
	printf '#!/bin/sh\nexit 1\n' >"$T/fakebin/$1"
	chmod +x "$T/fakebin/$1"
	export PATH=$T/fakebin:$PATH
}

# Complete the words given (the last one is the word under the cursor) and
# print the candidates one per line, sorted.
bash_complete() {
	local line="$*"
	bash_complete_line "$line"
}

# Complete at the end of a command line, as bash calls the function: with
# COMP_LINE and COMP_POINT, and COMP_WORDS (here split at blanks only).
bash_complete_line() {
	# shellcheck source=/dev/null
	source "$BASH_COMP"
	COMP_LINE=$1
	COMP_POINT=${#COMP_LINE}
	read -ra COMP_WORDS <<<"$COMP_LINE"
	[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_kinf
	if ((${#COMPREPLY[@]})); then
		printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort
	fi
}

# Complete with COMP_WORDS and COMP_CWORD only.
bash_complete_words() {
	# shellcheck source=/dev/null
	source "$BASH_COMP"
	unset COMP_LINE COMP_POINT
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_kinf
	if ((${#COMPREPLY[@]})); then
		printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort
	fi
}

@test "bash: the completion is registered for kinf" {
	run bash -c "source '$BASH_COMP' && complete -p kinf"
	assert_success
	assert_output "complete -F _kinf kinf"
}

@test "bash: commands after 'kinf '" {
	run bash_complete kinf ''
	assert_success
	assert_output "$(printf '%s\n' deltas help index list serve version watch)"
	run bash_complete kinf w
	assert_output watch
	run bash_complete kinf -
	assert_line --help
	assert_line --version
	assert_line -- -h
	assert_line --namespace
	run bash_complete kinf help ''
	assert_output "$(printf '%s\n' deltas index list serve version watch)"
}

@test "bash: watch options after 'kinf watch --'" {
	run bash_complete kinf watch pods --
	assert_success
	for o in --watch-only --old --diff --diff-all --timestamps --color \
		--from --resync --watch-list --timeout --count --exit-after-sync \
		--stats --dump-on-exit --kubeconfig --context --namespace \
		--all-namespaces --selector --output --verbose --help; do
		assert_line -- "$o"
	done
	# Other commands' options, and the hidden test option, are not offered.
	refute_line -- --by
	refute_line -- --client
	refute_line -- --emit-replaced
	refute_line -- --watch-timeout
}

@test "bash: each command's own options" {
	run bash_complete kinf deltas --e
	assert_output "$(printf '%s\n' --emit-replaced --exit-after-sync)"
	run bash_complete kinf index --
	for o in --by --index --keys --values --watch --from; do
		assert_line -- "$o"
	done
	refute_line -- --diff
	run bash_complete kinf version --c
	assert_output "$(printf '%s\n' --certificate-authority --chunk-size --client --cluster --context)"
	run bash_complete kinf list --
	assert_line -- --no-headers
	refute_line -- --from
	refute_line -- --timestamps
}

@test "bash: -o values depend on the command" {
	run bash_complete kinf list -o ''
	assert_output "$(printf '%s\n' custom-columns= json jsonpath-as-json= jsonpath= name table wide yaml)"
	run bash_complete kinf watch pods -o ''
	assert_output "$(printf '%s\n' custom-columns= json jsonpath-as-json= jsonpath= name table wide yaml)"
	run bash_complete kinf watch pods/x --for ''
	assert_output "$(printf '%s\n' condition= condition=Ready create delete jsonpath= rollout)"
	run bash_complete kinf deltas --output ''
	assert_output "$(printf '%s\n' json table)"
	run bash_complete kinf version -o ''
	assert_output "$(printf '%s\n' json yaml)"
	run bash_complete kinf index pods -o y
	assert_output yaml
}

@test "bash: --opt=VALUE completes what readline replaces" {
	# '=' is in COMP_WORDBREAKS: readline replaces what follows it.
	run bash_complete_line 'kinf list --output='
	assert_output "$(printf '%s\n' custom-columns= json jsonpath-as-json= jsonpath= name table wide yaml)"
	run bash_complete_line 'kinf watch --output=n'
	assert_output name
	run bash_complete_line 'kinf watch --timestamps=u'
	assert_output utc
	# Without it, the whole word.
	COMP_WORDBREAKS=${COMP_WORDBREAKS//=/}
	run bash_complete_line 'kinf watch --output=n'
	assert_output -- --output=name
}

@test "bash: context names with ':' (EKS ARNs)" {
	fail_command kubectl
	cat >"$T/eks-kubeconfig" <<'EOF'
contexts:
- name: arn:aws:eks:eu-west-1:111122223333:cluster/blue
- name: arn:aws:eks:eu-west-1:111122223333:cluster/green
- name: kind-local
EOF
	export KUBECONFIG=$T/eks-kubeconfig
	run bash_complete_line 'kinf list --context arn:aws:eks:eu-west-1:111122223333:cluster/'
	assert_output "$(printf '%s\n' cluster/blue cluster/green)"
	run bash_complete_line 'kinf list --context=arn:aws:eks:eu-west-1:111122223333:cluster/g'
	assert_output cluster/green
	run bash_complete_line 'kinf list --context '
	assert_output "$(printf '%s\n' arn:aws:eks:eu-west-1:111122223333:cluster/blue arn:aws:eks:eu-west-1:111122223333:cluster/green kind-local)"
	run bash_complete_line 'kinf list --context arn:aws:eks:eu-west-1:111122223333:cluster/blue -n x --context a'
	assert_output "$(printf '%s\n' arn:aws:eks:eu-west-1:111122223333:cluster/blue arn:aws:eks:eu-west-1:111122223333:cluster/green)"
}

@test "bash: without COMP_LINE, COMP_WORDS as bash splits them" {
	run bash_complete_words kinf list --output = ''
	assert_output "$(printf '%s\n' custom-columns= json jsonpath-as-json= jsonpath= name table wide yaml)"
	run bash_complete_words kinf list --output = y
	assert_output yaml
	run bash_complete_words kinf watch -o ''
	assert_output "$(printf '%s\n' custom-columns= json jsonpath-as-json= jsonpath= name table wide yaml)"
}

@test "bash: --timestamps and --color values" {
	run bash_complete kinf watch pods --timestamps ''
	assert_output "$(printf '%s\n' local none rfc3339 utc)"
	run bash_complete kinf watch pods --timestamps r
	assert_output rfc3339
	run bash_complete kinf watch --color ''
	assert_output "$(printf '%s\n' always auto never)"
}

@test "bash: --context names from the kubeconfig (kubectl)" {
	command -v kubectl >/dev/null || skip "kubectl is not installed"
	export KUBECONFIG=$T/kubeconfig
	run bash_complete kinf list --context ''
	assert_success
	assert_output "$(printf '%s\n' dev-east prod-west)"
	run bash_complete kinf list --context p
	assert_output prod-west
}

@test "bash: --context names without kubectl (awk over the kubeconfig files)" {
	fail_command kubectl
	export KUBECONFIG=$T/kubeconfig:$T/missing:$T/other-kubeconfig
	run bash_complete kinf watch --context ''
	assert_success
	assert_output "$(printf '%s\n' dev-east prod-west staging)"
}

@test "bash: --context reads the --kubeconfig on the line, then ~/.kube/config" {
	export KUBECONFIG=$T/kubeconfig
	run bash_complete kinf watch --kubeconfig "$T/other-kubeconfig" --context ''
	assert_output staging
	fail_command kubectl
	run bash_complete kinf watch --kubeconfig="$T/other-kubeconfig" --context ''
	assert_output staging
	unset KUBECONFIG
	mkdir -p "$HOME/.kube"
	cp "$T/kubeconfig" "$HOME/.kube/config"
	run bash_complete kinf watch --context ''
	assert_output "$(printf '%s\n' dev-east prod-west)"
}

@test "bash: names from files are not expanded" {
	fail_command kubectl
	cat >"$T/evil-kubeconfig" <<'EOF'
contexts:
- name: $(touch pwned)
- name: '*'
EOF
	export KUBECONFIG=$T/evil-kubeconfig
	cd "$T"
	run bash_complete kinf list --context ''
	assert_success
	assert_output "$(printf '%s\n' '$(touch pwned)' '*')"
	[[ ! -e $T/pwned ]]
}

@test "bash: resource types from the discovery cache" {
	export XDG_CACHE_HOME=$T/cache
	run bash_complete kinf list ''
	assert_success
	assert_output "$(printf '%s\n' deployments namespaces pods widgets)"
	run bash_complete kinf watch -n default d
	assert_output deployments
	# Only the first operand is a resource type.
	run bash_complete kinf list pods ''
	assert_output ""
	run bash_complete kinf index --by app=web ''
	assert_output "$(printf '%s\n' deployments namespaces pods widgets)"
}

@test "bash: the shared options before the command (kinf -n x list <TAB>)" {
	export XDG_CACHE_HOME=$T/cache KUBECONFIG=$T/kubeconfig
	run bash_complete kinf -n default list ''
	assert_output "$(printf '%s\n' deployments namespaces pods widgets)"
	run bash_complete kinf --context prod-west --as alice --as-group g -A watch d
	assert_output deployments
	run bash_complete kinf --namespace=default -v list -o ''
	assert_output "$(printf '%s\n' custom-columns= json jsonpath-as-json= jsonpath= name table wide yaml)"
	run bash_complete kinf -n default deltas pods --output ''
	assert_output "$(printf '%s\n' json table)"
	run bash_complete kinf -n default list pods ''
	assert_output ""
	run bash_complete kinf -n default li
	assert_output list
	run bash_complete kinf -n default help ''
	assert_output "$(printf '%s\n' deltas index list serve version watch)"
	run bash_complete kinf -n default list --watch-o
	assert_output --watch-only
	# before the command: its value, and the shared options
	run bash_complete kinf --context ''
	assert_output "$(printf '%s\n' dev-east prod-west)"
	run bash_complete kinf --as-
	assert_output "$(printf '%s\n' --as-group --as-uid)"
}

@test "zsh and fish: the shared options before the command" {
	export XDG_CACHE_HOME=$T/cache KUBECONFIG=$T/kubeconfig
	if command -v fish >/dev/null; then
		run fish_complete "kinf -n default list "
		assert_output "$(printf '%s\n' deployments namespaces pods widgets)"
		run fish_complete "kinf --context prod-west --as a deltas -o "
		assert_output "$(printf '%s\n' json table)"
		run fish_complete "kinf -n default list pods "
		assert_output ""
		run fish_complete "kinf -n default li"
		assert_output list
		run fish_complete "kinf --cont"
		assert_output --context
	fi
	if command -v zsh >/dev/null && zsh -c 'zmodload zsh/zpty' 2>/dev/null; then
		run zsh_complete "kinf -n default list "
		assert_success
		assert_output --regexp "deployments +namespaces +pods +widgets"
		run zsh_complete "kinf --context prod-west deltas -o "
		assert_success
		assert_output --regexp "json +table"
		run zsh_complete "kinf --context "
		assert_success
		assert_output --regexp "dev-east +prod-west"
	fi
}

@test "bash: resource types without jq, and from ~/.cache" {
	fail_command jq
	export XDG_CACHE_HOME=$T/cache
	run bash_complete kinf deltas ''
	assert_output "$(printf '%s\n' deployments namespaces pods widgets)"
	# A relative XDG_CACHE_HOME is ignored, as kinf ignores it.
	export XDG_CACHE_HOME=relative/cache
	mkdir -p "$HOME/.cache"
	cp -r "$T/cache/kinf" "$HOME/.cache/kinf"
	rm -r "$HOME/.cache/kinf/discovery/other.example_443"
	run bash_complete kinf deltas ''
	assert_output "$(printf '%s\n' deployments namespaces pods)"
	# No cache: no candidates, no error.
	rm -r "$HOME/.cache/kinf"
	run bash_complete kinf deltas ''
	assert_success
	assert_output ""
}

@test "bash: -n asks kinf for namespaces with the connection options on the line" {
	cat >"$T/kinf" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >"$T/kinf-args"
printf 'namespace/default\nnamespace/kube-system\nnamespace/team-a\n'
EOF
	chmod +x "$T/kinf"
	run bash_complete "$T/kinf" watch pods --context dev-east --insecure-skip-tls-verify -n ''
	assert_success
	assert_output "$(printf '%s\n' default kube-system team-a)"
	run cat "$T/kinf-args"
	assert_output "list namespaces -o name --request-timeout 3s --context dev-east --insecure-skip-tls-verify"
	run bash_complete "$T/kinf" list --namespace k
	assert_output kube-system
	# A kinf that fails (no cluster) gives no candidates.
	printf '#!/bin/sh\necho "kinf: no cluster" >&2\nexit 3\n' >"$T/kinf"
	run bash_complete "$T/kinf" list -n ''
	assert_success
	assert_output ""
}

@test "zsh and fish: -n asks kinf for namespaces with every --as-group on the line" {
	cat >"$T/kinf" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >"$T/kinf-args"
printf 'namespace/default\nnamespace/kube-system\nnamespace/team-a\n'
EOF
	chmod +x "$T/kinf"
	local want="list namespaces -o name --request-timeout 3s --context dev-east --as alice --as-group system:masters --as-group dev"
	if command -v fish >/dev/null; then
		run fish_complete "$T/kinf --context dev-east --as alice --as-group system:masters --as-group dev list pods -n "
		assert_output "$(printf '%s\n' default kube-system team-a)"
		run cat "$T/kinf-args"
		assert_output "$want"
	fi
	if command -v zsh >/dev/null && zsh -c 'zmodload zsh/zpty' 2>/dev/null; then
		rm -f "$T/kinf-args"
		run zsh_complete "$T/kinf --context dev-east --as alice --as-group system:masters --as-group dev list pods -n "
		assert_success
		run cat "$T/kinf-args"
		assert_output "$want"
		# The same options after the command.
		rm -f "$T/kinf-args"
		run zsh_complete "$T/kinf list pods --context dev-east --as alice --as-group system:masters --as-group dev -n "
		assert_success
		run cat "$T/kinf-args"
		assert_output "$want"
	fi
}

@test "bash: comma lists complete their last item: -n a,b, --context a,b, pods,configmaps" {
	export XDG_CACHE_HOME=$T/cache KUBECONFIG=$T/kubeconfig
	run bash_complete kinf watch pods,d
	assert_output pods,deployments
	# Those already in the list are not offered again.
	run bash_complete kinf watch pods,
	assert_output "$(printf '%s\n' pods,deployments pods,namespaces pods,widgets)"
	run bash_complete kinf watch --context dev-east,
	assert_output dev-east,prod-west
	run bash_complete kinf watch --context=dev-east,p
	assert_output dev-east,prod-west
	cat >"$T/kinf" <<EOF
#!/bin/sh
printf 'namespace/default\nnamespace/kube-system\nnamespace/team-a\n'
EOF
	chmod +x "$T/kinf"
	run bash_complete "$T/kinf" watch pods -n default,kube-system,
	assert_output default,kube-system,team-a
	run bash_complete "$T/kinf" deltas pods --namespace team-a,k
	assert_output team-a,kube-system
}

@test "comma lists complete for list, get and serve as for watch: bash, zsh, fish, kinf __complete" {
	export XDG_CACHE_HOME=$T/cache KUBECONFIG=$T/kubeconfig
	local cmd
	for cmd in list get serve index; do
		run bash_complete kinf $cmd pods,d
		assert_output pods,deployments
		run bash_complete kinf $cmd pods,
		assert_output "$(printf '%s\n' pods,deployments pods,namespaces pods,widgets)"
	done
	run bash_complete kinf list --context dev-east,
	assert_output dev-east,prod-west
	run bash_complete kinf serve pods --context=dev-east,p
	assert_output dev-east,prod-west
	printf '#!/bin/sh\nprintf "namespace/default\\nnamespace/kube-system\\nnamespace/team-a\\n"\n' \
		>"$T/kinf"
	chmod +x "$T/kinf"
	run bash_complete "$T/kinf" list pods -n default,kube-system,
	assert_output default,kube-system,team-a
	run bash_complete "$T/kinf" serve pods --namespace team-a,k
	assert_output team-a,kube-system
	# version takes one context
	run bash_complete kinf version --context dev-east,
	assert_output ""
	if command -v fish >/dev/null; then
		for cmd in list get serve; do
			run fish_complete "kinf $cmd pods,"
			assert_output "$(printf '%s\n' pods,deployments pods,namespaces pods,widgets)"
		done
		run fish_complete "kinf list --context dev-east,"
		assert_output dev-east,prod-west
	fi
	if command -v zsh >/dev/null && zsh -c 'zmodload zsh/zpty' 2>/dev/null; then
		for cmd in list serve; do
			run zsh_complete "kinf $cmd pods,"
			assert_success
			assert_output --regexp "deployments +namespaces +widgets"
		done
	fi
	# kinf __complete (kubectl kinf <TAB> asks it) does the same.
	use_fake
	run complete_kinf list pods,d
	assert_output pods,deployments
	run complete_kinf serve pods,deployments,
	refute_line pods,deployments,pods
	refute_line pods,deployments,deployments
	assert_line pods,deployments,configmaps
}

@test "resource types with an empty discovery cache: asked of the server, in bash, zsh and fish" {
	use_fake
	export XDG_CACHE_HOME=$T/empty-cache
	run complete_kinf list dep
	assert_output deployments
	[[ -n $(ls "$XDG_CACHE_HOME/kinf/discovery") ]] || fail "kinf __complete did not cache discovery"
	rm -rf "$XDG_CACHE_HOME"
	run bash_complete "$KINF" list dep
	assert_output deployments
	rm -rf "$XDG_CACHE_HOME"
	run bash_complete "$KINF" watch pods,dep
	assert_output pods,deployments
	rm -rf "$XDG_CACHE_HOME"
	run bash_complete "$KINF" -n default get dep
	assert_output deployments
	if command -v fish >/dev/null; then
		rm -rf "$XDG_CACHE_HOME"
		run fish_complete "$KINF list dep"
		assert_output deployments
	fi
	if command -v zsh >/dev/null && zsh -c 'zmodload zsh/zpty' 2>/dev/null; then
		rm -rf "$XDG_CACHE_HOME"
		run zsh_complete "$KINF list "
		assert_success
		assert_output --partial deployments
		assert_output --partial pods
	fi
}

@test "kinf __complete reads the line with kubectl's grammar: -n=NS, -A=false, -v 2" {
	use_fake
	local want
	want=$(kubectl --kubeconfig "$KUBECONFIG" get pods -n kube-system -o name | cut -d/ -f2)
	run complete_kinf list pods -n=kube-system ''
	assert_output "$want"
	run complete_kinf list pods -A=false -nkube-system ''
	assert_output "$want"
	run complete_kinf -v 2 list pods -n kube-system ''
	assert_output "$want"
}

@test "bash: --by and --values index names, with those from --index" {
	run bash_complete kinf index pods --by ''
	assert_output "$(printf '%s\n' field: label: namespace node owner phase)"
	run bash_complete kinf index pods --index sa=spec.serviceAccountName --values s
	assert_output sa
	run bash_complete kinf index pods --by n
	assert_output "$(printf '%s\n' namespace node)"
}

@test "bash: files for --kubeconfig, --from, --certificate-authority, --dump-on-exit" {
	mkdir -p "$T/files/subdir"
	touch "$T/files/recorded.json" "$T/files/ca.pem"
	cd "$T/files"
	for o in --kubeconfig --from --certificate-authority --dump-on-exit; do
		run bash_complete kinf watch "$o" ''
		assert_output "$(printf '%s\n' ca.pem recorded.json subdir)"
	done
	run bash_complete kinf list --kubeconfig rec
	assert_output recorded.json
}

@test "bash: no candidates for free-form values" {
	for o in --selector -l --field-selector --token --timeout --count --resync --index; do
		run bash_complete kinf index pods "$o" ''
		assert_success
		assert_output ""
	done
}

@test "bash: --server offers kinf serve's address forms" {
	run bash_complete kinf list pods --server ''
	assert_success
	assert_output "$(printf '%s\n' tcp:127.0.0.1: unix:)"
}

@test "bash: works with the bash-completion package loaded" {
	local bc=/usr/share/bash-completion/bash_completion
	[[ -r $bc ]] || skip "bash-completion is not installed"
	export XDG_CACHE_HOME=$T/cache
	run bash -c '
		source "$1" && source "$2"
		COMP_WORDS=(kinf list "")
		COMP_CWORD=2
		COMP_LINE="kinf list "
		COMP_POINT=${#COMP_LINE}
		_kinf
		printf "%s\n" "${COMPREPLY[@]}" | LC_ALL=C sort
		COMP_WORDS=(kinf watch --kubeconfig "$3/kubec")
		COMP_CWORD=3
		COMP_LINE="${COMP_WORDS[*]}"
		COMP_POINT=${#COMP_LINE}
		_kinf
		printf "%s\n" "${COMPREPLY[@]}"
	' _ "$bc" "$BASH_COMP" "$T"
	assert_success
	assert_output "$(printf '%s\n' deployments namespaces pods widgets "$T/kubeconfig")"
}

@test "zsh: the completion parses" {
	command -v zsh >/dev/null || skip "zsh is not installed"
	run zsh -n "$ZSH_COMP"
	assert_success
	grep -q '^#compdef kinf$' "$ZSH_COMP"
}

# Type a line and TAB in an interactive zsh on a pseudo-terminal; print what
# zsh shows until the prompt comes back.
zsh_complete() {
	cat >"$T/zsh-complete.zsh" <<'EOF'
zmodload zsh/zpty || exit 1
zpty z env TERM=dumb COLUMNS=200 LINES=100 zsh -f -i
zpty -w z 'PS1="> "; fpath=($COMPDIR $fpath); autoload -Uz compinit; compinit -u -D; print RE""ADY'
zpty -r z junk '*READY*' || exit 1
zpty -r z junk '*> ' || exit 1
zpty -w -n z "$1"$'\t'
zpty -r z out "*"$'\n'"> $1" || exit 1
print -r -- "${out//$'\r'/}"
zpty -d z
EOF
	COMPDIR=$ROOT/completions/zsh timeout 30 zsh -f "$T/zsh-complete.zsh" "$1"
}

@test "zsh: commands, option values, contexts and resource types" {
	command -v zsh >/dev/null || skip "zsh is not installed"
	zsh -c 'zmodload zsh/zpty' 2>/dev/null || skip "zsh has no zpty module"
	export XDG_CACHE_HOME=$T/cache KUBECONFIG=$T/kubeconfig
	run zsh_complete "kinf "
	assert_success
	assert_output --partial "deltas"
	assert_output --partial "version"
	assert_output --partial "watch"
	run zsh_complete "kinf watch --timestamps "
	assert_success
	assert_output --regexp "local +none +rfc3339 +utc"
	run zsh_complete "kinf deltas -o "
	assert_success
	assert_output --regexp "json +table"
	run zsh_complete "kinf list --context "
	assert_success
	assert_output --regexp "dev-east +prod-west"
	run zsh_complete "kinf list "
	assert_success
	assert_output --regexp "deployments +namespaces +pods +widgets"
	# watch and deltas: each item of a comma list, those in it left out.
	run zsh_complete "kinf watch pods,"
	assert_success
	assert_output --regexp "deployments +namespaces +widgets"
}

@test "fish: the completion parses" {
	command -v fish >/dev/null || skip "fish is not installed"
	run fish -n "$FISH_COMP"
	assert_success
}

fish_complete() {
	fish -c 'source $argv[1]; complete -C $argv[2] | cut -f1 | sort' "$FISH_COMP" "$1"
}

@test "fish: commands, options, values, contexts and resource types" {
	command -v fish >/dev/null || skip "fish is not installed"
	export XDG_CACHE_HOME=$T/cache KUBECONFIG=$T/kubeconfig
	run fish_complete "kinf "
	assert_output "$(printf '%s\n' deltas help index list serve version watch)"
	run fish_complete "kinf watch --tim"
	assert_output "$(printf '%s\n' --timeout --timestamps)"
	run fish_complete "kinf watch --timestamps "
	assert_output "$(printf '%s\n' local none rfc3339 utc)"
	run fish_complete "kinf deltas -o "
	assert_output "$(printf '%s\n' json table)"
	run fish_complete "kinf list --output="
	assert_output "$(printf '%s\n' --output=custom-columns= --output=json --output=jsonpath-as-json= --output=jsonpath= --output=name --output=table --output=wide --output=yaml)"
	run fish_complete "kinf version --c"
	assert_line -- --client
	refute_line -- --color
	run fish_complete "kinf list --context "
	assert_output "$(printf '%s\n' dev-east prod-west)"
	run fish_complete "kinf list "
	assert_output "$(printf '%s\n' deployments namespaces pods widgets)"
	run fish_complete "kinf list -n default pods "
	assert_output ""
	run fish_complete "kinf index pods --index sa=x --by "
	assert_output "$(printf '%s\n' field: label: namespace node owner phase sa)"
	# watch and deltas: each item of a comma list, those in it left out.
	run fish_complete "kinf watch pods,"
	assert_output "$(printf '%s\n' pods,deployments pods,namespaces pods,widgets)"
	run fish_complete "kinf deltas --context dev-east,"
	assert_output dev-east,prod-west
	run fish_complete "kinf deltas --context=dev-east,p"
	assert_output --context=dev-east,prod-west
}

@test "kinf __complete: object names, TYPE/NAME, namespaces, as cobra prints them" {
	use_fake
	run --separate-stderr "$KINF" __complete list pods ''
	assert_success
	[ -z "$stderr" ]
	[ "${lines[-1]}" = :4 ]
	diff <(complete_kinf list pods '') \
		<(kubectl --kubeconfig "$KUBECONFIG" get pods -o name | cut -d/ -f2)
	# kubectl's own __complete offers the same names.
	diff <(complete_kinf list pods '' | sort) \
		<(kubectl __complete get pods '' 2>/dev/null | sed '/^:/d' | sort)
	diff <(complete_kinf watch deploy -n kube-system '') <(echo coredns)
	diff <(complete_kinf watch deploy -A c) <(echo coredns)
	run complete_kinf watch deploy/w
	assert_output deploy/web
	run complete_kinf list pods -n kube-system --context admin ''
	assert_output "$(kubectl --kubeconfig "$KUBECONFIG" get pods -n kube-system -o name | cut -d/ -f2)"
	# The shared options before the command count too.
	run complete_kinf -n kube-system --context admin list pods ''
	assert_output "$(kubectl --kubeconfig "$KUBECONFIG" get pods -n kube-system -o name | cut -d/ -f2)"
	run complete_kinf --namespace ''
	assert_line kube-system
	# Not the names already on the line; watch takes one.
	first=$(complete_kinf list pods '' | head -1)
	run complete_kinf list pods "$first" ''
	refute_line "$first"
	run complete_kinf watch pods "$first" ''
	assert_output ""
	run complete_kinf watch pods -n ''
	assert_output "$(printf '%s\n' default kube-node-lease kube-public kube-system viewer-ns)"
	run complete_kinf list --context ''
	assert_output "$(printf '%s\n' admin admin-cert viewer)"
	run complete_kinf list ''
	assert_line pods
	assert_line widgets
	# A user the server refuses: nothing, quietly.
	run --separate-stderr "$KINF" __complete list pods -n kube-system --context viewer ''
	assert_success
	assert_output :4
	[ -z "$stderr" ]
}

@test "kinf __complete: --by index names, label keys and values from the cluster" {
	use_fake
	run "$KINF" __complete index pods -A --by ''
	assert_success
	for w in namespace node owner phase label: field: app pod-template-hash tier; do
		assert_line -- "$w"
	done
	assert_line :6	# no space: INDEX=VALUE follows
	run bash -c "'$KINF' __complete index pods -A --by app= | sed '/^:/d' | sort"
	assert_output "$(kubectl --kubeconfig "$KUBECONFIG" get pods -A \
		-o jsonpath='{range .items[*]}app={.metadata.labels.app}{"\n"}{end}' | sort -u)"
	run complete_kinf index pods -A --by=node=
	assert_output "$(printf '%s\n' --by=node=node-0 --by=node=node-1)"
	run complete_kinf index pods -A --by label:tier=f
	assert_output "label:tier=frontend"
	run complete_kinf index pods -A --by phase=S
	assert_output phase=Succeeded
	run "$KINF" __complete index pods --index sa=spec.serviceAccountName --values s
	assert_output "$(printf '%s\n' sa :4)"
	# Without a resource type, the index names only.
	run complete_kinf index --by ''
	assert_output "$(printf '%s\n' namespace node owner phase label: field:)"
}

@test "kinf __complete: commands, options and values without a cluster" {
	run "$KINF" __complete ''
	assert_output "$(printf '%s\n' deltas index list serve version watch help :4)"
	run complete_kinf watch --ti
	assert_output "$(printf '%s\n' --timestamps --timeout)"
	run complete_kinf index --no
	assert_output "$(printf '%s\n' --no-headers --no-pushdown)"
	run complete_kinf deltas -o ''
	assert_output "$(printf '%s\n' table json)"
	run complete_kinf watch pods/x --for r
	assert_output rollout
	run "$KINF" __complete list --kubeconfig ''
	assert_output :0	# file names
	# No cluster: no candidates, status 0, nothing on stderr, and quickly.
	export KUBECONFIG=$T/kubeconfig
	SECONDS=0
	run --separate-stderr "$KINF" __complete list pods ''
	assert_success
	assert_output :4
	[ -z "$stderr" ]
	[ "$SECONDS" -lt 8 ]
}

@test "kinf __complete gives up on a server that does not answer" {
	use_fake
	load helpers
	fakeapi_ctl POST faults '{"stall":{"seconds":30,"verb":"list","count":5}}' >/dev/null
	SECONDS=0
	run --separate-stderr "$KINF" __complete list pods ''
	fakeapi_ctl POST faults '{"reset":true}' >/dev/null
	assert_success
	assert_output :4
	[ "$SECONDS" -lt 10 ]
}

@test "bash, zsh and fish complete object names and --by label keys through kinf __complete" {
	use_fake
	names=$(kubectl --kubeconfig "$KUBECONFIG" get pods -o name | cut -d/ -f2 | LC_ALL=C sort)
	run bash_complete "$KINF" list pods ''
	assert_output "$names"
	run bash_complete "$KINF" watch pods/we
	assert_output "$(grep ^we <<<"$names" | sed 's|^|pods/|')"
	run bash_complete "$KINF" index pods --by ti
	assert_output tier
	# What readline replaces: the text after the last '='.
	run bash_complete "$KINF" index pods --by app=w
	assert_output web
	run bash_complete "$KINF" index pods --by=app=w
	assert_output web
	run bash_complete "$KINF" index pods --by ''
	assert_output "$(printf '%s\n' app field: label: namespace node owner phase pod-template-hash tier)"
	if command -v fish >/dev/null; then
		run fish -c 'source $argv[1]; complete -C $argv[2] | cut -f1 | sort' "$FISH_COMP" "$KINF list pods "
		assert_output "$names"
		run fish -c 'source $argv[1]; complete -C $argv[2] | cut -f1 | sort' "$FISH_COMP" "$KINF index pods --by ti"
		assert_output tier
	fi
	if command -v zsh >/dev/null && zsh -c 'zmodload zsh/zpty' 2>/dev/null; then
		# (zsh lists candidates when there are several, else inserts one)
		run zsh_complete "$KINF list pods "
		for n in $names; do
			assert_output --partial "$n"
		done
		run zsh_complete "$KINF index pods --by "
		assert_output --partial pod-template-hash
		assert_output --partial namespace
	fi
}

@test "kubectl kinf <TAB>: kubectl runs kubectl_complete-kinf, which asks kinf __complete" {
	command -v kubectl >/dev/null || skip "kubectl is not installed"
	use_fake
	mkdir -p "$T/bin"
	ln -s "$KINF" "$T/bin/kinf"
	ln -s kinf "$T/bin/kubectl-kinf"
	cp "$ROOT/completions/kubectl/kubectl_complete-kinf" "$T/bin/"
	export PATH=$T/bin:$PATH
	run --separate-stderr kubectl __complete kinf ''
	assert_success
	assert_output "$(printf '%s\n' deltas index list serve version watch help :4)"
	run --separate-stderr kubectl __complete kinf list pods ''
	assert_output "$(complete_kinf list pods ''; echo :4)"
	run --separate-stderr kubectl __complete kinf index pods --by ti
	assert_output "$(printf '%s\n' tier :6)"
	run --separate-stderr kubectl __complete kinf watch --for ''
	assert_line rollout
}
