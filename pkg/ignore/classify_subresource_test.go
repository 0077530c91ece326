package ignore

import (
	"bytes"
	"strings"
	"testing"
)

// TestIgnoreClassifySameNameThroughSubresource: kubectl scale writes
// spec.replicas as manager "kubectl" through the scale subresource, and
// kapply apply --server-side applies as "kubectl" too. The owner's name
// was compared without its subresource, so under diff --server-side
// --explain the scaled replicas were "set by file" (the server itself
// reported the conflict with "kubectl" with subresource "scale"), and
// --suggest-ignore wrote no rule. A field written through a subresource
// is never the apply's own; and the rule suggested for it is a pointer,
// since a managedFieldsManagers rule naming "kubectl" would also silence
// every field the apply itself owns.
func TestIgnoreClassifySameNameThroughSubresource(t *testing.T) {
	live := obj(t, deployment)
	file := obj(t, strings.Replace(deployment, "image: web:1", "image: web:2", 1))
	file["spec"].(map[string]any)["replicas"] = int64(2)
	result := obj(t, string(mustYAML(t, file)))
	image := "spec.template.spec.containers[name=web].image"
	fields := Classify(Sides{
		Live: live, File: file, Result: result,
		LiveOwners: owners{"spec.replicas": {"kubectl (scale)"}, image: {"kubectl"}},
		Appliers:   []string{"kubectl"},
	})
	got := map[string]string{}
	for _, f := range fields {
		got[f.Path.String()] = f.String()
	}
	if got["spec.replicas"] != "other writer: kubectl (scale)" || got[image] != "set by file" {
		t.Fatalf("classes %v, want replicas another writer's (kubectl (scale)), the image the file's", got)
	}
	var buf bytes.Buffer
	if err := WriteFile(&buf, []*Rule{Suggest(webID, fields)}); err != nil {
		t.Fatal(err)
	}
	back := rulesOf(t, buf.String())
	managed := fakeManaged{"kubectl": {mustPath(t, "spec.replicas"), mustPath(t, image)}}
	stripped := back.Strip(webID, managed, live, result)
	remaining := changedLeaves(stripped[0], stripped[1])
	if len(remaining) != 1 || remaining[0].String() != image {
		t.Errorf("after the suggested rules\n%s\nthe sides differ at %v, want only the file's image", buf.String(), remaining)
	}
}
