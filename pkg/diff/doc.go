// Package diff renders what `kapply diff` shows for each object: the live
// object against what apply would make of it, as a unified diff (coloured or
// not), a one-line summary, or two directories for an external diff
// program; with noise fields hidden, Secret values masked, and each change
// explained by the merge plan's reason and the field's current owners.
//
// The package does no I/O to a cluster; its input is plain objects.
package diff
