package main

import (
	"strings"
	"testing"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestExportAdoptApplyUnchanged is the doc's export → record → apply, with
// a Deployment made by kubectl create: the exported file is clean, adopt
// records it, and applying it changes nothing.
func TestExportAdoptApplyUnchanged(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	kubectl(t, "create", "deployment", "web", "--image=nginx:1.27", "--port=80", "-n", ns)
	kubectl(t, "expose", "deployment", "web", "--port=80", "-n", ns)

	r := mustRun(t, "export", "deployment/web", "service/web", "-n", ns)
	for _, gone := range []string{"status:", "uid:", "resourceVersion:", "managedFields:", "creationTimestamp:", "generation:",
		"progressDeadlineSeconds:", "revisionHistoryLimit:", "rollingUpdate:", "terminationMessagePath:", "terminationMessagePolicy:",
		"imagePullPolicy:", "dnsPolicy:", "restartPolicy:", "schedulerName:", "securityContext:", "terminationGracePeriodSeconds:",
		"sessionAffinity:", "clusterIP:", "clusterIPs:", "ipFamilies:", "ipFamilyPolicy:", "internalTrafficPolicy:", "protocol:", "type: ClusterIP"} {
		if strings.Contains(r.stdout, gone) {
			t.Errorf("export kept %q:\n%s", gone, r.stdout)
		}
	}
	for _, kept := range []string{"name: web", "image: nginx:1.27", "replicas: 1", "containerPort: 80", "namespace: " + ns, "\n---\n"} {
		if !strings.Contains(r.stdout, kept) {
			t.Errorf("export lacks %q:\n%s", kept, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "note: deployment/web: kept fields that may be server defaults: spec.replicas=1") {
		t.Errorf("export notes:\n%s", r.stderr)
	}

	dir := writeFiles(t, map[string]string{"web.yaml": r.stdout})
	adopt := mustRun(t, "adopt", "-f", dir, "-n", ns)
	if strings.Count(adopt.stdout, "the next apply changes nothing") != 2 {
		t.Errorf("adopt output:\n%s", adopt.stdout)
	}
	apply := mustRun(t, "apply", "-f", dir, "-n", ns)
	if apply.stdout != "deployment.apps/web unchanged\nservice/web unchanged\n" {
		t.Errorf("apply of the exported file: want unchanged, got:\n%s%s", apply.stdout, apply.stderr)
	}
	if diff := kapply(t, "diff", "-f", dir, "-n", ns); diff.code != 0 {
		t.Errorf("diff of the exported file: exit %d\n%s%s", diff.code, diff.stdout, diff.stderr)
	}
}

// TestExportBadInput: an object that does not exist is exit 2.
func TestExportBadInput(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	r := kapply(t, "export", "deployment/nowhere", "-n", ns)
	if r.code != exitError || !strings.Contains(r.stderr, `"nowhere" not found`) || r.stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
