package main

import "github.com/spf13/pflag"

// objectSource binds -f, -R, -k and -l, the flags naming the objects that
// apply, diff and delete read, to the fields of a command's options.
type objectSource struct {
	filenames *[]string
	recursive *bool
	kustomize *string
	selector  *string
}

// selectorExample ends the usage of -l where the command shows one.
const selectorExample = " (e.g. -l app=web)"

// add registers the four flags. verb is what the command does to the
// objects; filenameNote and selectorNote end the usage of -f and -l.
func (s objectSource) add(flags *pflag.FlagSet, verb, filenameNote, selectorNote string) {
	flags.StringSliceVarP(s.filenames, "filename", "f", nil, "file, directory or URL with the objects to "+verb+" (repeatable; - for stdin; at most 256 MiB each"+filenameNote+")")
	flags.BoolVarP(s.recursive, "recursive", "R", false, "process the directories given with -f recursively")
	flags.StringVarP(s.kustomize, "kustomize", "k", "", verb+" the output of this kustomization directory")
	flags.StringVarP(s.selector, "selector", "l", "", verb+" only the objects whose labels match this selector"+selectorNote)
}
