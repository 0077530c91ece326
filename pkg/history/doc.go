// Package history is the format of an ApplySet's revisions: what one apply
// sent (each member's configuration, Secret values removed), who sent it
// and why, stored compressed in chunks of Secrets or ConfigMaps next to the
// parent. It is pure: objects in, objects out; pkg/apply reads and writes
// them.
package history
