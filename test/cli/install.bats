#!/usr/bin/env bats
# meson install: kinf, the kubectl-kinf plugin link, the man page and the
# completions land where bash-completion, zsh and fish look for them.
bats_require_minimum_version 1.5.0

setup_file() {
	export KINF_SOURCE_ROOT=${KINF_SOURCE_ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
	export KINF=${KINF:-$KINF_SOURCE_ROOT/build/cmd/kinf/kinf}
	export BUILD_DIR=$(cd "$(dirname "$KINF")/../.." && pwd)
	export DEST="$BATS_FILE_TMPDIR/dest"
	meson install -C "$BUILD_DIR" --destdir "$DEST" --no-rebuild --quiet >/dev/null
	export PREFIX=$(meson introspect "$BUILD_DIR" --buildoptions | jq -r '.[] | select(.name == "prefix") | .value')
}

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
}

@test "kinf and the kubectl-kinf link are installed in bin" {
	[ -x "$DEST$PREFIX/bin/kinf" ]
	[ -L "$DEST$PREFIX/bin/kubectl-kinf" ]
	[ "$(readlink "$DEST$PREFIX/bin/kubectl-kinf")" = kinf ]
}

@test "kubectl finds kinf as a plugin" {
	command -v kubectl >/dev/null || skip "kubectl not installed"
	PATH="$DEST$PREFIX/bin:$PATH" run kubectl kinf version --client
	assert_success
	assert_output --partial "Client Version: kinf"
	PATH="$DEST$PREFIX/bin:$PATH" run kubectl plugin list
	assert_output --partial "kubectl-kinf"
}

@test "kubectl_complete-kinf is installed beside the link, and kubectl completes through it" {
	[ -x "$DEST$PREFIX/bin/kubectl_complete-kinf" ]
	command -v kubectl >/dev/null || skip "kubectl not installed"
	PATH="$DEST$PREFIX/bin:$PATH" run --separate-stderr kubectl __complete kinf w
	assert_success
	assert_output "$(printf '%s\n' watch :4)"
}

@test "the man page is installed and renders" {
	command -v scdoc >/dev/null || skip "scdoc not installed"
	man=$(find "$DEST" -name kinf.1 | head -1)
	[ -n "$man" ]
	[[ "$man" == */man1/kinf.1 ]]
	command -v man >/dev/null || skip "man not installed"
	run env MANWIDTH=80 man -l "$man"
	assert_success
	assert_output --partial "EXIT STATUS"
}

@test "completions are installed for bash, zsh and fish" {
	find "$DEST" -path '*bash-completion/completions/kinf' | grep -q .
	find "$DEST" -path '*zsh/site-functions/_kinf' | grep -q .
	find "$DEST" -path '*fish/vendor_completions.d/kinf.fish' | grep -q .
}

# kinf version's commit comes from git at build time; a tree without .git
# (a release tarball) still configures and builds, with the commit empty.
@test "a source tree without .git builds its version information empty" {
	command -v git >/dev/null && git -C "$KINF_SOURCE_ROOT" rev-parse --show-toplevel >/dev/null 2>&1 ||
		skip "not a git checkout"
	local src=$BATS_TEST_TMPDIR/src
	mkdir -p "$src"
	git -C "$KINF_SOURCE_ROOT" ls-files -z | (cd "$KINF_SOURCE_ROOT" && xargs -0 cp --parents -t "$src")
	run meson setup "$BATS_TEST_TMPDIR/build" "$src" -Dtests=false
	assert_success
	run ninja -C "$BATS_TEST_TMPDIR/build" cmd/kinf/buildinfo.h
	assert_success
	grep -qxF '#define KINF_BUILD_INFO "||"' "$BATS_TEST_TMPDIR/build/cmd/kinf/buildinfo.h"
	# And a checkout gives the commit it was built from.
	run ninja -C "$BUILD_DIR" cmd/kinf/buildinfo.h
	assert_success
	grep -qF "\"$(git -C "$KINF_SOURCE_ROOT" rev-parse HEAD)|" "$BUILD_DIR/cmd/kinf/buildinfo.h"
}
