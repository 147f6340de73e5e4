package postgres_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/netproxy"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
)

// A connection lost mid-query, whichever way it is lost, is the database
// being unavailable (503 on the API), not an internal error.
func TestConnectionLostMidQueryIsUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schemaURL := pgtest.URL(t)
	migrated, err := postgres.Open(ctx, schemaURL, store.Options{})
	require.NoError(t, err)
	require.NoError(t, migrated.Migrate(ctx))
	migrated.Close()
	u, err := url.Parse(schemaURL)
	require.NoError(t, err)
	for _, lose := range []struct {
		name string
		cut  func(p *netproxy.Proxy)
	}{
		{"cut while waiting for the answer", func(p *netproxy.Proxy) { p.Freeze(); time.Sleep(200 * time.Millisecond); p.Down() }},
		{"cut before the query", func(p *netproxy.Proxy) { p.Down() }},
	} {
		t.Run(lose.name, func(t *testing.T) {
			proxy := netproxy.Start(t, u.Host)
			through := *u
			through.Host = proxy.Addr()
			st, err := postgres.Open(ctx, through.String(), store.Options{})
			require.NoError(t, err)
			defer st.Close()
			_, err = st.ListerList(ctx) // a connection in the pool
			require.NoError(t, err)
			done := make(chan error, 1)
			go func() {
				_, err := st.ListerList(ctx)
				done <- err
			}()
			lose.cut(proxy)
			proxy.Thaw()
			err = <-done
			require.Error(t, err)
			require.True(t, errors.Is(err, revisit.ErrUnavailable), "%v is unavailable", err)
		})
	}
}
