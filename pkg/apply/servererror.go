package apply

import "github.com/kapply/kapply/pkg/cluster"

// conciseServerError says an Invalid error as kubectl says it
// (cluster.ConciseError).
func conciseServerError(err error) error { return cluster.ConciseError(err) }
