#!/usr/bin/env bash
# make release-snapshot: every archive, the checksums and the krew manifest
# of a release, built locally from the work tree and published nowhere
# (goreleaser release --snapshot --clean). The version is the last tag's
# (v0.0.0 before the first) plus -SNAPSHOT-<commit>.
#
# DIST (first argument, default dist/) is where they go; goreleaser has no
# flag for it, so a copy of .goreleaser.yaml with another dist: line is used.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dist=${1:-$root/dist}
mkdir -p "$dist"
dist=$(cd "$dist" && pwd)

config=$(mktemp "${TMPDIR:-/tmp}/goreleaser.XXXXXX.yaml")
trap 'rm -f "$config"' EXIT
sed "s|^dist: .*|dist: $dist|" "$root/.goreleaser.yaml" > "$config"
grep -qx "dist: $dist" "$config" || { echo "snapshot.sh: no 'dist:' line in .goreleaser.yaml" >&2; exit 1; }

# In a snapshot goreleaser takes a repository without a remote (a new clone
# or worktree may have none) for no repository at all: commit "none", no
# commit date. Lend it the project's URL through git's environment, leaving
# the repository's configuration alone.
if [[ -z $(git -C "$root" remote) ]]; then
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/kapply/kapply.git
fi

"$root/hack/release/goreleaser.sh" check --config "$config"
"$root/hack/release/goreleaser.sh" release --snapshot --clean --config "$config"
echo "release-snapshot: archives, checksums and krew/kapply.yaml in $dist"
