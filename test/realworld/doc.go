// Package realworld holds the end-to-end tests that apply other projects'
// install manifests (../shared/realworld, read in place, never copied) with
// the kapply binary, client-side and server-side, on a real API server, and
// run kubectl through the same steps for comparison. It is its own test
// binary because those manifests install webhooks that would refuse the
// namespaces other test binaries create.
package realworld
