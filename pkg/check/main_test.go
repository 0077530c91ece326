package check_test

import (
	"os"
	"testing"

	"github.com/kapply/kapply/internal/testcluster"
)

// cluster is the API server every integration test of the package shares;
// each test works in a namespace of its own, and its policies are bound
// there only.
var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(testcluster.Main(m, &cluster))
}
