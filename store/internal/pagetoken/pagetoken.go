// Package pagetoken encodes keyset page tokens, opaque to callers: for
// listed origins the full key (lister_id, url, visit_type) of the last row of
// a page, for an origin search the row or the URL it resumes after, for
// tasks and task runs the id of the last row.
package pagetoken

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
)

// Key is the position a token resumes after.
type Key struct {
	ListerID  uuid.UUID
	URL       string
	VisitType string
}

// Encode returns the token that resumes after k.
func Encode(k Key) string {
	b, _ := json.Marshal([]string{k.ListerID.String(), k.URL, k.VisitType})
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode parses a token made by Encode; anything else is an invalid-input
// error naming page_token.
func Decode(token string) (Key, error) {
	bad := revisit.Invalidf("page_token", "%q is not a page token of this listing", token)
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return Key{}, bad
	}
	var parts []string
	if json.Unmarshal(raw, &parts) != nil || len(parts) != 3 {
		return Key{}, bad
	}
	id, err := uuid.Parse(parts[0])
	if err != nil {
		return Key{}, bad
	}
	return Key{ListerID: id, URL: parts[1], VisitType: parts[2]}, nil
}

// EncodeID returns the token that resumes after the row with that id.
func EncodeID(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("id:" + strconv.FormatInt(id, 10)))
}

// DecodeID parses a token made by EncodeID; anything else is an
// invalid-input error naming page_token.
func DecodeID(token string) (int64, error) {
	bad := revisit.Invalidf("page_token", "%q is not a page token of this listing", token)
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return 0, bad
	}
	digits, ok := strings.CutPrefix(string(raw), "id:")
	if !ok {
		return 0, bad
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || id < 0 {
		return 0, bad
	}
	return id, nil
}

// EncodeIDPair returns the token that resumes after the row keyed by the
// ids (a, b), in (a, b) order.
func EncodeIDPair(a, b int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("ids:" + strconv.FormatInt(a, 10) + "," + strconv.FormatInt(b, 10)))
}

// DecodeIDPair parses a token made by EncodeIDPair; anything else is an
// invalid-input error naming page_token.
func DecodeIDPair(token string) (a, b int64, err error) {
	bad := revisit.Invalidf("page_token", "%q is not a page token of this listing", token)
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return 0, 0, bad
	}
	pair, ok := strings.CutPrefix(string(raw), "ids:")
	first, second, comma := strings.Cut(pair, ",")
	if !ok || !comma {
		return 0, 0, bad
	}
	a, errA := strconv.ParseInt(first, 10, 64)
	b, errB := strconv.ParseInt(second, 10, 64)
	if errA != nil || errB != nil || a < 0 || b < 0 {
		return 0, 0, bad
	}
	return a, b, nil
}

// QueueKey is where a listing of a queue's waiting messages resumes, in
// the order leases take them: the expired leases by expiry (ExpiresAt,
// microseconds since the epoch) then Seq, before the ready messages by
// Priority, highest first, then Seq. The zero key starts at the
// beginning.
type QueueKey struct {
	// Ready says the row was a ready message; otherwise an expired lease.
	Ready     bool
	ExpiresAt int64
	Priority  int
	Seq       int64
}

// The tags of the two kinds of QueueKey tokens.
const (
	queueExpiredTag = "expired:"
	queueReadyTag   = "ready:"
)

// EncodeQueue returns the token that resumes after k.
func EncodeQueue(k QueueKey) string {
	s := queueExpiredTag + strconv.FormatInt(k.ExpiresAt, 10)
	if k.Ready {
		s = queueReadyTag + strconv.Itoa(k.Priority)
	}
	return base64.RawURLEncoding.EncodeToString([]byte(s + "," + strconv.FormatInt(k.Seq, 10)))
}

// DecodeQueue parses a token made by EncodeQueue; anything else is an
// invalid-input error naming page_token.
func DecodeQueue(token string) (QueueKey, error) {
	bad := revisit.Invalidf("page_token", "%q is not a page token of this listing", token)
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return QueueKey{}, bad
	}
	var k QueueKey
	rest, expired := strings.CutPrefix(string(raw), queueExpiredTag)
	if !expired {
		if rest, k.Ready = strings.CutPrefix(rest, queueReadyTag); !k.Ready {
			return QueueKey{}, bad
		}
	}
	first, second, comma := strings.Cut(rest, ",")
	key, errKey := strconv.ParseInt(first, 10, 64)
	k.Seq, err = strconv.ParseInt(second, 10, 64)
	if !comma || errKey != nil || err != nil || key < 0 || k.Seq < 0 ||
		(k.Ready && key > revisit.MaxQueuePriority) {
		return QueueKey{}, bad
	}
	if k.Ready {
		k.Priority = int(key)
	} else {
		k.ExpiresAt = key
	}
	return k, nil
}

// SearchKey is where an origin search resumes: after the listed row
// (URL, VisitType, ListerID), or after every row of URL when WholeURL.
type SearchKey struct {
	URL       string
	VisitType string
	ListerID  uuid.UUID
	WholeURL  bool
}

// searchTag starts the tokens of origin searches, so that a token of
// another listing is refused rather than misread.
const searchTag = "search"

// EncodeSearch returns the token that resumes a search after k.
func EncodeSearch(k SearchKey) string {
	parts := []string{searchTag, k.URL}
	if !k.WholeURL {
		parts = append(parts, k.VisitType, k.ListerID.String())
	}
	b, _ := json.Marshal(parts)
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeSearch parses a token made by EncodeSearch; anything else is an
// invalid-input error naming page_token.
func DecodeSearch(token string) (SearchKey, error) {
	bad := revisit.Invalidf("page_token", "%q is not a page token of this search", token)
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return SearchKey{}, bad
	}
	var parts []string
	if json.Unmarshal(raw, &parts) != nil || len(parts) < 2 || parts[0] != searchTag {
		return SearchKey{}, bad
	}
	switch len(parts) {
	case 2:
		return SearchKey{URL: parts[1], WholeURL: true}, nil
	case 4:
		id, err := uuid.Parse(parts[3])
		if err != nil {
			return SearchKey{}, bad
		}
		return SearchKey{URL: parts[1], VisitType: parts[2], ListerID: id}, nil
	}
	return SearchKey{}, bad
}
