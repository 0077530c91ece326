// Package offswitch reads the switches that turn off a hand-written
// replacement of a library (docs/guarantees.md, "Hand-written reading and
// writing"): KAPPLY_<NAME>=off makes kapply use the library instead, so a
// user who meets a divergence has a way out without a new release.
package offswitch

import "os"

// Off tells whether the environment variable name is set to "off". Callers
// read it once per process, into a package variable, so that one run never
// mixes the two paths.
func Off(name string) bool {
	return os.Getenv(name) == "off"
}
