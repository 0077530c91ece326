#!/usr/bin/env bash
# make release-snapshot: every archive, the checksums and the krew manifest
# of a release, built locally from the work tree and published nowhere
# (goreleaser release --snapshot --clean). The version is the last tag's
# (v0.0.0 before the first) plus -SNAPSHOT-<commit>.
#
# DIST (first argument, default dist/) is where they go. goreleaser has no
# flag for it, so a copy of .goreleaser.yaml with another dist: line is
# used; and as goreleaser finds archive files only under the work tree, a
# DIST elsewhere is built in a fresh folder under dist/ and moved there.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-}
build=dist
if [[ -n $out ]]; then
  mkdir -p "$root/dist"
  build=$(realpath --relative-to="$root" "$(mktemp -d "$root/dist/snapshot.XXXXXX")")
fi

config=$(mktemp "${TMPDIR:-/tmp}/goreleaser.XXXXXX.yaml")
trap 'rm -f "$config"; [[ $build == dist ]] || rm -rf "${root:?}/$build"' EXIT
sed "s|^dist: .*|dist: $build|" "$root/.goreleaser.yaml" > "$config"
grep -qx "dist: $build" "$config" || { echo "snapshot.sh: no 'dist:' line in .goreleaser.yaml" >&2; exit 1; }

# In a snapshot goreleaser takes a repository without a remote (a new clone
# or worktree may have none) for no repository at all: commit "none", no
# commit date. Lend it the project's URL through git's environment, leaving
# the repository's configuration alone.
if [[ -z $(git -C "$root" remote) ]]; then
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/kapply/kapply.git
fi

export KAPPLY_DIST=$build
"$root/hack/release/goreleaser.sh" check --config "$config"
"$root/hack/release/goreleaser.sh" release --snapshot --clean --config "$config"
if [[ -n $out ]]; then
  rm -rf "$out"
  mkdir -p "$(dirname "$out")"
  mv "$root/$build" "$out"
fi
echo "release-snapshot: archives, checksums and krew/kapply.yaml in ${out:-$root/dist}"
