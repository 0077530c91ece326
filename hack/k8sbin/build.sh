#!/usr/bin/env bash
# Builds bin/kube-apiserver and bin/etcd at the versions pinned in this folder's
# go.mod files, once: a stamp holding those versions makes later runs a no-op.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../bin}
mkdir -p "$out"
out=$(cd "$out" && pwd)

k8s_version=$(cd "$here" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
etcd_version=$(cd "$here/etcd" && go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
stamp="kube-apiserver $k8s_version etcd $etcd_version"

if [[ -x $out/kube-apiserver && -x $out/etcd && -f $out/.k8sbin && $(cat "$out/.k8sbin") == "$stamp" ]]; then
  echo "k8sbin: $stamp already built in $out"
  exit 0
fi

minor=${k8s_version#v1.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version"
ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"

echo "k8sbin: building $stamp into $out"
(cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/kube-apiserver" ./kube-apiserver)
(cd "$here/etcd" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/etcd" .)
echo "$stamp" > "$out/.k8sbin"
