package headerlimit

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(Handler(DefaultMax, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})))
	defer srv.Close()
	for _, c := range []struct {
		name   string
		header int
		want   int
	}{{"small", 100, 204}, {"just under", DefaultMax - 1000, 204}, {"over", DefaultMax + 10, 431}, {"much over", 900 << 10, 431}} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/listers", nil)
		req.Header.Set("X-Big", strings.Repeat("a", c.header))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Code, Message string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
		if c.want == 431 && (resp.Header.Get("Content-Type") != "application/json" || body.Error.Code != "headers_too_large" ||
			!strings.Contains(body.Error.Message, "at most 65536")) {
			t.Errorf("%s: %s %+v is not the JSON error", c.name, resp.Header.Get("Content-Type"), body)
		}
	}
}
