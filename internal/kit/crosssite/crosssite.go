// Package crosssite refuses the requests that a page of another site can
// make a browser send to a server it reaches, tokens or not: writes (a
// form or a no-cors fetch, whose bodies are forms or plain text, and
// whose Origin names the other site) and, through DNS rebinding, any
// request naming a host the server does not answer as.
package crosssite

import (
	"encoding/json"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Config says which hosts a server answers as.
type Config struct {
	// Hosts are the host names, without port, that clients reach the
	// server by (a proxy's public name); when set, a request naming
	// another host is refused.
	Hosts []string
	// Loopback says the server listens on loopback addresses only: unless
	// Hosts says otherwise, a request must name a loopback host
	// (localhost, a *.localhost name, a loopback IP).
	Loopback bool
}

// WriteTypes are the media types a write's body may have.
var WriteTypes = []string{"application/json", "application/x-msgpack"}

// Handler refuses, before next sees them: a request naming a host the
// server does not answer as (403); a write (any method but GET, HEAD and
// OPTIONS) from a browser page of another origin, as its Origin or
// Sec-Fetch-Site header says (403), or whose body is not one of
// WriteTypes (415). The refusals are JSON errors such as the API's.
func Handler(cfg Config, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := cfg.refusedHost(r.Host); msg != "" {
			refuse(w, http.StatusForbidden, "forbidden", msg)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
			if msg := cfg.fromOtherSite(r); msg != "" {
				refuse(w, http.StatusForbidden, "forbidden", msg)
				return
			}
			if ct := r.Header.Get("Content-Type"); ct != "" {
				if mt, _, err := mime.ParseMediaType(ct); err != nil || !slices.Contains(WriteTypes, mt) {
					refuse(w, http.StatusUnsupportedMediaType, "unsupported_media_type",
						fmt.Sprintf("a write's body is %s, not %q", strings.Join(WriteTypes, " or "), ct))
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// refusedHost says why a request naming host (with or without its port)
// is refused, "" when it is not.
func (cfg Config) refusedHost(hostPort string) string {
	host := hostPort
	if h, _, err := net.SplitHostPort(hostPort); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	switch {
	case len(cfg.Hosts) > 0:
		if slices.ContainsFunc(cfg.Hosts, func(h string) bool { return strings.EqualFold(h, host) }) ||
			(cfg.Loopback && isLoopback(host)) {
			return ""
		}
		return fmt.Sprintf("this server answers as %s, not %q (api.hosts)", strings.Join(cfg.Hosts, ", "), hostPort)
	case cfg.Loopback && !isLoopback(host):
		return fmt.Sprintf("this server listens on loopback and answers as localhost or a loopback address, not %q "+
			"(name the others in api.hosts)", hostPort)
	}
	return ""
}

// isLoopback reports whether host names this machine's loopback.
func isLoopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// fromOtherSite says why r comes from a page of another origin, "" when
// it does not: a browser names the page's origin in Origin (a program
// sends none) and says in Sec-Fetch-Site whether it is the server's own.
// An origin of the server's host, or of one of Hosts (the public name a
// proxy that rewrites Host is reached by), is the server's own.
func (cfg Config) fromOtherSite(r *http.Request) string {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "cross-site", "same-site":
		return "a write from a page of another site (Sec-Fetch-Site: " + site + ")"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || origin == "null" || (!strings.EqualFold(u.Host, r.Host) && !slices.ContainsFunc(cfg.Hosts,
		func(h string) bool { return strings.EqualFold(h, u.Hostname()) })) {
		return fmt.Sprintf("a write from a page of another origin (%q); this server is %s", origin, r.Host)
	}
	return ""
}

// refuse writes a JSON error.
func refuse(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}
