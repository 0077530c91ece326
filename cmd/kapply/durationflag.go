package main

import (
	"errors"
	"time"

	"github.com/spf13/pflag"
)

// durationFlag is a time.Duration flag that refuses a negative value.
// pflag's own duration takes "-5s", and kapply would then read it as the
// default (0 means one minute), so a typo would wait a minute silently.
// Refused in Set, the value fails like any unparsable one: pflag and cobra
// give kubectl's flag error (see flagError), exit 1.
type durationFlag struct{ d *time.Duration }

func addDurationFlag(flags *pflag.FlagSet, d *time.Duration, name string, value time.Duration, usage string) {
	*d = value
	flags.Var(durationFlag{d}, name, usage)
	if value == 0 {
		// pflag's help hides a duration's zero default only for its own type.
		flags.Lookup(name).DefValue = "0"
	}
}

func (f durationFlag) String() string { return f.d.String() }

// Type is pflag's own name for a duration, so the help reads the same.
func (f durationFlag) Type() string { return "duration" }

func (f durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		// pflag's words for a duration it cannot parse.
		return err
	}
	if d < 0 {
		return errors.New("must not be negative")
	}
	*f.d = d
	return nil
}
