package fleet

import (
	"context"

	"github.com/kapply/kapply/pkg/apply"
)

// Factory builds the Applier of one cluster. Run calls it when the
// cluster's turn comes and drops the Applier when the cluster is done, so
// that clients live only while their cluster runs.
type Factory func(Cluster) (*apply.Applier, error)

// Operation is what a run does in each cluster, with that cluster's
// Applier: Apply, Plan, Diff, Status, Delete, Execute, or a program's own.
// Run calls it from several goroutines at once.
type Operation interface {
	// Run runs in one cluster until ctx ends and says how it went.
	Run(ctx context.Context, c Cluster, a *apply.Applier) Outcome
	// FailureCode is the exit code of a cluster the operation failed in:
	// 1, or 2 where 1 reports a finding (diff's differences, status's
	// drift). A code at or above it fails the cluster.
	FailureCode() int
}

// Config is one run over many clusters.
type Config struct {
	// Clusters run in this order (the first ones are the canary).
	Clusters []Cluster
	// Options are the rollout's: parallelism, canary, waves, timeouts.
	Options
	// Connect builds each cluster's Applier; a cluster it fails for
	// fails with its error (the operation does not run there).
	Connect Factory
	// Operation runs in each cluster.
	Operation Operation
}

// Run runs cfg.Operation in every cluster, wave after wave (see Waves and
// Options), and returns a Result per cluster in the order of
// cfg.Clusters. It returns when every started cluster has finished or
// been given up after its deadline; a cluster not started (failed canary,
// FailFast, ctx ended) says so in its Result.
func Run(ctx context.Context, cfg Config) []Result {
	failure := max(cfg.Operation.FailureCode(), 1)
	return runJobs(ctx, cfg.Clusters, cfg.Options, func(ctx context.Context, c Cluster) Outcome {
		applier, err := cfg.Connect(c)
		if err != nil {
			return Outcome{Code: failure, ClusterFailed: true, Err: err}
		}
		out := cfg.Operation.Run(ctx, c, applier)
		out.ClusterFailed = out.ClusterFailed || out.Code >= failure
		return out
	})
}

// Func is an Operation of a program's own: Do runs in each cluster, and
// Failure is its FailureCode (0 means 1).
type Func struct {
	Do      func(ctx context.Context, c Cluster, a *apply.Applier) Outcome
	Failure int
}

func (f Func) Run(ctx context.Context, c Cluster, a *apply.Applier) Outcome { return f.Do(ctx, c, a) }

func (f Func) FailureCode() int { return max(f.Failure, 1) }
