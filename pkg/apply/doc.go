// Package apply is the library behind `kapply apply`, `diff` and `delete`:
// an Applier, built from a dynamic client, a REST mapper and a schema
// resolver (Clients), takes objects (Input) and Options and returns one
// Event per object. It maps each object to its API resource, orders them
// (Namespaces and CRDs first), reads the live objects (one LIST per
// resource and namespace where that saves requests), and creates or
// patches each one with the plan of the three-way merge engine (pkg/merge),
// concurrently; then, with Prune, deletes what the input no longer declares
// (ApplySets or a label selector), and with Wait, watches what it applied
// until it is ready (kstatus). Prune does the pruning alone, for a program
// that writes its objects itself. Delete removes objects, dependents first.
// The ownership operations are its methods too (Adopt, Release, Status,
// SetLastApplied, EditLastApplied): they read and write the objects given,
// built in code or read from files, through the same clients and retries.
// One bad object never stops the others. Every error and warning it hands
// out has the values of the Secrets the run knows masked (mask.go). It
// knows no kubeconfig, no files and no flags: it takes plain unstructured
// objects, each with an optional Source (pkg/plan); pkg/load reads files,
// cmd/kapply turns flags into Options.
package apply
