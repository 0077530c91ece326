package shown

import "strings"

// WorkflowMessage is s as the message of a GitHub Actions workflow
// command (`::error ...::MESSAGE`): %, CR and LF escaped as the runner
// reads them (actions/toolkit command.ts, escapeData), so that the
// message cannot end the command's line and start another command.
func WorkflowMessage(s string) string {
	return messageEscapes.Replace(s)
}

// WorkflowProperty is s as the value of a workflow command's property
// (`file=VALUE`): as a message, and : and , which end a property
// (command.ts, escapeProperty).
func WorkflowProperty(s string) string {
	return propertyEscapes.Replace(s)
}

var (
	messageEscapes  = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscapes = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// StartsCommand reports whether a line of output would be read by the
// GitHub Actions runner as a workflow command: it trims the line's
// spaces and looks for "::" at its start.
func StartsCommand(line string) bool {
	return strings.HasPrefix(strings.TrimSpace(line), "::")
}

// NoCommands is text (several lines, none of them kapply's own command)
// with every line the runner would read as a workflow command made
// inert: a backslash before its "::". The runner ends a line at CR as at
// LF, so a CR alone ends a line here too (it is kept).
func NoCommands(text string) string {
	if !strings.Contains(text, "::") {
		return text
	}
	var b strings.Builder
	for len(text) > 0 {
		end := strings.IndexAny(text, "\r\n")
		line, rest := text, ""
		if end >= 0 {
			line, rest = text[:end+1], text[end+1:]
		}
		if StartsCommand(line) {
			at := strings.Index(line, "::")
			line = line[:at] + `\` + line[at:]
		}
		b.WriteString(line)
		text = rest
	}
	return b.String()
}
