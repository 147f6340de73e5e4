package store

import (
	"time"
)

// Options configure a store opened by Open.
type Options struct {
	// Clock returns the current time; nil means time.Now. Stores use it for
	// created/updated/first_seen/last_seen and whenever a caller passes no
	// time.
	Clock func() time.Time
	// MustExist asks for a store that exists already: opening an embedded
	// store whose file is missing is an ErrNotFound and creates nothing.
	MustExist bool
}

// Now returns o.Clock(), or time.Now() when no clock is set.
func (o Options) Now() time.Time {
	if o.Clock == nil {
		return time.Now()
	}
	return o.Clock()
}
