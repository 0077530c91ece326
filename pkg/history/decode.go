package history

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Revisions reads the revisions objs hold (the objects labelled
// HistoryOfLabel with one set's ID), sorted by number, without their
// members (see Members). A revision whose first chunk is missing is not
// listed: its write was interrupted before it began. A first chunk whose
// metadata cannot be read is listed with its number and Unreadable set;
// one whose number cannot be read either is left out (no revision can
// be named after it).
func Revisions(objs []unstructured.Unstructured) ([]Revision, error) {
	var revs []Revision
	for i := range objs {
		o := &objs[i]
		if o.GetLabels()[ChunkLabel] != "0" {
			continue
		}
		number, err := strconv.Atoi(o.GetLabels()[RevisionLabel])
		if err != nil || number < 1 {
			continue
		}
		rev, err := headOf(o, number)
		if err != nil {
			rev = Revision{Number: number, Unreadable: fmt.Errorf("reading revision %d: %s/%s: %w", number, o.GetNamespace(), o.GetName(), err)}
		}
		revs = append(revs, rev)
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i].Number < revs[j].Number })
	return revs, nil
}

func headOf(o *unstructured.Unstructured, number int) (Revision, error) {
	var err error
	a := o.GetAnnotations()
	rev := Revision{Number: number, FieldManager: a[managerAnnotation], User: a[userAnnotation],
		ChangeCause: a[causeAnnotation], Complete: a[CompleteAnnotation] == "true"}
	if rev.Time, err = time.Parse(timeFormat, a[timeAnnotation]); err != nil {
		return Revision{}, fmt.Errorf("annotation %s: %w", timeAnnotation, err)
	}
	if err := json.Unmarshal([]byte(a[countsAnnotation]), &rev.Counts); err != nil {
		return Revision{}, fmt.Errorf("annotation %s: %w", countsAnnotation, err)
	}
	return rev, nil
}

// Members reads revision number's configurations from its chunks among
// objs; a missing or unreadable chunk is an error naming it.
func Members(objs []unstructured.Unstructured, number int) ([]map[string]any, error) {
	chunks := map[int]*unstructured.Unstructured{}
	want := strconv.Itoa(number)
	for i := range objs {
		labels := objs[i].GetLabels()
		if labels[RevisionLabel] != want {
			continue
		}
		n, err := strconv.Atoi(labels[ChunkLabel])
		if err != nil {
			return nil, fmt.Errorf("reading revision %d: %s/%s: label %s: %w", number, objs[i].GetNamespace(), objs[i].GetName(), ChunkLabel, err)
		}
		chunks[n] = &objs[i]
	}
	head, ok := chunks[0]
	if !ok {
		return nil, fmt.Errorf("revision %d not found", number)
	}
	total, err := strconv.Atoi(head.GetAnnotations()[chunksAnnotation])
	if err != nil || total < 1 {
		return nil, fmt.Errorf("reading revision %d: %s/%s: annotation %s: %q", number, head.GetNamespace(), head.GetName(), chunksAnnotation, head.GetAnnotations()[chunksAnnotation])
	}
	var packed []byte
	for i := range total {
		c, ok := chunks[i]
		if !ok {
			return nil, fmt.Errorf("reading revision %d: chunk %d of %d (%s) is missing", number, i, total, ChunkName(parentOf(head.GetName(), number), number, i))
		}
		part, err := chunkData(c)
		if err != nil {
			return nil, fmt.Errorf("reading revision %d: %s/%s: %w", number, c.GetNamespace(), c.GetName(), err)
		}
		packed = append(packed, part...)
	}
	if sum := head.GetAnnotations()[sumAnnotation]; sum != "" && sum != fmt.Sprintf("%x", sha256.Sum256(packed)) {
		return nil, fmt.Errorf("reading revision %d: its chunks do not match %s/%s's %s (two runs wrote it at once?)", number, head.GetNamespace(), head.GetName(), sumAnnotation)
	}
	members, err := unpack(packed)
	if err != nil {
		return nil, fmt.Errorf("reading revision %d: decompressing: %w", number, err)
	}
	return members, nil
}

// parentOf is the parent's name in the name of revision number's chunk 0.
func parentOf(head string, number int) string {
	suffix := fmt.Sprintf("-rev-%d-0", number)
	if len(head) > len(suffix) {
		return head[:len(head)-len(suffix)]
	}
	return head
}

func chunkData(c *unstructured.Unstructured) ([]byte, error) {
	field := "binaryData"
	if c.GetKind() == "Secret" {
		field = "data"
	}
	s, found, err := unstructured.NestedString(c.Object, field, dataKey)
	if err != nil || !found {
		return nil, fmt.Errorf("no %s.%s", field, dataKey)
	}
	return base64.StdEncoding.DecodeString(s)
}

// Expired are the numbers of the revisions to delete so that at most
// limit remain, the oldest first.
func Expired(revs []Revision, limit int) []int {
	var out []int
	for i := 0; i < len(revs)-max(limit, 0); i++ {
		out = append(out, revs[i].Number)
	}
	return out
}

// Next is the number of the revision after revs (1 for the first).
func Next(revs []Revision) int {
	if len(revs) == 0 {
		return 1
	}
	return revs[len(revs)-1].Number + 1
}
