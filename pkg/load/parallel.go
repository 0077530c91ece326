package load

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
)

// readInfos reads the objects of the files as the resource builder does:
// local manifest files with readLocal (each read once, on every core),
// anything else (stdin, URLs, kustomize, a missing path) with the builder.
// checked holds the documents refuseLossyDocuments refuses of each file
// readLocal read.
func readInfos(getter genericclioptions.RESTClientGetter, files Files, selector string) (infos []*resource.Info, errs []error, checked map[string][]lossyDocument) {
	paths := localManifests(files)
	if paths == nil {
		infos, errs = build(getter, files, selector)
		return infos, errs, nil
	}
	return readLocal(getter, files, paths, selector)
}

// build runs the resource builder once.
func build(getter genericclioptions.RESTClientGetter, files Files, selector string) ([]*resource.Info, []error) {
	builder := resource.NewBuilder(getter).
		Unstructured().
		Local().
		ContinueOnError()
	if selector != "" {
		builder = builder.LabelSelectorParam(selector)
	}
	result := builder.
		FilenameParam(false, &resource.FilenameOptions{
			Filenames: files.Filenames,
			Recursive: files.Recursive,
			Kustomize: files.Kustomize,
		}).
		Flatten().
		Do()
	infos, err := result.Infos()
	return infos, splitErrors(err)
}

// localManifests lists the files the builder would read for files, as its
// walk finds them (resource.ExpandPathsToFileVisitors): every file named,
// and under each directory named, in lexical order, those with a manifest
// extension, in subdirectories only when recursive. It returns nil when
// the builder would do anything else — stdin, URLs, kustomize, a path that
// is missing or unreadable, a directory without manifests (an error of the
// builder's) — and the load takes the builder's own path.
func localManifests(files Files) []string {
	if files.Kustomize != "" {
		return nil
	}
	var paths []string
	for _, name := range files.Filenames {
		if name == "-" || strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://") {
			return nil
		}
		info, err := os.Stat(name)
		if err != nil {
			return nil
		}
		if !info.IsDir() {
			paths = append(paths, name)
			continue
		}
		found := 0
		err = filepath.Walk(name, func(path string, fi os.FileInfo, err error) error {
			switch {
			case err != nil:
				return err
			case fi.IsDir() && path != name && !files.Recursive:
				return filepath.SkipDir
			case fi.IsDir() || !slices.Contains(resource.FileExtensions, filepath.Ext(path)):
				return nil
			}
			paths = append(paths, path)
			found++
			return nil
		})
		if err != nil || found == 0 {
			return nil
		}
	}
	return paths
}
