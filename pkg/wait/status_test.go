package wait_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/wait"
)

// TestComputeStatusReasons: the reason and message come from the object's
// own condition that explains the status, where kstatus has its own words.
func TestComputeStatusReasons(t *testing.T) {
	for _, tc := range []struct {
		name, obj       string
		status          kstatus.Status
		reason, message string
	}{{
		name: "job failed",
		obj: `{apiVersion: batch/v1, kind: Job, metadata: {name: j, generation: 1},
			status: {startTime: "2026-01-01T00:00:00Z", failed: 1, conditions: [
			  {type: FailureTarget, status: "True", reason: BackoffLimitExceeded, message: "Job has reached the specified backoff limit"},
			  {type: Failed, status: "True", reason: BackoffLimitExceeded, message: "Job has reached the specified backoff limit"}]}}`,
		status: kstatus.FailedStatus, reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit",
	}, {
		name: "rollout past its deadline",
		obj: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 1}, spec: {replicas: 1},
			status: {observedGeneration: 1, conditions: [
			  {type: Progressing, status: "False", reason: ProgressDeadlineExceeded, message: "ReplicaSet \"d-1\" has timed out progressing."}]}}`,
		status: kstatus.FailedStatus, reason: "ProgressDeadlineExceeded", message: `ReplicaSet "d-1" has timed out progressing.`,
	}, {
		name: "custom resource not ready",
		obj: `{apiVersion: example.com/v1, kind: Gadget, metadata: {name: g, generation: 2},
			status: {observedGeneration: 2, conditions: [{type: Ready, status: "False", reason: Provisioning, message: "waiting for a disk"}]}}`,
		status: kstatus.InProgressStatus, reason: "Provisioning", message: "waiting for a disk",
	}, {
		name: "custom resource, generation not observed",
		obj: `{apiVersion: example.com/v1, kind: Gadget, metadata: {name: g, generation: 3},
			status: {observedGeneration: 2, conditions: [{type: Ready, status: "True"}]}}`,
		status: kstatus.InProgressStatus, reason: "LatestGenerationNotObserved", message: "Gadget generation is 3, but latest observed generation is 2",
	}, {
		name:   "deployment without status",
		obj:    `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 1}, spec: {replicas: 2}}`,
		status: kstatus.InProgressStatus, reason: "LessReplicas", message: "Replicas: 0/2",
	}, {
		name:   "config map",
		obj:    `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`,
		status: kstatus.CurrentStatus, message: "Resource is always ready",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			js, err := yaml.YAMLToJSON([]byte(tc.obj))
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(js); err != nil {
				t.Fatal(err)
			}
			s, reason, message := wait.ComputeStatus(u)
			if s != tc.status || reason != tc.reason || message != tc.message {
				t.Errorf("got %s %q %q, want %s %q %q", s, reason, message, tc.status, tc.reason, tc.message)
			}
		})
	}
}
