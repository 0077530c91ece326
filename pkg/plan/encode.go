package plan

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
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
// and a document past it (a hostile or mistaken file) is refused when
// its reading reaches the limit.
const MaxDocumentBytes = 512 << 20

// ErrInvalid is the cause of every refusal of a plan document.
var ErrInvalid = errors.New("invalid plan")

// Encode writes p as a plan document, item by item as onWire keeps them:
// a Secret's values as digests (see redact), one compact item a line,
// and last a checksum over the content. p is not modified. An item that
// could not be decoded back is an error, found before anything is
// written.
func Encode(w io.Writer, p *Plan) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := writePlan(bw, p); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the plan: %w", err)
	}
	return nil
}

// writePlan writes p's document, without a newline after it, and
// returns its checksum.
func writePlan(w *bufio.Writer, p *Plan) (string, error) {
	if err := Check(p); err != nil {
		return "", err
	}
	out := newDocWriter(w)
	c := p.Cluster
	out.field("apiVersion", APIVersion)
	out.field("kind", Kind)
	out.field("cluster", clusterJSON{Context: c.Context, ID: c.ID, Server: c.Server, User: c.User})
	if p.Settings != (Settings{}) {
		out.field("settings", settingsToWire(p.Settings))
	}
	if len(p.Gates) > 1 {
		out.field("gates", gatesToWire(p.Gates))
	}
	out.openList("items")
	for i, it := range p.Items {
		if it.ID.isSecret() {
			var err error
			if it, err = redactItem(it); err != nil {
				return "", fmt.Errorf("redacting the values of item %d (%s): %w", i+1, p.Items[i].ID, err)
			}
		}
		it = onWire(it)
		if err := checkItem(it); err != nil {
			return "", fmt.Errorf("%w: item %d (%s) as saved: %w", ErrInvalid, i+1, it.ID, err)
		}
		out.element(itemToWire(it))
	}
	return out.close()
}

// docWriter writes a document's members in order, each value compact,
// summing them as a reader will (see summer); the first error stops it.
type docWriter struct {
	w     *bufio.Writer
	sum   *summer
	buf   bytes.Buffer
	enc   *json.Encoder
	first bool // no member written yet
	count int  // elements of the open list
	err   error
}

func newDocWriter(w *bufio.Writer) *docWriter {
	d := &docWriter{w: w, sum: newSummer(), first: true}
	d.enc = json.NewEncoder(&d.buf) // escaping <, > and & as json.Marshal does
	d.w.WriteByte('{')
	return d
}

// compact is v's JSON, valid until the next call.
func (d *docWriter) compact(v any) []byte {
	d.buf.Reset()
	if err := d.enc.Encode(v); err != nil && d.err == nil {
		d.err = fmt.Errorf("encoding the plan: %w", err)
	}
	return bytes.TrimSuffix(d.buf.Bytes(), []byte{'\n'})
}

func (d *docWriter) name(name string) {
	if !d.first {
		d.w.WriteByte(',')
	}
	d.first = false
	d.w.WriteString(`"` + name + `":`)
}

// field writes one member and sums it.
func (d *docWriter) field(name string, v any) []byte {
	value := d.compact(v)
	d.name(name)
	d.w.Write(value)
	d.sum.field(name, value)
	return value
}

// openList starts the list member name, whose elements come one a line.
func (d *docWriter) openList(name string) {
	d.name(name)
	d.w.WriteString("[\n")
	d.sum.field(name, nil)
}

// element writes one element of the open list and sums it.
func (d *docWriter) element(v any) {
	value := d.compact(v)
	d.write(value)
}

// write writes value, compact JSON, as an element of the open list.
func (d *docWriter) write(value []byte) {
	if d.count > 0 {
		d.w.WriteString(",\n")
	}
	d.count++
	d.w.Write(value)
	d.sum.element(value)
}

// close ends the open list and the document with its checksum.
func (d *docWriter) close() (string, error) {
	if d.count > 0 {
		d.w.WriteByte('\n')
	}
	d.w.WriteByte(']')
	sum := d.sum.String()
	d.name("checksum")
	d.w.Write(d.compact(sum))
	d.w.WriteByte('}')
	return sum, d.err
}

// summer is a document's checksum: SHA-256 over its header's members
// (name and compact value, in headerOrder whatever their order in the
// document), the name of its list, and the SHA-256 of the list's elements,
// each compact, in order. A reader sums the bytes as they come
// (compacted: white space may change, nothing else), so nothing is
// encoded twice, and compares after the document's end.
type summer struct{ header, elements hash.Hash }

func newSummer() *summer { return &summer{header: sha256.New(), elements: sha256.New()} }

func (s *summer) field(name string, compact []byte) {
	s.header.Write([]byte(name))
	s.header.Write([]byte{0})
	s.header.Write(compact)
	s.header.Write([]byte{'\n'})
}

func (s *summer) element(compact []byte) {
	s.elements.Write(compact)
	s.elements.Write([]byte{'\n'})
}

func (s *summer) String() string {
	all := sha256.New()
	all.Write(s.header.Sum(nil))
	all.Write(s.elements.Sum(nil))
	return "sha256:" + hex.EncodeToString(all.Sum(nil))
}
