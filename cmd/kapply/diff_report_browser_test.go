package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kapply/kapply/internal/testcluster"
)

// chromiumPath is the browser of the HTML report's test: Debian's
// chromium (hack/chromium.sh installs it), or $KAPPLY_CHROMIUM.
func chromiumPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("KAPPLY_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no browser at %s (install it with hack/chromium.sh): %v", path, err)
		}
		t.Skipf("no browser at %s (install it with hack/chromium.sh, or set KAPPLY_CHROMIUM): %v", path, err)
	}
	return path
}

// browser starts headless Chromium with a fresh profile. Without the
// background networking flags it waits on this closed network for
// services it cannot reach.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)), chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true), chromedp.Flag("window-size", "1280,1024"),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses its sandbox to root
	}
	// Generous: the machine running the tests is shared.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelBrowser := chromedp.NewContext(ctx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelBrowser)
	return ctx
}

// visibleObjects are the names of the report's objects not filtered out.
const visibleObjects = `Array.from(document.querySelectorAll("details.object")).filter(o => !o.hidden && o.checkVisibility()).map(o => o.dataset.op + " " + o.querySelector(".name").textContent)`

// TestDiffHTMLReportInChromium opens the report of the scenario (a
// create, two updates, a prune, a Secret, an unchanged Service) in
// headless Chromium, clicks the filters and a collapsed object, and checks
// what is visible, that the script value ran nothing, and keeps a
// screenshot.
func TestDiffHTMLReportInChromium(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := browser(t)
	_, ns, args := reportScenario(t, false)
	r := kapply(t, append(args, "-o", "html")...)
	if r.code != exitDifferences {
		t.Fatalf("diff -o html: exit %d: %s", r.code, r.stderr)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	all := []string{"update ConfigMap " + ns + "/settings", "create ConfigMap " + ns + "/new", "prune ConfigMap " + ns + "/old",
		"update Secret " + ns + "/creds", "unchanged Service " + ns + "/api"}
	check := func(step string, want ...string) {
		t.Helper()
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](visibleObjects))
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: visible %q, want %q", step, got, want)
		}
	}
	click := func(selector string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(selector))); err != nil {
			t.Fatalf("clicking %s: %v", selector, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(chromedp.CSS("#objects"))); err != nil {
		t.Fatalf("loading %s: %v", page, err)
	}
	check("loaded", all...)
	click(`button[data-filter-op="prune"]`)
	check("operation prune", "prune ConfigMap "+ns+"/old")
	click(`button[data-filter-kind="Secret"]`)
	check("prune and Secret")
	click(`button[data-filter-op=""]`)
	check("Secret", "update Secret "+ns+"/creds")
	click(`button[data-filter-kind="ConfigMap"]`)
	click(`button[data-filter-op="update"]`)
	check("update and ConfigMap", "update ConfigMap "+ns+"/settings")

	// The object is collapsed: its diff lines are hidden until it opens.
	const settingsLines = `Array.from(document.querySelectorAll("details.object[data-kind=ConfigMap][data-op=update] .line.add")).filter(l => l.checkVisibility()).map(l => l.querySelector(".text").textContent)`
	if lines, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](settingsLines)); err != nil || len(lines) != 0 {
		t.Errorf("before expanding: visible lines %q (%v), want none", lines, err)
	}
	click(`details.object[data-kind="ConfigMap"][data-op="update"] > summary`)
	lines, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](settingsLines))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "page: <script>document.title='pwned'</script>") }) {
		t.Errorf("expanded: the added lines %q do not show the script value as text", lines)
	}
	why, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("details.object[data-kind=ConfigMap][data-op=update] .line.add[title]").title`))
	if err != nil || !strings.Contains(why, "data.page") || !strings.Contains(why, "set by file") {
		t.Errorf("the changed line's reason on hover: %q (%v)", why, err)
	}
	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.title`))
	if err != nil || title != "kapply diff" {
		t.Errorf("document.title %q (%v): the script value ran", title, err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := os.Getenv("KAPPLY_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "diff-report.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the report: %s", path)
}
