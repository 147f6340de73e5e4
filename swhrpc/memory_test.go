package swhrpc

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/swhwire"
)

// A body of many tiny values (an empty map is one byte of msgpack) is
// refused for its count of values, at a memory cost of a few times its
// size; a full batch of listed origins as the client sends it stays
// within the count. Not parallel: it measures the process's allocations.
func TestManyTinyValuesCostBoundedMemory(t *testing.T) {
	c := serve(t, teststore.SQLite(t), Config{})
	// {"listed_origins": [[{}, {} …] × 8]}: 32 million empty maps, under
	// the body limit.
	const arrays, each = 8, 4_000_000
	body := append([]byte{0x81, 0xae}, "listed_origins"...)
	body = append(body, 0xdd)
	body = binary.BigEndian.AppendUint32(body, arrays)
	for range arrays {
		body = append(body, 0xdd)
		body = binary.BigEndian.AppendUint32(body, each)
		for range each {
			body = append(body, 0x80)
		}
	}
	require.Less(t, len(body), MaxBodyBytes)
	for _, inner := range []int{each, MaxBodyValues - 10} { // an array past the bound, or the bound met inside one
		b := body
		if inner != each {
			b = append([]byte{0x81, 0xae}, "listed_origins"...)
			b = append(b, 0xdd)
			b = binary.BigEndian.AppendUint32(b, 4)
			for range 4 {
				b = append(b, 0xdd)
				b = binary.BigEndian.AppendUint32(b, uint32(inner/2))
				for range inner / 2 {
					b = append(b, 0x80)
				}
			}
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		r := c.post("origins/record", contentMsgpack, b)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%d bytes: refused in %v, %d MB allocated", len(b), took, allocated>>20)
		c.refused(r, http.StatusBadRequest, "SchedulerException", fmt.Sprintf("more than %d values in all", MaxBodyValues))
		require.Less(t, allocated, uint64(4*len(b)+64<<20), "memory of a small multiple of the body")
	}

	lister := c.newLister("github")
	full := make([]any, MaxBatch)
	updated := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range full {
		full[i] = origin(lister, fmt.Sprintf("https://github.com/owner-%d/repository-%d", i, i), "git",
			"last_update", updated, "is_fork", false, "forked_from_url", nil, "enabled", true,
			"extra_loader_arguments", swhwire.Map{{Key: "incremental", Value: true}, {Key: "branches", Value: []any{"main", "dev"}}})
	}
	recorded := c.ok("origins/record", "listed_origins", full)
	require.Len(t, list(t, recorded), MaxBatch, "a full batch as the client sends it is within the bound")
}
