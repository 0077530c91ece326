package load

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kapply/kapply/internal/yamldoc"
)

// inputKind is what an input is read from.
type inputKind int

const (
	fileInput  inputKind = iota // a path: a regular file, a FIFO, a device
	stdinInput                  // "-"
	urlInput                    // http:// or https://
)

// stdinSource is the builder's name for standard input (info.Source).
const stdinSource = yamldoc.Stdin

// input is one thing the builder reads for Files, named as the builder
// names the objects read from it.
type input struct {
	source string
	kind   inputKind
}

// listInputs lists what the resource builder reads for files, in its order
// (resource.Builder.FilenameParam): "-" as stdin, http(s) URLs, and for
// each path (a glob pattern when no such path exists) the file, or under a
// directory the files with a manifest extension, in lexical order, in
// subdirectories only when recursive. It returns false, and the builder is
// left to say why, where the builder fails before it reads anything at
// all: kustomize (the builder runs it), a path missing or unreadable, a
// bad pattern or URL, stdin named twice, a first path with nothing to read.
func listInputs(files Files) ([]input, bool) {
	if files.Kustomize != "" {
		return nil, false
	}
	var inputs []input
	stdin := false
	for _, name := range files.Filenames {
		switch {
		case name == "-":
			if stdin {
				return nil, false // resource.StdinMultiUseError
			}
			stdin = true
			inputs = append(inputs, input{source: stdinSource, kind: stdinInput})
		case strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://"):
			u, err := url.Parse(name)
			if err != nil {
				return nil, false
			}
			inputs = append(inputs, input{source: u.String(), kind: urlInput})
		default:
			found, ok := pathInputs(name, files.Recursive)
			inputs = append(inputs, found...)
			if !ok || len(inputs) == 0 { // Builder.Path: "recognized file extensions are..."
				return nil, false
			}
		}
	}
	return inputs, len(inputs) > 0
}

// pathInputs lists the files the builder reads for the path name, as
// Builder.Path and resource.ExpandPathsToFileVisitors find them; false
// where the builder fails.
func pathInputs(name string, recursive bool) ([]input, bool) {
	matches := []string{name}
	if _, err := os.Stat(name); os.IsNotExist(err) {
		if matches, err = filepath.Glob(name); err != nil || len(matches) == 0 {
			return nil, false
		}
	}
	var inputs []input
	for _, root := range matches {
		if _, err := os.Stat(root); err != nil {
			return nil, false
		}
		err := filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
			switch {
			case err != nil:
				return err
			case fi.IsDir() && path != root && !recursive:
				return filepath.SkipDir
			case fi.IsDir(), path != root && !slices.Contains(resource.FileExtensions, filepath.Ext(path)):
				return nil
			}
			inputs = append(inputs, input{source: path, kind: fileInput})
			return nil
		})
		if err != nil {
			return nil, false
		}
	}
	return inputs, true
}
