// Package access checks the tokens of HTTP requests against the tokens of
// the configuration (config.Token): without configured tokens everything
// is allowed; otherwise a request must carry a known token, of scope write
// when it changes something. The JSON API and the Software Heritage RPC
// share it.
package access

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
)

// The codes of refused requests.
const (
	// CodeUnauthorized: no token, or an unknown one (HTTP 401).
	CodeUnauthorized revisit.ErrorCode = "unauthorized"
	// CodeForbidden: a read token on a route that writes (HTTP 403).
	CodeForbidden revisit.ErrorCode = "forbidden"
)

// Guard checks requests against Tokens.
type Guard struct {
	// Tokens are the accepted tokens; none leaves everything open.
	Tokens []config.Token
	// Basic also takes the token from the password of HTTP Basic
	// authentication (the user name is ignored), for clients that can
	// only put credentials in a URL (http://user:TOKEN@host/).
	Basic bool
}

// Check returns the name of the token the request carries when it may
// proceed ("" when no token is needed): an error of code CodeUnauthorized
// or CodeForbidden otherwise. write says whether the request changes
// something.
func (g Guard) Check(r *http.Request, write bool) (string, error) {
	if len(g.Tokens) == 0 {
		return "", nil
	}
	secret, ok := g.secret(r)
	if !ok {
		return "", &revisit.Error{Code: CodeUnauthorized, Message: g.missing()}
	}
	var found *config.Token
	for i, t := range g.Tokens {
		if subtle.ConstantTimeCompare([]byte(t.Token), []byte(secret)) == 1 {
			found = &g.Tokens[i]
		}
	}
	switch {
	case found == nil:
		return "", &revisit.Error{Code: CodeUnauthorized, Message: "unknown " + g.kind()}
	case write && found.Scope != config.ScopeWrite:
		return "", &revisit.Error{Code: CodeForbidden, Message: "token " + found.Name + " is read-only; this route needs a write token"}
	}
	return found.Name, nil
}

// secret is the token the request carries.
func (g Guard) secret(r *http.Request) (string, bool) {
	if token, ok := bearerToken(r.Header.Get("Authorization")); ok {
		return token, true
	}
	if g.Basic {
		if _, password, ok := r.BasicAuth(); ok && password != "" {
			return password, true
		}
	}
	return "", false
}

func (g Guard) kind() string {
	if g.Basic {
		return "token"
	}
	return "bearer token"
}

func (g Guard) missing() string {
	if g.Basic {
		return "missing token (Authorization: Bearer TOKEN, or the password of HTTP Basic authentication, as in http://user:TOKEN@host/)"
	}
	return "missing bearer token (Authorization: Bearer TOKEN)"
}

// Challenge is the WWW-Authenticate header of a 401 response.
func (g Guard) Challenge() string {
	if g.Basic {
		return `Basic realm="revisit"`
	}
	return `Bearer realm="revisit"`
}

// bearerToken returns the token of an Authorization header of the Bearer
// scheme, whose name is case-insensitive (RFC 9110 §11.1).
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	token = strings.TrimLeft(token, " ")
	return token, ok && strings.EqualFold(scheme, "Bearer") && token != ""
}
