package plan

import (
	"maps"
)

// WithKeptSecretValues is a Secret file as the plan was made from it: at
// each data key the item keeps at its live value (KeptLive: an ignore
// rule left it to another writer), live's value, or none where live has
// none, and no stringData key of that name (the server writes stringData
// over data). apply --plan -f checks the file's values against the plan;
// without this, the file's own value of a kept key never matched, and
// such a plan could not run. file is not modified; other items' files are
// returned as they are.
func (it Item) WithKeptSecretValues(file, live map[string]any) map[string]any {
	if !it.ID.isSecret() || len(it.KeptLive) == 0 || file == nil {
		return file
	}
	out := maps.Clone(file)
	data, _ := file["data"].(map[string]any)
	data = maps.Clone(data)
	stringData, _ := file["stringData"].(map[string]any)
	stringData = maps.Clone(stringData)
	liveData, _ := live["data"].(map[string]any)
	keep := func(key string) {
		if v, ok := liveData[key]; ok {
			if data == nil {
				data = map[string]any{}
			}
			data[key] = v
		} else {
			delete(data, key)
		}
		delete(stringData, key)
	}
	for _, p := range it.KeptLive {
		switch {
		case len(p) == 0 || !p[0].IsField() || p[0].Field != "data":
		case len(p) == 1:
			for key := range data {
				keep(key)
			}
			for key := range stringData {
				keep(key)
			}
			for key := range liveData {
				keep(key)
			}
		case p[1].IsField():
			keep(p[1].Field)
		}
	}
	setOrDrop(out, "data", data)
	setOrDrop(out, "stringData", stringData)
	return out
}

func setOrDrop(obj map[string]any, field string, values map[string]any) {
	if len(values) == 0 {
		delete(obj, field)
		return
	}
	obj[field] = values
}
