package lastapplied

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
)

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
// record pack encoded, unpacked up to limit bytes and no further (never the
// whole of a gzip bomb). Errors wrap ErrCompactCorrupt.
func unpack(raw string, limit int) ([]byte, error) {
	if len(raw) > 0 && raw[0] == '{' {
		return []byte(raw), nil
	}
	zipped, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: neither JSON nor base64: %w", ErrCompactCorrupt, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		return nil, fmt.Errorf("%w: unpacking it: %w", ErrCompactCorrupt, err)
	}
	record, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err == nil && len(record) <= limit {
		err = zr.Close()
	}
	switch {
	case len(record) > limit:
		return nil, fmt.Errorf("%w: it unpacks to more than %d bytes (a compact record may reach %d times the size of the object it sits on, at least %d)",
			ErrCompactCorrupt, limit, recordFactor, minBoundBytes)
	case err != nil:
		return nil, fmt.Errorf("%w: unpacking it: %w", ErrCompactCorrupt, err)
	}
	return record, nil
}
