// Package offswitch reads the switches that turn off a hand-written
// replacement of a library (docs/guarantees.md, "Hand-written reading and
// writing"): KAPPLY_<NAME>=off makes kapply use the library instead, so a
// user who meets a divergence has a way out without a new release.
package offswitch

import (
	"os"
	"slices"
	"strings"
)

// offValues are the values that turn a part off, in any case and with
// spaces around: "off" as documented, and the other ways people write it.
// A user who met a divergence and wrote KAPPLY_FASTYAML=OFF or =false kept
// the hand-written part without a word.
var offValues = []string{"off", "false", "0"}

// Off tells whether the environment variable name turns its part off.
// Callers read it once per process, into a package variable, so that one
// run never mixes the two paths.
func Off(name string) bool {
	return slices.Contains(offValues, strings.ToLower(strings.TrimSpace(os.Getenv(name))))
}
