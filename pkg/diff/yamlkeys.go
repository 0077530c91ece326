package diff

import (
	"unicode"
	"unicode/utf8"
)

// keyList sorts map keys as yaml.v2's keyList.Less (sorter.go) sorts
// string keys: letters after other characters, runs of digits compared as
// numbers. Ported from go.yaml.in/yaml/v2 v2.4.4, (c) Canonical Ltd. and
// the go-yaml authors, licensed under the Apache License 2.0 (the MIT
// license covers the parts ported from libyaml). The order is not always
// transitive (with leading zeros: "a0a" < "a1" < "a01" < "a0a"), so for such
// keys yaml.v2's output depends on the map's iteration order; using
// sort.Sort on keys in iteration order, as yaml.v2 does, gives one of the
// outputs yaml.v2 can give.
type keyList []string

func (l keyList) Len() int           { return len(l) }
func (l keyList) Swap(i, j int)      { l[i], l[j] = l[j], l[i] }
func (l keyList) Less(i, j int) bool { return keyLess(l[i], l[j]) }

// keyLess walks runes where yaml.v2 converts both keys to []rune.
func keyLess(a, b string) bool {
	// nonZero: the digits ending the common prefix include one other than
	// '0' (yaml.v2 looks back for it when a '0' follows).
	nonZero := false
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ra, wa := utf8.DecodeRuneInString(a[i:])
		rb, wb := utf8.DecodeRuneInString(b[j:])
		if ra == rb {
			if unicode.IsDigit(ra) {
				nonZero = nonZero || ra != '0'
			} else {
				nonZero = false
			}
			i, j = i+wa, j+wb
			continue
		}
		al, bl := unicode.IsLetter(ra), unicode.IsLetter(rb)
		if al && bl {
			return ra < rb
		}
		if al || bl {
			return bl
		}
		var an, bn int64
		if (ra == '0' || rb == '0') && nonZero {
			an, bn = 1, 1
		}
		an, alen := digitRun(a[i:], an)
		bn, blen := digitRun(b[j:], bn)
		if an != bn {
			return an < bn
		}
		if alen != blen {
			return alen < blen
		}
		return ra < rb
	}
	return i == len(a) && j < len(b)
}

// digitRun reads the digits starting s into n as yaml.v2 does (any Unicode
// digit, valued by its distance from '0') and returns n and their count.
func digitRun(s string, n int64) (int64, int) {
	count := 0
	for _, r := range s {
		if !unicode.IsDigit(r) {
			break
		}
		n = n*10 + int64(r-'0')
		count++
	}
	return n, count
}
