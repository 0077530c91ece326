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
	APIVersion = "kapply.dev/v1alpha1"
	Kind       = "Plan"
)

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
	redacted, err := Redacted(p)
	if err != nil {
		return err
	}
	if err := check(redacted); err != nil {
		return err
	}
	doc, err := toWire(redacted)
	if err != nil {
		return fmt.Errorf("encoding the plan: %w", err)
	}
	if doc.Checksum, err = checksum(doc); err != nil {
		return err
	}
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
// of another apiVersion or kind, with a field it does not know or twice,
// whose checksum does not match its content (edited by hand), or with an
// item no run could have made. Every refusal wraps ErrInvalid.
func DecodeLimited(r io.Reader, maxBytes int64) (*Plan, error) {
	br := bufio.NewReader(io.LimitReader(r, maxBytes+1))
	skipped, err := startsAsObject(br)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, fmt.Errorf("reading the plan: %w", err)
	}
	if skipped+int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("%w: the document is larger than %d bytes", ErrInvalid, maxBytes)
	}
	if err := checkHeader(data); err != nil {
		return nil, err
	}
	var doc document
	strict, err := sigsjson.UnmarshalStrict(data, &doc, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, errors.Join(strict...))
	}
	want, err := checksum(&doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	switch {
	case doc.Checksum == "":
		return nil, fmt.Errorf("%w: the document has no checksum", ErrInvalid)
	case doc.Checksum != want:
		return nil, fmt.Errorf("%w: the checksum does not match the content: the plan was changed after it was written (edited by hand?); make a new plan", ErrInvalid)
	}
	p, err := fromWire(&doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := check(p); err != nil {
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
func checkHeader(data []byte) error {
	var header struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(data, &header); err != nil {
		return fmt.Errorf("%w: not a JSON plan document: %w", ErrInvalid, err)
	}
	if header.Kind != Kind {
		return fmt.Errorf("%w: kind %q is not %q", ErrInvalid, header.Kind, Kind)
	}
	if header.APIVersion != APIVersion {
		return fmt.Errorf("%w: apiVersion %q is not supported (this kapply reads %s)", ErrInvalid, header.APIVersion, APIVersion)
	}
	return nil
}

// checksum is a SHA-256 over the document's canonical content: its
// compact JSON with the checksum empty (encoding/json writes fields in a
// fixed order and map keys sorted, so equal content gives equal bytes,
// however the document was indented).
func checksum(doc *document) (string, error) {
	c := *doc
	c.Checksum = ""
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if err := enc.Encode(&c); err != nil {
		return "", fmt.Errorf("computing the plan's checksum: %w", err)
	}
	sum := sha256.Sum256(b.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
