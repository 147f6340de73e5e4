package cli

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/revisit-sched/revisit/simulate"
)

// partFlag is the hidden flag that has revisit simulate run one part of
// its simulation and write its Result, gob-encoded, on its output: how a
// simulation runs its parts in child processes.
const partFlag = "part"

// variationFlag is the hidden flag that has the part run in a variation
// of the world (simulate.Variations), numbered from 1.
const variationFlag = "variation"

// childParts returns the PartRunner that simulates each part in a child
// process: exe run with the command line args and --part, in environ with
// one core (the parent runs as many children at once as it has cores).
//
// Each part in its own process shares nothing with the others: in one
// process, the parts' SQLite stores share the C library's memory
// allocator and its lock, and four parts at once took twice as long
// (docs/performance.md, P7).
func childParts(exe string, args, environ []string) simulate.PartRunner {
	return func(ctx context.Context, p simulate.Part) (simulate.Result, error) {
		cmd := exec.CommandContext(ctx, exe, append(slices.Clone(args), "--"+partFlag, formatPart(p))...)
		cmd.Env = append(slices.Clone(environ), "GOMAXPROCS=1")
		cmd.SysProcAttr = childAttr()
		var stdout bytes.Buffer
		stderr := &lastLine{}
		cmd.Stdout, cmd.Stderr = &stdout, stderr
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return simulate.Result{}, ctx.Err()
			}
			if msg := strings.TrimPrefix(stderr.String(), "revisit: "); msg != "" {
				return simulate.Result{}, fmt.Errorf("%s", msg)
			}
			return simulate.Result{}, fmt.Errorf("its process (%s): %w", exe, err)
		}
		var res simulate.Result
		if err := gob.NewDecoder(&stdout).Decode(&res); err != nil {
			return simulate.Result{}, fmt.Errorf("reading what its process (%s) measured: %w", exe, err)
		}
		return res, nil
	}
}

// runPart simulates the part that --part names, in this process, and
// writes its Result on w, under a CPU profile written next to the file at
// profile (partProfile) unless profile is empty.
func runPart(ctx context.Context, w io.Writer, spec string, cfg simulate.Config, scenarios []simulate.Scenario,
	profile string) error {
	p, err := parsePart(spec)
	if err != nil {
		return usagef("--%s: %v", partFlag, err)
	}
	if profile != "" {
		profile = partProfile(profile, p, cfg.VisitTypes)
	}
	var res simulate.Result
	if err := profiled(profile, func() (err error) {
		res, err = simulate.RunPart(ctx, cfg, scenarios, p)
		return err
	}); err != nil {
		return err
	}
	return gob.NewEncoder(w).Encode(res)
}

// partProfile names the CPU profile of part p after the profile path of
// the whole simulation: its scenario's index and its visit type before the
// extension (cpu.prof: cpu-0-git.prof).
func partProfile(path string, p simulate.Part, visitTypes []string) string {
	visitType := strconv.Itoa(p.VisitType)
	if p.VisitType >= 0 && p.VisitType < len(visitTypes) {
		visitType = visitTypes[p.VisitType]
	}
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s-%d-%s%s", strings.TrimSuffix(path, ext), p.Scenario, visitType, ext)
}

// formatPart writes a part as --part reads it: SCENARIO/VISIT-TYPE, both
// indexes.
func formatPart(p simulate.Part) string { return fmt.Sprintf("%d/%d", p.Scenario, p.VisitType) }

// parsePart reads --part.
func parsePart(s string) (simulate.Part, error) {
	sc, vt, ok := strings.Cut(s, "/")
	i, errI := strconv.Atoi(sc)
	k, errK := strconv.Atoi(vt)
	if !ok || errI != nil || errK != nil {
		return simulate.Part{}, fmt.Errorf("%q is not SCENARIO/VISIT-TYPE, two indexes", s)
	}
	return simulate.Part{Scenario: i, VisitType: k}, nil
}

// maxLine bounds what lastLine keeps of a line.
const maxLine = 4096

// lastLine keeps the last non-empty line written to it (its last maxLine
// bytes).
type lastLine struct {
	buf  []byte
	last string
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(l.buf[:i])); line != "" {
			l.last = line
		}
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > maxLine {
		l.buf = l.buf[len(l.buf)-maxLine:]
	}
	return len(p), nil
}

// String returns the last non-empty line, the unfinished one included.
func (l *lastLine) String() string {
	if line := strings.TrimSpace(string(l.buf)); line != "" {
		return line
	}
	return l.last
}
