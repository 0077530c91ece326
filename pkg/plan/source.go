// Package plan is the Plan value: what a run of kapply would do to each
// object, and why, computed once and then shown, saved or executed.
package plan

// Source is where an object came from: the file (or URL, or "STDIN") it was
// read from, its place among the objects read from there (from 1; a List
// counts its items) and the line its document starts on (0: unknown). The
// zero Source is an object built in a program.
type Source struct {
	File  string `json:"file,omitempty"`
	Index int    `json:"index,omitempty"`
	Line  int    `json:"line,omitempty"`
}
