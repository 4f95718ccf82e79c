#!/usr/bin/env bats
# kubectl's flag grammar (spf13/pflag's) for every option of every command:
# each form kubectl accepts means what the plain form means, each form it
# refuses is refused, and kubectl, run with the same words, is the judge.
# The options come from each command's --help, so a new one is covered.
# cmd/kinf/flags.c has the grammar; test/unit/test-flags.c its cases.

load helpers

setup_file() {
	fakeapi_start
}

teardown_file() {
	fakeapi_stop
}

# The option lines of `kinf CMD --help`, one "SHORT LONG KIND METAVAR" each
# (SHORT "-" when none; KIND bool, value or level).
options_of() {
	"$KINF" "$1" --help | sed -nE \
		-e 's/^ +(-([A-Za-z]), )?--([a-z][a-z0-9-]*)\[=[A-Z]+\].*/\2 \3 level -/p' \
		-e 's/^ +(-([A-Za-z]), )?--([a-z][a-z0-9-]*) ([A-Z][^ ]*) .*/\2 \3 value \4/p' \
		-e 's/^ +(-([A-Za-z]), )?--([a-z][a-z0-9-]*)( +[a-z(-].*|)$/\2 \3 bool -/p' |
		awk '{ if ($1 !~ /^[A-Za-z]$/) { $0 = "- " $0 } print }' | LC_ALL=C sort -u -k2,2
}

# A value the option accepts (before --help ends the parse), by name or metavar.
good_value() {
	case $1 in
	server) echo https://127.0.0.1:1 ;;
	listen) echo tcp:127.0.0.1:0 ;;
	output) echo json ;;
	timestamps) echo utc ;;
	color) echo never ;;
	for) echo delete ;;
	index) echo n=spec.nodeName ;;
	by) echo node=node-1 ;;
	*)
		case $2 in
		DURATION) echo 30s ;;
		N) echo 5 ;;
		SIZE) echo 1M ;;
		*FILE*) echo /dev/null ;;
		*) echo x ;;
		esac
		;;
	esac
}

# What kinf makes of the words: status, then stdout and stderr.
outcome() {
	local out rc=0
	out=$("$KINF" "$@" 2>&1) || rc=$?
	printf '%s\n%s' "$rc" "$out"
}

# kubectl's verdict on a form of one of its own flags of the same shape:
# "ok" when it takes it (--help then prints the help), else "refused".
kubectl_verdict() {
	if kubectl --kubeconfig /dev/null get "$@" --help >/dev/null 2>&1; then
		echo ok
	else
		echo refused
	fi
}

# The words of one option in a form: "--X V", "--X=V", "-s V", "-sV", "-s=V",
# or for a boolean "--X", "--X=B", "-s", "-s=B" (B its value).
form_words() {
	local form=$1 long=$2 short=$3 v=${4:-}
	case $form in
	"--X V") words+=(--"$long" "$v") ;;
	"--X=V" | "--X=B") words+=(--"$long=$v") ;;
	"-s V") words+=(-"$short" "$v") ;;
	"-sV") words+=(-"$short$v") ;;
	"-s=V" | "-s=B") words+=(-"$short=$v") ;;
	--X) words+=(--"$long") ;;
	-s) words+=(-"$short") ;;
	esac
}

@test "every option of every command: each pflag form means the plain form, as kubectl's" {
	require_kubectl
	# kubectl's verdicts, once per form, on its own -n/--namespace (a
	# value), --no-headers and -A (booleans) and -v/--v (a level).
	local -A verdict
	local f
	for f in "--X V" "--X=V" "-s V" "-sV" "-s=V"; do
		local words=()
		form_words "$f" namespace n x
		verdict["value $f"]=$(kubectl_verdict "${words[@]}")
	done
	for f in true false 1 0 T F maybe ""; do
		verdict["bool --X=$f"]=$(kubectl_verdict --no-headers="$f")
		verdict["bool -s=$f"]=$(kubectl_verdict -A="$f")
	done
	verdict["bool --X"]=$(kubectl_verdict --no-headers)
	verdict["bool -s"]=$(kubectl_verdict -A)
	for f in "-v 2" "-v=2" "-v2" "--v=2" "--v 2"; do
		verdict["level $f"]=$(kubectl_verdict $f)
	done
	local -a should_take=("value --X V" "value --X=V" "value -s V" "value -sV" "value -s=V"
		"bool --X" "bool --X=true" "bool --X=false" "bool --X=0" "bool --X=T" "bool -s"
		"bool -s=false" "bool -s=1" "level -v 2" "level -v=2" "level -v2" "level --v=2"
		"level --v 2")
	for f in "${should_take[@]}"; do
		[[ ${verdict[$f]} == ok ]] || fail "kubectl refuses $f: not pflag's grammar?"
	done
	for f in "bool --X=maybe" "bool --X=" "bool -s=maybe" "bool -s=" ; do
		[[ ${verdict[$f]} == refused ]] || fail "kubectl takes $f: not pflag's grammar?"
	done

	local cmd short long kind meta v rows=0 bad=() got canon
	local -A tried
	for cmd in list watch deltas index serve version; do
		local operand=(pods)
		[[ $cmd == version ]] && operand=()
		local -a values=() bools=() levels=()
		while read -r short long kind meta; do
			[[ $long == help ]] && continue
			case $kind in
			value) values+=("$short $long $meta") ;;
			bool) bools+=("$short $long") ;;
			level) levels+=("$short $long") ;;
			*) bad+=("kinf $cmd --help: cannot read the line of --$long") ;;
			esac
		done < <(options_of "$cmd")
		((${#values[@]} > 5 && ${#bools[@]} > 3 && ${#levels[@]} >= 1)) ||
			fail "kinf $cmd --help: too few options found"

		# Every form kubectl takes, every option at once: all taken.
		for f in "--X V" "--X=V" "-s V" "-sV" "-s=V"; do
			local words=()
			for v in "${values[@]}"; do
				read -r short long meta <<<"$v"
				[[ $f == -s* && $short == - ]] && continue
				[[ $cmd == serve && $long == output ]] && continue	# refused: serve prints nothing
				form_words "$f" "$long" "$short" "$(good_value "$long" "$meta")"
			done
			case $f in	# and the level, in the same form
			"--X V") words+=(--v 2) ;;
			"--X=V") words+=(--v=2) ;;
			"-s V") words+=(-v 2) ;;
			*) form_words "$f" v v 2 ;;
			esac
			got=$(outcome "$cmd" "${operand[@]}" "${words[@]}" --help)
			rows=$((rows + 1))
			[[ ${got%%$'\n'*} == 0 ]] || bad+=("kinf $cmd ${words[*]} --help: ${got//$'\n'/ }")
		done
		for f in --X --X=B -s -s=B; do
			# (ParseBool's other words: unit-flags and the kubectl verdicts)
			local vals=(true false)
			[[ $f == --X=B ]] && vals+=(1)
			for v in "${vals[@]}"; do
				[[ $f != *B && $v != true ]] && continue
				local words=()
				for b in "${bools[@]}"; do
					read -r short long <<<"$b"
					[[ $f == -s* && $short == - ]] && continue
					form_words "$f" "$long" "$short" "$v"
				done
				got=$(outcome "$cmd" "${operand[@]}" "${words[@]}" --help)
				rows=$((rows + 1))
				[[ ${got%%$'\n'*} == 0 ]] || bad+=("kinf $cmd ${words[*]} --help: ${got//$'\n'/ }")
			done
		done

		# Each option's own checks, once per option name: the value that a
		# form carries is the one the plain form carries (a refused value
		# is refused in the same words), a missing value and a boolean's
		# non-boolean are refused, as kubectl refuses them.
		for v in "${values[@]}"; do
			read -r short long meta <<<"$v"
			[[ -n ${tried[$long]:-} ]] && continue
			tried[$long]=1
			canon=$(outcome "$cmd" "${operand[@]}" --"$long" bogus --help)
			if [[ ${canon%%$'\n'*} != 0 ]]; then
				for f in "--X=V" "-s V" "-sV" "-s=V"; do
					[[ $f == -s* && $short == - ]] && continue
					local words=()
					form_words "$f" "$long" "$short" bogus
					got=$(outcome "$cmd" "${operand[@]}" "${words[@]}" --help)
					rows=$((rows + 1))
					[[ $got == "$canon" ]] || bad+=("kinf $cmd ${words[*]}: not as --$long bogus")
				done
			fi
			for f in "--$long" "-$short"; do
				[[ $f == -- ]] && continue	# no short name
				got=$(outcome "$cmd" "${operand[@]}" "$f")
				rows=$((rows + 1))
				[[ ${got%%$'\n'*} == 2 && $got == *"'$f' needs a value"* ]] ||
					bad+=("kinf $cmd $f: not \"needs a value\" (${got//$'\n'/ })")
			done
		done
		for b in "${bools[@]}"; do
			read -r short long <<<"$b"
			[[ -n ${tried[$long]:-} ]] && continue
			tried[$long]=1
			for f in --X=B -s=B; do
				[[ $f == -s* && $short == - ]] && continue
				# and once, --X= (the short -A= is -A, then an option "-=")
				local vals=(maybe)
				[[ $f == --X=B && $long == all-namespaces ]] && vals+=("")
				for v in "${vals[@]}"; do
					local words=()
					form_words "$f" "$long" "$short" "$v"
					got=$(outcome "$cmd" "${operand[@]}" "${words[@]}" --help)
					rows=$((rows + 1))
					[[ ${got%%$'\n'*} == 2 ]] || bad+=("kinf $cmd ${words[*]}: taken, kubectl refuses it")
				done
			done
		done
		for b in "${levels[@]}"; do
			read -r short long <<<"$b"
			[[ -n ${tried[$long]:-} ]] && continue
			tried[$long]=1
			canon=$(outcome "$cmd" "${operand[@]}" --verbose=2 --help)
			for f in "-v 2" "-v=2" "-v2" "--v=2" "--v 2" "--verbose 2"; do
				got=$(outcome "$cmd" "${operand[@]}" $f --help)
				rows=$((rows + 1))
				[[ $got == "$canon" && ${got%%$'\n'*} == 0 ]] || bad+=("kinf $cmd $f: not level 2")
			done
			canon=$(outcome "$cmd" "${operand[@]}" --verbose=x --help)
			for f in -v=x -vx --v=x; do
				got=$(outcome "$cmd" "${operand[@]}" $f --help)
				rows=$((rows + 1))
				[[ ${got%%$'\n'*} == 2 && $got == "${canon/--verbose=x/$f}" ]] ||
					bad+=("kinf $cmd $f: not refused as --verbose=x")
			done
		done
	done
	echo "# $rows rows" >&3
	((${#bad[@]} == 0)) || fail "$(printf '%s\n' "${bad[@]}")"
}

@test "kinf list means what kubectl get means with the same words" {
	require_kubectl
	local rows=(
		"pods -n=kube-system"
		"pods -nkube-system"
		"pods --namespace=kube-system"
		"pods -l=app=web"
		"pods -lapp=web -n=default"
		"pods -A -o=name"
		"pods -A -oname"
		"pods -Ao name"
		"pods -A --output=name"
		"pods -A=true"
		"pods -A=false -n=kube-system"
		"pods -A --all-namespaces=false"
		"pods -An=kube-system"
		"pods --no-headers=true -n=kube-system"
		"pods --no-headers=false"
		"pods --no-headers -n=kube-system --no-headers=0"
		"pods -v 2 -n=kube-system"
		"pods --v=2 -A"
		"pods --field-selector=metadata.namespace=kube-system -A"
		"pods --chunk-size=1 -A"
		"pods -w=false -n=kube-system"
		"pods --watch-only=false -A -o=name"
		"pods -A -o=jsonpath={.items[*].metadata.name}"
		"pods -A -o=custom-columns=NAME:.metadata.name,NS:.metadata.namespace"
		"deploy -n -A"
		"pods -A=maybe"
		"pods --no-headers=maybe"
		"pods --names=default"
		"pods -n"
		"pods -Afalse"
	)
	same_as_kubectl_get_each "${rows[@]}"
}

@test "-v N is a level, never a name (kinf list pods -v 2, watch -n NS -v 6)" {
	run --separate-stderr kinf list pods -v 2 -n kube-system
	assert_success
	assert_output --partial coredns
	[[ $stderr == *"GET "* ]] || fail "no request logged at level 2: $stderr"
	[[ $stderr != *'"2" not found'* ]] || fail "-v 2 read as a name"
	run --separate-stderr kinf watch pods -n kube-system -v 6 --exit-after-sync -o name
	assert_success
	assert_line --partial pod/coredns
	# Alone, -v is one level up; a word after it that is not a number is an operand.
	run --separate-stderr kinf list -v pods -n kube-system -o name
	assert_success
	assert_line --partial pod/coredns
	run -2 --separate-stderr kinf list pods -v=x
	[[ $stderr == *'-v takes a level'*'"x"'* ]] || fail "$stderr"
}

@test "the grammar reaches watch, deltas and index too: -l=, -o=, -A=false, --count=" {
	run --separate-stderr kinf watch pods -A=false -n=kube-system -o=name -l=app=coredns \
		--exit-after-sync=true
	assert_success
	assert_line --partial pod/coredns
	run --separate-stderr kinf deltas pods -nkube-system -ojson --count=1
	assert_success
	[[ $(jq -r .object.metadata.namespace <<<"$output") == kube-system ]] || fail "$output"
	run --separate-stderr kinf index pods -A --by=namespace=kube-system -o=name --no-pushdown=false
	assert_success
	assert_line --partial pod/coredns
	refute_line --partial pod/web
}
