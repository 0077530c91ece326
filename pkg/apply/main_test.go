package apply_test

import (
	"os"
	"testing"

	"github.com/kapply/kapply/internal/peakrss"
	"github.com/kapply/kapply/internal/testcluster"
)

// cluster is the API server every integration test of the package shares;
// each test works in namespaces of its own.
var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	peakrss.ServeRunner()
	os.Exit(testcluster.Main(m, &cluster))
}
