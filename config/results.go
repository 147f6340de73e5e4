package config

import (
	"fmt"
	"time"
)

// Results configures how worker results and visit statuses are taken in,
// whichever way they come (the API, visit-status ingest, broker events):
//
//	results:
//	  max_future: 1h   # a status dated later than now + this is refused
//
// A status dated in the future would make every real result after it
// late, and so ignored; max_future tolerates clocks slightly ahead.
type Results struct {
	// MaxFuture is how far beyond the clock a visit status may be dated.
	MaxFuture Duration `yaml:"max_future"`
}

func defaultResults() Results { return Results{MaxFuture: Duration(time.Hour)} }

// validate checks the section; errors name the key.
func (r Results) validate() error {
	if r.MaxFuture <= 0 {
		return fmt.Errorf("results.max_future: %s is not positive", r.MaxFuture)
	}
	return nil
}
