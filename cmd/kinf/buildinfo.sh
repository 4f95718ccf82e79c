#!/bin/sh
# Prints "COMMIT|TREESTATE|DATE" of the git checkout in $1 for kinf version:
# the commit, clean or dirty, and the commit's date in UTC (so that a build
# is reproducible). Fails outside a checkout (a tarball): meson's vcs_tag
# then uses its fallback, "||".
set -e
cd "$1"
# Only a checkout of kinf itself: not a tarball unpacked inside another one.
top=$(git rev-parse --show-toplevel 2>/dev/null)
[ "$(cd "$top" && pwd -P)" = "$(pwd -P)" ]
commit=$(git rev-parse HEAD 2>/dev/null)
state=clean
git diff --quiet HEAD -- 2>/dev/null || state=dirty
date=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null)
printf '%s|%s|%s\n' "$commit" "$state" "$date"
