package fetch_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
)

// Secrets of the hostile feed below; each must stay out of every error.
const (
	pathToken   = "PATHTOKEN93f1"
	queryToken  = "QUERYTOKEN5ab2"
	headerToken = "HEADERSECRET77"
	password    = "BASICPASSWORD11"
)

// echoServer answers every request with a status line that the server
// builds from the request (servers that echo the path are common).
func echoServer(t *testing.T, status func(r *http.Request) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				c.Write([]byte(status(r) + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

func TestNoFeedSecretInAnError(t *testing.T) {
	echoes := []struct {
		name   string
		status func(r *http.Request) string
	}{
		{"request URI", func(r *http.Request) string { return "HTTP/1.1 404 Not Found: " + r.RequestURI }},
		{"decoded path and query", func(r *http.Request) string {
			q, _ := url.QueryUnescape(r.URL.RawQuery)
			return "HTTP/1.1 404 Not Found " + r.URL.Path + " " + q
		}},
		{"lower-cased", func(r *http.Request) string { return "HTTP/1.1 410 gone " + strings.ToLower(r.RequestURI) }},
		{"upper-cased", func(r *http.Request) string { return "HTTP/1.1 503 GONE " + strings.ToUpper(r.RequestURI) }},
		{"query value alone", func(r *http.Request) string { return "HTTP/1.1 403 bad token " + r.URL.Query().Get("token") }},
		{"path segment alone", func(r *http.Request) string { return "HTTP/1.1 401 unknown calendar " + pathToken }},
		{"headers", func(r *http.Request) string {
			return "HTTP/1.1 401 key " + r.Header.Get("X-Api-Key") + " auth " + r.Header.Get("Authorization")
		}},
		{"password", func(r *http.Request) string {
			_, p, _ := r.BasicAuth()
			return "HTTP/1.1 401 wrong password " + p
		}},
		{"full URL", func(r *http.Request) string { return "HTTP/1.1 500 error at http://" + r.Host + r.RequestURI }},
		{"malformed status code", func(r *http.Request) string { return "HTTP/1.1 4" + r.URL.RawQuery + " x" }},
		{"malformed status line", func(r *http.Request) string { return "ICY " + r.RequestURI }},
	}
	for _, e := range echoes {
		t.Run(e.name, func(t *testing.T) {
			base := echoServer(t, e.status)
			req := fetch.Request{
				URL:       base + "/private/" + pathToken + "/basic.ics?token=" + queryToken + "&x=1",
				Headers:   map[string]string{"X-Api-Key": headerToken},
				BasicAuth: &fetch.BasicAuth{Username: "alice", Password: password},
			}
			_, err := fetch.NewFetcher(time.Second, 5*time.Second, 1<<20, feed.CheckBody).Fetch(context.Background(), req)
			if err == nil {
				t.Fatal("fetch succeeded")
			}
			msg := err.Error() + fmt.Sprintf(" %v %+v", err, err)
			for _, s := range []string{pathToken, queryToken, headerToken, password, "QWxpY2U6QkFTSUNQQVNTV09SRDEx"} {
				if strings.Contains(strings.ToLower(msg), strings.ToLower(s)) {
					t.Errorf("error carries %s: %q", s, msg)
				}
			}
		})
	}
}

// A redirect's Location is the server's word; the token it hands out is
// as secret as ours.
func TestNoRedirectTokenInAnError(t *testing.T) {
	const issued = "ISSUEDTOKEN4242"
	srv := echoServer(t, func(r *http.Request) string {
		if r.URL.Path == "/start" {
			return "HTTP/1.1 302 Found\r\nLocation: /next?sig=" + issued
		}
		return "HTTP/1.1 404 Not Found " + r.RequestURI
	})
	_, err := fetch.NewFetcher(time.Second, 5*time.Second, 1<<20, feed.CheckBody).Fetch(context.Background(), fetch.Request{URL: srv + "/start"})
	if err == nil || strings.Contains(err.Error(), issued) {
		t.Fatalf("error = %v", err)
	}
	if !strings.Contains(err.Error(), "404") {
		t.Errorf("error lost its status: %v", err)
	}
}

func TestServerTextPrintsOnlyAPlaceholder(t *testing.T) {
	var zero fetch.ServerText
	for _, verb := range []string{"%s", "%v", "%+v", "%#v", "%q", "%x", "%d"} {
		if got := fmt.Sprintf(verb, zero); got != "(text from the feed server)" {
			t.Errorf("%s prints %q", verb, got)
		}
	}
}
