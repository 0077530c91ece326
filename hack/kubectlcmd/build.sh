#!/usr/bin/env bash
# Builds kubectl and kube-controller-manager at the k8s.io/kubernetes version
# pinned in this folder's go.mod (the `tool` lines), into OUT (default
# bin/kubectlcmd), once: a stamp holding the version makes later runs a no-op,
# and the Go build cache makes a rebuild after `make clean` quick.
#
# kubectl is the real one the test/cmd suites expect for every command that is
# not kapply's (get, create, delete, config...); /usr/bin/kubectl may be of
# another minor. kube-controller-manager is needed because the suites delete
# namespaces (the namespace controller finalizes them) and orphan deployments
# (the garbage collector removes the orphan finalizer).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../bin/kubectlcmd}
mkdir -p "$out"
out=$(cd "$out" && pwd)

k8s_version=$(cd "$here" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
stamp="kubectl kube-controller-manager $k8s_version"
if [[ -x $out/kubectl && -x $out/kube-controller-manager && -f $out/.stamp && $(cat "$out/.stamp") == "$stamp" ]]; then
  echo "kubectlcmd: $stamp already built in $out"
  exit 0
fi

# The same version variables kubernetes' hack/lib/version.sh sets, so that
# `kubectl --match-server-version` (in the suites' kube_flags) accepts the
# API server hack/k8sbin builds with the same gitVersion.
minor=${k8s_version#v1.}; minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
done

echo "kubectlcmd: building $stamp into $out"
cd "$here"
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/kubectl" k8s.io/kubernetes/cmd/kubectl
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager
echo "$stamp" > "$out/.stamp"
