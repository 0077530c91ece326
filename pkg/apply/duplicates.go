package apply

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/yamldoc"
)

// refuseDuplicates fails every ready object that another ready one
// declares again — same group, kind, namespace (as settled by prepare) and
// name, in any version — naming where each copy is (done records its
// event), and returns the others.
// kubectl applies both in turn and the last wins; kapply applies
// concurrently, so neither is applied.
func (r *runner) refuseDuplicates(objects []*object, ready []int, done func(int, Event)) []int {
	byKey := map[objectKey][]int{}
	for _, i := range ready {
		key := keyOfObject(objects[i].Obj)
		byKey[key] = append(byKey[key], i)
	}
	var unique []int
	for _, i := range ready {
		o := objects[i]
		copies := byKey[keyOfObject(o.Obj)]
		if len(copies) == 1 {
			unique = append(unique, i)
			continue
		}
		done(i, o.event(Event{Outcome: Failed, Err: errorOf(o, duplicateError(objects, copies))}))
	}
	return unique
}

func duplicateError(objects []*object, copies []int) error {
	var where []string
	seen := map[string]bool{}
	for _, i := range copies {
		o := objects[i]
		if seen[o.Source.File] {
			continue
		}
		seen[o.Source.File] = true
		where = append(where, whereIn(o.Source.File, objects, copies))
	}
	return fmt.Errorf("declared %d times, in %s: none of them is applied", len(copies), strings.Join(where, " and "))
}

// whereIn names source and the places in it of the copies it holds: its
// documents when it is a file that can be read again, else the objects'
// places among those read from it.
func whereIn(source string, objects []*object, copies []int) string {
	var first *object
	var places []int
	for _, i := range copies {
		if objects[i].Source.File == source {
			first = objects[i]
			places = append(places, objects[i].Source.Index)
			if source == "" {
				// Objects built in code have no Source: name their
				// places in the input instead.
				places[len(places)-1] = i
			}
		}
	}
	what := "object"
	if source == "" {
		source = "the input"
	} else if docs, err := yamldoc.Declaring(source, first.Obj); err == nil && len(docs) == len(places) {
		what, places = "document", docs
	}
	if len(places) > 1 {
		what += "s"
	}
	list := make([]string, len(places))
	for n, p := range places {
		list[n] = fmt.Sprint(p)
	}
	return fmt.Sprintf("%s (%s %s)", source, what, strings.Join(list, ", "))
}

// objectKey identifies an object across versions: group, kind, namespace, name.
type objectKey struct {
	gk              schema.GroupKind
	namespace, name string
}

func keyOfObject(u *unstructured.Unstructured) objectKey {
	return objectKey{gk: u.GroupVersionKind().GroupKind(), namespace: u.GetNamespace(), name: u.GetName()}
}
