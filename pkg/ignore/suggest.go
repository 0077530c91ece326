package ignore

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/plan"
)

// Suggest is the rule that silences, on the object id, the fields the
// file does not cause: a JSON pointer per field the server changed (a jq
// expression where the path selects a list element by key), the manager
// of each field another writer owns (a path when that manager writes as
// the request does, through a subresource: naming it would silence the
// request's own fields). nil when there is none.
func Suggest(id plan.ID, fields []Field) *Rule {
	group := id.Group
	r := &Rule{Group: &group, Kind: id.Kind, Namespace: id.Namespace, Name: id.Name}
	for _, f := range fields {
		switch {
		case !f.Class.FromServer():
		case f.Class == OtherWriter && !strings.Contains(f.Manager, " ("):
			if !slices.Contains(r.ManagedFieldsManagers, f.Manager) {
				r.ManagedFieldsManagers = append(r.ManagedFieldsManagers, f.Manager)
			}
		case isPointer(f.Path):
			r.JSONPointers = append(r.JSONPointers, Pointer(f.Path))
		default:
			r.JQPathExpressions = append(r.JQPathExpressions, JQ(f.Path))
		}
	}
	if len(r.JSONPointers)+len(r.JQPathExpressions)+len(r.ManagedFieldsManagers) == 0 {
		return nil
	}
	return r
}

// WriteFile writes rules as a rules file, ready to pass to --ignore-file.
func WriteFile(w io.Writer, rules []*Rule) error {
	doc := struct {
		APIVersion string  `yaml:"apiVersion"`
		Kind       string  `yaml:"kind"`
		Rules      []*Rule `yaml:"rules"`
	}{APIVersion, Kind, rules}
	if doc.Rules == nil {
		doc.Rules = []*Rule{}
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing ignore rules: %w", err)
	}
	return enc.Close()
}

// isPointer reports a path of fields and positions only.
func isPointer(p fieldpath.Path) bool {
	for _, e := range p {
		if !e.IsField() && !e.IsIndex() {
			return false
		}
	}
	return true
}

// Pointer is the JSON pointer of a path of fields and positions.
func Pointer(p fieldpath.Path) string {
	var b strings.Builder
	for _, e := range p {
		b.WriteByte('/')
		if e.IsIndex() {
			fmt.Fprint(&b, e.Index)
			continue
		}
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(e.Field, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

var jqIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// JQ is a jq path expression selecting p: a keyed element by select on
// its key fields, a plain value by select(. == v).
func JQ(p fieldpath.Path) string {
	var b strings.Builder
	// piped: the last step ended in "| ." (after a select), which a
	// field continues without its own dot.
	piped := false
	for _, e := range p {
		switch {
		case e.IsField() && jqIdentifier.MatchString(e.Field) && piped:
			b.WriteString(e.Field)
		case e.IsField() && jqIdentifier.MatchString(e.Field):
			b.WriteString("." + e.Field)
		case e.IsField():
			b.WriteString("[" + jsonText(e.Field) + "]")
		case e.IsIndex():
			fmt.Fprintf(&b, "[%d]", e.Index)
		case e.IsValue():
			b.WriteString("[] | select(. == " + jsonText(e.Value) + ") | .")
		default:
			conds := make([]string, len(e.Keys))
			for i, kv := range e.Keys {
				conds[i] = "." + kv.Name + " == " + jsonText(kv.Value)
			}
			b.WriteString("[] | select(" + strings.Join(conds, " and ") + ") | .")
		}
		piped = e.IsValue() || e.IsKey()
	}
	return strings.TrimSuffix(b.String(), " | .")
}

func jsonText(v any) string {
	out, err := json.Marshal(v)
	if err != nil {
		return `""`
	}
	return string(out)
}
