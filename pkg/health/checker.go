package health

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/google/cel-go/cel"
	celtypes "github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kapply/kapply/pkg/secretmask"
)

// Reasons of the statuses a Checker decides.
const (
	// ReasonInProgress: the rule's inProgress expression is true.
	ReasonInProgress = "HealthInProgress"
	// ReasonFailed: the rule's failed expression is true.
	ReasonFailed = "HealthFailed"
	// ReasonCurrent: the rule's current expression is true.
	ReasonCurrent = "HealthCurrent"
	// ReasonNotCurrent: no expression of the rule is true yet.
	ReasonNotCurrent = "HealthNotCurrent"
	// ReasonEvaluationFailed: an expression could not be evaluated on the
	// object (a field it reads is missing, or its result is no bool).
	ReasonEvaluationFailed = "HealthEvaluationFailed"
	// ReasonGenerationNotObserved: status.observedGeneration is not
	// metadata.generation; the expressions are not asked.
	ReasonGenerationNotObserved = "GenerationNotObserved"
)

// Checker holds compiled rules, one per group and kind. It is safe for
// concurrent use (cel.Program is).
type Checker struct {
	rules map[schema.GroupKind]*compiledRule
}

type compiledRule struct {
	// exprs are in Flux's order of evaluation: inProgress, failed,
	// current; the rule's empty expressions are left out.
	exprs []compiledExpr
}

type compiledExpr struct {
	field  string // "inProgress", "failed" or "current"
	source string
	status kstatus.Status
	reason string
	prog   cel.Program
}

// Compile compiles every expression of rules once, in Kubernetes' CEL
// environment for the default compatibility version (what a CRD
// validation rule written today may use: the strings, lists, sets, regex,
// quantity, url, ip, cidr, semver and format libraries, optional types,
// and the per-call cost limit). A rule that cannot be used is a
// *RuleError naming it, its field and CEL's message.
//
// The expressions are parsed, not type-checked, as Flux does
// (fluxcd/pkg runtime/cel NewStatusEvaluator): an object's top-level
// fields are its variables, and a CRD may have any, so no variable is
// declared. A syntax error or an unknown macro is a compile error; a
// field an object lacks is an evaluation error of that object.
func Compile(rules []Rule) (*Checker, error) {
	if err := refuseDuplicates(rules, ""); err != nil {
		return nil, err
	}
	env := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).NewExpressionsEnv()
	c := &Checker{rules: make(map[schema.GroupKind]*compiledRule, len(rules))}
	for i, r := range rules {
		cr := &compiledRule{}
		for _, e := range []compiledExpr{
			{field: "inProgress", source: r.InProgress, status: kstatus.InProgressStatus, reason: ReasonInProgress},
			{field: "failed", source: r.Failed, status: kstatus.FailedStatus, reason: ReasonFailed},
			{field: "current", source: r.Current, status: kstatus.CurrentStatus, reason: ReasonCurrent},
		} {
			fail := func(err error) error {
				return &RuleError{Path: fmt.Sprintf("[%d]", i), APIVersion: r.APIVersion, Kind: r.Kind, Field: e.field, Err: err}
			}
			if e.source == "" {
				if e.field == "current" {
					return nil, fail(fmt.Errorf("is required"))
				}
				continue
			}
			ast, issues := env.Parse(e.source)
			if issues.Err() != nil {
				return nil, fail(fmt.Errorf("compiling: %w", issues.Err()))
			}
			// Checked for interruption every CheckFrequency iterations of a
			// comprehension, as the API server does, so that evaluation's
			// deadline (evaluationTimeout) stops it.
			prog, err := env.Program(ast, cel.InterruptCheckFrequency(celconfig.CheckFrequency))
			if err != nil {
				return nil, fail(fmt.Errorf("compiling: %w", err))
			}
			e.prog = prog
			cr.exprs = append(cr.exprs, e)
		}
		c.rules[r.groupKind()] = cr
	}
	return c, nil
}

// Status is the object's status by the rule for its group and kind, with
// a reason and a message naming the expression that decided; ok is false
// when no rule is for the object's kind (kstatus decides then).
//
// As Flux evaluates (RFC-0009, fluxcd/pkg runtime/cel StatusEvaluator):
// an object whose status.observedGeneration is set and differs from
// metadata.generation is InProgress without asking the expressions; else
// inProgress, failed and current are evaluated in that order, and the
// first that is true decides (InProgress, Failed, Current); none true is
// InProgress (keep waiting).
//
// A field an expression reads that the object lacks is an evaluation
// error, not false: CEL has no implicit null, and Flux adds no optional
// handling (status.phase on an object without status fails with "no such
// attribute(s): status.phase", on one whose status lacks phase with "no
// such key: phase"). The rule guards with has(status.phase) or
// status.?phase.orValue("") where it means "not yet" — though has() does
// not save a missing top-level field, which is a variable never bound.
// Flux's status reader turns the error into Unknown and polls on until
// its timeout; here an evaluation error is InProgress with the error as
// the message, so the wait goes on until its timeout too, and says why.
func (c *Checker) Status(obj *unstructured.Unstructured) (status kstatus.Status, reason, message string, ok bool) {
	status, reason, message, ok = c.status(obj)
	// CEL's errors may quote a value read (a failed conversion does), and
	// an expression may compare with one: a Secret's never shows.
	return status, reason, secretmask.Text(message, obj.Object), ok
}

func (c *Checker) status(obj *unstructured.Unstructured) (status kstatus.Status, reason, message string, ok bool) {
	rule := c.rules[obj.GroupVersionKind().GroupKind()]
	if rule == nil {
		return "", "", "", false
	}
	content := obj.UnstructuredContent()
	if observed, found, err := unstructured.NestedInt64(content, "status", "observedGeneration"); err == nil && found {
		if generation := obj.GetGeneration(); observed != generation {
			return kstatus.InProgressStatus, ReasonGenerationNotObserved,
				fmt.Sprintf("status.observedGeneration %d is not metadata.generation %d", observed, generation), true
		}
	}
	for _, e := range rule.exprs {
		val, err := e.eval(content)
		if err != nil {
			return kstatus.InProgressStatus, ReasonEvaluationFailed,
				fmt.Sprintf("evaluating the %s expression %s: %v", e.field, quoteExpr(e.source), err), true
		}
		isTrue, isBool := val.(celtypes.Bool)
		if !isBool {
			// The value is not shown: a message names the expression.
			return kstatus.InProgressStatus, ReasonEvaluationFailed,
				fmt.Sprintf("the %s expression %s is a %s, not a bool", e.field, quoteExpr(e.source), val.Type().TypeName()), true
		}
		if isTrue {
			return e.status, e.reason, fmt.Sprintf("the %s expression %s is true", e.field, quoteExpr(e.source)), true
		}
	}
	current := rule.exprs[len(rule.exprs)-1]
	return kstatus.InProgressStatus, ReasonNotCurrent, fmt.Sprintf("the current expression %s is not true yet", quoteExpr(current.source)), true
}

// evaluationTimeout bounds one evaluation of one expression. The per-call
// cost limit of Kubernetes' environment bounds the work, not the time: a
// comprehension over a long list ran for over a minute on a loaded
// machine before the limit stopped it, and the wait reads its watch
// events on the goroutine that asks. An expression stopped by it is an
// evaluation error (in progress), as any other.
const evaluationTimeout = time.Second

func (e *compiledExpr) eval(content map[string]any) (ref.Val, error) {
	ctx, cancel := context.WithTimeout(context.Background(), evaluationTimeout)
	defer cancel()
	val, _, err := e.prog.ContextEval(ctx, content)
	return val, err
}

// quoteExpr is an expression as a message shows it: between backticks,
// its quotes as written; Go-quoted when it holds a backtick or a
// character that is not printable (a line break of a YAML block), so
// that it stays on the message's line.
func quoteExpr(source string) string {
	if strings.ContainsRune(source, '`') || strings.ContainsFunc(source, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(source)
	}
	return "`" + source + "`"
}
