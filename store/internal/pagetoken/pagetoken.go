// Package pagetoken encodes the keyset page tokens of listed origins: the
// full key (lister_id, url, visit_type) of the last row of a page, opaque to
// callers.
package pagetoken

import (
	"encoding/base64"
	"encoding/json"

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
