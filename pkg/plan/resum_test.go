package plan

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
)

// genericDocument is data's generic form (numbers as they are written).
func genericDocument(data []byte) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return nil, false
	}
	return doc, true
}

// resummed writes doc, a Plan or PlanList document's generic form, laid
// out as Encode lays one out, with the checksums of its content (each
// plan's of a PlanList too): a hand edit that knows the scheme. It
// returns the document and its checksum.
func resummed(doc map[string]any) ([]byte, string) { return resumming(doc, true) }

// resummedList is resummed making the checksum of a PlanList only, its
// plans' as they are: a hand edit of a plan that forgot its own.
func resummedList(doc map[string]any) ([]byte, string) { return resumming(doc, false) }

func resumming(doc map[string]any, plans bool) ([]byte, string) {
	var b bytes.Buffer
	sum := newSummer()
	first := true
	write := func(name string, raw []byte) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(strconv.Quote(name) + ":")
		b.Write(raw)
	}
	list := "items"
	if doc["kind"] == SetKind {
		list = "plans"
	}
	b.WriteByte('{')
	for _, name := range headerOrder {
		if v, ok := doc[name]; ok {
			raw := marshalled(v)
			sum.field(name, raw)
			write(name, raw)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(doc)) {
		if !slices.Contains(headerOrder, name) && name != list && name != "checksum" {
			write(name, marshalled(doc[name])) // refused by the reader: unsummed
		}
	}
	if v, ok := doc[list]; ok {
		sum.field(list, nil)
		write(list, resummedElements(list, v, sum, plans))
	}
	s := sum.String()
	write("checksum", marshalled(s))
	b.WriteByte('}')
	return b.Bytes(), s
}

func resummedElements(list string, v any, sum *summer, plans bool) []byte {
	elems, ok := v.([]any)
	if !ok {
		return marshalled(v)
	}
	parts := make([][]byte, len(elems))
	for i, e := range elems {
		entry, isMap := e.(map[string]any)
		plan, planIsMap := entry["plan"].(map[string]any)
		if list != "plans" || !isMap || !planIsMap {
			parts[i] = marshalled(e)
			sum.element(parts[i])
			continue
		}
		context := marshalled(entry["context"])
		doc, planSum := resummed(plan)
		if !plans {
			doc = marshalled(plan)
			planSum, _ = plan["checksum"].(string)
		}
		parts[i] = append(append(append([]byte(`{"context":`), context...), `,"plan":`...), doc...)
		parts[i] = append(parts[i], '}')
		sum.element(context)
		sum.element([]byte(planSum))
	}
	return append(append([]byte("["), bytes.Join(parts, []byte(","))...), ']')
}

func marshalled(v any) []byte {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return out
}
