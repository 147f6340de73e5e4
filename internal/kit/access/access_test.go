package access

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
)

func TestGuard(t *testing.T) {
	tokens := []config.Token{
		{Name: "reader", Token: "read-secret-0123456789", Scope: config.ScopeRead},
		{Name: "writer", Token: "write-secret-0123456789", Scope: config.ScopeWrite},
	}
	for _, c := range []struct {
		name     string
		guard    Guard
		auth     string // Authorization header
		basic    string // Basic password, when auth is empty
		write    bool
		wantCode revisit.ErrorCode
		wantMsg  string
		wantName string // the token's name, when allowed
	}{
		{name: "open without tokens", guard: Guard{}, write: true},
		{name: "bearer write", guard: Guard{Tokens: tokens}, auth: "Bearer write-secret-0123456789", write: true,
			wantName: "writer"},
		{name: "bearer any case", guard: Guard{Tokens: tokens}, auth: "bEaReR  read-secret-0123456789", wantName: "reader"},
		{name: "read token on write", guard: Guard{Tokens: tokens}, auth: "Bearer read-secret-0123456789", write: true,
			wantCode: CodeForbidden, wantMsg: "token reader is read-only"},
		{name: "missing", guard: Guard{Tokens: tokens}, wantCode: CodeUnauthorized, wantMsg: "missing bearer token"},
		{name: "unknown", guard: Guard{Tokens: tokens}, auth: "Bearer nope", wantCode: CodeUnauthorized, wantMsg: "unknown bearer token"},
		{name: "basic refused without Basic", guard: Guard{Tokens: tokens}, basic: "write-secret-0123456789",
			wantCode: CodeUnauthorized, wantMsg: "missing bearer token"},
		{name: "basic password", guard: Guard{Tokens: tokens, Basic: true}, basic: "write-secret-0123456789", write: true,
			wantName: "writer"},
		{name: "basic read on write", guard: Guard{Tokens: tokens, Basic: true}, basic: "read-secret-0123456789", write: true,
			wantCode: CodeForbidden},
		{name: "basic unknown", guard: Guard{Tokens: tokens, Basic: true}, basic: "nope", wantCode: CodeUnauthorized, wantMsg: "unknown token"},
		{name: "basic missing", guard: Guard{Tokens: tokens, Basic: true}, wantCode: CodeUnauthorized, wantMsg: "http://user:TOKEN@host/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", nil)
			if c.auth != "" {
				r.Header.Set("Authorization", c.auth)
			} else if c.basic != "" {
				r.SetBasicAuth("anyone", c.basic)
			}
			name, err := c.guard.Check(r, c.write)
			if got := revisit.Code(err); got != c.wantCode {
				t.Fatalf("Check = %v (code %q), want code %q", err, got, c.wantCode)
			}
			if name != c.wantName {
				t.Errorf("Check names the token %q, want %q", name, c.wantName)
			}
			if err != nil && !strings.Contains(err.Error(), c.wantMsg) {
				t.Errorf("Check = %q, want it to say %q", err, c.wantMsg)
			}
		})
	}
}
