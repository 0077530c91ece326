// Package modroot finds folders of test support by the root of the Go
// module holding the working directory (which go test sets to the
// package's), so that tests in any package find bin/ and the corpus.
package modroot
