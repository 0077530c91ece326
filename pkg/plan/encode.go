package plan

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	sigsjson "sigs.k8s.io/json"
)

// The document's format: a change of meaning gets a new version, and a
// reader refuses a version it does not know rather than guess.
const (
	APIVersion = "kapply.dev/v1alpha2"
	Kind       = "Plan"
)

// olderAPIVersions are the versions earlier kapply releases wrote: their
// plans lack what this version verifies (whole replaced lists, keyed
// Secret digests, the plan's own settings), so they are refused with a
// way forward rather than read with less checking.
var olderAPIVersions = map[string]bool{"kapply.dev/v1alpha1": true}

// ErrOlderVersion is the refusal of a plan an older kapply wrote.
var ErrOlderVersion = errors.New("made by an older kapply: run kapply plan again")

// MaxDocumentBytes bounds a plan document Decode reads: 10,000 objects of
// 10 KiB each, with their merged objects and changes, stay far below it,
// and a document past it (a hostile or mistaken file) is refused before
// any of it is decoded.
const MaxDocumentBytes = 512 << 20

// ErrInvalid is the cause of every refusal of a plan document.
var ErrInvalid = errors.New("invalid plan")

// Encode writes p as a plan document: a Secret's values as digests (see
// redact), a checksum over the content, indented for a reviewer. p is
// not modified. An item that could not be decoded back is an error.
func Encode(w io.Writer, p *Plan) error {
	doc, err := encodeDocument(p)
	if err != nil {
		return err
	}
	return writeIndented(w, doc)
}

// encodeDocument is p's document, redacted, checked and summed.
func encodeDocument(p *Plan) (*document, error) {
	redacted, err := Redacted(p)
	if err != nil {
		return nil, err
	}
	if err := Check(redacted); err != nil {
		return nil, err
	}
	doc, err := toWire(redacted)
	if err != nil {
		return nil, fmt.Errorf("encoding the plan: %w", err)
	}
	if doc.Checksum, err = checksum(doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// writeIndented writes doc indented for a reviewer, newline-terminated.
func writeIndented(w io.Writer, doc any) error {
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the plan: %w", err)
	}
	if _, err := w.Write(append(out, '\n')); err != nil {
		return fmt.Errorf("writing the plan: %w", err)
	}
	return nil
}

// Decode reads a plan document of at most MaxDocumentBytes.
func Decode(r io.Reader) (*Plan, error) {
	return DecodeLimited(r, MaxDocumentBytes)
}

// DecodeLimited reads a plan document, refusing one of more than maxBytes,
// of another apiVersion or kind, whose decoding would take more than a
// small multiple of its size (see checkDecodeCost), with a field it does not know or twice,
// whose checksum does not match its content (edited by hand), or with an
// item no run could have made. Every refusal wraps ErrInvalid.
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
func DecodeAnyLimited(r io.Reader, maxBytes int64) (*Plan, *Set, error) {
	br := bufio.NewReader(io.LimitReader(r, maxBytes+1))
	skipped, err := startsAsObject(br)
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the plan: %w", err)
	}
	if skipped+int64(len(data)) > maxBytes {
		return nil, nil, fmt.Errorf("%w: the document is larger than %d bytes", ErrInvalid, maxBytes)
	}
	kind, err := checkHeader(data)
	if err != nil {
		return nil, nil, err
	}
	if err := checkDecodeCost(data); err != nil {
		return nil, nil, err
	}
	if kind == SetKind {
		set, err := decodeSet(data)
		return nil, set, err
	}
	var doc document
	if err := unmarshalStrict(data, &doc); err != nil {
		return nil, nil, err
	}
	p, err := decodeDocument(&doc)
	return p, nil, err
}

// unmarshalStrict decodes data into v, refusing unknown and repeated
// fields.
func unmarshalStrict(data []byte, v any) error {
	strict, err := sigsjson.UnmarshalStrict(data, v, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(strict) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalid, errors.Join(strict...))
	}
	return nil
}

// decodeDocument checks doc's kind, checksum and items, and makes its
// Plan.
func decodeDocument(doc *document) (*Plan, error) {
	if doc.APIVersion != APIVersion || doc.Kind != Kind {
		return nil, fmt.Errorf("%w: apiVersion %q, kind %q is not %s, %s", ErrInvalid, doc.APIVersion, doc.Kind, APIVersion, Kind)
	}
	want, err := checksum(doc)
	if err := checkSum(doc.Checksum, want, err, "the plan was changed after it was written (edited by hand?); make a new plan"); err != nil {
		return nil, err
	}
	p, err := fromWire(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := Check(p); err != nil {
		return nil, err
	}
	return p, nil
}

// startsAsObject refuses a document whose first byte after white space
// is not a JSON object's "{" (a binary or YAML file given by mistake)
// before it is read whole: reading it up to the size limit first held
// over twice the limit in memory. An empty document is left to the
// decoder's own error; the white space skipped counts toward the limit.
func startsAsObject(br *bufio.Reader) (skipped int64, err error) {
	for ; ; skipped++ {
		b, err := br.ReadByte()
		switch {
		case errors.Is(err, io.EOF):
			return skipped, nil
		case err != nil:
			return skipped, fmt.Errorf("reading the plan: %w", err)
		case b == ' ' || b == '\t' || b == '\n' || b == '\r':
			continue
		case b != '{':
			return skipped, fmt.Errorf("%w: not a JSON plan document: it starts with %q, not {", ErrInvalid, b)
		}
		return skipped, br.UnreadByte()
	}
}

// checkHeader refuses another format before the whole document is
// decoded, so that a plan of a later version gets "version X is not
// supported" rather than a complaint about its first unknown field.
func checkHeader(data []byte) (kind string, err error) {
	var header struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(data, &header); err != nil {
		return "", fmt.Errorf("%w: not a JSON plan document: %w", ErrInvalid, err)
	}
	if header.Kind != Kind && header.Kind != SetKind {
		return "", fmt.Errorf("%w: kind %q is not %q nor %q", ErrInvalid, header.Kind, Kind, SetKind)
	}
	if olderAPIVersions[header.APIVersion] {
		return "", fmt.Errorf("%w: apiVersion %q: %w", ErrInvalid, header.APIVersion, ErrOlderVersion)
	}
	if header.APIVersion != APIVersion {
		return "", fmt.Errorf("%w: apiVersion %q is not supported (this kapply reads %s)", ErrInvalid, header.APIVersion, APIVersion)
	}
	return header.Kind, nil
}

// checksum is a SHA-256 over the document's canonical content: its
// compact JSON with the checksum empty (encoding/json writes fields in a
// fixed order and map keys sorted, so equal content gives equal bytes,
// however the document was indented).
func checksum(doc *document) (string, error) {
	c := *doc
	c.Checksum = ""
	return sumJSON(&c)
}

// sumJSON is the SHA-256 of v's compact JSON, as a checksum field says it.
func sumJSON(v any) (string, error) {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		return "", fmt.Errorf("computing the plan's checksum: %w", err)
	}
	sum := sha256.Sum256(b.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// checkSum compares a document's recorded checksum with the one computed
// from its content (computeErr: the computation failed); changed says what a
// mismatch means to the reader, for a plan or a list of plans.
func checkSum(recorded, computed string, computeErr error, changed string) error {
	switch {
	case computeErr != nil:
		return fmt.Errorf("%w: %w", ErrInvalid, computeErr)
	case recorded == "":
		return fmt.Errorf("%w: the document has no checksum", ErrInvalid)
	case recorded != computed:
		return fmt.Errorf("%w: the checksum does not match the content: %s", ErrInvalid, changed)
	}
	return nil
}
