package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// The targets of the issues.
const (
	targetVsKubectl = 10.0 // kubectl/kapply at least
	targetVsKapp    = 3.0  // kapp/kapply at least
	targetVsFloor   = 1.3  // kapply/floor at most
)

// table is the report: notes, then one row per phase, then the lines on a
// saved plan's cost (planTargets).
type table struct {
	notes   []string
	columns []string
	rows    [][]string
	met     int
	targets int
	after   []string
}

func newTable(cfg config, res *results, notes []string) *table {
	t := &table{columns: []string{"phase"}}
	t.notes = append([]string{
		fmt.Sprintf("%s; %d objects per tool (%d Namespaces; every %dth other object a Widget custom resource, the rest ConfigMaps, Deployments with two containers, headless Services) in %d folders; parallel %d; runs %d (medians; RSS: the highest)",
			time.Now().Format(time.DateTime), cfg.objects, cfg.namespaces, widgetEvery, subdirs, cfg.parallel, cfg.runs),
	}, notes...)
	t.columns = append(t.columns, res.tools...)
	hasKubectl, hasKapp := slices.Contains(res.tools, nameKubectl), slices.Contains(res.tools, nameKapp)
	if hasKubectl {
		t.columns = append(t.columns, "kubectl/kapply")
	}
	if hasKapp {
		t.columns = append(t.columns, "kapp/kapply")
	}
	hasBase := slices.Contains(res.tools, nameBase)
	if hasBase {
		t.columns = append(t.columns, "kapply/base")
	}
	t.columns = append(t.columns, "kapply/floor")
	var measured []string
	for _, tool := range res.tools {
		if tool != nameFloor {
			measured = append(measured, tool)
			t.columns = append(t.columns, "RSS "+tool)
		}
	}
	for _, p := range allPhases() {
		row := t.row(res, p, hasKubectl, hasKapp, hasBase)
		for _, tool := range measured {
			rss, ok := res.maxRSS(p, tool)
			row = append(row, formatRSSCell(rss, ok))
		}
		t.rows = append(t.rows, row)
	}
	t.notes = append(t.notes, fmt.Sprintf("targets: kubectl/kapply >= %gx, kapp/kapply >= %gx, kapply/floor <= %gx: %d of %d met",
		targetVsKubectl, targetVsKapp, targetVsFloor, t.met, t.targets))
	for _, tool := range res.tools {
		h, okH := res.median(phaseSetHistory, tool)
		n, okN := res.median(phaseSetNoHistory, tool)
		if okH && okN && n > 0 {
			t.after = append(t.after, fmt.Sprintf("%s history: an apply --applyset recording a revision takes %.2fx one that records none (%.2fs / %.2fs; target <= 1.10x)",
				tool, h.Seconds()/n.Seconds(), h.Seconds(), n.Seconds()))
		}
	}
	for _, tool := range res.tools {
		lines, met, total := planTargets(res, tool)
		if total > 0 {
			t.after = append(t.after, lines...)
			t.after = append(t.after, fmt.Sprintf("%s plan targets: %d of %d met", tool, met, total))
		}
	}
	return t
}

func (t *table) row(res *results, p phase, hasKubectl, hasKapp, hasBase bool) []string {
	row := []string{string(p)}
	for _, tool := range res.tools {
		d, ok := res.median(p, tool)
		row = append(row, formatTime(d, ok))
	}
	if hasKubectl {
		row = append(row, t.ratio(res, p, nameKubectl, nameKapply, func(r float64) bool { return r >= targetVsKubectl }))
	}
	if hasKapp {
		row = append(row, t.ratio(res, p, nameKapp, nameKapply, func(r float64) bool { return r >= targetVsKapp }))
	}
	if hasBase {
		row = append(row, plainRatio(res, p, nameKapply, nameBase))
	}
	return append(row, t.ratio(res, p, nameKapply, nameFloor, func(r float64) bool { return r <= targetVsFloor }))
}

// plainRatio is the cell a/b without a target (a build against an older one).
func plainRatio(res *results, p phase, a, b string) string {
	da, okA := res.median(p, a)
	db, okB := res.median(p, b)
	if !okA || !okB || db == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", da.Seconds()/db.Seconds())
}

// ratio is the cell a/b with PASS or MISS against the target; "-" when a
// tool did not run the phase.
func (t *table) ratio(res *results, p phase, a, b string, meets func(float64) bool) string {
	da, okA := res.median(p, a)
	db, okB := res.median(p, b)
	if !okA || !okB || db == 0 {
		return "-"
	}
	r := da.Seconds() / db.Seconds()
	t.targets++
	if meets(r) {
		t.met++
		return fmt.Sprintf("%.1fx PASS", r)
	}
	return fmt.Sprintf("%.1fx MISS", r)
}

func formatTime(d time.Duration, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

func formatRSS(b int64) string {
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

func formatRSSCell(b int64, ok bool) string {
	if !ok {
		return "-"
	}
	return formatRSS(b)
}

// writeText prints the notes and an aligned table.
func (t *table) writeText(w io.Writer) error {
	var b strings.Builder
	for _, n := range t.notes {
		fmt.Fprintln(&b, n)
	}
	fmt.Fprintln(&b)
	tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	for _, row := range append([][]string{t.columns}, t.rows...) {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(t.after) > 0 {
		fmt.Fprintln(&b)
	}
	for _, line := range t.after {
		fmt.Fprintln(&b, line)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markdown is the same report as a markdown document.
func (t *table) markdown() string {
	var b strings.Builder
	fmt.Fprintln(&b, "# kapply bench")
	fmt.Fprintln(&b)
	for _, n := range t.notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	fmt.Fprintln(&b)
	fmt.Fprintf(&b, "| %s |\n", strings.Join(t.columns, " | "))
	fmt.Fprintf(&b, "|%s\n", strings.Repeat("---|", len(t.columns)))
	for _, row := range t.rows {
		fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
	}
	if len(t.after) > 0 {
		fmt.Fprintln(&b)
	}
	for _, line := range t.after {
		fmt.Fprintf(&b, "- %s\n", line)
	}
	return b.String()
}
