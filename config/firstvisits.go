package config

import (
	"fmt"
	"time"
)

// FirstVisits configures the first visits of listers that have their own
// queues for them (revisit first-visits run, and the firstvisits role of
// revisit serve):
//
//	first_visits:
//	  interval: 1m   # between two passes over the listers
type FirstVisits struct {
	// Interval is the time between two passes.
	Interval Duration `yaml:"interval"`
}

func defaultFirstVisits() FirstVisits { return FirstVisits{Interval: Duration(time.Minute)} }

// validate checks the section; errors name the key.
func (f FirstVisits) validate() error {
	if f.Interval <= 0 {
		return fmt.Errorf("first_visits.interval: %s is not positive", f.Interval)
	}
	return nil
}
