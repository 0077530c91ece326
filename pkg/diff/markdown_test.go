package diff

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// configMapChange compares a ConfigMap whose value of key changes.
func configMapChange(t *testing.T, ns, name, key, before, after string) Comparison {
	t.Helper()
	live := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns}, "data": map[string]any{key: before}}
	merged := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns}, "data": map[string]any{key: after}}
	c, err := Compare(Object{Name: "v1.ConfigMap." + ns + "." + name, Ref: "configmap/" + name + " -n " + ns,
		Source: "cm.yaml", Live: live, After: merged}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var cutPattern = regexp.MustCompile(`\*\*Cut to fit (\d+) bytes: (\d+) objects? not shown:\*\* (.*)\.\n$`)

func TestMarkdownOf2000ObjectsStaysWithinTheBudgetAndNamesWhatItCut(t *testing.T) {
	var comparisons []Comparison
	for i := range 2000 {
		comparisons = append(comparisons, configMapChange(t, "shop", fmt.Sprintf("cm-%04d", i), "k",
			strings.Repeat("old ", 20), strings.Repeat("new ", 20)))
	}
	for _, budget := range []int{0, 20000, MinMarkdownBytes} {
		out, err := Markdown(comparisons, nil, budget)
		if err != nil {
			t.Fatal(err)
		}
		want := budget
		if want == 0 {
			want = DefaultMarkdownBytes
		}
		if len(out) > want {
			t.Errorf("budget %d: %d bytes", want, len(out))
		}
		if !strings.HasPrefix(out, "### kapply diff\n\n| operation | objects |") || !strings.Contains(out, "| update | 2000 |\n") {
			t.Errorf("budget %d: no summary table first:\n%.300s", want, out)
		}
		m := cutPattern.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("budget %d: no last line naming what was cut:\n...%s", want, out[max(0, len(out)-500):])
		}
		cut, _ := strconv.Atoi(m[2])
		shown := strings.Count(out, "<details>")
		if m[1] != strconv.Itoa(want) || shown+cut != 2000 || shown == 0 && want > MinMarkdownBytes {
			t.Errorf("budget %d: %d shown + %d cut, want 2000 (line %q)", want, shown, cut, m[0])
		}
		// The first object cut is named, and the rest counted.
		first := fmt.Sprintf("update ConfigMap shop/cm-%04d", shown)
		if !strings.HasPrefix(m[3], first) && !strings.HasPrefix(m[3], fmt.Sprintf("and %d more", cut)) {
			t.Errorf("budget %d: cut line does not start with %q: %q", want, first, m[3])
		}
		if cut > 1 && !strings.Contains(m[3], "more") {
			t.Errorf("budget %d: cut line does not count the objects it does not name: %q", want, m[3])
		}
	}
}

func TestMarkdownFitsWhole(t *testing.T) {
	comparisons := []Comparison{
		configMapChange(t, "a", "one", "k", "1", "2"),
		configMapChange(t, "a", "same", "k", "1", "1"),
	}
	out, err := Markdown(comparisons, []Failure{{Identity: Identity{Kind: "Service", Namespace: "a", Name: "bad"}, File: "svc.yaml", Line: 7, Message: "boom"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| create | 0 |", "| update | 1 |", "| unchanged | 1 |", "| prune | 0 |", "| failed | 1 |",
		"<details><summary>update ConfigMap a/one</summary>\n\n```diff\n", "-  k: \"1\"\n+  k: \"2\"\n",
		"<details><summary>failed Service a/bad</summary>\n\n```text\nsvc.yaml:7: boom\n```\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "same") || strings.Contains(out, "Cut to fit") {
		t.Errorf("an unchanged object shown, or a cut line without a cut:\n%s", out)
	}
	if _, err := Markdown(comparisons, nil, MinMarkdownBytes-1); err == nil {
		t.Error("a budget below the minimum was taken")
	}
}

func TestMarkdownFenceCannotBeClosedByAValue(t *testing.T) {
	for _, value := range []string{"```", "````\n```diff", "a`b``c```````d", "```\n</details>\n# pwned", strings.Repeat("`", 40)} {
		c := configMapChange(t, "a", "ticks", "k", "x", value)
		out, err := Markdown([]Comparison{c}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(out, "\n")
		open := -1
		for i, line := range lines {
			if strings.HasPrefix(line, "```") && strings.HasSuffix(line, "diff") {
				open = i
				break
			}
		}
		if open < 0 {
			t.Fatalf("%q: no diff fence:\n%s", value, out)
		}
		fence := strings.TrimSuffix(lines[open], "diff")
		closing := -1
		for i := open + 1; i < len(lines); i++ {
			// CommonMark: a closing fence is a line of at least as many
			// backticks, indented up to three spaces, and nothing else.
			if trimmed := strings.TrimLeft(lines[i], " "); len(lines[i])-len(trimmed) <= 3 && strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "` ") == "" {
				closing = i
				break
			}
		}
		if closing < 0 || lines[closing] != fence || lines[closing+2] != "</details>" {
			t.Errorf("%q: the fence %q closes early or not at all:\n%s", value, fence, out)
		}
		if runs := regexp.MustCompile("`+").FindAllString(value, -1); len(runs) > 0 {
			longest := slices.Max(lengths(runs))
			if len(fence) <= longest {
				t.Errorf("%q: fence %q not longer than its run of %d backticks", value, fence, longest)
			}
		}
	}
}

func TestGithubErrorsEscapeWorkflowCommands(t *testing.T) {
	got := GitHubErrors([]Failure{
		{Identity: Identity{Kind: "ConfigMap", Namespace: "ns", Name: "a"}, File: "dir,x/a:b.yaml", Line: 12, Message: "100% bad\r\n::error::injected"},
		{Identity: Identity{Kind: "Deployment", Name: "b"}, File: "k.yaml", Message: "no line"},
		{File: "", Message: "built in code"},
	})
	want := "::error file=dir%2Cx/a%3Ab.yaml,line=12::ConfigMap ns/a: 100%25 bad%0D%0A::error::injected\n" +
		"::error file=k.yaml::Deployment b: no line\n" +
		"::error::built in code\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func lengths(runs []string) []int {
	out := make([]int, len(runs))
	for i, r := range runs {
		out[i] = len(r)
	}
	return out
}

func TestMarkdownEscapesAFailedFileName(t *testing.T) {
	out, err := Markdown(nil, []Failure{{File: "<img src=x>.yaml", Message: "unreadable"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "<summary>failed <img") || !strings.Contains(out, "<summary>failed &lt;img src=x&gt;.yaml</summary>") {
		t.Errorf("file name not escaped:\n%s", out)
	}
}
