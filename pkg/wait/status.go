package wait

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// ComputeStatus is kstatus's status of obj, with the reason and message of
// the object's own condition that explains it where there is one.
func ComputeStatus(obj *unstructured.Unstructured) (s kstatus.Status, reason, message string) {
	res, err := kstatus.Compute(obj)
	if err != nil {
		return kstatus.UnknownStatus, "StatusUnreadable", err.Error()
	}
	if res.Status == kstatus.CurrentStatus {
		return res.Status, "", res.Message
	}
	reason, message = "", res.Message
	if len(res.Conditions) > 0 {
		reason = res.Conditions[0].Reason
		if res.Conditions[0].Message != "" {
			message = res.Conditions[0].Message
		}
	}
	if c, ok := explainingCondition(obj, res.Status); ok {
		if c.Reason != "" {
			reason = c.Reason
		}
		if c.Message != "" {
			message = c.Message
		}
	}
	return res.Status, reason, message
}

// explainingCondition is the object's condition behind a status that is
// not Current: for Failed, a Stalled or Failed condition that is True, or a
// Progressing one past its deadline; for InProgress, a Ready condition that
// is not True.
func explainingCondition(obj *unstructured.Unstructured, s kstatus.Status) (kstatus.BasicCondition, bool) {
	objc, err := kstatus.GetObjectWithConditions(obj.Object)
	if err != nil {
		return kstatus.BasicCondition{}, false
	}
	for _, c := range objc.Status.Conditions {
		switch s {
		case kstatus.FailedStatus:
			if (c.Type == "Stalled" || c.Type == "Failed") && c.Status == "True" ||
				c.Type == "Progressing" && c.Reason == "ProgressDeadlineExceeded" {
				return c, true
			}
		case kstatus.InProgressStatus:
			if c.Type == "Ready" && c.Status != "True" {
				return c, true
			}
		}
	}
	return kstatus.BasicCondition{}, false
}
