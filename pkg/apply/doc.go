// Package apply runs `kapply apply`: it loads objects from files, maps them to
// API resources, orders them (Namespaces and CRDs first), reads the live
// objects, and creates or patches each one, reporting one Event per object.
// One bad object never stops the others.
package apply
