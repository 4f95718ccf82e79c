#!/usr/bin/env bats
# Docs consistency: every subcommand and every long option must be in the
# usage text (kinf CMD --help), the man page source, README.md and the three
# shell completions. The lists come from the binary's --help output AND from
# the C option tables (cmd/kinf/*.c, with their macros from cmd/kinf/*.h),
# so an option added to a table but forgotten in the help text is caught.
bats_require_minimum_version 1.5.0

# Test-only options: in an option table, documented in the man page under a
# "for testing" note, but kept out of --help, README.md and the completions.
HIDDEN_OPTIONS="watch-timeout"

setup() {
	export BATS_LIB_PATH=${BATS_LIB_PATH:-/usr/lib/bats}
	bats_load_library bats-support
	bats_load_library bats-assert
	ROOT=${KINF_SOURCE_ROOT:-$BATS_TEST_DIRNAME/../..}
	KINF=${KINF:-$ROOT/build/cmd/kinf/kinf}
	[[ -x $KINF ]] || fail "no kinf binary at $KINF (build it, or set KINF)"
	MAN=$ROOT/man/kinf.1.scd
	README=$ROOT/README.md
	BASH_COMP=$ROOT/completions/bash/kinf
	ZSH_COMP=$ROOT/completions/zsh/_kinf
	FISH_COMP=$ROOT/completions/fish/kinf.fish
}

is_hidden() {
	[[ " $HIDDEN_OPTIONS " == *" $1 "* ]]
}

# Subcommands listed by `kinf --help`.
commands_in_help() {
	"$KINF" --help | awk '/^Commands:/ { f = 1; next }
		f && /^  [a-z]/ { print $1; next }
		f { exit }'
}

# Subcommands in main.c's command table.
commands_in_source() {
	sed -n 's/^[[:space:]]*&cmd_\([a-z_]*\),.*/\1/p' "$ROOT/cmd/kinf/main.c"
}

all_commands() {
	{ commands_in_help; commands_in_source; } | LC_ALL=C sort -u
}

# Long options on the option lines of `kinf CMD --help`
# ("  -n, --namespace NS   ..." or "      --watch-only   ...").
help_options() {
	"$KINF" "$1" --help | sed -nE 's/^ +(-[A-Za-z], )?--([a-z][a-z0-9-]*).*/\2/p' |
		LC_ALL=C sort -u
}

# Short options on those lines.
help_short_options() {
	"$KINF" "$1" --help | sed -nE 's/^ +-([A-Za-z]), --.*/\1/p' | LC_ALL=C sort -u
}

# The getopt_long names in an option macro, wherever it is defined.
macro_options() {
	cat "$ROOT"/cmd/kinf/*.h "$ROOT"/cmd/kinf/*.c |
		awk -v m="$1" '$0 ~ "^#define " m "([ \\\\]|$)" { f = 1 }
			f { print }
			f && !/\\$/ { exit }' |
		grep -o '{ *"[a-z][a-z0-9-]*"' | sed 's/{ *"//; s/"$//'
}

# The names in cmd/kinf/CMD.c's `*_options[]` table, macros expanded.
table_options() {
	local file=$ROOT/cmd/kinf/$1.c line
	[[ -r $file ]] || return 1
	awk '/_options\[\] *= *\{/ { f = 1; next } f && /^};/ { exit } f' "$file" |
		while IFS= read -r line; do
			if [[ $line =~ ^[[:space:]]*([A-Z][A-Z0-9_]*),?[[:space:]]*$ ]]; then
				macro_options "${BASH_REMATCH[1]}"
			elif [[ $line =~ \{\ *\"([a-z][a-z0-9-]*)\" ]]; then
				echo "${BASH_REMATCH[1]}"
			fi
		done | LC_ALL=C sort -u
}

# Every long option of CMD: its --help lines and its table.
command_options() {
	{ help_options "$1"; table_options "$1"; } | LC_ALL=C sort -u
}

# Every long option of any command, and the top-level ones.
all_options() {
	local c
	{
		for c in $(all_commands); do
			command_options "$c"
		done
		"$KINF" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sed 's/^--//'
	} | LC_ALL=C sort -u
}

# The words of these arguments not in the file, as a list to print.
man_missing() {
	local c o
	for c in "$@"; do
		case $c in
		--*) grep -qF -- "*$c*" "$MAN" || echo "$c" ;;
		-?) grep -qF -- "*$c*" "$MAN" || echo "$c" ;;
		*) grep -qF -- "## kinf $c" "$MAN" || echo "$c" ;;
		esac
	done
}

readme_missing() {
	local c
	for c in "$@"; do
		case $c in
		--*) grep -qE -- "$c([^a-z0-9-]|\$)" "$README" || echo "$c" ;;
		*) grep -qE -- "kinf $c([^a-z0-9-]|\$)" "$README" || echo "$c" ;;
		esac
	done
}

# What the bash completion offers for the words given (the last is the
# word under the cursor), one per line.
bash_offers() {
	(
		# shellcheck source=/dev/null
		source "$BASH_COMP"
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		_kinf
		printf '%s\n' "${COMPREPLY[@]}"
	)
}

# bash_missing CMD WORD...: the WORDs bash does not offer after `kinf CMD`
# (options after "--", commands when CMD is "").
bash_missing() {
	local cmd=$1 offered w
	shift
	if [[ -z $cmd ]]; then
		offered=$(bash_offers kinf '')
	else
		offered=$(bash_offers kinf "$cmd" --)
	fi
	for w in "$@"; do
		grep -qxF -- "$w" <<<"$offered" || echo "$w"
	done
}

zsh_missing() {
	local w
	for w in "$@"; do
		case $w in
		--*) grep -qE -- "$w([^a-z0-9-]|\$)" "$ZSH_COMP" || echo "$w" ;;
		*) grep -qF -- "'$w:" "$ZSH_COMP" || echo "$w" ;;
		esac
	done
}

# fish_missing CMD WORD...: as bash_missing, with `complete -C` when fish is
# installed, else by reading the file.
fish_missing() {
	local cmd=$1 offered w
	shift
	if command -v fish >/dev/null; then
		offered=$(fish -c 'source $argv[1]; complete -C $argv[2] | cut -f1' \
			"$FISH_COMP" "kinf ${cmd:+$cmd --}")
		for w in "$@"; do
			grep -qxF -- "$w" <<<"$offered" || echo "$w"
		done
		return
	fi
	for w in "$@"; do
		case $w in
		--*) grep -qE -- "-l ${w#--}( |\$)" "$FISH_COMP" || echo "$w" ;;
		*) grep -qE -- "-a $w( |\$)" "$FISH_COMP" || echo "$w" ;;
		esac
	done
}

# Long options of CMD that should be in --help, README.md and the completions.
public_options() {
	local o
	for o in $(command_options "$1"); do
		is_hidden "$o" || echo "--$o"
	done
}

# Fail with "WHAT lacks: ..." when the list on stdin is not empty.
report() {
	local missing
	missing=$(tr '\n' ' ' | sed 's/ *$//')
	[[ -z $missing ]] || fail "$1 lacks: $missing"
}

@test "the command list: kinf --help and main.c's table agree" {
	run commands_in_help
	assert_success
	local help=$output
	[[ -n $help ]] || fail "kinf --help lists no commands"
	run commands_in_source
	assert_output "$help"
}

@test "every option in a command's table is in its --help, and back" {
	local c o help table
	for c in $(all_commands); do
		help=$(help_options "$c")
		table=$(table_options "$c") || fail "no option table in cmd/kinf/$c.c"
		[[ -n $table ]] || fail "no options found in cmd/kinf/$c.c"
		# version's help refers to the shared options rather than listing
		# them ("The connection options of the other commands apply.").
		local by_reference=
		if [[ $c == version ]] &&
			"$KINF" version --help | grep -q "options of the other commands apply"; then
			by_reference=$(macro_options CLI_COMMON_OPTIONS)
		fi
		for o in $table; do
			is_hidden "$o" && continue
			grep -qxF -- "$o" <<<"$by_reference" && continue
			grep -qxF -- "$o" <<<"$help" || echo "--$o"
		done | report "kinf $c --help (option in cmd/kinf/$c.c)"
		for o in $help; do
			grep -qxF -- "$o" <<<"$table" || echo "--$o"
		done | report "cmd/kinf/$c.c's option table (option in kinf $c --help)"
	done
}

@test "hidden test options stay hidden" {
	local o c
	for o in $HIDDEN_OPTIONS; do
		local in_table=
		for c in $(all_commands); do
			table_options "$c" | grep -qxF -- "$o" && in_table=1
			help_options "$c" | grep -qxF -- "$o" &&
				fail "--$o is in kinf $c --help: take it out of HIDDEN_OPTIONS"
		done
		[[ -n $in_table ]] || fail "--$o is in no option table: take it out of HIDDEN_OPTIONS"
	done
}

@test "man page: every command, every option, the sections" {
	local c
	{
		man_missing $(all_commands)
		for c in $(all_commands); do
			man_missing $(help_short_options "$c" | sed 's/^/-/')
		done
		man_missing $(all_options | sed 's/^/--/')
	} | report "man/kinf.1.scd"
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS OUTPUT "EXIT STATUS" ENVIRONMENT \
		FILES EXAMPLES "SEE ALSO"; do
		grep -qx "# $s" "$MAN" || echo "# $s"
	done | report "man/kinf.1.scd (sections)"
	for v in KUBECONFIG HOME XDG_CACHE_HOME NO_COLOR KUBERNETES_SERVICE_HOST \
		KUBERNETES_SERVICE_PORT POD_NAMESPACE; do
		grep -qF "*$v*" "$MAN" || echo "$v"
	done | report "man/kinf.1.scd (ENVIRONMENT)"
	for s in 0 1 2 3 4; do
		grep -qx "\*$s\*" "$MAN" || echo "$s"
	done | report "man/kinf.1.scd (EXIT STATUS)"
}

@test "man page: scdoc builds it without warnings" {
	command -v scdoc >/dev/null || skip "scdoc is not installed"
	run --separate-stderr scdoc <"$MAN"
	assert_success
	[[ -z $stderr ]] || fail "scdoc: $stderr"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/kinf.1"
	if command -v groff >/dev/null; then
		run --separate-stderr env LC_ALL=C groff -man -ww -z "$BATS_TEST_TMPDIR/kinf.1"
		assert_success
		[[ -z $stderr ]] || fail "groff: $stderr"
	fi
}

@test "README.md: every command and every option" {
	[[ -r $README ]] || fail "README.md does not exist"
	local c
	{
		readme_missing $(all_commands)
		for c in $(all_commands); do
			readme_missing $(public_options "$c")
		done
	} | LC_ALL=C sort -u | report "README.md"
}

@test "bash completion: every command, and each command's options" {
	local c
	bash_missing "" $(all_commands) | report "completions/bash/kinf (commands)"
	for c in $(all_commands); do
		bash_missing "$c" $(public_options "$c") | report "completions/bash/kinf (kinf $c)"
	done
}

@test "zsh completion: every command and option" {
	local c
	{
		zsh_missing $(all_commands)
		for c in $(all_commands); do
			zsh_missing $(public_options "$c")
		done
	} | LC_ALL=C sort -u | report "completions/zsh/_kinf"
}

@test "fish completion: every command, and each command's options" {
	local c
	fish_missing "" $(all_commands) | report "completions/fish/kinf.fish (commands)"
	for c in $(all_commands); do
		fish_missing "$c" $(public_options "$c") | report "completions/fish/kinf.fish (kinf $c)"
	done
}

@test "the checks fail on what is missing" {
	# The option lists are not empty and hold options of every layer.
	run command_options watch
	assert_line -- kubeconfig
	assert_line -- from
	assert_line -- watch-only
	assert_line -- watch-timeout
	run table_options deltas
	assert_line -- emit-replaced
	assert_line -- resync
	# Each check reports a word that is nowhere.
	run man_missing --no-such-option list no-such-command
	assert_output "$(printf '%s\n' --no-such-option no-such-command)"
	run bash_missing watch --no-such-option --diff
	assert_output -- --no-such-option
	run bash_missing list --diff
	assert_output -- --diff
	run zsh_missing --no-such-option no-such-command
	assert_output "$(printf '%s\n' --no-such-option no-such-command)"
	if command -v fish >/dev/null; then
		run fish_missing deltas --no-such-option --emit-replaced --timestamps
		assert_output "$(printf '%s\n' --no-such-option --timestamps)"
	else
		# Without fish, the file is read: not per command.
		run fish_missing deltas --no-such-option --emit-replaced
		assert_output -- --no-such-option
	fi
	printf 'kinf list --watch\n' >"$BATS_TEST_TMPDIR/README.md"
	README=$BATS_TEST_TMPDIR/README.md
	run readme_missing list watch --watch --watch-list
	assert_output "$(printf '%s\n' watch --watch-list)"
	# And report fails on a non-empty list.
	run report "something" <<<"--x"
	assert_failure
	run report "something" </dev/null
	assert_success
}

@test "README and man page: the hostile-input case count is current" {
	local bad sec total
	bad=$(grep -c '^@test' "$ROOT/test/cli/badinput.bats")
	sec=$(grep -c '^@test' "$ROOT/test/cli/security.bats")
	total=$((bad + sec))
	grep -q "$total cases ($bad in" "$README" ||
		fail "README.md does not say $total cases ($bad in badinput.bats)"
	tr '\n' ' ' <"$README" | grep -q "$sec in \`test/cli/security.bats\`" ||
		fail "README.md does not say $sec in security.bats"
	grep -q "with $total hostile-input cases" "$MAN" ||
		fail "man page does not say $total hostile-input cases"
}

# The lines of a demo transcript with what changes from run to run made
# constant: clock times, ages (the AGE column, 0s, 4d23h) and the runs of
# blanks that a column's width puts between cells.
demo_normalize() {
	sed -E -e 's/[0-9]{2}:[0-9]{2}:[0-9]{2}/TIME/g' \
		-e 's/(^| )[0-9]+[smhd]([0-9]+[smhd])?( |$)/\1AGE\3/g' \
		-e 's/[[:space:]]+/ /g' -e 's/ $//' |
		sed -e '/^demo: done/d' -e '/^$/d'
}

@test "README.md's What it looks like is what test/demo prints" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	run --separate-stderr timeout 60 "$ROOT/test/demo" --kinf "$KINF"
	assert_success
	local demo=$output readme
	readme=$(awk '/^## What it looks like/ { f = 1 } f && /^```$/ { n++; next }
		f && n == 1 { print } n == 2 { exit }' "$README")
	[[ -n $readme ]] || fail "README.md has no What it looks like block"
	# The same commands, in the same order.
	diff -u <(grep '^\$ kinf' <<<"$readme") <(grep '^\$ kinf' <<<"$demo") ||
		fail "README.md's commands are not test/demo's"
	diff -u <(demo_normalize <<<"$readme") <(demo_normalize <<<"$demo") ||
		fail "README.md's output is not test/demo's (run test/demo --kinf build/cmd/kinf/kinf)"
}

@test "kinf help help, kinf help get (list's), and SYNOPSIS lists every command" {
	run "$KINF" help help
	assert_success
	assert_line --partial "Usage: kinf help [COMMAND]"
	run "$KINF" help get
	assert_success
	assert_output "$("$KINF" list --help)"
	local c synopsis
	synopsis=$(awk '/^# SYNOPSIS/ { f = 1; next } /^# / { f = 0 } f' "$MAN")
	for c in $(all_commands) help get; do
		grep -qF -- "*kinf* *$c*" <<<"$synopsis" || echo "$c"
	done | report "man/kinf.1.scd's SYNOPSIS"
}

@test "-o: each command's --help, errors and completion list only the formats it prints" {
	# version: json and yaml (text without -o), as kubectl version
	run "$KINF" version --help
	assert_line --regexp '^  -o, --output FORMAT +json or yaml \(default: text\)$'
	run -2 --separate-stderr "$KINF" version -o wide
	[[ $stderr == "kinf: kinf version prints json or yaml, not \"wide\""* ]] || fail "$stderr"
	run -2 --separate-stderr "$KINF" version -o bogus
	[[ $stderr == *"(kinf version prints json or yaml)"* ]] || fail "$stderr"
	run "$KINF" __complete version -o ''
	assert_output "$(printf '%s\n' json yaml :6)"
	run "$KINF" deltas --help
	assert_line --regexp '^  -o, --output FORMAT +table or json$'
	run -2 --separate-stderr "$KINF" deltas pods -o yaml
	[[ $stderr == "kinf: kinf deltas prints table or json, not \"yaml\""* ]] || fail "$stderr"
	run "$KINF" serve --help
	assert_line --regexp '^  -o, --output FORMAT +none: it prints nothing$'
	local c
	for c in list watch index; do
		run "$KINF" "$c" --help
		assert_output --partial "jsonpath-as-json=TEMPLATE"
	done
}

@test "-n and --context with several values are documented for every command that takes them" {
	local c
	for c in list watch deltas index serve version; do
		run "$KINF" "$c" --help
		assert_line --regexp '^  -n, --namespace NS +.*'
		assert_output --partial "several as a,b or -n a -n b (not version)"
		assert_output --partial "context to use; several as a,b or"
	done
	local entry
	for entry in '^\*-n\*, \*--namespace\* _namespace_$' '^\*--context\* _name_$'; do
		awk -v e="$entry" '$0 ~ e { f = 1; next } f && /^\*/ { exit } f' "$MAN" | tr -s '\n\t ' '   ' |
			grep -q '\*list\*, \*watch\*, \*deltas\*, \*index\* and \*serve\* take several' ||
			fail "the man page's $entry does not name every command that takes several"
	done
	grep -q '`-n` and `--context` take several' "$README" ||
		fail "README.md does not say which commands take several -n and --context"
}
