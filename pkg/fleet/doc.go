// Package fleet runs one job over many clusters (kubeconfig contexts) with
// rollout control: a canary wave first, then waves of a given size, at most
// MaxParallel clusters at once, a deadline per cluster that a hung server
// cannot outlive, and fail-fast. Each cluster gets a Result: its object
// counts, readiness, duration and first error.
//
// A job builds its cluster's clients (one apply.Applier per cluster) when
// the cluster's turn comes and drops them when it returns, so memory grows
// with MaxParallel, not with the number of clusters.
package fleet
