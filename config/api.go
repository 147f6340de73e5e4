package config

import (
	"fmt"
	"net"
	"slices"
	"strings"
)

// DefaultAPIListen is where revisit serve listens unless told otherwise:
// loopback only.
const DefaultAPIListen = "127.0.0.1:5080"

// MinTokenLength is the shortest API token accepted: shorter ones are
// guessable.
const MinTokenLength = 16

// API configures the HTTP server of revisit serve (API, dashboard,
// metrics, health):
//
//	api:
//	  listen: 0.0.0.0:5080      # default 127.0.0.1:5080
//	  tokens:                   # bearer tokens; none: no access control
//	    - {name: grafana, token: "…", scope: read}
//	    - {name: lister-gitlab, token: "…", scope: write}
//	  hosts: [revisit.example.org]  # names clients use; default: any, or
//	                                # only loopback ones on a loopback address
//
// A read token may call the routes that change nothing; a write token may
// call every route. Without tokens the API is open, which revisit serve
// only accepts on a loopback address.
type API struct {
	// Listen is the host:port to listen on.
	Listen string `yaml:"listen"`
	// Tokens are the bearer tokens the API accepts.
	Tokens []Token `yaml:"tokens"`
	// Hosts are the host names, without port, clients reach the server
	// by (a proxy's public name); when set, requests naming another host
	// are refused. On a loopback address the loopback names are always
	// served, and without Hosts only they are (no DNS rebinding).
	Hosts []string `yaml:"hosts"`
}

// Token is one bearer token of the API.
type Token struct {
	// Name identifies the token in logs (never the token itself).
	Name string `yaml:"name"`
	// Token is the secret a client sends as "Authorization: Bearer …".
	Token string `yaml:"token"`
	// Scope is read or write.
	Scope string `yaml:"scope"`
}

// Token scopes.
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
)

func defaultAPI() API { return API{Listen: DefaultAPIListen} }

// validate checks the section; errors name the key, never show a token.
func (a API) validate() error {
	if _, _, err := net.SplitHostPort(a.Listen); err != nil {
		return fmt.Errorf("api.listen: %q is not host:port", a.Listen)
	}
	for i, h := range a.Hosts {
		if h == "" || strings.ContainsAny(h, ":/ ") {
			return fmt.Errorf("api.hosts[%d]: %q is not a host name without port", i, h)
		}
	}
	names := map[string]bool{}
	secrets := map[string]bool{}
	for i, t := range a.Tokens {
		key := fmt.Sprintf("api.tokens[%d]", i)
		switch {
		case t.Name == "":
			return fmt.Errorf("%s.name: missing", key)
		case names[t.Name]:
			return fmt.Errorf("%s.name: %q is the name of another token", key, t.Name)
		case len(t.Token) < MinTokenLength:
			return fmt.Errorf("%s.token: shorter than %d characters", key, MinTokenLength)
		case strings.ContainsFunc(t.Token, func(r rune) bool { return r <= ' ' || r == 0x7f }):
			return fmt.Errorf("%s.token: contains white space or control characters", key)
		case secrets[t.Token]:
			return fmt.Errorf("%s.token: the same as another token's", key)
		case !slices.Contains([]string{ScopeRead, ScopeWrite}, t.Scope):
			return fmt.Errorf("%s.scope: %q is not one of %s, %s", key, t.Scope, ScopeRead, ScopeWrite)
		}
		names[t.Name], secrets[t.Token] = true, true
	}
	return nil
}

// IsLoopback reports whether listen (host:port) listens on loopback
// addresses only: localhost or a loopback IP. An empty host (every
// address) is not loopback.
func IsLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
