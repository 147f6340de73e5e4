package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/revisit-sched/revisit"
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
// origins[3].url. It refuses more than MaxBatch elements.
func decodeBatch[T any](r *http.Request, key string) ([]T, error) {
	var raw []json.RawMessage
	if key == "" {
		if err := decode(r, &raw); err != nil {
			return nil, err
		}
	} else {
		var obj map[string]json.RawMessage
		if err := decode(r, &obj); err != nil {
			return nil, err
		}
		for k := range obj {
			if k != key {
				return nil, revisit.Invalidf(k, "unknown field")
			}
		}
		if len(obj[key]) == 0 {
			return nil, revisit.Invalidf(key, "missing")
		}
		if err := decodeFrom(obj[key], &raw, key+"."); err != nil {
			return nil, err
		}
	}
	if len(raw) > MaxBatch {
		return nil, revisit.Invalidf(key, "%d elements, at most %d in one request", len(raw), MaxBatch)
	}
	out := make([]T, len(raw))
	for i, e := range raw {
		if err := decodeFrom(e, &out[i], fmt.Sprintf("%s[%d].", key, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
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
