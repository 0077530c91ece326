// Package shown is how text that came from input (an object's name,
// namespace or kind, a field path, a file path, a context's name) is
// written to a terminal, a GitHub workflow command or a markdown report:
// so that it shows as itself and can neither move the cursor, erase or
// forge a line, start a workflow command, nor add markdown to a report.
// It imports nothing of kapply: every package that prints may use it.
package shown
