package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kapply/kapply/pkg/fleet"
)

// A canary, then waves of two; the job would build an Applier from the
// cluster's context and apply to it.
func ExampleRun() {
	clusters := []fleet.Cluster{{Context: "eu-1"}, {Context: "eu-2"}, {Context: "us-1"}, {Context: "us-2"}}
	opts := fleet.Options{MaxParallel: 2, Canary: 1, WaveSize: 2, ClusterTimeout: time.Minute}
	results := fleet.Run(context.Background(), clusters, opts, func(ctx context.Context, c fleet.Cluster) fleet.Outcome {
		if c.Context == "us-2" {
			return fleet.Outcome{Code: 1, ClusterFailed: true, Err: errors.New("forbidden")}
		}
		return fleet.Outcome{Counts: fleet.Counts{Created: 3}}
	})
	for _, r := range results {
		fmt.Printf("%s wave %d: %d created, failed %v, error %v\n", r.Context, r.Wave, r.Created, r.ClusterFailed, r.Err)
	}
	// Output:
	// eu-1 wave 0: 3 created, failed false, error <nil>
	// eu-2 wave 1: 3 created, failed false, error <nil>
	// us-1 wave 1: 3 created, failed false, error <nil>
	// us-2 wave 2: 0 created, failed true, error forbidden
}
