package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// planDocumentKind reads the top-level kind of the plan document at path
// (Plan or plan.SetKind) without decoding the rest of it: kapply writes
// the kind before the items, and a plan of 10,000 objects weighs a
// hundred megabytes, which apply --plan would otherwise decode twice.
func planDocumentKind(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", fmt.Errorf("%s is no JSON object", path)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", err
		}
		if key == "kind" {
			var kind string
			err := dec.Decode(&kind)
			return kind, err
		}
		var skipped json.RawMessage
		if err := dec.Decode(&skipped); err != nil {
			return "", err
		}
	}
	return "", nil
}
