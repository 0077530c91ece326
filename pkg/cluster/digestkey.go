package cluster

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/lastapplied"
)

var secretsResource = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// KeyMode says what DigestKeys does when a namespace has no key yet.
type KeyMode int

const (
	// CreateKey creates the namespace's key (a run that writes a
	// Secret's record). A key it cannot create is an error.
	CreateKey KeyMode = iota
	// CreateKeyOrRunKey creates the key, and when it cannot (a namespace
	// the plan creates, no right to create Secrets) uses a key of this run
	// only: Applier.Plan. A saved plan made so is refused on execution,
	// which names the key it needs.
	CreateKeyOrRunKey
	// RunKey creates nothing: a missing key is replaced by a key of this
	// run only (a dry run, a status: digests made under it match nothing
	// stored).
	RunKey
)

// DigestKeys gives each namespace's digest key (lastapplied.DigestKey),
// read from the Secret lastapplied.DigestKeySecret in that namespace and,
// as Mode says, created on first need: only whoever may read Secrets
// there can test a guess against a digest of a value. Each key is read
// once per DigestKeys (one run). Safe for concurrent use.
type DigestKeys struct {
	Client  dynamic.Interface
	Retries *Retries
	Mode    KeyMode

	mu   sync.Mutex
	keys map[string]lastapplied.DigestKey
}

// For returns namespace's key.
func (d *DigestKeys) For(ctx context.Context, namespace string) (lastapplied.DigestKey, error) {
	d.mu.Lock()
	defer d.mu.Unlock() // one read or create per namespace, not one per Secret
	if k, ok := d.keys[namespace]; ok {
		return k, nil
	}
	k, err := d.fetch(ctx, namespace)
	if err != nil {
		return lastapplied.DigestKey{}, fmt.Errorf("reading the digest key of namespace %s (Secret %s): %w", namespace, lastapplied.DigestKeySecret, err)
	}
	if d.keys == nil {
		d.keys = map[string]lastapplied.DigestKey{}
	}
	d.keys[namespace] = k
	return k, nil
}

func (d *DigestKeys) fetch(ctx context.Context, namespace string) (lastapplied.DigestKey, error) {
	client := d.Client.Resource(secretsResource).Namespace(namespace)
	k, err := d.read(ctx, client)
	if !apierrors.IsNotFound(err) {
		return k, err
	}
	if d.Mode == RunKey {
		return runKey()
	}
	k, err = d.create(ctx, client, namespace)
	if apierrors.IsAlreadyExists(err) { // another run created it first
		return d.read(ctx, client)
	}
	if err != nil && d.Mode == CreateKeyOrRunKey && (apierrors.IsNotFound(err) || apierrors.IsForbidden(err)) {
		return runKey()
	}
	return k, err
}

func (d *DigestKeys) read(ctx context.Context, client dynamic.ResourceInterface) (lastapplied.DigestKey, error) {
	var obj *unstructured.Unstructured
	err := d.retry(ctx, func() error {
		var err error
		obj, err = client.Get(ctx, lastapplied.DigestKeySecret, metav1.GetOptions{})
		return err
	})
	if err != nil {
		return lastapplied.DigestKey{}, err
	}
	encoded, _, _ := unstructured.NestedString(obj.Object, "data", lastapplied.DigestKeyField)
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return lastapplied.DigestKey{}, errors.New("its data." + lastapplied.DigestKeyField + " is not base64")
	}
	return lastapplied.NewDigestKey(raw)
}

// create stores a new key. The Secret is labelled as kapply's, and
// nothing else reads or writes it.
func (d *DigestKeys) create(ctx context.Context, client dynamic.ResourceInterface, namespace string) (lastapplied.DigestKey, error) {
	raw, err := lastapplied.RandomDigestKey()
	if err != nil {
		return lastapplied.DigestKey{}, err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": lastapplied.DigestKeySecret, "namespace": namespace,
			"labels": map[string]any{"app.kubernetes.io/managed-by": "kapply"},
			"annotations": map[string]any{"kapply.dev/purpose": "the key of kapply's digests of this namespace's Secret values " +
				"(last-applied records, saved plans); deleting it makes those digests match nothing"}},
		"data": map[string]any{lastapplied.DigestKeyField: base64.StdEncoding.EncodeToString(raw)},
	}}
	err = d.retry(ctx, func() error {
		_, err := client.Create(ctx, obj, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return lastapplied.DigestKey{}, err
	}
	return lastapplied.NewDigestKey(raw)
}

func (d *DigestKeys) retry(ctx context.Context, fn func() error) error {
	if d.Retries == nil {
		return fn()
	}
	return d.Retries.Do(ctx, fn)
}

// runKey is a key of this run only.
func runKey() (lastapplied.DigestKey, error) {
	raw, err := lastapplied.RandomDigestKey()
	if err != nil {
		return lastapplied.DigestKey{}, err
	}
	return lastapplied.NewDigestKey(raw)
}
