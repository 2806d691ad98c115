package deploy_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// Secrets the installed service must get from the environment file or the
// login, and must never print.
const (
	feedSecret    = "feed-secret-5eb1"
	statusSecret  = "status-secret-77a0"
	refreshSecret = "refresh-secret-c3d9"
	loginCode     = "code-from-google-0f12"
)

// google stands in for Google: the OAuth token endpoint (the code
// exchange of a login and token refreshes) and the Calendar API (the
// emulator), which refuses any request without an access token it issued.
type google struct {
	fake   *gcalfake.Server
	oauth  *httptest.Server
	api    *httptest.Server
	mu     sync.Mutex
	issued map[string]bool
	grants []string // grant types seen, in order
}

func newGoogle(t *testing.T) *google {
	t.Helper()
	g := &google{fake: gcalfake.New(gcalfake.Options{Seed: 18}), issued: map[string]bool{}}
	g.fake.AddCalendar("team@example.com", "UTC")
	g.oauth = httptest.NewServer(http.HandlerFunc(g.token))
	t.Cleanup(g.oauth.Close)
	g.api = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		ok := g.issued[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		g.mu.Unlock()
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"code":401,"message":"Invalid Credentials","errors":[{"reason":"authError"}]}}`)
			return
		}
		g.fake.ServeHTTP(w, r)
	}))
	t.Cleanup(g.api.Close)
	return g
}

func (g *google) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	grant := r.PostForm.Get("grant_type")
	g.mu.Lock()
	defer g.mu.Unlock()
	g.grants = append(g.grants, grant)
	switch {
	case grant == "authorization_code" && r.PostForm.Get("code") == loginCode && r.PostForm.Get("code_verifier") != "":
	case grant == "refresh_token" && r.PostForm.Get("refresh_token") == refreshSecret:
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid_grant"}`)
		return
	}
	access := fmt.Sprintf("access-secret-%d", len(g.issued)+1)
	g.issued[access] = true
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"access_token": access, "refresh_token": refreshSecret,
		"token_type": "Bearer", "expires_in": 3599})
}

// desktopClient is an OAuth "Desktop app" client whose token endpoint is
// the stand-in.
func (g *google) desktopClient() string {
	b, _ := json.Marshal(map[string]any{"installed": map[string]any{
		"client_id": "18-install.apps.googleusercontent.com", "client_secret": "client-secret-install",
		"auth_uri": "https://accounts.example/o/oauth2/auth", "token_uri": g.oauth.URL, "redirect_uris": []string{"http://localhost"},
	}})
	return string(b)
}

// feedServer serves three events to a request carrying the feed secret.
func feedServer(t *testing.T) *httptest.Server {
	t.Helper()
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calsyncd install test//EN\r\n")
	for i := range 3 {
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:install-%d@example.com\r\nDTSTAMP:20261129T000000Z\r\n"+
			"DTSTART:2027030%dT090000Z\r\nDTEND:2027030%dT100000Z\r\nSUMMARY:Event %d\r\nEND:VEVENT\r\n", i, i+1, i+1, i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+feedSecret {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/calendar")
		io.WriteString(w, b.String())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// playBrowser reads a login's output until it prints the URL to open, then
// does what Google does once the person consents: sends the browser back to
// the redirect URI with a code and the state it was given. It returns what
// the login printed once the output ends.
func playBrowser(out io.Reader) <-chan string {
	done := make(chan string, 1)
	go func() {
		var printed strings.Builder
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			printed.WriteString(sc.Text() + "\n")
			line := strings.TrimSpace(sc.Text())
			if !strings.HasPrefix(line, "https://accounts.example/") {
				continue
			}
			u, err := url.Parse(line)
			if err != nil {
				fmt.Fprintf(&printed, "[test: %v]\n", err)
				continue
			}
			q := u.Query()
			back := q.Get("redirect_uri") + "?" + url.Values{"code": {loginCode}, "state": {q.Get("state")}}.Encode()
			resp, err := http.Get(back)
			if err != nil {
				fmt.Fprintf(&printed, "[test: the browser could not reach %s: %v]\n", q.Get("redirect_uri"), err)
				continue
			}
			resp.Body.Close()
		}
		done <- printed.String()
	}()
	return done
}

// notifySocket is systemd's end of sd_notify: it collects what the service
// sends.
type notifySocket struct {
	path string
	msgs chan string
}

func newNotifySocket(t *testing.T, path string) *notifySocket {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// The service's user must be able to send to it, as to systemd's.
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	n := &notifySocket{path: path, msgs: make(chan string, 64)}
	go func() {
		buf := make([]byte, 4096)
		for {
			k, _, err := conn.ReadFromUnix(buf)
			if err != nil {
				close(n.msgs)
				return
			}
			n.msgs <- string(buf[:k])
		}
	}()
	return n
}

// syncBuffer is a bytes.Buffer safe for a child's output and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
