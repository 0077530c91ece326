package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	sigsjson "sigs.k8s.io/json"

	"github.com/kapply/kapply/pkg/lastapplied"
)

// Decode reads a plan document of at most MaxDocumentBytes.
func Decode(r io.Reader) (*Plan, error) {
	return DecodeLimited(r, MaxDocumentBytes)
}

// DecodeLimited reads a plan document item by item, refusing one of more
// than maxBytes, of another apiVersion or kind, with an item whose
// decoding would take more than a small multiple of its size (see
// decodeBudget), with a field it does not know or twice, whose
// checksum does not match its content (edited by hand), or with an item
// no run could have made. Every refusal wraps ErrInvalid.
func DecodeLimited(r io.Reader, maxBytes int64) (*Plan, error) {
	p, set, err := DecodeAnyLimited(r, maxBytes)
	if err != nil {
		return nil, err
	}
	if set != nil {
		return nil, fmt.Errorf("%w: the document is a %s of %d context(s) (kapply plan --contexts), not one cluster's plan: apply it with --contexts, or --context to run one of its plans", ErrInvalid, SetKind, len(set.Plans))
	}
	return p, nil
}

// DecodeAny reads a plan document of either kind, at most
// MaxDocumentBytes: one cluster's Plan (set nil) or a PlanList of one plan
// per context (p nil).
func DecodeAny(r io.Reader) (p *Plan, set *Set, err error) {
	return DecodeAnyLimited(r, MaxDocumentBytes)
}

// DecodeAnyLimited is DecodeAny refusing a document of more than
// maxBytes, and whatever DecodeLimited refuses, in each plan of a list.
// The document is read as a stream: only the item being read is held as
// bytes, the plan's items already read as values.
func DecodeAnyLimited(r io.Reader, maxBytes int64) (*Plan, *Set, error) {
	limited := &io.LimitedReader{R: r, N: maxBytes + 1}
	br := bufio.NewReader(limited)
	tooLarge := func(err error) error {
		if limited.N <= 0 {
			return fmt.Errorf("%w: the document is larger than %d bytes", ErrInvalid, maxBytes)
		}
		return err
	}
	if err := startsAsObject(br); err != nil {
		return nil, nil, tooLarge(err)
	}
	d := &docReader{dec: json.NewDecoder(br)}
	p, set, _, err := d.object(false)
	if err == nil {
		err = d.end()
	}
	if err = tooLarge(err); err != nil {
		return nil, nil, err
	}
	return p, set, nil
}

// startsAsObject refuses a document whose first byte after white space
// is not a JSON object's "{" (a binary or YAML file given by mistake)
// before more of it is read. An empty document is left to the decoder's
// own error.
func startsAsObject(br *bufio.Reader) error {
	for {
		b, err := br.ReadByte()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("reading the plan: %w", err)
		case b == ' ' || b == '\t' || b == '\n' || b == '\r':
			continue
		case b != '{':
			return fmt.Errorf("%w: not a JSON plan document: it starts with %q, not {", ErrInvalid, b)
		}
		return br.UnreadByte()
	}
}

// docReader reads a plan document's tokens.
type docReader struct {
	dec    *json.Decoder
	budget decodeBudget
}

// syntax is a refusal of what is not JSON.
func syntax(err error) error {
	if err == nil || errors.Is(err, ErrInvalid) {
		return err
	}
	return fmt.Errorf("%w: not a JSON plan document: %w", ErrInvalid, err)
}

// delim reads the token want ({ [ } ]).
func (d *docReader) delim(want json.Delim, what string) error {
	tok, err := d.dec.Token()
	if err != nil {
		return syntax(err)
	}
	if tok != want {
		return fmt.Errorf("%w: %s is not a JSON %s", ErrInvalid, what, map[json.Delim]string{'{': "object", '[': "list"}[want])
	}
	return nil
}

// end refuses anything after the document but white space.
func (d *docReader) end() error {
	if _, err := d.dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: not a JSON plan document: something follows it", ErrInvalid)
	}
	return nil
}

// raw reads one value, compact, refusing one costly to decode.
func (d *docReader) raw(what string) ([]byte, error) {
	var raw json.RawMessage
	if err := d.dec.Decode(&raw); err != nil {
		return nil, syntax(err)
	}
	var b bytes.Buffer
	b.Grow(len(raw))
	if err := json.Compact(&b, raw); err != nil {
		return nil, syntax(err)
	}
	if err := d.budget.spend(b.Bytes()); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return b.Bytes(), nil
}

// headerOrder is the order a document's members besides its list are
// summed in, whatever their order in the document.
var headerOrder = []string{"apiVersion", "kind", "cluster", "settings", "gates"}

// object reads a Plan or (top-level only, nested false) a PlanList
// document, and returns it with its checksum. Its members may come in any
// order (jq -S sorts them: kind after items); its items are read as they
// come, its apiVersion checked as soon as it is read (kapply writes it
// first).
func (d *docReader) object(nested bool) (*Plan, *Set, string, error) {
	if err := d.delim('{', "the document"); err != nil {
		return nil, nil, "", err
	}
	h := &header{raw: map[string][]byte{}, nested: nested, summed: newSummer()}
	p := &Plan{}
	var set *Set
	var recorded string
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return nil, nil, "", syntax(err)
		}
		name, _ := tok.(string)
		if h.seen(name) {
			return nil, nil, "", fmt.Errorf("%w: duplicate field %q", ErrInvalid, name)
		}
		switch {
		case name == "checksum":
			var raw []byte
			if raw, err = d.raw("the checksum"); err == nil {
				err = unmarshalStrict(raw, &recorded)
			}
		case name == "items" || name == "plans":
			if err = h.list(name); err == nil && name == "plans" {
				set, err = d.plans(h.summed)
			} else if err == nil {
				err = d.items(p, h.summed)
			}
		case slices.Contains(headerOrder, name):
			if h.raw[name], err = d.raw("field " + name); err == nil {
				err = h.early()
			}
		default:
			err = fmt.Errorf("%w: unknown field %q", ErrInvalid, name)
		}
		if err != nil {
			return nil, nil, "", err
		}
	}
	if _, err := d.dec.Token(); err != nil {
		return nil, nil, "", syntax(err)
	}
	kind, err := h.finish()
	if err != nil {
		return nil, nil, "", err
	}
	computed := h.summed.String()
	if kind == SetKind {
		if set == nil {
			set = &Set{}
		}
		err := checkSum(recorded, computed, "the plans were changed after they were written (edited by hand?); make new plans")
		if err == nil {
			err = checkSetContexts(set.Contexts())
		}
		return nil, set, computed, err
	}
	if err := checkSum(recorded, computed, "the plan was changed after it was written (edited by hand?); make a new plan"); err != nil {
		return nil, nil, "", err
	}
	if p.Cluster, p.Settings, p.Gates, err = h.plan(); err != nil {
		return nil, nil, "", err
	}
	if err := Check(p); err != nil {
		return nil, nil, "", err
	}
	return p, nil, computed, nil
}

// items reads the list of items into p, each as it comes, summed.
func (d *docReader) items(p *Plan, sum *summer) error {
	if err := d.delim('[', "items"); err != nil {
		return err
	}
	for n := 1; d.dec.More(); n++ {
		raw, err := d.raw(fmt.Sprintf("item %d", n))
		if err != nil {
			return err
		}
		sum.element(raw)
		var in itemJSON
		if err := strictly(raw, &in); err != nil {
			return fmt.Errorf("%w: item %d: %w", ErrInvalid, n, err)
		}
		it, err := itemFromWire(in)
		if err == nil {
			err = onlyDigests(it)
		}
		if err != nil {
			return fmt.Errorf("%w: item %d (%s): %w", ErrInvalid, n, in.ID.id(), err)
		}
		p.Items = append(p.Items, it)
	}
	return d.delim(']', "items")
}

// unmarshalStrict decodes data into v, refusing unknown and repeated
// fields.
func unmarshalStrict(data []byte, v any) error {
	if err := strictly(data, v); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// strictly is unmarshalStrict's error, without ErrInvalid.
func strictly(data []byte, v any) error {
	strict, err := sigsjson.UnmarshalStrict(data, v, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// checkSum compares a document's recorded checksum with the one computed
// from its content; changed says what a mismatch means to the reader, for
// a plan or a list of plans.
func checkSum(recorded, computed, changed string) error {
	switch {
	case recorded == "":
		return fmt.Errorf("%w: the document has no checksum", ErrInvalid)
	case recorded != computed:
		return fmt.Errorf("%w: the checksum does not match the content: %s", ErrInvalid, changed)
	}
	return nil
}

// onlyDigests refuses a Secret item holding a value that is not a digest:
// Encode writes none (a plan file is read by more people than the
// Secrets are), so one is an edit, and the plan could not be encoded
// again. Redacting the item without a key finds any.
func onlyDigests(it Item) error {
	if !it.ID.isSecret() {
		return nil
	}
	it.DigestKey = lastapplied.DigestKey{}
	if _, err := redactItem(it); errors.Is(err, lastapplied.ErrNoDigestKey) {
		return errors.New("a Secret item holds a value that is not a digest (a saved plan holds none in plain text)")
	} else if err != nil {
		return err
	}
	return nil
}
