package diff

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/kapply/kapply/pkg/shown"
)

// reportTemplate is the HTML report: one self-contained page, its style
// and script inline (no network, no external scripts or fonts), every
// value escaped by html/template.
//
//go:embed report.html.tmpl
var reportTemplate string

// reportScript is the report's script: the filters. The page's content
// security policy lets only this script run, by its hash, so that even a
// value escaped wrongly could run nothing.
//
//go:embed report.js
var reportScript string

var reportPage = template.Must(template.New("report").Parse(reportTemplate))

// scriptPolicy is the page's Content-Security-Policy: nothing from the
// network, inline style, and only reportScript.
var scriptPolicy = func() string {
	sum := sha256.Sum256([]byte(reportScript))
	return "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

// htmlReport is what the template shows.
type htmlReport struct {
	Policy  string
	Script  template.JS
	Counts  []opCount
	Kinds   []string
	Objects []htmlObject
}

// htmlObject is one object: collapsed, with its diff lines (or error).
type htmlObject struct {
	ID        int
	Operation Operation
	Kind      string
	// Name is the object's kind, namespace and name.
	Name   string
	Source string
	Lines  []htmlLine
	// Why is the object's whole explanation, as --explain prints it.
	Why     string
	Message string
}

// HTML renders the comparisons and failures as a report to open in a
// browser: the counts per operation, filters by operation and by kind, and
// each object collapsed, holding its coloured diff with the reason of each
// changed line beside it. Secret values are masked as in the comparisons
// (Compare masks them; the reasons mask them as --explain does).
func HTML(comparisons []Comparison, failures []Failure, opts Options) (string, error) {
	report := htmlReport{Policy: scriptPolicy, Script: template.JS(reportScript), Counts: countOperations(comparisons, failures)}
	kinds := map[string]bool{}
	for _, f := range failures {
		report.Objects = append(report.Objects, htmlObject{Operation: OpFailed, Kind: f.Kind, Name: strings.TrimPrefix(f.label(), string(OpFailed)+" "), Source: f.where(), Message: f.Message})
	}
	for _, c := range comparisons {
		obj := htmlObject{Operation: c.Outcome.Operation(), Kind: c.Identity.Kind, Name: c.Identity.String(), Source: shown.Text(c.Object.Source)}
		if c.Outcome != Unchanged {
			if c.isRendered {
				return "", fmt.Errorf("the HTML report of %s needs both sides of its diff", c.Object.Ref)
			}
			obj.Lines = diffLines(c, opts)
			obj.Why = strings.TrimSpace(explain(c, opts) + explainVerdicts(c.Object))
		}
		report.Objects = append(report.Objects, obj)
	}
	for i := range report.Objects {
		report.Objects[i].ID = i + 1
		kinds[report.Objects[i].Kind] = true
	}
	delete(kinds, "")
	for kind := range kinds {
		report.Kinds = append(report.Kinds, kind)
	}
	slices.Sort(report.Kinds)
	var b strings.Builder
	if err := reportPage.Execute(&b, report); err != nil {
		return "", fmt.Errorf("rendering the HTML report: %w", err)
	}
	return b.String(), nil
}
