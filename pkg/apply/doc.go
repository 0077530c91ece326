// Package apply runs the commands that write objects: `kapply apply` loads
// objects from files, maps them to API resources, orders them (Namespaces and
// CRDs first), reads the live objects (one LIST per resource and namespace
// where that saves requests), and creates or patches each one with the plan of
// the three-way merge engine, concurrently, reporting one Event per object;
// then, with --prune, deletes what the files no longer declare (ApplySets or a
// label selector). `kapply delete` removes what the files declare, dependents
// first. The ownership commands (last-applied set/edit, adopt, release,
// status) read their targets and plan their record patches here too. One bad
// object never stops the others.
package apply
