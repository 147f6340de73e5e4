package des

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestEventsRunInTimeOrderAndTiesInSchedulingOrder(t *testing.T) {
	s := New(t0)
	var got []string
	s.After(3*time.Second, func() { got = append(got, "c") })
	s.After(time.Second, func() { got = append(got, "a1") })
	s.After(time.Second, func() { got = append(got, "a2") })
	s.After(2*time.Second, func() {
		got = append(got, "b")
		s.After(0, func() { got = append(got, "b-now") })
		s.After(time.Second, func() { got = append(got, "b+1") }) // ties with c, scheduled later
	})
	s.Run(t0.Add(time.Hour))
	require.Equal(t, []string{"a1", "a2", "b", "b-now", "c", "b+1"}, got)
	require.Equal(t, t0.Add(time.Hour), s.Now())
	require.EqualValues(t, 6, s.Processed())
}

func TestRunStopsAtItsHorizonAndTheClockNeverGoesBack(t *testing.T) {
	s := New(t0)
	var at []time.Time
	s.After(time.Minute, func() { at = append(at, s.Now()) })
	s.After(2*time.Hour, func() { at = append(at, s.Now()) })
	s.Run(t0.Add(time.Hour))
	require.Equal(t, []time.Time{t0.Add(time.Minute)}, at)
	s.At(t0, func() { at = append(at, s.Now()) }) // in the past: runs now
	s.Run(t0.Add(3 * time.Hour))
	require.Equal(t, []time.Time{t0.Add(time.Minute), t0.Add(time.Hour), t0.Add(2 * time.Hour)}, at)
}

func TestStoppedTimersDoNotRun(t *testing.T) {
	s := New(t0)
	ran := false
	tm := s.After(time.Second, func() { ran = true })
	tm.Stop()
	s.Run(t0.Add(time.Minute))
	require.False(t, ran)
	require.Zero(t, s.Processed())
}

func TestQueueHandsItemsToTakersInOrder(t *testing.T) {
	s := New(t0)
	q := NewQueue[int](s, 0)
	var got []string
	for _, name := range []string{"w1", "w2"} {
		q.Get(func(v int) { got = append(got, name+":"+string(rune('0'+v))) })
	}
	s.After(time.Second, func() {
		require.True(t, q.TryPut(1))
		require.True(t, q.TryPut(2))
		require.True(t, q.TryPut(3))
	})
	s.Run(t0.Add(time.Minute))
	require.Equal(t, []string{"w1:1", "w2:2"}, got)
	require.Equal(t, 1, q.Len())
}

func TestFullQueueBlocksPuttersUntilTakersMakeRoom(t *testing.T) {
	s := New(t0)
	q := NewQueue[string](s, 2)
	require.True(t, q.TryPut("a"))
	require.True(t, q.TryPut("b"))
	require.False(t, q.TryPut("c"), "full")
	var admitted []time.Time
	q.Put("c", func() { admitted = append(admitted, s.Now()) })
	q.Put("d", func() { admitted = append(admitted, s.Now()) })
	require.False(t, q.TryPut("e"), "putters wait first")
	var taken []string
	take := func() { q.Get(func(v string) { taken = append(taken, v) }) }
	s.After(time.Second, take)
	s.After(2*time.Second, take)
	s.After(3*time.Second, take)
	s.Run(t0.Add(time.Minute))
	require.Equal(t, []string{"a", "b", "c"}, taken)
	require.Equal(t, []time.Time{t0.Add(time.Second), t0.Add(2 * time.Second)}, admitted)
	require.Equal(t, 1, q.Len())
}

func TestQueueKeepsOrderAcrossManyItems(t *testing.T) {
	s := New(t0)
	q := NewQueue[int](s, 0)
	const n = 5000
	for i := range n {
		require.True(t, q.TryPut(i))
	}
	var got []int
	for range n {
		q.Get(func(v int) { got = append(got, v) })
	}
	s.Run(t0)
	for i, v := range got {
		require.Equal(t, i, v)
	}
	require.Len(t, got, n)
}
