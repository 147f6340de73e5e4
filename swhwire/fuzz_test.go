package swhwire

import (
	"bytes"
	"fmt"
	"testing"
)

func typeName(v any) string { return fmt.Sprintf("%T", v) }

// FuzzDecode feeds arbitrary bytes to Decode: it must return a value or an
// error, never panic, and a decoded value must encode and decode again to
// the same encoding.
func FuzzDecode(f *testing.F) {
	for _, seed := range [][]byte{
		{0x82, 0xc4, 0x07, 's', 'w', 'h', 't', 'y', 'p', 'e', 0xa4, 'u', 'u', 'i', 'd', 0xc4, 0x01, 'd', 0xa1, 'x'},
		{0xd7, 0xff, 0x1d, 0x6f, 0x28, 0x00, 0x6b, 0x06, 0xcd, 0xc0},
		{0xc7, 0x09, 0x01, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		{0xdd, 0xff, 0xff, 0xff, 0xff},
		{0x91, 0x91, 0x91, 0x80},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode(b)
		if err != nil {
			return
		}
		enc, err := Encode(v)
		if err != nil {
			t.Fatalf("decoded %#v but cannot encode it: %v", v, err)
		}
		v2, err := Decode(enc)
		if err != nil {
			t.Fatalf("cannot decode our own encoding %x: %v", enc, err)
		}
		enc2, err := Encode(v2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable: %x then %x (%v)", enc, enc2, err)
		}
	})
}
