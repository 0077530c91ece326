package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/fleet"
	"github.com/kapply/kapply/pkg/shown"
)

// fleetOutput is the output of a run over several contexts: each cluster's
// lines prefixed with its context, whole lines only, and the matrix at the
// end.
type fleetOutput struct {
	streams  genericiooptions.IOStreams
	out, err io.Writer
	stdin    func() io.Reader
	mu       sync.Mutex
	// open are the writers of the clusters running, closed when each
	// finishes (or is given up) so that nothing it prints later shows.
	open map[string][]*prefixedLines
	// unprinted: a cluster's last partial line could not be written.
	unprinted bool
	// jsonLines: stdout's lines are -o events, not prefixed.
	jsonLines bool
	// command names the command in -o events lines.
	command string
}

// jsonLines: stdout carries -o events, JSON objects whose context is a
// field (a prefix would make them no longer JSON); lines stay whole.
func newFleetOutput(streams genericiooptions.IOStreams, clusters int, jsonLines bool) *fleetOutput {
	return &fleetOutput{
		streams:   streams,
		out:       &lockedWriter{w: streams.Out},
		err:       &lockedWriter{w: streams.ErrOut},
		stdin:     newStdinShare(streams.In),
		open:      make(map[string][]*prefixedLines, clusters),
		jsonLines: jsonLines,
	}
}

// streamsFor is one cluster's streams.
func (o *fleetOutput) streamsFor(context string) genericiooptions.IOStreams {
	prefix := contextPrefix(context)
	outPrefix := prefix
	if o.jsonLines {
		outPrefix = ""
	}
	out := &prefixedLines{dst: o.out, prefix: outPrefix, context: context}
	errOut := &prefixedLines{dst: o.err, prefix: prefix, context: context}
	o.mu.Lock()
	o.open[context] = []*prefixedLines{out, errOut}
	o.mu.Unlock()
	return genericiooptions.IOStreams{In: o.stdin(), Out: out, ErrOut: errOut}
}

// eventTime is how cluster start and finish lines give their time.
const eventTime = "2006-01-02T15:04:05.000Z07:00"

// onEvent prints a line as each cluster starts and finishes, with its
// wave and time (the order of a rollout shows), and closes a finished
// cluster's writers.
func (o *fleetOutput) onEvent(e fleet.Event) {
	prefix := contextPrefix(e.Context)
	switch e.Kind {
	case fleet.ClusterStarted:
		o.eventLine(fmt.Sprintf("%sstarted (wave %d, %s)\n", prefix, e.Wave, e.Time.Format(eventTime)))
	case fleet.ClusterFinished:
		o.closeWriters(e.Context)
		state := "finished"
		if e.Result.ClusterFailed {
			state = "failed"
		}
		o.eventLine(fmt.Sprintf("%s%s (wave %d, %s, after %s)\n", prefix, state, e.Wave, e.Time.Format(eventTime), e.Result.Duration.Round(10*time.Millisecond)))
	case fleet.ClusterNotStarted:
		o.notStartedEvents(e)
	}
}

// notStartedEvents writes, with -o events, a cluster's lines when it is
// not started: an ErrorType saying why and a failed summary, so that
// every context of the run ends with its summary on stdout too.
func (o *fleetOutput) notStartedEvents(e fleet.Event) {
	if !o.jsonLines {
		return
	}
	w := newEventWriter(&prefixedLines{dst: o.out, context: e.Context}, o.command, kcluster.NoDryRun)
	_ = w.finish(e.Result.Err) // the error is the cluster's, in the matrix; a lost line is writeErr
	if w.writeErr != nil {
		o.setUnprinted()
	}
}

// eventLine prints one line of onEvent; one that cannot be written fails
// the run.
func (o *fleetOutput) eventLine(line string) {
	if _, err := io.WriteString(o.err, line); err != nil {
		o.setUnprinted()
	}
}

func (o *fleetOutput) setUnprinted() {
	o.mu.Lock()
	o.unprinted = true
	o.mu.Unlock()
}

// closeWriters closes a finished cluster's writers.
func (o *fleetOutput) closeWriters(context string) {
	o.mu.Lock()
	writers := o.open[context]
	delete(o.open, context)
	o.mu.Unlock()
	for _, w := range writers {
		if err := w.close(); err != nil {
			o.setUnprinted()
		}
	}
}

// finish prints the matrix and returns the run's exit: the worst code of
// the clusters'.
func (o *fleetOutput) finish(results []fleet.Result) error {
	worst, failed := fleet.Worst(results)
	if o.unprinted {
		worst = max(worst, exitFailed)
	}
	across := o.out
	if o.jsonLines {
		across = o.err // stdout stays JSON lines; the comparison is for people
	}
	if err := printAcross(across, results); err != nil {
		return withCode(max(worst, exitFailed), fmt.Errorf("printing the states across clusters: %w", err))
	}
	if err := printMatrix(o.err, results); err != nil {
		return withCode(max(worst, exitFailed), err)
	}
	switch {
	case failed > 0:
		return withCode(worst, fmt.Errorf("%d of %d cluster(s) failed", failed, len(results)))
	case worst > 0:
		return withCode(worst, nil)
	}
	return nil
}

// printMatrix prints a row per cluster: its counts, readiness, duration
// and first error.
func printMatrix(w io.Writer, results []fleet.Result) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONTEXT\tWAVE\tCREATED\tCONFIGURED\tUNCHANGED\tPRUNED\tDELETED\tFAILED\tREADY\tDURATION\tFIRST ERROR")
	for _, r := range results {
		fmt.Fprintln(tw, matrixRow(r))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("printing the matrix: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("printing the matrix: %w", err)
	}
	return nil
}

// matrixRow is one cluster's row, tab-separated.
func matrixRow(r fleet.Result) string {
	firstError := "-"
	if r.Err != nil {
		firstError = oneLine(r.Err.Error(), 200)
	}
	if r.NotStarted {
		return strings.Join([]string{shownContext(r.Context), "-", "-", "-", "-", "-", "-", "-", "-", "-", firstError}, "\t")
	}
	return fmt.Sprintf("%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s", shownContext(r.Context), r.Wave, r.Created, r.Configured, r.Unchanged,
		r.Pruned, r.Deleted, r.Failed, r.Ready, r.Duration.Round(10*time.Millisecond), firstError)
}

// oneLine is s on one line, cut to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// prefixedLines writes whole lines to dst, each behind prefix, so that
// clusters writing at once never interleave within a line; a partial line
// waits for its end (or close).
type prefixedLines struct {
	dst    io.Writer
	prefix string
	// context is the cluster's, which -o events writes in a field.
	context string
	mu      sync.Mutex
	partial []byte
	closed  bool
}

func (p *prefixedLines) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		// A cluster given up after its deadline: its late output is not
		// part of the run's.
		return len(b), nil
	}
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		if err := p.emit(p.partial[:i+1]); err != nil {
			return len(b), err
		}
		p.partial = append(p.partial[:0], p.partial[i+1:]...)
	}
	return len(b), nil
}

// emit writes one line with its prefix in a single write.
func (p *prefixedLines) emit(line []byte) error {
	buf := make([]byte, 0, len(p.prefix)+len(line))
	buf = append(append(buf, p.prefix...), line...)
	_, err := p.dst.Write(buf)
	return err
}

// fleetContext names the cluster the writer is one of a run over several
// contexts for: -o events stamps it on each line.
func (p *prefixedLines) fleetContext() string { return p.context }

// close ends a partial line and drops whatever comes later.
func (p *prefixedLines) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	if len(p.partial) > 0 && !p.closed {
		err = p.emit(append(p.partial, '\n'))
	}
	p.partial, p.closed = nil, true
	return err
}

// contextPrefix is the prefix of a context's lines of text.
func contextPrefix(context string) string { return "[" + shownContext(context) + "] " }

// shownContext is a context's name as text output shows it: quoted when
// it holds a control character or a rune not printed as itself, so that
// a kubeconfig's name can neither forge another context's line (a
// newline) nor reach the terminal as an escape sequence.
func shownContext(name string) string { return shown.Text(name) }

// onceReader reads stdin once for all clusters ("-f -" in each): the first
// cluster to read takes it whole, and every cluster reads that copy.
type onceReader struct {
	read func() ([]byte, error)
	rest []byte
	init bool
}

func newStdinShare(in io.Reader) func() io.Reader {
	all := sync.OnceValues(func() ([]byte, error) { return io.ReadAll(in) })
	return func() io.Reader { return &onceReader{read: all} }
}

func (r *onceReader) Read(p []byte) (int, error) {
	if !r.init {
		data, err := r.read()
		if err != nil {
			return 0, err
		}
		r.rest, r.init = data, true
	}
	if len(r.rest) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}
