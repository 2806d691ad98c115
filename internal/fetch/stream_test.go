package fetch_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
)

// Open hands the body over as it arrives: the reader gets the same bytes
// Fetch would, the hash is the body's once read to its end, and what Fetch
// refuses (too large, cut short) is an error of the same kind from the
// stream.
func TestOpenStreamsWhatFetchReads(t *testing.T) {
	big := strings.Repeat("X", 4<<10)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(smallCalendar))
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cal.ics":
			w.Write([]byte(smallCalendar))
		case "/gzip.ics":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz.Bytes())
		case "/big.ics": // no Content-Length: the cap is met while streaming
			w.(http.Flusher).Flush()
			w.Write([]byte(big))
		case "/cut.ics":
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte(smallCalendar))
		}
	}))
	defer srv.Close()
	f := fetch.NewFetcher(time.Second, 5*time.Second, 2<<10, feed.CheckBody)
	sum := sha256.Sum256([]byte(smallCalendar))
	for _, path := range []string{"/cal.ics", "/gzip.ics"} {
		resp, err := f.Open(context.Background(), fetch.Request{URL: srv.URL + path})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Body != nil || resp.Stream == nil {
			t.Fatalf("%s: Open held the body", path)
		}
		got, err := io.ReadAll(resp.Stream)
		if err != nil || string(got) != smallCalendar {
			t.Errorf("%s: read %q, %v", path, got, err)
		}
		if h, err := resp.Stream.Finish(); err != nil || h != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: hash %q, %v", path, h, err)
		}
		resp.Stream.Close()
		whole, err := f.Fetch(context.Background(), fetch.Request{URL: srv.URL + path})
		if err != nil || whole.BodyHash != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: Fetch's hash %q, %v", path, whole.BodyHash, err)
		}
	}
	for path, kind := range map[string]fetch.ErrorKind{"/big.ics": fetch.TooLarge, "/cut.ics": fetch.Unreachable} {
		resp, err := f.Open(context.Background(), fetch.Request{URL: srv.URL + path})
		if err != nil {
			t.Fatal(err)
		}
		_, rerr := io.ReadAll(resp.Stream)
		_, ferr := resp.Stream.Finish()
		resp.Stream.Close()
		if fetchErr(t, rerr).Kind != kind || fetchErr(t, ferr).Kind != kind || fetchErr(t, resp.Stream.Err()).Kind != kind {
			t.Errorf("%s: read %v, finish %v; want %s", path, rerr, ferr, kind)
		}
	}
}
