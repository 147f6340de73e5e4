package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAPISection(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{})
	require.NoError(t, err)
	require.Equal(t, DefaultAPIListen, cfg.API.Listen)
	require.Empty(t, cfg.API.Tokens)

	cfg, err = loadYAML(t, `
api:
  listen: 0.0.0.0:8080
  tokens:
    - {name: grafana, token: aaaaaaaaaaaaaaaaaaaa, scope: read}
    - {name: ops, token: bbbbbbbbbbbbbbbbbbbb, scope: write}
  hosts: [sched.example.org]
`, "REVISIT_API_LISTEN=127.0.0.1:9000")
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9000", cfg.API.Listen, "the environment overrides the file")
	require.Equal(t, []Token{{Name: "grafana", Token: "aaaaaaaaaaaaaaaaaaaa", Scope: "read"},
		{Name: "ops", Token: "bbbbbbbbbbbbbbbbbbbb", Scope: "write"}}, cfg.API.Tokens)
	require.Equal(t, []string{"sched.example.org"}, cfg.API.Hosts)
}

func TestAPISectionErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ yaml, want string }{
		{"api: {listen: nowhere}", `api.listen: "nowhere" is not host:port`},
		{"api: {hosts: [sched.example.org:5080]}", `api.hosts[0]: "sched.example.org:5080" is not a host name without port`},
		{"api: {tokens: [{token: aaaaaaaaaaaaaaaaaaaa, scope: read}]}", "api.tokens[0].name: missing"},
		{"api: {tokens: [{name: a, token: short, scope: read}]}", "api.tokens[0].token: shorter than 16"},
		{"api: {tokens: [{name: a, token: 'aaaaaaaa aaaaaaaaaa', scope: read}]}", "white space"},
		{"api: {tokens: [{name: a, token: aaaaaaaaaaaaaaaaaaaa, scope: admin}]}", `api.tokens[0].scope: "admin" is not one of read, write`},
		{"api: {tokens: [{name: a, token: aaaaaaaaaaaaaaaaaaaa, scope: read}, {name: a, token: bbbbbbbbbbbbbbbbbbbb, scope: read}]}",
			`api.tokens[1].name: "a" is the name of another token`},
		{"api: {tokens: [{name: a, token: aaaaaaaaaaaaaaaaaaaa, scope: read}, {name: b, token: aaaaaaaaaaaaaaaaaaaa, scope: write}]}",
			"api.tokens[1].token: the same as another token's"},
		{"api: {tokens: [{name: a, token: aaaaaaaaaaaaaaaaaaaa, scope: read, extra: 1}]}", `unknown key "api.tokens[0].extra"`},
	} {
		_, err := loadYAML(t, c.yaml)
		require.ErrorContains(t, err, c.want, c.yaml)
		require.NotContains(t, err.Error(), "aaaaaaaaaaaaaaaaaaaa", "tokens are never shown")
	}
}

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:5080": true, "localhost:1": true, "[::1]:80": true, "127.1.2.3:0": true,
		"0.0.0.0:5080": false, ":5080": false, "192.168.1.2:80": false, "example.org:80": false, "bad": false,
	} {
		require.Equal(t, want, IsLoopback(addr), addr)
	}
}
