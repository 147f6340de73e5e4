package cli

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
)

// startCPUProfile starts profiling this process into the file at path and
// returns the function that stops and writes it.
func startCPUProfile(path string) (func() error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		return nil
	}, nil
}

// profiled runs fn, under a CPU profile written to the file at path unless
// path is empty.
func profiled(path string, fn func() error) error {
	if path == "" {
		return fn()
	}
	stop, err := startCPUProfile(path)
	if err != nil {
		return err
	}
	err = fn()
	return errors.Join(err, stop())
}
