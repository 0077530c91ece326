package lastapplied

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
)

// maxUnpacked bounds what a compact record may unpack to: no object the API
// server stores comes near it, so a larger one is malformed (a gzip bomb),
// not a record.
const maxUnpacked = 32 << 20

// pack gzips a record and encodes it in base64, the annotation's text. The
// output depends on the bytes alone (no name, no time in the gzip header),
// so the same record packs to the same annotation on every apply.
func pack(record []byte) ([]byte, error) {
	var zipped bytes.Buffer
	zw, err := gzip.NewWriterLevel(&zipped, gzip.DefaultCompression)
	if err != nil {
		return nil, fmt.Errorf("packing the compact last-applied record: %w", err)
	}
	if _, err := zw.Write(record); err != nil {
		return nil, fmt.Errorf("packing the compact last-applied record: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("packing the compact last-applied record: %w", err)
	}
	out := make([]byte, base64.StdEncoding.EncodedLen(zipped.Len()))
	base64.StdEncoding.Encode(out, zipped.Bytes())
	return out, nil
}

// unpack returns the JSON of a compact record: the annotation itself when it
// is a JSON object (kapply wrote compact records unpacked before), else the
// record pack encoded. Errors wrap ErrMalformed.
func unpack(raw string) ([]byte, error) {
	if len(raw) > 0 && raw[0] == '{' {
		return []byte(raw), nil
	}
	zipped, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: the compact record is neither JSON nor base64: %w", ErrMalformed, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		return nil, fmt.Errorf("%w: unpacking the compact record: %w", ErrMalformed, err)
	}
	record, err := io.ReadAll(io.LimitReader(zr, maxUnpacked+1))
	if err == nil {
		err = zr.Close()
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: unpacking the compact record: %w", ErrMalformed, err)
	case len(record) > maxUnpacked:
		return nil, fmt.Errorf("%w: the compact record unpacks to more than %d bytes", ErrMalformed, maxUnpacked)
	}
	return record, nil
}

// recordJSON returns the JSON of the record in annotations — kubectl's, or
// else kapply's compact one — and whether there is one.
func recordJSON(annotations map[string]string) ([]byte, bool, error) {
	if raw, ok := annotations[Annotation]; ok {
		return []byte(raw), true, nil
	}
	raw, ok := annotations[CompactAnnotation]
	if !ok {
		return nil, false, nil
	}
	record, err := unpack(raw)
	return record, true, err
}
