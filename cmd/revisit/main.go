// Command revisit schedules recurring visits of software origins; see
// `revisit --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/revisit-sched/revisit/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, cli.OSEnv(), os.Args[1:])
	stop()
	os.Exit(code)
}
