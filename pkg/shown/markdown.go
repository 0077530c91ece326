package shown

import "strings"

// Markdown is s (a name, a path) as text of a markdown report, in a
// table cell, a paragraph or a <summary>: Text, then the characters that
// would make markup written as HTML character references, which
// markdown and HTML blocks both show as the character: | (a table
// cell's end), ` (code), [ ] (a link), < > (HTML), & (a reference
// itself). A name cannot end a <summary>, add a row or render a link.
func Markdown(s string) string {
	return markdownEscapes.Replace(Text(s))
}

var markdownEscapes = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "&#124;", "`", "&#96;",
	"[", "&#91;", "]", "&#93;", `"`, "&quot;",
)
