package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// The targets of the issue.
const (
	targetVsKubectl = 10.0 // kubectl/kapply at least
	targetVsFloor   = 2.0  // kapply/floor at most
)

// table is the report: notes, then one row per phase.
type table struct {
	notes   []string
	columns []string
	rows    [][]string
	met     int
	targets int
}

func newTable(cfg config, res *results, notes []string) *table {
	t := &table{columns: []string{"phase"}}
	t.notes = append([]string{
		fmt.Sprintf("%s; %d objects per tool (%d Namespaces, ConfigMaps, Deployments with two containers, headless Services) in %d folders; parallel %d; runs %d (medians)",
			time.Now().Format(time.DateTime), cfg.objects, cfg.namespaces, subdirs, cfg.parallel, cfg.runs),
	}, notes...)
	t.columns = append(t.columns, res.tools...)
	hasKubectl := slices.Contains(res.tools, nameKubectl)
	if hasKubectl {
		t.columns = append(t.columns, "kubectl/kapply")
	}
	t.columns = append(t.columns, "kapply/floor")
	for _, p := range allPhases() {
		t.rows = append(t.rows, t.row(res, p, hasKubectl))
	}
	t.notes = append(t.notes, fmt.Sprintf("targets: kubectl/kapply >= %gx, kapply/floor <= %gx: %d of %d met",
		targetVsKubectl, targetVsFloor, t.met, t.targets))
	return t
}

func (t *table) row(res *results, p phase, hasKubectl bool) []string {
	row := []string{string(p)}
	for _, tool := range res.tools {
		d, ok := res.median(p, tool)
		row = append(row, formatTime(d, ok))
	}
	if hasKubectl {
		row = append(row, t.ratio(res, p, nameKubectl, nameKapply, func(r float64) bool { return r >= targetVsKubectl }))
	}
	return append(row, t.ratio(res, p, nameKapply, nameFloor, func(r float64) bool { return r <= targetVsFloor }))
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
	return b.String()
}
