package fetch_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/fetch"
)

// Whole gives the body and its hash in one read, from a server and from a
// file, and a body past the cap is refused as Read refuses it.
func TestStreamWhole(t *testing.T) {
	body := "BEGIN:VCALENDAR\r\n" + strings.Repeat("X-PAD:0123456789\r\n", 5000) + "END:VCALENDAR\r\n"
	sum := sha256.Sum256([]byte(body))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/calendar")
		w.Write([]byte(body))
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "feed.ics")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, url string
		max       int64
		tooLarge  bool
	}{
		{"http", srv.URL, 1 << 20, false},
		{"file", "file://" + path, 1 << 20, false},
		{"http over the cap", srv.URL, int64(len(body) - 1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fetch.NewFetcher(0, 0, tc.max, nil)
			f.Client = srv.Client()
			resp, err := f.Open(context.Background(), fetch.Request{URL: tc.url})
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Stream.Close()
			got, hash, err := resp.Stream.Whole()
			var fe *fetch.Error
			if tc.tooLarge {
				if !errors.As(err, &fe) || fe.Kind != fetch.TooLarge {
					t.Fatalf("Whole over the cap: %v, want too_large", err)
				}
				return
			}
			if err != nil || string(got) != body || hash != hex.EncodeToString(sum[:]) {
				t.Fatalf("Whole: %d bytes, hash %s, err %v; want %d bytes, %x", len(got), hash, err, len(body), sum)
			}
		})
	}
}
