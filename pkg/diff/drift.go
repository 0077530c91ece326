package diff

import "github.com/kapply/kapply/pkg/ownership"

// MaskDrift replaces the values of a Secret's changed data and stringData
// fields in d (kapply status's drift of the object file declares) with
// the masks diff --explain shows (MaskChange), so that no output format of
// status prints a Secret value.
func MaskDrift(d *ownership.Drift, file map[string]any) {
	if d == nil {
		return
	}
	for i, c := range d.Changed {
		if len(c.Path) == 0 || !IsSecretValue(file, c.Path[0].Field) {
			continue
		}
		live := c.Live
		if c.LiveMissing {
			live = nil
		}
		last, masked := MaskChange(c.LastApplied, live)
		d.Changed[i].LastApplied = last
		if !c.LiveMissing {
			d.Changed[i].Live = masked
		}
	}
}
