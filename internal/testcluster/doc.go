// Package testcluster starts and stops a real etcd and kube-apiserver on
// loopback — the binaries hack/k8sbin builds into bin/ — for integration tests
// (once per test binary, a fresh namespace per test) and for the demo.
//
// It drives controller-runtime's envtest rather than hand-rolling process
// management: envtest already picks free ports, writes certificates, provisions
// an admin user and stops exactly the processes it started.
package testcluster
