package fleet

import (
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// RegexpPrefix marks a pattern of Select as a regular expression.
const RegexpPrefix = "re:"

// Select picks from clusters, in the order of patterns (and, within one
// pattern, of clusters), each cluster whose context a pattern matches: a
// name, a glob ('prod-*', path.Match's syntax, * crossing slashes) or "re:REGEXP" (matching
// the whole name). A name that is not among clusters, or a glob or regexp
// matching none, is an error: a typo must not shrink a rollout silently.
// Each cluster is picked once.
func Select(clusters []Cluster, patterns []string) ([]Cluster, error) {
	var picked []Cluster
	seen := map[string]bool{}
	for _, pattern := range patterns {
		match, err := matcher(pattern)
		if err != nil && !exactName(clusters, pattern) {
			return nil, err
		}
		found := false
		for _, c := range clusters {
			if !match(c.Context) {
				continue
			}
			found = true
			if !seen[c.Context] {
				seen[c.Context] = true
				picked = append(picked, c)
			}
		}
		if !found {
			return nil, fmt.Errorf("no context matches %q", pattern)
		}
	}
	return picked, nil
}

// exactName: some cluster's context is pattern itself. A context may be
// named what is no glob ("team[a"), and is still picked by its name.
func exactName(clusters []Cluster, pattern string) bool {
	for _, c := range clusters {
		if c.Context == pattern {
			return true
		}
	}
	return false
}

// matcher turns one pattern of Select into a test of a context name; a
// pattern that does not parse matches its exact name alone.
func matcher(pattern string) (func(string) bool, error) {
	exact := func(name string) bool { return name == pattern }
	if expr, ok := strings.CutPrefix(pattern, RegexpPrefix); ok {
		re, err := regexp.Compile("^(?:" + expr + ")$")
		if err != nil {
			return exact, fmt.Errorf("context pattern %q: %w", pattern, err)
		}
		return re.MatchString, nil
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return exact, fmt.Errorf("context pattern %q: %w", pattern, err)
	}
	// Context names are not paths (EKS's hold "cluster/NAME"), but
	// path.Match's * stops at a slash: the slashes of both sides become
	// a byte no name holds, which * crosses.
	glob := strings.ReplaceAll(pattern, "/", "\x00")
	return func(name string) bool {
		ok, _ := path.Match(glob, strings.ReplaceAll(name, "/", "\x00")) // the pattern was checked above
		return ok || name == pattern
	}, nil
}

// clustersFile is the YAML of a clusters file:
//
//	clusters:
//	- context: prod-eu-1
//	  labels: {region: eu, tier: prod}
type clustersFile struct {
	Clusters []Cluster `json:"clusters"`
}

// ReadClustersFile reads the clusters of a clusters file, in its order.
func ReadClustersFile(name string) ([]Cluster, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading clusters file: %w", err)
	}
	var f clustersFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("reading clusters file %s: %w", name, err)
	}
	seen := map[string]bool{}
	for i, c := range f.Clusters {
		switch {
		case c.Context == "":
			return nil, fmt.Errorf("reading clusters file %s: cluster %d has no context", name, i+1)
		case seen[c.Context]:
			return nil, fmt.Errorf("reading clusters file %s: context %q is listed twice", name, c.Context)
		}
		seen[c.Context] = true
	}
	return f.Clusters, nil
}

// Filter keeps the clusters whose labels selector matches, in order.
func Filter(clusters []Cluster, selector labels.Selector) []Cluster {
	var kept []Cluster
	for _, c := range clusters {
		if selector.Matches(labels.Set(c.Labels)) {
			kept = append(kept, c)
		}
	}
	return kept
}
