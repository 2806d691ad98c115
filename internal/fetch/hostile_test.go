package fetch_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
)

// hostileServer answers every request with the given raw status line, so
// the reason phrase can carry what net/http's server would never send.
func hostileServer(t *testing.T, statusLine string) string {
	t.Helper()
	return echoServer(t, func(*http.Request) string { return statusLine })
}

// HostileReason is a status text that recolours the terminal and rewrites
// the line with a carriage return.
const HostileReason = "\x1b[31mService Unavailable\rall good\x1b[0m\x1b]0;pwned\x07"

func TestFetchEscapesTheServersStatusText(t *testing.T) {
	for _, code := range []string{"503", "401", "404", "418", "206"} {
		t.Run(code, func(t *testing.T) {
			url := hostileServer(t, "HTTP/1.1 "+code+" "+HostileReason)
			_, err := fetch.NewFetcher(time.Second, 5*time.Second, 1<<20, feed.CheckBody).Fetch(context.Background(), fetch.Request{URL: url + "/feed.ics"})
			fe := fetchErr(t, err)
			msg := err.Error()
			if strings.ContainsAny(msg, "\x1b\r\x07") {
				t.Errorf("error carries raw control characters: %q", msg)
			}
			if !strings.Contains(msg, `\x1b[31mService Unavailable\rall good`) {
				t.Errorf("error does not show the status text escaped: %q", msg)
			}
			if fe.StatusCode == 0 {
				t.Errorf("status code lost: %+v", fe)
			}
		})
	}
}

func TestFetchCutsALongStatusText(t *testing.T) {
	url := hostileServer(t, "HTTP/1.1 503 "+strings.Repeat("A", 20000))
	_, err := fetch.NewFetcher(time.Second, 5*time.Second, 1<<20, feed.CheckBody).Fetch(context.Background(), fetch.Request{URL: url})
	fetchErr(t, err)
	if n := len(err.Error()); n > 300 {
		t.Errorf("error is %d bytes long", n)
	}
}
