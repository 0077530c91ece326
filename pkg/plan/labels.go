package plan

// Labels are the labels the item's write sets on its object: its merged
// object's (a create, a patch, unchanged), those recorded for it in a
// saved plan (MergedLabels, which holds no Merged for a patch), or a
// server-side apply body's; nil for a prune or delete.
func (it Item) Labels() map[string]string {
	if it.Action == Prune || it.Action == Delete {
		return nil
	}
	if it.Merged == nil && it.MergedLabels != nil {
		return it.MergedLabels
	}
	obj := it.Merged
	if obj == nil {
		obj = patchObject(it.Patch)
	}
	return labelsOf(obj)
}

// labelsOf are obj's string labels (nil: none).
func labelsOf(obj map[string]any) map[string]string {
	metadata, _ := obj["metadata"].(map[string]any)
	labels, _ := metadata["labels"].(map[string]any)
	if len(labels) == 0 {
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
