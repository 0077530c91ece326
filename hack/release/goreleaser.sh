#!/usr/bin/env bash
# Runs goreleaser at the version pinned in hack/tools/goreleaser/go.mod
# (a module of its own, so that goreleaser's many dependencies stay out of
# kapply's go.mod), from the repository root, with the given arguments.
# The binary is built into bin/tools once; later runs find it up to date in
# the Go build cache and only check it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tools=$root/bin/tools
mkdir -p "$tools"
(cd "$root/hack/tools/goreleaser" && nice go build -o "$tools/goreleaser" github.com/goreleaser/goreleaser/v2)
cd "$root"
# .goreleaser.yaml's archives take the completion program from here.
export KAPPLY_DIST=${KAPPLY_DIST:-dist}
exec nice "$tools/goreleaser" "$@"
