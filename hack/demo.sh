#!/usr/bin/env bash
# The demo: a local cluster, testdata/demo applied with kapply, the result shown.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export KAPPLY_CLUSTER_DIR=$root/.cluster/demo
trap 'bash "$root/hack/cluster.sh" down' EXIT
eval "$(bash "$root/hack/cluster.sh" up | grep '^export ')"
kapply=$root/bin/kapply

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "kapply version"
"$kapply" version

step "kapply apply -f testdata/demo -R   (Namespace, CRD, ConfigMap, Secret, Deployment, Service, a custom resource)"
"$kapply" apply -f "$root/testdata/demo" -R

step "what the cluster holds now"
if command -v kubectl >/dev/null; then
  kubectl get namespace shop
  kubectl get crd backups.shop.example.com
  kubectl -n shop get configmap,secret,deployment,service,backups.shop.example.com
  step "the last-applied record kapply wrote (the same bytes kubectl writes)"
  kubectl -n shop get configmap web-config -o jsonpath='{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}'
else
  echo "(kubectl not on PATH: skipping the listing)"
fi
