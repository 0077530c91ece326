package ignore

import (
	"encoding/base64"
	"maps"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/plan"
)

// stringDataOf is a Secret file's stringData, which the server writes
// over data (the key's value base64-encoded); nil for another object.
func stringDataOf(id plan.ID, file map[string]any) map[string]any {
	if id.Group != "" || id.Kind != "Secret" {
		return nil
	}
	sd, _ := file["stringData"].(map[string]any)
	return sd
}

// withStringDataFolded is file as the server stores it, data holding the
// stringData keys too, for the rules to name the data keys the file
// writes through stringData; stringData stays for rules that name it.
func withStringDataFolded(file, stringData map[string]any) map[string]any {
	if len(stringData) == 0 {
		return file
	}
	view := maps.Clone(file)
	data, _ := file["data"].(map[string]any)
	data = maps.Clone(data)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range stringData {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	view["data"] = data
	return view
}

// dropStringDataOf removes from out the stringData keys whose data key
// Respect kept as live has it (kept: the paths it set or removed): the
// server would write them over data, so a rule on /data/password let a
// file's stringData.password overwrite the live password that the diff,
// comparing the stored data, showed as left alone.
func dropStringDataOf(out map[string]any, kept []fieldpath.Path) {
	sd, _ := out["stringData"].(map[string]any)
	if len(sd) == 0 {
		return
	}
	for _, p := range kept {
		if len(p) == 0 || !p[0].IsField() || p[0].Field != "data" {
			continue
		}
		if len(p) == 1 {
			clear(sd)
		} else if p[1].IsField() {
			delete(sd, p[1].Field)
		}
	}
	if len(sd) == 0 {
		delete(out, "stringData")
	}
}
