package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/kit/jsonobj"
	"github.com/revisit-sched/revisit/recording"
)

// RecordRequest is the body of POST /api/v1/listed-origins.
type RecordRequest struct {
	Origins []ListedOrigin `json:"origins"`
}

// RecordResponse counts the origins a record inserted and updated.
type RecordResponse struct {
	Inserted int `json:"inserted"`
	Updated  int `json:"updated"`
}

// ListedOriginsPage is one page of GET /api/v1/listed-origins;
// NextPageToken is empty on the last page.
type ListedOriginsPage struct {
	Origins       []ListedOrigin `json:"origins"`
	NextPageToken string         `json:"next_page_token,omitempty"`
}

// OriginsResponse is the body of a grab or peek.
type OriginsResponse struct {
	Origins []ListedOrigin `json:"origins"`
}

// decodeBatch decodes the body {"<key>": [...]} (or, with key "", a bare
// array) strictly, element by element, so that errors name the element:
// origins[3].url. It refuses more than MaxBatch elements as soon as it
// meets one more, so that a body of many tiny elements costs no more than
// MaxBatch of them.
func decodeBatch[T any](r *http.Request, key string) ([]T, error) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, decodeError(err)
	}
	list := data
	if key != "" {
		// Unmarshal rather than a Decoder, which would buffer the whole
		// body again.
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, decodeError(err)
		}
		for k := range obj {
			if k != key {
				return nil, revisit.Invalidf(k, "unknown field")
			}
		}
		if list = obj[key]; len(list) == 0 {
			return nil, revisit.Invalidf(key, "missing")
		}
	}
	raw, err := arrayElements(list, key, MaxBatch)
	if err != nil {
		return nil, err
	}
	if err := jsonobj.Check(data); err != nil {
		return nil, err
	}
	out := make([]T, len(raw))
	for i, e := range raw {
		if err := decodeFrom(e, &out[i], fmt.Sprintf("%s[%d].", key, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// arrayElements returns the elements of the JSON array data, the value of
// field, refusing more than limit of them.
func arrayElements(data []byte, field string, limit int) ([]json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	if tok, err := d.Token(); err != nil {
		return nil, prefixed(decodeError(err), field+".")
	} else if tok != json.Delim('[') {
		return nil, revisit.Invalidf(field, "got a JSON %s, want an array", tokenKind(tok))
	}
	var out []json.RawMessage
	for d.More() {
		if len(out) == limit {
			return nil, revisit.Invalidf(field, "more than %d elements, at most %d in one request", limit, limit)
		}
		var e json.RawMessage
		if err := d.Decode(&e); err != nil {
			return nil, prefixed(decodeError(err), field+".")
		}
		out = append(out, e)
	}
	if _, err := d.Token(); err != nil { // ]
		return nil, prefixed(decodeError(err), field+".")
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, revisit.Invalidf(field, "trailing data after the JSON value")
	}
	return out, nil
}

// tokenKind names the JSON type of the first token of a value.
func tokenKind(tok json.Token) string {
	switch tok := tok.(type) {
	case json.Delim:
		if tok == '{' {
			return "object"
		}
		return "array"
	case string:
		return "string"
	case float64, json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

func (s *Server) handleOriginRecord(w http.ResponseWriter, r *http.Request) {
	batch, err := decodeBatch[ListedOrigin](r, "origins")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := recording.Batch(r.Context(), s.st, mapSlice(batch, ListedOrigin.Domain))
	var invalid *recording.InvalidOrigin
	if errors.As(err, &invalid) {
		s.writeError(w, r, prefixed(invalid.Err, fmt.Sprintf("origins[%d].", invalid.Index)))
		return
	}
	s.reply(w, r, RecordResponse{Inserted: res.Inserted, Updated: res.Updated}, err)
}

func (s *Server) handleOriginList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := revisit.ListedOriginFilter{URLs: q["url"], VisitType: q.Get("visit_type"), PageToken: q.Get("page_token")}
	var err error
	if f.ListerID, err = queryUUID(r, "lister_id"); err == nil {
		f.Enabled, err = revisit.ParseEnabledFilter(q.Get("enabled"))
	}
	if err == nil {
		f.Limit, err = queryLimit(r, revisit.PageSize)
	}
	if err == nil && len(f.URLs) > maxIDs {
		err = revisit.Invalidf("url", "%d URLs, at most %d", len(f.URLs), maxIDs)
	}
	if err == nil && f.VisitType != "" {
		err = revisit.ValidateVisitType(f.VisitType)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.st.ListedOriginsGet(r.Context(), f)
	s.reply(w, r, ListedOriginsPage{Origins: mapSlice(page.Origins, NewListedOrigin),
		NextPageToken: page.NextPageToken}, err)
}
