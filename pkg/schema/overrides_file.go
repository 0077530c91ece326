package schema

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// mergeKeysAPIVersion and mergeKeysKind optionally head a merge keys file,
// leaving room to change its format later.
const (
	mergeKeysAPIVersion = "kapply.dev/v1alpha1"
	mergeKeysKind       = "MergeKeys"
)

// mergeKeysFile is the YAML form of --merge-keys-file.
type mergeKeysFile struct {
	APIVersion string          `json:"apiVersion,omitempty"`
	Kind       string          `json:"kind,omitempty"`
	MergeKeys  []mergeKeyEntry `json:"mergeKeys"`
}

type mergeKeyEntry struct {
	Group   string   `json:"group,omitempty"`
	Version string   `json:"version,omitempty"`
	Kind    string   `json:"kind"`
	Path    string   `json:"path"`
	Type    string   `json:"type,omitempty"`
	Keys    []string `json:"keys,omitempty"`
}

// LoadMergeKeysFile reads a --merge-keys-file (see ReadMergeKeys).
func LoadMergeKeysFile(path string) ([]Override, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading merge keys file: %w", err)
	}
	return parseMergeKeys(data, path)
}

// ReadMergeKeys parses a merge keys file; name labels errors. Unknown fields
// are errors, so a typo ("key:" for "keys:") does not silently do nothing.
func ReadMergeKeys(r io.Reader, name string) ([]Override, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading merge keys file %s: %w", name, err)
	}
	return parseMergeKeys(data, name)
}

func parseMergeKeys(data []byte, name string) ([]Override, error) {
	var file mergeKeysFile
	if err := yaml.UnmarshalStrict(data, &file); err != nil {
		return nil, fmt.Errorf("parsing merge keys file %s: %w", name, err)
	}
	if err := file.checkHeader(); err != nil {
		return nil, fmt.Errorf("parsing merge keys file %s: %w", name, err)
	}
	return file.overrides(name)
}

func (f *mergeKeysFile) checkHeader() error {
	if f.APIVersion != "" && f.APIVersion != mergeKeysAPIVersion {
		return fmt.Errorf("apiVersion %q: want %s", f.APIVersion, mergeKeysAPIVersion)
	}
	if f.Kind != "" && f.Kind != mergeKeysKind {
		return fmt.Errorf("kind %q: want %s", f.Kind, mergeKeysKind)
	}
	return nil
}

func (f *mergeKeysFile) overrides(name string) ([]Override, error) {
	out := make([]Override, 0, len(f.MergeKeys))
	for i, e := range f.MergeKeys {
		o, err := e.override()
		if err != nil {
			return nil, fmt.Errorf("parsing merge keys file %s: mergeKeys[%d] (kind %q, path %q): %w", name, i, e.Kind, e.Path, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// override turns an entry into an Override; type defaults to map when keys
// are given.
func (e mergeKeyEntry) override() (Override, error) {
	o := Override{Group: e.Group, Version: e.Version, Kind: e.Kind, Keys: e.Keys, List: Map}
	if e.Path != "" {
		o.Path = strings.Split(e.Path, ".")
	}
	if e.Type != "" {
		list, ok := parseListType(e.Type)
		if !ok {
			return Override{}, fmt.Errorf("type %q: want map, set or atomic", e.Type)
		}
		o.List = list
	}
	if len(o.Path) == 0 {
		return Override{}, errors.New("path: must name a list, e.g. spec.rules")
	}
	return o, o.validate()
}
