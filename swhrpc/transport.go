package swhrpc

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/kit/access"
	"github.com/revisit-sched/revisit/swhwire"
)

// MaxBodyBytes bounds a request body. The largest calls carry batches of
// at most MaxBatch models (listed origins, visit stats, tasks): 10,000
// listed origins take about 3 MB, so that 32 MiB leaves room for large
// extra loader arguments while bounding what one request holds in memory
// (its decoded values take a few times more).
const MaxBodyBytes = 32 << 20

// MaxBatch bounds the elements of a list parameter (models to write, ids
// to read), so that one call holds the store for a bounded time.
const MaxBatch = 10_000

// MaxBodyValues bounds the values of a request body (keys and elements of
// every map and array): MaxBatch listed origins take about 300,000, and
// decoding costs tens of bytes a value, however small on the wire.
const MaxBodyValues = 1_000_000

// decodeLimits bound the decoding of a request body.
var decodeLimits = swhwire.Limits{MaxSize: MaxBodyBytes, MaxDepth: swhwire.DefaultLimits.MaxDepth,
	MaxLen: swhwire.DefaultLimits.MaxLen, MaxValues: MaxBodyValues}

// Content types of requests and responses.
const (
	contentMsgpack = "application/x-msgpack"
	contentJSON    = "application/json"
)

// ServeHTTP serves one request: an endpoint's call, the banner or the site
// map. Every response has a Content-Length (the client cannot decode a
// chunked one).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/")
	if page, ok := pages[path]; ok {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.fail(w, r, methodNotAllowed(r, "GET"))
			return
		}
		page(w)
		return
	}
	e, ok := s.endpoints[path]
	switch {
	case !ok:
		s.fail(w, r, httpError(http.StatusNotFound, "no endpoint %s (GET /site-map lists them)", r.URL.Path))
		return
	case r.Method != http.MethodPost:
		s.fail(w, r, methodNotAllowed(r, "POST"))
		return
	}
	if _, err := s.guard.Check(r, e.write); err != nil {
		if revisit.Code(err) == access.CodeUnauthorized {
			w.Header().Set("WWW-Authenticate", s.guard.Challenge())
		}
		s.fail(w, r, err)
		return
	}
	p, err := readParams(w, r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c := e.bind(s, p)
	if err := p.finish(); err != nil {
		s.fail(w, r, err)
		return
	}
	result, err := c(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, result)
}

func methodNotAllowed(r *http.Request, allow string) error {
	return &allowError{allow: allow, rpcError: httpError(http.StatusMethodNotAllowed,
		"%s %s: method not allowed (allowed: %s)", r.Method, r.URL.Path, allow)}
}

// allowError is a 405 and the methods its path allows.
type allowError struct {
	*rpcError
	allow string
}

// readParams reads the body of a call: a map of parameter names to values,
// in msgpack (or JSON); an empty body is an empty map.
func readParams(w http.ResponseWriter, r *http.Request) (*record, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, httpError(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", MaxBodyBytes)
	case err != nil:
		return nil, revisit.Invalidf("", "reading the body: %v", err)
	}
	var v any = swhwire.Map{}
	if len(body) > 0 {
		if v, err = decodeBody(r.Header.Get("Content-Type"), body); err != nil {
			return nil, err
		}
	}
	m, ok := v.(swhwire.Map)
	if !ok {
		return nil, revisit.Invalidf("", "the body is %s, want a dict of parameters", pyKind(v))
	}
	return newRecord("", "parameter", m)
}

// decodeBody decodes a body by its content type.
func decodeBody(contentType string, body []byte) (any, error) {
	mediaType, _, _ := mime.ParseMediaType(contentType)
	var v any
	var err error
	switch mediaType {
	case contentMsgpack:
		v, err = decodeLimits.Decode(body)
	case contentJSON:
		v, err = swhwire.DecodeJSON(body, decodeLimits)
	default:
		return nil, httpError(http.StatusUnsupportedMediaType, "content type %q: send %s (or %s)", contentType, contentMsgpack, contentJSON)
	}
	if err != nil {
		return nil, revisit.Invalidf("", "the body is not valid %s: %v", mediaType, err)
	}
	return v, nil
}

// reply writes a call's result, in the format the request's Accept header
// prefers.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, v any) {
	contentType := negotiate(r.Header.Get("Accept"))
	encode := swhwire.Encode
	if contentType == contentJSON {
		encode = swhwire.EncodeJSON
	}
	body, err := encode(v)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	write(w, http.StatusOK, contentType, body)
}

// fail writes err as an error body, always in msgpack as swh-core's server
// does.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var allow *allowError
	if errors.As(err, &allow) {
		w.Header().Set("Allow", allow.allow)
		err = allow.rpcError
	}
	e := toRPCError(err, s.log, r.URL.Path)
	body, encErr := swhwire.Encode(e.exc.Body())
	if encErr != nil {
		s.log.Error("swhrpc: encoding an error", "err", encErr)
		body, _ = swhwire.Encode(httpError(http.StatusInternalServerError, "internal error").exc.Body())
	}
	write(w, e.status, contentMsgpack, body)
}

// write writes a whole response with its Content-Length.
func write(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// negotiate picks the response format of an Accept header as swh-core's
// server does: the better quality of msgpack and JSON, the more specific
// match on equal quality, JSON on a tie or without a header.
func negotiate(accept string) string {
	best, bestQ, bestSpec := contentJSON, -1.0, -1
	for _, offer := range []string{contentJSON, contentMsgpack} {
		q, spec := acceptQuality(accept, offer)
		if q > bestQ || (q == bestQ && spec > bestSpec) {
			best, bestQ, bestSpec = offer, q, spec
		}
	}
	if bestQ <= 0 {
		return contentJSON
	}
	return best
}

// acceptQuality is the quality an Accept header gives a media type, from
// its most specific matching range (2: exact, 1: type/*, 0: */*); -1 when
// no range matches.
func acceptQuality(accept, mediaType string) (q float64, specificity int) {
	q, specificity = -1, -1
	typ, _, _ := strings.Cut(mediaType, "/")
	for _, part := range strings.Split(accept, ",") {
		rng, params, _ := mime.ParseMediaType(strings.TrimSpace(part))
		spec := -1
		switch {
		case rng == mediaType:
			spec = 2
		case rng == typ+"/*":
			spec = 1
		case rng == "*/*":
			spec = 0
		}
		if spec <= specificity {
			continue
		}
		quality := 1.0
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				quality = f
			}
		}
		q, specificity = quality, spec
	}
	return q, specificity
}

// pages are the GET pages: a banner, and the site map.
var pages = map[string]func(http.ResponseWriter){
	"": func(w http.ResponseWriter) {
		write(w, http.StatusOK, "text/plain; charset=utf-8",
			[]byte("revisit: Software Heritage scheduler RPC server (POST /<endpoint> in msgpack; GET /site-map lists the endpoints)\n"))
	},
	"site-map": func(w http.ResponseWriter) {
		type rule struct {
			Rule        string `json:"rule"`
			Description string `json:"description"`
		}
		rules := make([]rule, 0, len(endpoints))
		for _, e := range endpoints {
			rules = append(rules, rule{Rule: "/" + e.path, Description: e.doc})
		}
		body, _ := json.Marshal(rules)
		write(w, http.StatusOK, contentJSON, body)
	},
}
