package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/broker/embedded"
)

// Timeouts of revisit serve. A response may take a whole long poll
// (api.MaxWaitSeconds) before it is written.
const (
	serveReadHeaderTimeout = 10 * time.Second
	serveReadTimeout       = 30 * time.Second
	serveWriteTimeout      = api.MaxWaitSeconds*time.Second + 30*time.Second
	serveIdleTimeout       = 2 * time.Minute
	serveShutdownTimeout   = 15 * time.Second
)

func (a *app) serveCommand() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDRESS]",
		Short: "Serve the HTTP API, where workers of the embedded broker lease visits and post results",
		Long: `Serves the HTTP API until interrupted (SIGINT or SIGTERM, then shuts down
gracefully). With the embedded broker (the default), workers lease task
messages, extend their leases and post results under /api/v1 (see the
README); with RabbitMQ, the worker routes are not served.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := a.openBroker(cmd, false)
			if err != nil {
				return err
			}
			q, _ := b.(*embedded.Broker)
			if q == nil {
				a.log.Warn("the broker is RabbitMQ: the worker routes of the embedded broker are not served")
			}
			handler := api.New(api.Config{Queues: q, Logger: a.log})
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			srv := &http.Server{Handler: handler, ReadHeaderTimeout: serveReadHeaderTimeout,
				ReadTimeout: serveReadTimeout, WriteTimeout: serveWriteTimeout, IdleTimeout: serveIdleTimeout}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ln) }()
			fmt.Fprintf(a.env.Stderr, "revisit: serving on http://%s\n", ln.Addr())
			select {
			case err := <-served:
				return fmt.Errorf("serve: %w", err)
			case <-ctx.Done():
			}
			a.log.Info("shutting down")
			handler.Drain()
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), serveShutdownTimeout)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil {
				return fmt.Errorf("serve: shutdown: %w", err)
			}
			if err := <-served; !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("serve: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:5080", "the `address` to listen on (host:port)")
	return cmd
}
