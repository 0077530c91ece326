package fleet

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
)

// Selection says which clusters a run picks.
type Selection struct {
	// Known are the kubeconfig's contexts; every cluster picked is one.
	Known []string
	// ClustersFile, if set, lists the candidates (in its order) and their
	// labels; else Planned (a PlanList's contexts, in its order); else
	// Known, sorted.
	ClustersFile string
	Planned      []string
	// Patterns, if any, narrow the candidates (Select).
	Patterns []string
	// Labels, if set, keeps the candidates whose labels match (Filter).
	Labels labels.Selector
}

// Pick is the clusters s picks, in order; possibly none.
func Pick(s Selection) ([]Cluster, error) {
	candidates, err := s.candidates()
	if err != nil {
		return nil, err
	}
	if len(s.Patterns) > 0 {
		if candidates, err = Select(candidates, s.Patterns); err != nil {
			return nil, err
		}
	}
	if s.Labels != nil {
		candidates = Filter(candidates, s.Labels)
	}
	return candidates, nil
}

func (s Selection) candidates() ([]Cluster, error) {
	var candidates []Cluster
	switch {
	case s.ClustersFile != "":
		listed, err := ReadClustersFile(s.ClustersFile)
		if err != nil {
			return nil, err
		}
		for _, c := range listed {
			if !slices.Contains(s.Known, c.Context) {
				return nil, fmt.Errorf("clusters file %s: context %q is not in the kubeconfig", s.ClustersFile, c.Context)
			}
		}
		return listed, nil
	case len(s.Planned) > 0:
		for _, name := range s.Planned {
			if !slices.Contains(s.Known, name) {
				return nil, fmt.Errorf("the plan file has a plan for context %q, which is not in the kubeconfig", name)
			}
			candidates = append(candidates, Cluster{Context: name})
		}
		return candidates, nil
	}
	for _, name := range slices.Sorted(slices.Values(s.Known)) {
		candidates = append(candidates, Cluster{Context: name})
	}
	return candidates, nil
}
