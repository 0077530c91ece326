package load

import (
	"math/rand/v2"
	"testing"
)

// TestSwitchedOffReadsWithTheLibraries: under KAPPLY_LOCALREAD=off every
// input goes to the builder (read once by kapply), and under
// KAPPLY_FASTYAML=off every document to yaml.v2; either way the objects
// and errors are the builder's.
func TestSwitchedOffReadsWithTheLibraries(t *testing.T) {
	g := &yamlGen{r: rand.New(rand.NewPCG(5, 6))}
	files := map[string][]byte{}
	for i := range 40 {
		files[string(rune('a'+i%26))+string(rune('a'+i/26))+".yaml"] = g.file()
	}
	dir := t.TempDir()
	writeFiles(t, dir, files)
	defer func(local, fast bool) { localReadOn, fastYAMLOn = local, fast }(localReadOn, fastYAMLOn)

	localReadOn, fastYAMLOn = true, false
	if stats := compareWithBuilder(t, Files{Filenames: []string{dir}}, ""); stats.fast == 0 {
		t.Errorf("KAPPLY_FASTYAML=off: readLocal read no file itself: %v", stats)
	}

	localReadOn = false
	stats := compareWithBuilder(t, Files{Filenames: []string{dir}}, "")
	if stats.fast != 0 || stats.reasons[fallbackOff] != stats.files {
		t.Errorf("KAPPLY_LOCALREAD=off: %v; want every file read by the builder", stats)
	}
}
