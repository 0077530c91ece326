package load

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
)

// minParallelFiles is the number of files from which the load reads them on
// several cores: decoding YAML is most of the time of a large load (2.5 s
// for 10,000 files on one core).
const minParallelFiles = 64

// readInfos runs the resource builder on the files: once, or, for many
// local files, once per chunk of them, chunks in parallel. The builder
// reads each file on its own either way (a file given by name is read as
// the same file found in a directory walk), so the objects, their sources
// and the errors come out the same, in the same order.
func readInfos(getter genericclioptions.RESTClientGetter, files Files, selector string) ([]*resource.Info, []error) {
	paths := localManifests(files)
	if len(paths) < minParallelFiles {
		return build(getter, files, selector)
	}
	chunks := slices.Collect(slices.Chunk(paths, (len(paths)+4*runtime.GOMAXPROCS(0)-1)/(4*runtime.GOMAXPROCS(0))))
	infos := make([][]*resource.Info, len(chunks))
	errs := make([][]error, len(chunks))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				infos[i], errs[i] = build(getter, Files{Filenames: chunks[i]}, selector)
			}
		})
	}
	for i := range chunks {
		next <- i
	}
	close(next)
	wg.Wait()
	return slices.Concat(infos...), slices.Concat(errs...)
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
