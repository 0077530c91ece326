package plan

// Labels are the labels the item's write sets on its object: its merged
// object's (a create, a patch, unchanged), or a server-side apply body's;
// nil for a prune or delete.
func (it Item) Labels() map[string]string {
	obj := it.Merged
	if obj == nil {
		obj = patchObject(it.Patch)
	}
	metadata, _ := obj["metadata"].(map[string]any)
	labels, _ := metadata["labels"].(map[string]any)
	if it.Action == Prune || it.Action == Delete || len(labels) == 0 {
		return nil
	}
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}
