package history

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Labels and annotations of the objects a revision is stored in. None is
// an ApplySet label: no prune (kapply's or kubectl's) selects them and
// none looks like a parent.
const (
	// HistoryOfLabel holds the ID of the ApplySet whose revision it is.
	HistoryOfLabel = "kapply.dev/history-of"
	// RevisionLabel holds the revision's number; ChunkLabel the chunk's.
	RevisionLabel = "kapply.dev/revision"
	ChunkLabel    = "kapply.dev/revision-chunk"
	// CompleteAnnotation, "true" on a revision's first chunk, says every
	// member was written.
	CompleteAnnotation = "kapply.dev/revision-complete"
	chunksAnnotation   = "kapply.dev/revision-chunks"
	timeAnnotation     = "kapply.dev/revision-time"
	managerAnnotation  = "kapply.dev/revision-field-manager"
	userAnnotation     = "kapply.dev/revision-user"
	causeAnnotation    = "kapply.dev/change-cause"
	countsAnnotation   = "kapply.dev/revision-counts"
	// sumAnnotation is the SHA-256 of the compressed chunks together: a
	// revision whose chunks two runs wrote at once is found out. It is a
	// digest of scrubbed configurations, never of a Secret value.
	sumAnnotation = "kapply.dev/revision-sha256"
	// SecretType is the type of the Secrets revisions are stored in.
	SecretType = "kapply.dev/revision"
	// dataKey is the key of each chunk's bytes.
	dataKey = "revision.json.gz"
)

// MaxChunk is the most bytes of compressed revision one object holds: the
// server refuses a Secret or ConfigMap with more than 1 MiB of data; the
// margin is for the key.
const MaxChunk = 1<<20 - 1024

// Parent is where a revision is stored: the objects' kind ("Secret" or
// "ConfigMap"), namespace, and the ApplySet parent that owns them (the
// ownerReference makes the garbage collector delete them with it).
type Parent struct {
	// SetID is the ApplySet's ID (prune.Set.ID).
	SetID string
	// Kind is "Secret" or "ConfigMap"; Namespace is the objects'.
	Kind      string
	Namespace string
	// Owner is the parent's reference; Name its name.
	Owner metav1.OwnerReference
}

// ChunkName is the name of a revision's chunk i.
func ChunkName(parent string, revision, i int) string {
	return fmt.Sprintf("%s-rev-%d-%d", parent, revision, i)
}

// Encode stores rev as objects of p's kind, each with at most maxChunk
// bytes of compressed data (MaxChunk for the server's limit). The first
// holds the revision's metadata; Complete is written as the annotation.
func Encode(rev Revision, p Parent, maxChunk int) ([]*unstructured.Unstructured, error) {
	if maxChunk <= 0 {
		return nil, fmt.Errorf("encoding revision %d: chunk size %d", rev.Number, maxChunk)
	}
	packed, err := pack(rev.Members)
	if err != nil {
		return nil, fmt.Errorf("encoding revision %d: %w", rev.Number, err)
	}
	n := max(1, (len(packed)+maxChunk-1)/maxChunk)
	objs := make([]*unstructured.Unstructured, n)
	for i := range n {
		part := packed[min(i*maxChunk, len(packed)):min((i+1)*maxChunk, len(packed))]
		objs[i] = chunkObject(p, rev.Number, i, part)
	}
	counts, err := json.Marshal(rev.Counts)
	if err != nil {
		return nil, err
	}
	head := map[string]string{
		chunksAnnotation:  strconv.Itoa(n),
		timeAnnotation:    rev.Time.UTC().Format(timeFormat),
		managerAnnotation: rev.FieldManager,
		userAnnotation:    rev.User,
		causeAnnotation:   rev.ChangeCause,
		countsAnnotation:  string(counts),
		sumAnnotation:     fmt.Sprintf("%x", sha256.Sum256(packed)),
	}
	if rev.Complete {
		head[CompleteAnnotation] = "true"
	}
	objs[0].SetAnnotations(head)
	return objs, nil
}

const timeFormat = "2006-01-02T15:04:05.000Z07:00"

func chunkObject(p Parent, revision, i int, part []byte) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": p.Kind}}
	u.SetName(ChunkName(p.Owner.Name, revision, i))
	u.SetNamespace(p.Namespace)
	u.SetLabels(map[string]string{HistoryOfLabel: p.SetID, RevisionLabel: strconv.Itoa(revision), ChunkLabel: strconv.Itoa(i)})
	u.SetOwnerReferences([]metav1.OwnerReference{p.Owner})
	data := map[string]any{dataKey: base64.StdEncoding.EncodeToString(part)}
	if p.Kind == "Secret" {
		u.Object["type"] = SecretType
		u.Object["data"] = data
	} else {
		u.Object["binaryData"] = data
	}
	return u
}

func pack(members []map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	if err := json.NewEncoder(z).Encode(storedRevision{Members: members}); err != nil {
		return nil, err
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// storedRevision is the JSON the chunks hold, compressed.
type storedRevision struct {
	Members []map[string]any `json:"members"`
}

func unpack(packed []byte) ([]map[string]any, error) {
	z, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(z)
	if err != nil {
		return nil, err
	}
	var s storedRevision
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s.Members, nil
}

// SameHead reports whether two first chunks are the same write of a
// revision (same content and time): a create whose answer was lost finds
// its own object.
func SameHead(a, b *unstructured.Unstructured) bool {
	x, y := a.GetAnnotations(), b.GetAnnotations()
	return x[sumAnnotation] != "" && x[sumAnnotation] == y[sumAnnotation] && x[timeAnnotation] == y[timeAnnotation]
}
