package store

import "github.com/revisit-sched/revisit"

// Options configure a store opened by Open.
type Options struct {
	// Clock returns the current time; nil means time.Now. Stores use it for
	// created/updated/first_seen/last_seen and whenever a caller passes no
	// time.
	Clock revisit.Clock
	// MustExist asks for a store that exists already: opening an embedded
	// store whose file is missing is an ErrNotFound and creates nothing.
	MustExist bool
}
