package api

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/feedback"
)

// GrabRequest is the body of POST /api/v1/next-visits/{peek,grab}.
// Policy defaults to oldest_scheduled_first, cooldowns to those of
// semantics.md §3.1 (a cooldown given as "0" is disabled), now to the
// server's clock.
type GrabRequest struct {
	VisitType          string            `json:"visit_type"`
	Count              int               `json:"count"`
	Policy             string            `json:"policy"`
	ListerID           *uuid.UUID        `json:"lister_id"`
	ListerName         string            `json:"lister_name"`
	ListerInstanceName string            `json:"lister_instance_name"`
	Disabled           bool              `json:"disabled"`
	Sample             float64           `json:"sample"`
	Cooldowns          *config.Cooldowns `json:"cooldowns"`
	Now                *time.Time        `json:"now"`
}

// NewGrabRequest returns the body of a grab or peek for p.
func NewGrabRequest(p revisit.GrabParams) GrabRequest {
	req := GrabRequest{VisitType: p.VisitType, Count: p.Count, Policy: string(p.Policy), ListerID: p.ListerID,
		ListerName: p.ListerName, ListerInstanceName: p.ListerInstanceName, Disabled: p.Disabled, Sample: p.Sample,
		Now: timePtr(p.Now)}
	if c := p.Cooldowns; c != nil {
		req.Cooldowns = config.NewCooldowns(*c)
	}
	return req
}

// params returns the grab parameters of the request.
func (g GrabRequest) params(dryRun bool, now time.Time) (revisit.GrabParams, error) {
	p := revisit.GrabParams{VisitType: g.VisitType, Count: g.Count, Policy: revisit.Policy(g.Policy),
		ListerID: g.ListerID, ListerName: g.ListerName, ListerInstanceName: g.ListerInstanceName,
		Disabled: g.Disabled, Sample: g.Sample, DryRun: dryRun, Now: now}
	if p.Policy == "" {
		p.Policy = revisit.OldestScheduledFirst
	}
	if g.Now != nil {
		p.Now = g.Now.UTC()
	}
	c := g.Cooldowns.Resolve()
	p.Cooldowns = &c
	_, err := p.Validate()
	return p, err
}

func (s *Server) handleGrab(dryRun bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req GrabRequest
		err := decode(r, &req)
		var p revisit.GrabParams
		if err == nil {
			p, err = req.params(dryRun, s.now())
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		os, err := s.st.GrabNextVisits(r.Context(), p)
		s.reply(w, r, OriginsResponse{Origins: mapSlice(os, NewListedOrigin)}, err)
	}
}

// VisitStatsResponse is the body of GET /api/v1/visit-stats.
type VisitStatsResponse struct {
	VisitStats []VisitStats `json:"visit_stats"`
}

func (s *Server) handleVisitStats(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	vt, urls := q.Get("visit_type"), q["url"]
	err := revisit.ValidateVisitType(vt)
	switch {
	case err != nil:
	case len(urls) == 0:
		err = revisit.Invalidf("url", "missing: name at least one origin URL")
	case len(urls) > maxIDs:
		err = revisit.Invalidf("url", "%d URLs, at most %d", len(urls), maxIDs)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	keys := make([]revisit.OriginKey, len(urls))
	for i, u := range urls {
		keys[i] = revisit.OriginKey{URL: u, VisitType: vt}
	}
	stats, err := s.st.VisitStatsGet(r.Context(), keys)
	s.reply(w, r, VisitStatsResponse{VisitStats: mapSlice(stats, NewVisitStats)}, err)
}

// QueuePosition is the queue position of a visit type.
type QueuePosition struct {
	VisitType string `json:"visit_type"`
	Position  int64  `json:"position"`
}

func (s *Server) handleQueuePosition(w http.ResponseWriter, r *http.Request) {
	vt := r.PathValue("visit_type")
	if err := revisit.ValidateVisitType(vt); err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.st.QueuePositionGet(r.Context(), vt)
	s.reply(w, r, QueuePosition{VisitType: vt, Position: p}, err)
}

// visitStatusDoc documents one element of POST /api/v1/visit-statuses
// (feedback.ParseJSON decodes it).
type visitStatusDoc struct {
	Origin    string    `json:"origin"`
	VisitType string    `json:"visit_type"`
	Status    string    `json:"status"`
	Date      time.Time `json:"date"`
	Snapshot  *string   `json:"snapshot"`
	Eventful  *bool     `json:"eventful"`
}

// VisitStatusesResponse counts what an ingest of visit statuses did.
type VisitStatusesResponse struct {
	// Processed counts the statuses folded into visit stats, Ignored the
	// others (created, ongoing, late or duplicate), Disabled the origins
	// disabled after repeated failures, Closed the visits in flight that
	// the statuses ended.
	Processed int `json:"processed"`
	Ignored   int `json:"ignored"`
	Disabled  int `json:"disabled"`
	Closed    int `json:"closed"`
}

func (s *Server) handleVisitStatuses(w http.ResponseWriter, r *http.Request) {
	raw, err := decodeBatch[json.RawMessage](r, "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	batch := make([]feedback.VisitStatus, len(raw))
	for i, e := range raw {
		if batch[i], err = feedback.ParseJSON(e, s.horizon()); err != nil {
			s.writeError(w, r, elementError(err, i))
			return
		}
	}
	res, err := feedback.Process(r.Context(), s.st, batch, rand.Float64, s.horizon())
	s.reply(w, r, VisitStatusesResponse{Processed: res.Processed, Ignored: res.Ignored, Disabled: res.Disabled,
		Closed: res.Closed}, err)
}

// elementError names element i of a bare array in an error of its own.
func elementError(err error, i int) error {
	prefix := fmt.Sprintf("[%d].", i)
	if revisit.Code(err) == revisit.CodeInternal { // a plain error of jsonobj: malformed element
		return revisit.Invalidf(fmt.Sprintf("[%d]", i), "%s", err.Error())
	}
	return prefixed(err, prefix)
}
