#!/usr/bin/env bash
# Builds bin/kapp (Carvel kapp, a peer in `make bench`) from the Go module
# proxy, once: a stamp holding the version makes later runs a no-op. Nothing
# of kapp lives in this repository: the build happens in a temporary module.
#
# kapp requires k8s.io/kubernetes, whose go.mod points its k8s.io/* staging
# modules at ./staging (v0.0.0); they are replaced here by their published
# versions of the same release. kapp's dependencies are not all in the
# checksum database, so its lookups are off for this build only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../bin}
kapp_version=${KAPP_VERSION:-v0.64.2}
staging_version=${KAPP_STAGING_VERSION:-v0.31.7}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stamp="kapp $kapp_version k8s.io staging $staging_version"

if [[ -x $out/kapp && -f $out/.kapp && $(cat "$out/.kapp") == "$stamp" ]]; then
  echo "kapp: $stamp already built in $out"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOFLAGS=-mod=mod GONOSUMDB='*' GONOSUMCHECK=1 GOSUMDB=off GOWORK=off
echo "kapp: building $stamp into $out (module in $tmp)"
cd "$tmp"
go mod init kappbuild >/dev/null 2>&1
go mod edit -require "carvel.dev/kapp@$kapp_version"
go mod download "carvel.dev/kapp@$kapp_version"
k8s_version=$(go mod edit -json "$(go env GOMODCACHE)/cache/download/carvel.dev/kapp/@v/$kapp_version.mod" |
  sed -n 's/.*"Path": "k8s.io\/kubernetes",.*//;/"Path": "k8s.io\/kubernetes"/{n;s/.*"Version": "\(.*\)".*/\1/p}')
k8s_version=${k8s_version:-v1.${staging_version#v0.}}
go mod download "k8s.io/kubernetes@$k8s_version"
k8s_mod="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$k8s_version.mod"
for m in $(sed -n 's/^[[:space:]]*\(k8s.io\/[a-z0-9-]*\) => .\/staging.*/\1/p' "$k8s_mod"); do
  go mod edit -replace "$m=$m@$staging_version"
done
go mod edit -replace "k8s.io/kubernetes=k8s.io/kubernetes@$k8s_version"
printf 'package main\n\nimport _ "carvel.dev/kapp/cmd/kapp"\n' > tools.go
go mod tidy >/dev/null 2>&1 || true
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X carvel.dev/kapp/pkg/kapp/version.Version=${kapp_version#v}" \
  -o "$out/kapp" carvel.dev/kapp/cmd/kapp
echo "$stamp" > "$out/.kapp"
"$out/kapp" version | head -1
