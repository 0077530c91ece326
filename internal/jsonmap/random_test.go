package jsonmap

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"unicode/utf8"
)

// gen writes random JSON text: every shape of number, string and
// whitespace the grammar allows, and some it does not (numbers out of
// float64's range, invalid UTF-8).
type gen struct {
	r   *rand.Rand
	out []byte
}

// keys are few, so objects have duplicate keys now and then.
var keys = []string{"a", "b", "kind", "name", "metadata", "spec", `\u0061`, `\"q`, "é"}

func (g *gen) document() []byte {
	g.out = g.out[:0]
	g.space()
	if g.r.IntN(50) == 0 {
		g.value(2)
	} else {
		g.object(0)
	}
	g.space()
	return g.out
}

func (g *gen) value(depth int) {
	n := 10
	if depth > 5 {
		n = 6 // no more nesting
	}
	switch g.r.IntN(n) {
	case 0, 1:
		g.number()
	case 2, 3:
		g.string()
	case 4:
		g.out = append(g.out, []string{"true", "false", "null"}[g.r.IntN(3)]...)
	case 5:
		g.number()
	case 6, 7:
		g.object(depth + 1)
	default:
		g.array(depth + 1)
	}
}

func (g *gen) object(depth int) {
	g.out = append(g.out, '{')
	for i := range g.r.IntN(6) {
		if i > 0 {
			g.out = append(g.out, ',')
		}
		g.space()
		if g.r.IntN(2) == 0 {
			g.out = append(g.out, '"')
			g.out = append(g.out, keys[g.r.IntN(len(keys))]...)
			g.out = append(g.out, '"')
		} else {
			g.string()
		}
		g.space()
		g.out = append(g.out, ':')
		g.space()
		g.value(depth)
		g.space()
	}
	g.out = append(g.out, '}')
}

func (g *gen) array(depth int) {
	g.out = append(g.out, '[')
	for i := range g.r.IntN(6) {
		if i > 0 {
			g.out = append(g.out, ',')
		}
		g.space()
		g.value(depth)
		g.space()
	}
	g.out = append(g.out, ']')
}

func (g *gen) space() {
	for g.r.IntN(4) == 0 {
		g.out = append(g.out, " \t\r\n"[g.r.IntN(4)])
	}
}

func (g *gen) number() {
	r := g.r
	if r.IntN(2) == 0 {
		g.out = append(g.out, '-')
	}
	switch r.IntN(4) {
	case 0:
		g.out = append(g.out, '0')
	case 1: // near the edges of int64
		g.out = append(g.out, []string{"922337203685477580", "9223372036854775807",
			"9223372036854775808", "9223372036854775809", "999999999999999999",
			"1000000000000000000", "9007199254740993"}[r.IntN(7)]...)
	default:
		g.out = append(g.out, byte('1'+r.IntN(9)))
		g.digits(r.IntN(25))
	}
	if r.IntN(4) == 0 {
		g.out = append(g.out, '.')
		g.digits(1 + r.IntN(20))
	}
	if r.IntN(4) == 0 {
		g.out = append(g.out, "eE"[r.IntN(2)])
		if r.IntN(2) == 0 {
			g.out = append(g.out, "+-"[r.IntN(2)])
		}
		// Mostly small exponents; now and then one past float64's range.
		g.digits(1 + r.IntN(2))
		if r.IntN(20) == 0 {
			g.out = append(g.out, '0', '0')
		}
	}
}

func (g *gen) digits(n int) {
	for range n {
		g.out = append(g.out, byte('0'+g.r.IntN(10)))
	}
}

func (g *gen) string() {
	r := g.r
	g.out = append(g.out, '"')
	for range r.IntN(12) {
		switch r.IntN(12) {
		case 0:
			g.out = append(g.out, []string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`}[r.IntN(8)]...)
		case 1: // any \u escape, lone surrogates included
			g.out = fmt.Appendf(g.out, `\u%04x`, r.IntN(0x10000))
		case 2: // a surrogate pair, or half of one
			hi, lo := 0xd800+r.IntN(0x400), 0xdc00+r.IntN(0x400)
			g.out = fmt.Appendf(g.out, []string{`\u%04X\u%04x`, `\u%04x\u%04x`, `\u%04x`}[r.IntN(3)], hi, lo)
		case 3: // any code point as UTF-8
			g.out = utf8.AppendRune(g.out, rune(r.IntN(utf8.MaxRune+1)))
		case 4: // any byte that is not a quote, backslash or control
			if c := byte(0x20 + r.IntN(0xe0)); c != '"' && c != '\\' {
				g.out = append(g.out, c)
			}
		default:
			g.out = append(g.out, byte('a'+r.IntN(26)))
		}
	}
	g.out = append(g.out, '"')
}

// mutate damages doc: a byte changed, removed or added, or the end cut.
func mutate(r *rand.Rand, doc []byte) []byte {
	if len(doc) == 0 {
		return doc
	}
	const telling = `{}[]",:\ 0123456789.eE+-tfnu`
	i := r.IntN(len(doc))
	pick := func() byte {
		if r.IntN(2) == 0 {
			return telling[r.IntN(len(telling))]
		}
		return byte(r.IntN(256))
	}
	switch r.IntN(4) {
	case 0:
		doc[i] = pick()
	case 1:
		doc = append(doc[:i], doc[i+1:]...)
	case 2:
		doc = append(doc[:i], append([]byte{pick()}, doc[i:]...)...)
	default:
		doc = doc[:i]
	}
	return doc
}

func TestObjectAgreesOnGeneratedDocuments(t *testing.T) {
	n := 200_000
	if testing.Short() || raceEnabled {
		n = 20_000
	}
	seed := uint64(1)
	if s, err := strconv.ParseUint(os.Getenv("JSONMAP_SEED"), 10, 64); err == nil {
		seed = s
	}
	r := rand.New(rand.NewPCG(seed, 2))
	g := gen{r: r}
	failures, refused := 0, 0
	for i := 0; i < n && failures < 10; i++ {
		doc := g.document()
		for try := range 2 {
			if err := disagreement(doc); err != nil {
				t.Errorf("document %d (mutated: %v): %.500v", i, try > 0, err)
				failures++
			}
			if _, err := Object(doc); err != nil {
				refused++
			}
			doc = mutate(r, doc)
			for r.IntN(3) == 0 {
				doc = mutate(r, doc)
			}
		}
	}
	t.Logf("%d of %d documents refused", refused, 2*n)
	// The generator must reach both sides of the comparison.
	if refused < n/4 || refused > 3*n/2 {
		t.Errorf("%d of %d documents refused: the generator has drifted", refused, 2*n)
	}
}
