package schema

// shapeOf is the Type an inline schema describes, without building it.
// Quantity and similar types have no "type" but a oneOf of scalars.
func shapeOf(s *rawSchema) Type {
	switch {
	case s.IntOrString || s.Format == "int-or-string":
		return Scalar
	case s.Type == "array":
		return List
	case s.Type == "object" || len(s.Properties) > 0 || s.AdditionalProperties.Allows:
		return Object
	case isScalarType(string(s.Type)):
		return Scalar
	case s.Type == "" && scalarAlternatives(s):
		return Scalar
	}
	return Unknown
}

func isScalarType(t string) bool {
	switch t {
	case "string", "integer", "number", "boolean":
		return true
	}
	return false
}

// scalarAlternatives reports whether s is a oneOf/anyOf of scalar types only.
func scalarAlternatives(s *rawSchema) bool {
	alts := append(append([]*rawSchema(nil), s.OneOf...), s.AnyOf...)
	if len(alts) == 0 {
		return false
	}
	for _, a := range alts {
		if a == nil || !isScalarType(string(a.Type)) {
			return false
		}
	}
	return true
}

// shape is shapeOf after following references, for deciding a list's
// strategy from its items while their component may still be being built.
func (b *builder) shape(s *rawSchema) Type {
	for hops := 0; s != nil && hops < maxAliasHops; hops++ {
		ref := s.target()
		if ref == "" {
			return shapeOf(s)
		}
		s = b.schemas[componentName(ref)]
	}
	return Unknown
}

// maxAliasHops bounds following a chain of pure references; real documents
// use one hop.
const maxAliasHops = 32
