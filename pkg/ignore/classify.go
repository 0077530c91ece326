package ignore

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/plan"
)

// Class is what causes a changed field.
type Class string

const (
	// ByFile: the local merge sets the field (the file sets it, or a
	// null in the file deletes it).
	ByFile Class = "set by file"
	// RemovedFromFile: the last apply set it and the file no longer does.
	RemovedFromFile Class = "removed from file"
	// Defaulted: the file is silent and, after the server's dry run, the
	// request's own manager owns the field: the server defaulted it
	// (managedFields are computed after defaulting).
	Defaulted Class = "server: defaulted"
	// Admission: the file is silent and no manager owns the field after
	// the dry run: mutating admission (a webhook or policy) set it, for
	// the server records managedFields before mutating admission.
	Admission Class = "server: admission"
	// Server: the server changed it and managedFields cannot tell how.
	Server Class = "server"
	// OtherWriter: another manager owns the field live (an autoscaler's
	// replicas, kubectl edit); Field.Manager names it.
	OtherWriter Class = "other writer"
)

// Field is one changed field and its class.
type Field struct {
	Path    fieldpath.Path
	Class   Class
	Manager string
}

// String is the class as diff --explain prints it.
func (f Field) String() string {
	if f.Class == OtherWriter {
		return string(f.Class) + ": " + f.Manager
	}
	return string(f.Class)
}

// FromServer reports a class the file does not cause, which
// --suggest-ignore writes rules for.
func (c Class) FromServer() bool { return c != ByFile && c != RemovedFromFile }

// Sides are what Classify compares for one object.
type Sides struct {
	// Live is the object now; nil for a create.
	Live map[string]any
	// Merged is the local merge's result, what the file causes (for a
	// create, the object sent).
	Merged map[string]any
	// Result is the server's dry run of the write; nil without one.
	Result map[string]any
	// Changes are the local merge's, live to Merged.
	Changes []plan.Change
	// LiveOwners and ResultOwners read managedFields of Live and of
	// Result; nil when the object has none (then the server's changes
	// are Server).
	LiveOwners, ResultOwners plan.Owners
	// Appliers are the managers the request writes as (its field
	// manager, and kubectl's apply managers that share it).
	Appliers []string
	// File is the object in the file, for a server-side apply (Merged
	// nil: the server merges, there is no local merge to compare with).
	File map[string]any
}

// Classify classes every changed field: first the local merge's changes,
// by their reason or the other manager that owns them live; then what the
// server's result adds to the merge, by who owns it after the dry run.
func Classify(s Sides) []Field {
	if s.Merged == nil && s.File != nil && s.Live != nil {
		return s.classifyApply()
	}
	var out []Field
	seen := map[string]bool{}
	for _, c := range s.Changes {
		if c.Reason == plan.KeptUnmanaged || isNoise(c.Path) {
			continue
		}
		f := Field{Path: c.Path, Class: ByFile}
		if c.Reason == plan.RemovedFromFile {
			f.Class = RemovedFromFile
		}
		if other := s.others(s.LiveOwners, c.Path); len(other) > 0 {
			f.Class, f.Manager = OtherWriter, other[0]
		}
		seen[c.Path.String()] = true
		out = append(out, f)
	}
	if s.Result == nil || s.Merged == nil {
		return out
	}
	for _, p := range changedLeaves(s.Merged, s.Result) {
		if !seen[p.String()] && !fromStringData(s.Merged, p) {
			out = append(out, Field{Path: p, Class: s.serverClass(p)})
		}
	}
	return out
}

// fromStringData reports a field of a Secret's stringData, or its data.K
// that the file sets as stringData.K: the server moves the one to the
// other, and the file causes both.
func fromStringData(merged map[string]any, p fieldpath.Path) bool {
	stringData, _ := merged["stringData"].(map[string]any)
	if len(p) != 2 || stringData == nil {
		return false
	}
	_, ok := stringData[p[1].Field]
	return p[0].Field == "stringData" || p[0].Field == "data" && ok
}

// serverClass is the class of a field the server changed.
func (s Sides) serverClass(p fieldpath.Path) Class {
	if s.ResultOwners == nil {
		return Server
	}
	owners := s.ResultOwners.Of(p)
	switch {
	case len(owners) == 0:
		return Admission
	case slices.ContainsFunc(owners, s.isApplier):
		return Defaulted
	}
	return Server
}

// others are the owners of p other than the request's managers, without
// their subresource ("hpa (scale)" is hpa): a rule names the manager. One
// whose name is the request's own keeps it ("kubectl (scale)" under apply
// --server-side, which applies as kubectl): a rule naming the manager
// would silence the apply's own fields too, so Suggest writes a path.
func (s Sides) others(owners plan.Owners, p fieldpath.Path) []string {
	if owners == nil {
		return nil
	}
	var out []string
	for _, o := range owners.Of(p) {
		if s.isApplier(o) {
			continue
		}
		name, _, _ := strings.Cut(o, " (")
		if slices.Contains(s.Appliers, name) {
			name = o
		}
		out = append(out, name)
	}
	return out
}

// isApplier reports an owner that is the request's: one of its managers
// writing the object itself. A write through a subresource ("kubectl
// (scale)") is another writer even under the request's name: the server
// reports it as a conflict.
func (s Sides) isApplier(owner string) bool {
	return !strings.Contains(owner, " (") && slices.Contains(s.Appliers, owner)
}

// classifyApply classes a server-side apply's changes, live to the
// server's result, where no local merge says what the file causes: a
// field the file sets to the value the result has is the file's (another
// writer's when another manager owns it live: --force-conflicts takes
// it); one the file sets to another value was changed by mutating
// admission (defaulting never replaces a value given); one the result
// lacks was removed from the file when the request's managers owned it
// live. Any other is the server's: an apply's managedFields own only what
// its body sets, so a default and an injection alike are owned by no
// manager, and cannot be told apart.
func (s Sides) classifyApply() []Field {
	var out []Field
	for _, p := range changedLeaves(s.Live, s.Result) {
		if fromStringData(s.File, p) {
			continue
		}
		f := Field{Path: p, Class: Server}
		fileValue, inFile := p.Lookup(s.File)
		resultValue, inResult := p.Lookup(s.Result)
		switch {
		case inFile == nil && inResult == nil && sameValue(fileValue, resultValue):
			f.Class = ByFile
			if other := s.others(s.LiveOwners, p); len(other) > 0 {
				f.Class, f.Manager = OtherWriter, other[0]
			}
		case inFile == nil && inResult == nil:
			f.Class = Admission
		case inResult != nil && s.LiveOwners != nil && slices.ContainsFunc(s.LiveOwners.Of(p), s.isApplier):
			f.Class = RemovedFromFile
		}
		out = append(out, f)
	}
	return out
}

// sameValue compares a file's value with the server's, quantities by
// amount: the server stores "1000m" as "1".
func sameValue(file, result any) bool {
	if fieldpath.Equal(file, result) {
		return true
	}
	fs, ok1 := file.(string)
	rs, ok2 := result.(string)
	if !ok1 || !ok2 {
		return false
	}
	fq, err1 := resource.ParseQuantity(fs)
	rq, err2 := resource.ParseQuantity(rs)
	return err1 == nil && err2 == nil && fq.Cmp(rq) == 0
}
