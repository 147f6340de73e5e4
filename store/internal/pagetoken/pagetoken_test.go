package pagetoken

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
)

func TestRoundTrip(t *testing.T) {
	k := Key{ListerID: uuid.New(), URL: "https://example.org/a\"b,c", VisitType: "git"}
	got, err := Decode(Encode(k))
	if err != nil || got != k {
		t.Fatalf("Decode(Encode(%+v)) = %+v, %v", k, got, err)
	}
	for _, bad := range []string{"", "!!!", "WyJhIl0", "WyJub3QtYS11dWlkIiwiYSIsImIiXQ"} {
		if _, err := Decode(bad); !errors.Is(err, revisit.ErrInvalid) {
			t.Errorf("Decode(%q): %v, want invalid page_token", bad, err)
		}
	}
}

// FuzzDecode: no token a caller sends makes Decode panic, and what decodes
// encodes back to a token that decodes the same.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(Key{ListerID: uuid.New(), URL: "https://x", VisitType: "hg"}))
	f.Add("WyJhIl0")
	f.Fuzz(func(t *testing.T, token string) {
		k, err := Decode(token)
		if err != nil {
			return
		}
		again, err := Decode(Encode(k))
		if err != nil || again != k {
			t.Fatalf("re-decoding %+v: %+v, %v", k, again, err)
		}
	})
}

func TestIDRoundTrip(t *testing.T) {
	for _, id := range []int64{0, 1, 1 << 62} {
		got, err := DecodeID(EncodeID(id))
		if err != nil || got != id {
			t.Fatalf("DecodeID(EncodeID(%d)) = %d, %v", id, got, err)
		}
	}
	for _, bad := range []string{"", "!!", EncodeID(1)[:2], Encode(Key{URL: "u"})} {
		if _, err := DecodeID(bad); err == nil {
			t.Fatalf("DecodeID(%q) accepted", bad)
		}
	}
}

func TestSearchRoundTrip(t *testing.T) {
	for _, k := range []SearchKey{
		{URL: "https://example.org/a\"b,c", VisitType: "git", ListerID: uuid.New()},
		{URL: "https://example.org/a", WholeURL: true},
	} {
		got, err := DecodeSearch(EncodeSearch(k))
		if err != nil || got != k {
			t.Fatalf("DecodeSearch(EncodeSearch(%+v)) = %+v, %v", k, got, err)
		}
	}
	listing := Encode(Key{ListerID: uuid.New(), URL: "https://x", VisitType: "git"})
	for _, bad := range []string{"", "!!!", listing, EncodeID(3), "WyJzZWFyY2giXQ", "WyJzZWFyY2giLCJ1IiwiZ2l0Il0"} {
		if _, err := DecodeSearch(bad); !errors.Is(err, revisit.ErrInvalid) {
			t.Errorf("DecodeSearch(%q): %v, want invalid page_token", bad, err)
		}
	}
}

// FuzzDecodeSearch: no token a caller sends makes DecodeSearch panic, and
// what decodes encodes back to a token that decodes the same.
func FuzzDecodeSearch(f *testing.F) {
	f.Add(EncodeSearch(SearchKey{URL: "https://x", VisitType: "hg", ListerID: uuid.New()}))
	f.Add(EncodeSearch(SearchKey{URL: "https://x", WholeURL: true}))
	f.Fuzz(func(t *testing.T, token string) {
		k, err := DecodeSearch(token)
		if err != nil {
			return
		}
		again, err := DecodeSearch(EncodeSearch(k))
		if err != nil || again != k {
			t.Fatalf("re-decoding %+v: %+v, %v", k, again, err)
		}
	})
}

func TestQueueRoundTrip(t *testing.T) {
	for _, k := range []QueueKey{{}, {ExpiresAt: 1709294400000000, Seq: 7}, {Ready: true, Priority: 9, Seq: 1 << 40},
		{Ready: true, Priority: 255}} {
		got, err := DecodeQueue(EncodeQueue(k))
		if err != nil || got != k {
			t.Fatalf("DecodeQueue(EncodeQueue(%+v)) = %+v, %v", k, got, err)
		}
	}
	for _, bad := range []string{"", "!!", EncodeID(1), EncodeIDPair(1, 2), EncodeQueue(QueueKey{Seq: -1}),
		EncodeQueue(QueueKey{Ready: true, Priority: 256})} {
		if _, err := DecodeQueue(bad); err == nil {
			t.Fatalf("DecodeQueue(%q) accepted", bad)
		}
	}
}
