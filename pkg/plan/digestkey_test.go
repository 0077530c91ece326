package plan

import (
	"io"
	"slices"

	"github.com/kapply/kapply/pkg/lastapplied"
)

// testKey is the digest key of the tests' Secrets' namespaces.
var testKey = func() lastapplied.DigestKey {
	k, err := lastapplied.NewDigestKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	return k
}()

// keyed gives each Secret item of p the tests' digest key, as the Applier
// gives a plan it makes, and a decoded plan's before verifying it.
func keyed(p *Plan) *Plan {
	for i, it := range p.Items {
		if it.ID.isSecret() {
			p.Items[i].DigestKey = testKey
			if p.Items[i].DigestKeyID == "" {
				p.Items[i].DigestKeyID = testKey.ID()
			}
		}
	}
	return p
}

// keyedCopy is p with its Secret items keyed (see keyed); p is not
// modified.
func keyedCopy(p *Plan) *Plan {
	out := *p
	out.Items = slices.Clone(p.Items)
	return keyed(&out)
}

// keyedSet is s with its plans' Secret items keyed; s is not modified.
func keyedSet(s *Set) *Set {
	out := &Set{Plans: slices.Clone(s.Plans)}
	for i, e := range out.Plans {
		out.Plans[i].Plan = keyedCopy(e.Plan)
	}
	return out
}

// decodeKeyed is Decode, the plan's Secret items given the tests' key.
func decodeKeyed(r io.Reader) (*Plan, error) {
	p, err := Decode(r)
	if err != nil {
		return nil, err
	}
	for i, it := range p.Items {
		if it.ID.isSecret() {
			p.Items[i].DigestKey = testKey
		}
	}
	return p, nil
}
