package diff

import (
	"fmt"
	"strings"

	"github.com/kapply/kapply/pkg/shown"
)

// GitHubErrors are GitHub Actions workflow commands, one per failure:
// `::error file=F,line=L::MESSAGE`, which the pull request shows on the
// line of the object's document. Properties and message are escaped as
// the runner reads them (actions/toolkit's command.ts), so that a message
// cannot end the command early or start another one.
func GitHubErrors(failures []Failure) string {
	var b strings.Builder
	for _, f := range failures {
		var props []string
		if f.File != "" {
			props = append(props, "file="+shown.WorkflowProperty(shown.Text(f.File)))
			if f.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", f.Line))
			}
		}
		message := f.Message
		if f.Kind != "" || f.Name != "" {
			message = f.Identity.String() + ": " + message
		}
		fmt.Fprintf(&b, "::error %s::%s\n", strings.Join(props, ","), shown.WorkflowMessage(message))
	}
	return strings.ReplaceAll(b.String(), "::error ::", "::error::")
}
