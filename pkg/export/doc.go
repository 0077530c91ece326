// Package export turns a live object into a clean configuration file, as
// `kapply export` prints it: no status, no metadata the server sets, no
// last-applied record, and the server defaults kapply knows (a table per
// kind) dropped where the live value equals the default.
package export
