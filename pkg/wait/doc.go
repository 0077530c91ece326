// Package wait waits for objects to become ready, or to be deleted.
//
// Readiness is cli-utils' kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status):
// an object is done when it is Current or Failed. Watching is client-go's
// (k8s.io/client-go/tools/watch.UntilWithSync): one LIST and one WATCH per
// resource and namespace, re-listed by the informer after a closed watch, an
// expired resourceVersion or a restarted API server. cli-utils'
// kstatus/watcher is not used: it pulls kustomize in through cli-runtime.
//
// Objects are identified by their UID where known: an object deleted and
// created again under the same name is another object, and the one waited
// for counts as deleted.
package wait
