#!/usr/bin/env bash
# The demo: a local cluster, testdata/demo applied with kapply, then the things
# kubectl apply gets wrong, shown on the same objects. It grows with kapply.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export KAPPLY_CLUSTER_DIR=$root/.cluster/demo
trap 'bash "$root/hack/cluster.sh" down' EXIT
eval "$(bash "$root/hack/cluster.sh" up | grep '^export ')"
kapply=$root/bin/kapply
work=$(mktemp -d)
cp -r "$root/testdata/demo/." "$work/"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { if command -v kubectl >/dev/null; then kubectl "$@"; fi; }

step "kapply version"
"$kapply" version

step "kapply apply -R: Namespace and CRD first, then the rest, the custom resource in the same run"
"$kapply" apply -f "$work" -R --prune --applyset=demo -n shop
show get -n shop configmap,secret,deployment,service,backups.shop.example.com

step "kapply apply again: nothing to do"
"$kapply" apply -f "$work" -R --prune --applyset=demo -n shop

step "meanwhile, other writers: an autoscaler scales to 5, a controller adds a backup target"
show scale -n shop deployment/web --replicas=5
show patch -n shop backup nightly --type=json -p '[{"op":"add","path":"/spec/targets/-","value":{"name":"added-by-controller","path":"/srv"}}]'

step "the files change: new image, replicas handed to the autoscaler, one backup target edited"
sed -i 's/nginx:1.27/nginx:1.28/; /replicas: 2/d' "$work/app/deployment.yaml"
sed -i 's#/var/lib/orders#/var/lib/orders-v2#' "$work/crd/backup.yaml"
"$kapply" release -f "$work/app/deployment.yaml" --field spec.replicas -n shop

step "kapply diff --explain: what apply will change, and why"
"$kapply" diff -f "$work" -R -n shop --prune --applyset=demo --explain || true

step "kapply apply: replicas stay at 5, the controller's backup target survives (kubectl apply would drop it)"
"$kapply" apply -f "$work" -R --prune --applyset=demo -n shop
show get -n shop deployment web -o jsonpath='replicas={.spec.replicas} image={.spec.template.spec.containers[0].image}{"\n"}'
show get -n shop backup nightly -o jsonpath='targets={.spec.targets[*].name}{"\n"}'

step "a file removed: kapply apply --prune deletes exactly that object"
rm "$work/app/service.yaml"
"$kapply" diff -f "$work" -R -n shop --prune --applyset=demo --summary || true
"$kapply" apply -f "$work" -R --prune --applyset=demo -n shop

step "kapply delete -R: custom resources and objects first, then the CRD, then the Namespace"
"$kapply" delete -f "$work" -R
