package main

import (
	"errors"
	"net/url"
	"regexp"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/load"
)

// refusedDial finds the address of a refused connection in an error's
// text: the resource builder of the ownership commands reports discovery's
// failure with %v, which keeps the words but not the error chain.
var refusedDial = regexp.MustCompile(`dial tcp ([^ ]+): connect: connection refused`)

// asUnreachable turns an error caused by a refused connection into
// kubectl's sentence for it (apply.UnreachableError), for commands whose
// first request is not apply's reachability check, and reports whether it
// did; other errors, and those that are that sentence already (whose
// command chose its exit code), stay.
func asUnreachable(err error) (error, bool) {
	var unreachable *apply.UnreachableError
	if err == nil || errors.As(err, &unreachable) {
		return err, false
	}
	var urlErr *url.Error
	if utilnet.IsConnectionRefused(err) && errors.As(err, &urlErr) {
		if u, parseErr := url.Parse(urlErr.URL); parseErr == nil && u.Host != "" {
			return &apply.UnreachableError{Host: u.Host, Err: err}, true
		}
	}
	if m := refusedDial.FindStringSubmatch(err.Error()); m != nil {
		return &apply.UnreachableError{Host: m[1], Err: err}, true
	}
	return err, false
}

// readFailed is the exit of an ownership command whose targets could not
// be read: kubectl's sentence and exit 1 for a refused server, as kubectl
// apply view-last-applied; exit 2 for anything else.
func readFailed(err error) error {
	if errors.Is(err, load.ErrNothingNamed) {
		return withCode(exitError, errors.New("must specify TYPE/NAME or -f FILENAME"))
	}
	if unreachable, refused := asUnreachable(err); refused {
		return withCode(exitFailed, unreachable)
	}
	return withCode(exitError, err)
}

// writeFailed is the exit of an ownership command that stopped before it
// wrote anything: exit 1 with kubectl's sentence when the server refused
// the first request (pkg/apply's reachability check), as readFailed; exit
// 2 for anything else.
func writeFailed(err error) error {
	if unreachable := (*apply.UnreachableError)(nil); errors.As(err, &unreachable) {
		return withCode(exitFailed, err)
	}
	return withCode(exitError, err)
}
