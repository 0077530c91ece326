package apply

// phase is a group of objects applied together; later phases may depend on
// earlier ones (objects inside a Namespace, custom resources of a CRD, the
// objects of a later wave).
type phase struct {
	indexes []int
	// crds marks the phase of CustomResourceDefinitions, which the run
	// waits on until they are established.
	crds bool
	// wave is the wave of the run the phase belongs to; gated marks the
	// first phase of a wave after the first, which the wave's gate holds
	// back (see passGate).
	wave  int
	gated bool
}

// phases orders objects as kubectl users expect a tree to apply: Namespaces
// first, then CRDs, then everything else, each in input order — wave by
// wave when the run has several (ordering), three phases a wave,
// Namespaces of the first wave at index 0.
func phases(objects []*object, ord ordering) []phase {
	waves := 1
	if ord.several() {
		waves = len(ord.gates)
	}
	all := make([]phase, 3*waves)
	for w := range waves {
		all[3*w].wave, all[3*w+1].wave, all[3*w+2].wave = w, w, w
		all[3*w].gated = w > 0
		all[3*w+1].crds = true
	}
	for i, o := range objects {
		w, _ := ord.waveOf(i)
		n := 3*w + 2
		switch o.Obj.GroupVersionKind().GroupKind() {
		case namespaceGK:
			n = 3 * w
		case crdGK:
			n = 3*w + 1
		}
		all[n].indexes = append(all[n].indexes, i)
	}
	return all
}
