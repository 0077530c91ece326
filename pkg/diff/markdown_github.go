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
		message := f.Message
		if f.Kind != "" || f.Name != "" {
			message = f.Identity.String() + ": " + message
		}
		b.WriteString(workflowCommand("error", f.File, f.Line, message))
	}
	return b.String()
}

// workflowCommand is one `::COMMAND file=F,line=L::MESSAGE` line (the
// properties left out when the file is unknown, the line when 0).
func workflowCommand(command, file string, line int, message string) string {
	var props []string
	if file != "" {
		props = append(props, "file="+shown.WorkflowProperty(shown.Text(file)))
		if line > 0 {
			props = append(props, fmt.Sprintf("line=%d", line))
		}
	}
	if len(props) == 0 {
		return fmt.Sprintf("::%s::%s\n", command, shown.WorkflowMessage(message))
	}
	return fmt.Sprintf("::%s %s::%s\n", command, strings.Join(props, ","), shown.WorkflowMessage(message))
}
