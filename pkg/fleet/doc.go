// Package fleet runs one operation over many clusters (kubeconfig
// contexts) with rollout control: a canary wave first, then waves of a
// given size, at most MaxParallel clusters at once, a deadline per cluster
// that a hung server cannot outlive, and fail-fast. Run takes the clusters,
// an Applier factory (Connect) and the operation — Apply, Plan, Diff,
// Status, Delete, Execute of a PlanList, or a program's own Func — and
// returns a Result per cluster: its exit code by the operation's rules,
// object counts, events, plan or statuses, readiness, duration and first
// error.
//
// Connect builds a cluster's Applier when the cluster's turn comes, and
// Run drops it when the cluster is done, so memory grows with MaxParallel,
// not with the number of clusters.
//
// Pick chooses the clusters (a kubeconfig's contexts, a clusters file with
// labels, patterns); Across compares a Status run's objects between
// clusters; PlanSet and PlansFor make and check PlanLists.
package fleet
