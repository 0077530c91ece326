// Package load turns what a user names into objects, each with its source:
// files, directories (-R), URLs, stdin and kustomizations through
// cli-runtime's resource builder (Load, ReadFiles), or TYPE/NAME read from
// the server (ReadLive). Local manifest files are read once and parsed once
// by readLocal, which gives exactly the builder's objects and errors and
// leaves to the builder the files it does not follow. It refuses documents
// the builder would change without a word (a key set twice, bytes that are
// not UTF-8) and finds the documents of a file that declare an object, for
// errors that name them. Object and Error are the one object-with-source
// type and the one per-object error of every command.
package load
