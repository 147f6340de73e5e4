package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// requireForeignKeyViolation fails unless err is PostgreSQL's
// foreign_key_violation with a message containing want.
func requireForeignKeyViolation(t *testing.T, err error, want string) {
	t.Helper()
	var pgErr *pgconn.PgError
	require.Truef(t, errors.As(err, &pgErr), "want a foreign key violation, got %v", err)
	require.Equal(t, "23503", pgErr.Code, pgErr.Message)
	require.Contains(t, pgErr.Message, want)
}

// What the foreign key from listed_origin to lister refused, the trigger
// of migration 00017 refuses: a lister whose origins are listed, or
// pending, can be neither deleted, renumbered nor truncated away.
func TestListerKeptWhileListed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	recordGitOrigins(t, s, 3)
	var id uuid.UUID
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT id FROM lister WHERE name = 'gitlab'").Scan(&id))

	_, err := s.pool.Exec(ctx, "DELETE FROM lister WHERE id = $1", id)
	requireForeignKeyViolation(t, err, fmt.Sprintf("lister %s still has listed origins", id))
	_, err = s.pool.Exec(ctx, "UPDATE lister SET id = $2 WHERE id = $1", id, uuid.New())
	requireForeignKeyViolation(t, err, "still has listed origins")
	_, err = s.pool.Exec(ctx, "TRUNCATE lister CASCADE")
	requireForeignKeyViolation(t, err, "truncate them first")
	_, err = s.pool.Exec(ctx, "UPDATE lister SET instance_name = 'other' WHERE id = $1", id)
	require.NoError(t, err, "an update that keeps the id")

	// The lister's only rows are pending: still refused.
	require.Len(t, gitGrab(t, s, 3, time.Now(), nil), 3)
	flushAside(t, s)
	_, err = s.pool.Exec(ctx, "DELETE FROM listed_origin WHERE lister_id = $1", id)
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, "DELETE FROM lister WHERE id = $1", id)
	requireForeignKeyViolation(t, err, "still has listed origins")

	_, err = s.pool.Exec(ctx, "DELETE FROM listed_origin_pending WHERE lister_id = $1", id)
	require.NoError(t, err)
	tag, err := s.pool.Exec(ctx, "DELETE FROM lister WHERE id = $1", id)
	require.NoError(t, err, "a lister without origins")
	require.EqualValues(t, 1, tag.RowsAffected())
}

// A recording holds its listers (checkListers) until it commits: a delete
// of the lister meanwhile waits, then finds the recorded rows and is
// refused. Without the lock, the delete would not see the uncommitted rows
// and would go through, leaving them without their lister.
func TestListerDeleteWaitsForARecording(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	l, err := s.ListerGetOrCreate(ctx, "gitlab", "")
	require.NoError(t, err)
	origins := []revisit.ListedOrigin{{ListerID: l.ID, URL: "https://forge.example/a", VisitType: "git", Enabled: true}}

	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	require.NoError(t, checkListers(ctx, tx, origins))
	_, err = tx.Exec(ctx, `INSERT INTO listed_origin (lister_id, url, visit_type, first_seen, last_seen)
		VALUES ($1, 'https://forge.example/a', 'git', now(), now())`, l.ID)
	require.NoError(t, err)

	deleted := make(chan error, 1)
	go func() {
		_, err := s.pool.Exec(ctx, "DELETE FROM lister WHERE id = $1", l.ID)
		deleted <- err
	}()
	select {
	case err := <-deleted:
		t.Fatalf("the delete did not wait for the recording: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, tx.Commit(ctx))
	select {
	case err := <-deleted:
		requireForeignKeyViolation(t, err, "still has listed origins")
	case <-time.After(10 * time.Second):
		t.Fatal("the delete still waits after the recording committed")
	}
	var n int
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT count(*) FROM listed_origin l JOIN lister ON lister.id = l.lister_id").Scan(&n))
	require.Equal(t, 1, n)
}
