// Command etcd is the upstream etcd server. It lives in its own module because
// k8s.io/kubernetes requires a newer etcd server, and minimal version selection
// would otherwise override the pinned one.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
