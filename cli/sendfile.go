package cli

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/service/visitsend"
)

// sendFileBatch bounds the messages published at once by send-from-file.
const sendFileBatch = 1000

func (a *app) sendFromFileCommand() *cobra.Command {
	var (
		queue     string
		threshold int
		wait      time.Duration
		limit     int
		dryRun    bool
	)
	cmd := &cobra.Command{
		Use:   "send-from-file TASK_TYPE FILE|-",
		Short: "Send a message of TASK_TYPE for each origin URL of a file, throttled on the queue's depth",
		Long: `Sends, for each origin URL of FILE (or standard input, -), one message of the
task type TASK_TYPE whose only keyword argument is the url, to the queue
named after the task type's backend_name, or --queue. FILE has one URL a
line; blank lines and lines starting with # are skipped. Every line is
checked first: a line that is not an absolute URL fails the command, naming
it, and nothing is sent.

Messages are sent while the queue holds fewer than --threshold messages
(default: the task type's max_queue_length); when it holds more, the
command waits --waiting-period and measures it again.

These messages are not visits: no origin is grabbed or marked scheduled and
nothing is recorded in flight, so their results update the visit stats but
close no visit, and nothing offers an origin again when its message is lost.

This is upstream's "swh scheduler origin send-origins-from-file-to-celery".`,
		Args: exactArgs("TASK_TYPE", "FILE|-"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			if changed(fl, "threshold") && threshold < 1 {
				return usagef("--threshold: must be positive, not %d", threshold)
			}
			if wait <= 0 {
				return usagef("--waiting-period: must be positive, not %s", wait)
			}
			if changed(fl, "limit") && limit < 1 {
				return usagef("--limit: must be positive, not %d", limit)
			}
			in, name, closeIn, err := a.openInput(args[1])
			if err != nil {
				return err
			}
			defer closeIn()
			var urls []string
			err = eachLine(in, func(n int, line []byte, tooLong error) error {
				if tooLong != nil {
					return fmt.Errorf("line %d: %w", n, tooLong)
				}
				u := string(bytes.TrimSpace(line))
				if u[0] == '#' {
					return nil
				}
				if err := revisit.ValidateAbsoluteURL(u); err != nil {
					return fmt.Errorf("line %d: %w", n, err)
				}
				urls = append(urls, u)
				return nil
			})
			if err != nil {
				return fmt.Errorf("%s: %w; nothing sent", name, err)
			}
			if limit > 0 && len(urls) > limit {
				urls = urls[:limit]
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			tt, err := taskTypeNamed(ctx, st, args[0])
			if err != nil {
				return err
			}
			if queue == "" {
				queue = tt.BackendName
			}
			if dryRun {
				rw := a.rows(cols("queue", "task", "url"))
				for _, u := range urls {
					if err := rw.Row(queue, tt.BackendName, u); err != nil {
						return err
					}
				}
				return rw.Close()
			}
			if !changed(fl, "threshold") {
				threshold = tt.MaxQueueLengthOrDefault()
			}
			b, err := a.openBroker(cmd, false)
			if err != nil {
				return err
			}
			c, err := a.sendThrottled(ctx, b, tt.BackendName, queue, urls, threshold, wait)
			if err != nil {
				return err
			}
			if err := a.printSummary(fmt.Sprintf("sent %d message(s) to %s, %d failed", c.sent, queue, c.failed),
				cols("queue", "sent", "failed"), queue, c.sent, c.failed); err != nil {
				return err
			}
			if c.failed > 0 {
				return fmt.Errorf("%d message(s) not confirmed by the broker (their URLs are logged): %w", c.failed, c.firstErr)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&queue, "queue", "", "send to this `queue` (default: the task type's backend_name)")
	f.IntVar(&threshold, "threshold", 0, "send while the queue holds fewer messages than this (default: the task type's max_queue_length)")
	f.DurationVar(&wait, "waiting-period", 10*time.Second, "wait this long before measuring a full queue again")
	f.IntVar(&limit, "limit", 0, "send the first `N` URLs only")
	f.BoolVar(&dryRun, "dry-run", false, "print the messages that would be sent; send nothing")
	return cmd
}

// sendCounts counts the messages the broker confirmed and those it did
// not, with the first error of those.
type sendCounts struct {
	sent, failed int
	firstErr     error
}

// sendThrottled sends one message of task per URL to queue, in order, each
// time as many as the queue holds fewer than threshold, waiting wait
// before measuring a full queue again. The URLs of messages not confirmed
// are logged.
func (a *app) sendThrottled(ctx context.Context, b broker.Broker, task, queue string, urls []string,
	threshold int, wait time.Duration) (sendCounts, error) {
	var c sendCounts
	origin := visitsend.SenderName()
	waiting := false
	for len(urls) > 0 {
		depth, err := b.Depth(ctx, queue)
		if err != nil {
			return c, queueError(queue, err)
		}
		room := revisit.SlotRule{PerSend: sendFileBatch}.Slots(threshold, depth)
		if room == 0 {
			if !waiting {
				a.log.Info("waiting for the queue to drain", "queue", queue, "depth", depth, "threshold", threshold,
					"sent", c.sent, "left", len(urls))
			}
			waiting = true
			select {
			case <-ctx.Done():
				return c, ctx.Err()
			case <-time.After(wait):
			}
			continue
		}
		waiting = false
		n := min(room, len(urls))
		msgs := make([]celery.Message, n)
		for i, u := range urls[:n] {
			if msgs[i], err = celery.NewMessage(celery.Task{Name: task, ID: uuid.NewString(),
				Kwargs: map[string]any{"url": u}, Origin: origin}); err != nil {
				return c, fmt.Errorf("message for %s: %w", u, err)
			}
		}
		pubs, _ := b.Publish(ctx, queue, msgs)
		for i, p := range pubs {
			if p.Outcome == broker.Confirmed {
				c.sent++
				continue
			}
			c.failed++
			if c.firstErr == nil {
				c.firstErr = p.Err
			}
			a.log.Warn("message not confirmed by the broker", "url", urls[i], "err", p.Err)
		}
		urls = urls[n:]
	}
	return c, nil
}
