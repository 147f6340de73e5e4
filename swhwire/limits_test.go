package swhwire

import (
	"strings"
	"testing"
)

// TestDecodeRefuses checks that hostile or malformed input gets an error
// naming the problem.
func TestDecodeRefuses(t *testing.T) {
	deep := strings.Repeat("\x91", 100) + "\xc0"
	for _, c := range []struct{ name, in, want string }{
		{"huge array", "\xdd\xff\xff\xff\xff", "exceeds the limit of 4194304"},
		{"short array", "\xdc\x00\x09\x01", "only 1 bytes left"},
		{"deep", deep, "nested deeper than 64"},
		{"truncated", "\xcd\x01", "input ends inside a value"},
		{"trailing", "\x01\x02", "1 bytes after the value"},
		{"bad utf-8", "\xa1\xff", "not valid UTF-8"},
		{"unknown ext", "\xd4\x05\x00", "unknown ext type 5"},
		{"bad timestamp", "\xd5\xff\x00\x00", "timestamp of 2 bytes"},
		{"map key", "\x81\x90\x01", "Python cannot hash"},
		{"reserved", "\xc1", "reserved type code 0xc1"},
		{"bad envelope", "\x82\xc4\x07swhtype\xa4uuid\xc4\x01d\x01", "uuid envelope: payload is a int"},
	} {
		_, err := Decode([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
	if _, err := (Limits{MaxSize: 4, MaxDepth: 8, MaxLen: 8}).Decode([]byte("\xa5hello")); err == nil {
		t.Error("input beyond MaxSize was accepted")
	}
}
