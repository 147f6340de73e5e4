package config

import (
	"errors"
	"fmt"
	"time"
)

// Retention configures the periodic retention of generic tasks
// (semantics.md §8), run by revisit runner and by the runner role of
// revisit serve; revisit task archive does the same once:
//
//	retention:
//	  older_than: 90d                       # default 0: no periodic retention
//	  interval: 1h                          # between two passes, the first at start
//	  archive_dir: /var/lib/revisit/archive # required unless archive is false
//	  archive: true                         # false: delete without archiving
//
// Each pass moves the task runs that ended more than older_than ago, then
// the finished oneshot tasks none of whose runs is newer, to the JSON-lines
// file tasks-YYYY-MM-DD.jsonl (the pass's UTC date) of archive_dir, which
// must exist. Deleting without a copy must be asked for: archive: false
// (with no archive_dir).
type Retention struct {
	// OlderThan is the age beyond which ended runs and finished oneshot
	// tasks are removed; 0 disables the periodic retention.
	OlderThan Duration `yaml:"older_than"`
	// Interval is the time between two passes.
	Interval Duration `yaml:"interval"`
	// ArchiveDir is the directory of the archive files.
	ArchiveDir string `yaml:"archive_dir"`
	// Archive is false to delete without archiving.
	Archive bool `yaml:"archive"`
}

// Enabled reports whether the periodic retention runs.
func (r Retention) Enabled() bool { return r.OlderThan > 0 }

func defaultRetention() Retention {
	return Retention{Interval: Duration(time.Hour), Archive: true}
}

// validate checks the section; errors name the key.
func (r Retention) validate() error {
	switch {
	case r.Interval <= 0:
		return fmt.Errorf("retention.interval: %s is not positive", r.Interval)
	case !r.Archive && r.ArchiveDir != "":
		return errors.New("retention.archive_dir: set while retention.archive is false (nothing would be archived)")
	case r.Enabled() && r.Archive && r.ArchiveDir == "":
		return errors.New("retention.archive_dir: missing: retention.older_than is set, so old task runs and tasks " +
			"are removed; name the directory to archive them to, or set retention.archive: false to delete them without a copy")
	}
	return nil
}

// Embedded configures the embedded broker:
//
//	embedded:
//	  keep_done: 1h   # how long a done message stays once its result is consumed
//
// Done messages are kept for operators to inspect recent results, then
// deleted by the result consumer (the listener role).
type Embedded struct {
	// KeepDone is how long a done message stays once its result was
	// consumed.
	KeepDone Duration `yaml:"keep_done"`
}

func defaultEmbedded() Embedded { return Embedded{KeepDone: Duration(time.Hour)} }

// validate checks the section; errors name the key.
func (e Embedded) validate() error {
	if e.KeepDone <= 0 {
		return fmt.Errorf("embedded.keep_done: %s is not positive", e.KeepDone)
	}
	return nil
}
