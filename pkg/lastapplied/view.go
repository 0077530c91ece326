package lastapplied

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/secretmask"
	"github.com/kapply/kapply/pkg/shown"
)

// View returns live's last-applied record as `kubectl apply
// view-last-applied` prints it: "yaml" converted from the recorded JSON,
// "json" the recorded bytes indented by two spaces (its trailing newline
// kept). An object with only kapply's compact record shows that one. A
// Secret's values show redacted, as kapply records them: a plain record
// (kubectl's, or apply --secret-record=plain) is redacted for the view
// under k, its salt derived from the object's UID (see saltFor); with the
// zero k each value shows as Hidden.
func View(live *unstructured.Unstructured, format string, k DigestKey) ([]byte, error) {
	raw, err := rawRecord(live)
	if err != nil {
		return nil, err
	}
	if raw, err = redactedView(raw, live, k); err != nil {
		return nil, err
	}
	switch format {
	case "yaml", "":
		out, err := yaml.JSONToYAML(raw)
		if err != nil {
			return nil, fmt.Errorf("converting the last-applied record of %s to YAML: %w", shown.Text(live.GetName()), err)
		}
		return out, nil
	case "json":
		var buf bytes.Buffer
		if err := json.Indent(&buf, raw, "", "  "); err != nil {
			return nil, fmt.Errorf("indenting the last-applied record of %s: %w", shown.Text(live.GetName()), err)
		}
		return buf.Bytes(), nil
	}
	return nil, fmt.Errorf(`output format must be "yaml" or "json", not %q`, format)
}

// redactedView is the record raw of live as View shows it: a Secret's
// record with every value redacted. Other records, and Secret records
// redacted already, are raw as it is.
func redactedView(raw []byte, live *unstructured.Unstructured, k DigestKey) ([]byte, error) {
	if !secretmask.IsSecret(live.Object) {
		return raw, nil
	}
	record := map[string]any{}
	if err := utiljson.Unmarshal(raw, &record); err != nil {
		// Never the error's text: it may quote the record.
		return nil, fmt.Errorf("%w: the last-applied record of Secret %s is not a JSON object", ErrMalformed, shown.Text(live.GetName()))
	}
	if !hasPlainValue(record) {
		return raw, nil
	}
	s, err := saltFor(record, live)
	if err != nil {
		return nil, err
	}
	out, err := utiljson.Marshal(redactSecret(record, s, k))
	if err != nil {
		return nil, fmt.Errorf("encoding the last-applied record of %s: %w", shown.Text(live.GetName()), err)
	}
	return append(out, '\n'), nil
}

// SetRecord returns the record `kubectl apply set-last-applied` (and
// edit-last-applied) writes for obj: the object exactly as given, encoded by
// the unstructured JSON scheme. Unlike apply's record (Encode) it keeps any
// annotation the file has and adds no empty annotations map. A Secret's
// values are redacted under k (values redacted already stay), with the
// salt of live's record; live may be nil.
func SetRecord(obj, live *unstructured.Unstructured, k DigestKey) ([]byte, error) {
	obj, err := redactedCopy(obj, live, k)
	if err != nil {
		return nil, err
	}
	out, err := runtime.Encode(unstructured.UnstructuredJSONScheme, obj)
	if err != nil {
		return nil, fmt.Errorf("encoding the last-applied record of %s: %w", shown.Text(obj.GetName()), err)
	}
	return out, nil
}

// Set returns the patch that makes record live's last-applied record, or nil
// when live has it already. Without createMissing, an object with no record
// is an error, as in kubectl (--create-annotation).
func Set(live *unstructured.Unstructured, record []byte, createMissing bool) ([]byte, error) {
	current, err := rawRecord(live)
	switch {
	case errors.Is(err, ErrNoRecord) && !createMissing:
		return nil, fmt.Errorf("%w, to create the annotation, run the command with --create-annotation", err)
	case err != nil && !createMissing:
		// A record that cannot be read is still there: not a missing one.
		return nil, err
	case err == nil && bytes.Equal(current, record):
		return nil, nil
	}
	return AnnotationPatch(Annotation, record, live.GetResourceVersion())
}

// FromYAML reads an edited record (YAML or JSON) into an object.
func FromYAML(data []byte) (*unstructured.Unstructured, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("reading the edited record: %w", err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil {
		return nil, fmt.Errorf("reading the edited record: %w", err)
	}
	return obj, nil
}
