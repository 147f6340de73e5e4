// Command revisit schedules recurring visits of software origins; see
// `revisit --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/revisit-sched/revisit/cli"
)

// gcPercent is the collector's GOGC unless the environment sets one. The
// orchestrator allocates ~11 KB per visit, most of it garbage of the round
// in flight: at 200 instead of Go's 100 it spends a quarter less processor
// time per visit, for ~100 MiB of RSS instead of ~75 while publishing
// 15,000 visits/s (revisit bench orchestrator, 10M set; docs/performance.md,
// P5).
const gcPercent = 200

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, cli.OSEnv(), os.Args[1:])
	stop()
	os.Exit(code)
}
