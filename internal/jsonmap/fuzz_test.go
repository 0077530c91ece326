package jsonmap

import "testing"

// FuzzObject compares Object with apimachinery. go test runs the seeds
// only; fuzz with: go test -fuzz FuzzObject ./internal/jsonmap
func FuzzObject(f *testing.F) {
	for _, data := range edgeCases {
		f.Add([]byte(data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := disagreement(data); err != nil {
			t.Fatal(err)
		}
	})
}
