package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/service/supervise"
)

// retryWait caps the wait before a failed pass is tried again.
const retryWait = time.Minute

// Config configures a Periodic retention.
type Config struct {
	// OlderThan is the age beyond which ended runs and finished oneshot
	// tasks are removed; it must be positive.
	OlderThan time.Duration
	// Interval is the time between two passes; it must be positive.
	Interval time.Duration
	// ArchiveDir is the existing directory of the archive files, one per
	// UTC day of a pass: tasks-YYYY-MM-DD.jsonl, appended to. Empty:
	// delete without archiving.
	ArchiveDir string
	// Encoder encodes the archived rows; required with ArchiveDir.
	Encoder Encoder
	// Clock is the clock; nil means time.Now.
	Clock revisit.Clock
	// Logger receives one line per pass that removed something, and the
	// failures; nil discards.
	Logger *slog.Logger
}

// Periodic removes old task history at start and every Config.Interval.
//
// Several processes may run it against one store: each pass deletes only
// what it archived, but a page read by two passes at once may be archived
// by both (the lines are then repeated in the archive).
type Periodic struct {
	st  Store
	cfg Config
}

// NewPeriodic returns the periodic retention of st that cfg describes; the
// archive directory, if any, must exist (checked here, before any service
// starts).
func NewPeriodic(st Store, cfg Config) (*Periodic, error) {
	switch {
	case cfg.OlderThan <= 0:
		return nil, fmt.Errorf("retention: age %s is not positive", cfg.OlderThan)
	case cfg.Interval <= 0:
		return nil, fmt.Errorf("retention: interval %s is not positive", cfg.Interval)
	case cfg.ArchiveDir != "" && cfg.Encoder == nil:
		return nil, errors.New("retention: an archive directory needs an encoder")
	}
	if dir := cfg.ArchiveDir; dir != "" {
		if fi, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("retention: archive directory: %w", err)
		} else if !fi.IsDir() {
			return nil, fmt.Errorf("retention: archive directory %s is not a directory", dir)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Periodic{st: st, cfg: cfg}, nil
}

// FileName returns the archive file of a pass at now: tasks-YYYY-MM-DD.jsonl
// with now's UTC date.
func FileName(now time.Time) string { return "tasks-" + now.UTC().Format(time.DateOnly) + ".jsonl" }

// Run runs a pass at once and then every Config.Interval until ctx is
// done, and then returns nil. A pass that fails (the store or the archive
// unavailable) is logged and tried again after the interval, or a minute
// if sooner.
func (p *Periodic) Run(ctx context.Context) error {
	p.cfg.Logger.Info("retention starting", "older_than", p.cfg.OlderThan, "interval", p.cfg.Interval,
		"archive_dir", p.cfg.ArchiveDir)
	for {
		wait := p.cfg.Interval
		if err := p.pass(ctx); err != nil && ctx.Err() == nil {
			p.cfg.Logger.Warn("retention pass failed; trying again later", "err", err)
			wait = min(wait, retryWait)
		}
		if !supervise.Sleep(ctx, wait) {
			return nil
		}
	}
}

// pass archives and deletes what is older than Config.OlderThan.
func (p *Periodic) pass(ctx context.Context) error {
	now := p.cfg.Clock.Now()
	var sink *lazyFile
	if p.cfg.ArchiveDir != "" {
		sink = &lazyFile{name: filepath.Join(p.cfg.ArchiveDir, FileName(now))}
		defer sink.Close()
	}
	c, err := Archive(ctx, p.st, now.Add(-p.cfg.OlderThan), sinkOrNil(sink), p.cfg.Encoder)
	if c.Runs > 0 || c.Tasks > 0 {
		where := "nowhere (not archived)"
		if sink != nil {
			where = sink.name
		}
		p.cfg.Logger.Info("retention: removed old task history", "task_runs", c.Runs, "tasks", c.Tasks, "archived_to", where)
	}
	return err
}

// sinkOrNil returns f as a Sink, nil (delete without archiving) when f is
// nil.
func sinkOrNil(f *lazyFile) Sink {
	if f == nil {
		return nil
	}
	return f
}

// lazyFile is a file opened for appending at the first write, so that
// passes that archive nothing create no file.
type lazyFile struct {
	name string
	f    *os.File
}

// Write opens the file if needed and appends p to it.
func (l *lazyFile) Write(p []byte) (int, error) {
	if l.f == nil {
		f, err := os.OpenFile(l.name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return 0, err
		}
		l.f = f
	}
	return l.f.Write(p)
}

// Sync syncs the file, if opened.
func (l *lazyFile) Sync() error {
	if l.f == nil {
		return nil
	}
	return l.f.Sync()
}

// Close closes the file, if opened.
func (l *lazyFile) Close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}
