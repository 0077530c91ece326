package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kapply/kapply/internal/testcluster"
)

// requestLog records the requests a proxy sees, and answers the ones fail
// picks with its fault.
type requestLog struct {
	mu       sync.Mutex
	requests []*url.URL
	fail     func(*http.Request) (testcluster.Fault, bool)
}

func (l *requestLog) rule(req *http.Request, _ int64) testcluster.Fault {
	l.mu.Lock()
	defer l.mu.Unlock()
	if req.Method == http.MethodGet {
		l.requests = append(l.requests, req.URL)
	}
	if l.fail != nil {
		if fault, ok := l.fail(req); ok {
			l.fail = nil // once
			return fault
		}
	}
	return testcluster.Pass
}

// take returns the query of each GET of path since the last take (the
// LISTs of a collection; WATCHes are left out), and how many GETs of
// single objects in it there were.
func (l *requestLog) take(path string) (lists []url.Values, gets int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, u := range l.requests {
		switch {
		case u.Query().Get("watch") == "true":
		case u.Path == path:
			lists = append(lists, u.Query())
		case strings.HasPrefix(u.Path, path+"/"):
			gets++
		}
	}
	l.requests = nil
	return lists, gets
}

// describeLists is the LISTs' limit and continue, for messages.
func describeLists(lists []url.Values) string {
	var parts []string
	for _, q := range lists {
		part := "limit=" + q.Get("limit")
		if q.Has("continue") {
			part += "&continue=…"
		}
		if q.Has("labelSelector") {
			part += "&labelSelector=" + q.Get("labelSelector")
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " | ")
}

// checkPaged fails unless lists are one LIST read in pages of limit: the
// first without a continue token, each next one with one.
func checkPaged(t *testing.T, what string, lists []url.Values, pages int, limit string) {
	t.Helper()
	ok := len(lists) == pages
	for i, q := range lists {
		ok = ok && q.Get("limit") == limit && (i == 0) == (q.Get("continue") == "")
	}
	if !ok {
		t.Errorf("%s: LISTs %s; want %d pages with limit=%s, each after the first with a continue token", what, describeLists(lists), pages, limit)
	}
}

// TestApplyListsLiveObjectsInPages: a namespace's 1200 ConfigMaps are read
// by a LIST in pages of kubectl's 500 (limit, then continue), for apply,
// diff and apply --wait alike; every object is found (1200 unchanged, no
// GET of its own). A continue token the server no longer honours (410
// Expired, injected by the proxy) restarts the LIST, and the run is as
// right; --chunk-size=0 lists in one answer.
func TestApplyListsLiveObjectsInPages(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	var manifest strings.Builder
	for i := range 1200 {
		fmt.Fprintf(&manifest, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%04d}\ndata: {a: b}\n", i)
	}
	dir := writeFiles(t, map[string]string{"all.yaml": manifest.String()})
	if res := kapply(t, "apply", "-f", dir, "-n", ns); res.code != 0 {
		t.Fatalf("creating: exit %d: %s", res.code, res.stderr)
	}
	proxy := cluster.StartProxy(t)
	log := &requestLog{}
	proxy.SetRule(log.rule)
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	unchanged := func(what string, res result) {
		t.Helper()
		if res.code != 0 || strings.Count(res.stdout, " unchanged\n") != 1200 {
			t.Errorf("%s: exit %d, %d unchanged of 1200; stderr:\n%s", what, res.code, strings.Count(res.stdout, " unchanged\n"), res.stderr)
		}
	}

	unchanged("apply", kapplyVia(t, proxy.Kubeconfig, "apply", "-f", dir, "-n", ns))
	lists, gets := log.take(path)
	checkPaged(t, "apply", lists, 3, "500")
	if gets != 0 {
		t.Errorf("apply: %d GETs of single ConfigMaps; the LIST found them all", gets)
	}

	if res := kapplyVia(t, proxy.Kubeconfig, "diff", "-f", dir, "-n", ns); res.code != 0 || res.stdout != "" {
		t.Errorf("diff: exit %d, stdout %q, stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	lists, _ = log.take(path)
	checkPaged(t, "diff", lists, 3, "500")

	// apply --wait reads the ConfigMaps again, to see them ready.
	unchanged("apply --wait", kapplyVia(t, proxy.Kubeconfig, "apply", "-f", dir, "-n", ns, "--wait"))
	lists, _ = log.take(path)
	if len(lists) != 6 {
		t.Errorf("apply --wait: LISTs %s; want apply's 3 pages, then the wait's 3", describeLists(lists))
	} else {
		checkPaged(t, "apply --wait (apply's LIST)", lists[:3], 3, "500")
		checkPaged(t, "apply --wait (the wait's LIST)", lists[3:], 3, "500")
	}

	log.mu.Lock()
	log.fail = func(req *http.Request) (testcluster.Fault, bool) {
		return testcluster.Fault{Status: http.StatusGone, Reason: "Expired"}, req.URL.Path == path && req.URL.Query().Get("continue") != ""
	}
	log.mu.Unlock()
	unchanged("apply after an expired continue token", kapplyVia(t, proxy.Kubeconfig, "apply", "-f", dir, "-n", ns))
	lists, gets = log.take(path)
	if len(lists) != 5 || lists[1].Get("continue") == "" || lists[2].Get("continue") != "" {
		t.Errorf("expired continue token: LISTs %s; want the first page, its next refused, then the LIST again from the start in 3 pages", describeLists(lists))
	} else {
		checkPaged(t, "the LIST restarted", lists[2:], 3, "500")
	}
	if gets != 0 {
		t.Errorf("expired continue token: %d GETs of single ConfigMaps; the restarted LIST found them all", gets)
	}

	unchanged("apply --chunk-size=0", kapplyVia(t, proxy.Kubeconfig, "apply", "-f", dir, "-n", ns, "--chunk-size=0"))
	lists, _ = log.take(path)
	if len(lists) != 1 || lists[0].Has("limit") || lists[0].Has("continue") {
		t.Errorf("--chunk-size=0: LISTs %s; want one, without limit", describeLists(lists))
	}
}

// TestPruneListsCandidatesInPages: pruning's LIST of the set's members is
// paged as --chunk-size says, and finds the members on every page.
func TestPruneListsCandidatesInPages(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	objects := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\ndata: {a: b}\n", i)
		}
		return b.String()
	}
	dir := writeFiles(t, map[string]string{"all.yaml": objects(7)})
	if res := kapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop"); res.code != 0 {
		t.Fatalf("creating: exit %d: %s", res.code, res.stderr)
	}
	dir = writeFiles(t, map[string]string{"all.yaml": objects(2)})
	proxy := cluster.StartProxy(t)
	log := &requestLog{}
	proxy.SetRule(log.rule)
	res := kapplyVia(t, proxy.Kubeconfig, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop", "--chunk-size=2")
	if res.code != 0 || strings.Count(res.stdout, " pruned\n") != 5 {
		t.Errorf("exit %d, %d pruned of 5; stdout:\n%s\nstderr:\n%s", res.code, strings.Count(res.stdout, " pruned\n"), res.stdout, res.stderr)
	}
	lists, _ := log.take("/api/v1/namespaces/" + ns + "/configmaps")
	checkPaged(t, "prune", lists, 4, "2")
	for _, q := range lists {
		if !strings.HasPrefix(q.Get("labelSelector"), "applyset.kubernetes.io/part-of=") {
			t.Errorf("prune's LIST without the set's selector: %v", q)
		}
	}
}

// TestApplyDiffStatusWithOnlyGetAndPatch: a user whose Role allows get and
// patch of named ConfigMaps, and no list, applies, diffs and reads the
// status of them as kubectl lets it: the LIST kapply would read them with
// is refused (403), and each is read by a GET instead.
func TestApplyDiffStatusWithOnlyGetAndPatch(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	objects := func(value string) string {
		var b strings.Builder
		for i := range 5 {
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\ndata: {a: %s}\n", i, value)
		}
		return b.String()
	}
	if res := kapply(t, "apply", "-f", writeFiles(t, map[string]string{"all.yaml": objects("one")}), "-n", ns); res.code != 0 {
		t.Fatalf("creating: exit %d: %s", res.code, res.stderr)
	}
	kubeconfig := cluster.UserKubeconfig(t, ns, "named-only", []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "patch"},
		ResourceNames: []string{"c0", "c1", "c2", "c3", "c4"},
	}})
	dir := writeFiles(t, map[string]string{"all.yaml": objects("two")})

	res := kapplyVia(t, kubeconfig, "diff", "-f", dir, "-n", ns)
	if res.code != 1 || strings.Count(res.stdout, "+  a: two") != 5 {
		t.Errorf("diff: exit %d (want 1: differences), %d of 5 objects changed; stdout:\n%s\nstderr:\n%s", res.code, strings.Count(res.stdout, "+  a: two"), res.stdout, res.stderr)
	}
	res = kapplyVia(t, kubeconfig, "apply", "-f", dir, "-n", ns)
	if res.code != 0 || strings.Count(res.stdout, " configured\n") != 5 {
		t.Errorf("apply: exit %d, %d of 5 configured; stdout:\n%s\nstderr:\n%s", res.code, strings.Count(res.stdout, " configured\n"), res.stdout, res.stderr)
	}
	res = kapplyVia(t, kubeconfig, "status", "-f", dir, "-n", ns)
	if res.code != 0 || strings.Count(res.stdout, ": in step with the last apply;") != 5 {
		t.Errorf("status: exit %d; stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	res = kapplyVia(t, kubeconfig, "apply", "-f", dir, "-n", ns)
	if res.code != 0 || strings.Count(res.stdout, " unchanged\n") != 5 {
		t.Errorf("apply again: exit %d, %d of 5 unchanged; stdout:\n%s\nstderr:\n%s", res.code, strings.Count(res.stdout, " unchanged\n"), res.stdout, res.stderr)
	}
}
