package googleauth_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/googleauth"
)

const (
	clientID     = "1234-test.apps.googleusercontent.com"
	clientSecret = "test-client-secret"
	saEmail      = "calsyncd@test-project.iam.gserviceaccount.com"
	saClientID   = "109876543210"
)

// fakeOAuth is Google's token endpoint as far as x/oauth2 can tell: the
// authorization-code grant with PKCE, the refresh grant, and the JWT bearer
// grant of service accounts.
type fakeOAuth struct {
	t   *testing.T
	srv *httptest.Server
	key *rsa.PrivateKey // the service account's key

	mu sync.Mutex
	// codes maps an issued authorization code to its PKCE challenge and
	// redirect URI.
	codes map[string][2]string
	// verifiers are the code_verifier values seen on the code exchange.
	verifiers []string
	// refreshTokens are the refresh tokens presented, in order.
	refreshTokens []string
	// assertions are the claims of each JWT a service account presented.
	assertions []map[string]any
	// fail, when set, is the status and body every token request gets.
	fail     *fakeFailure
	issued   int
	rotate   bool   // answer a refresh with a new refresh token
	scope    string // the scope field of token answers ("" omits it)
	requests int
}

type fakeFailure struct {
	status int
	body   string
}

// serviceAccountRSAKey is made once: generating a 2048-bit key costs more
// than the rest of a test.
var serviceAccountRSAKey = sync.OnceValues(func() (*rsa.PrivateKey, error) {
	return rsa.GenerateKey(rand.Reader, 2048)
})

func newFakeOAuth(t *testing.T) *fakeOAuth {
	t.Helper()
	key, err := serviceAccountRSAKey()
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeOAuth{t: t, key: key, codes: map[string][2]string{}, scope: strings.Join(googleauth.Scopes, " ")}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serveToken))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeOAuth) tokenURL() string { return f.srv.URL + "/token" }

func (f *fakeOAuth) failWith(status int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = &fakeFailure{status, body}
}

func (f *fakeOAuth) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// authorize plays Google's consent screen: it remembers the PKCE challenge
// and redirect URI and returns a code.
func (f *fakeOAuth) authorize(challenge, redirect string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	code := fmt.Sprintf("code-%d", len(f.codes)+1)
	f.codes[code] = [2]string{challenge, redirect}
	return code
}

func (f *fakeOAuth) serveToken(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	if r.Method != http.MethodPost || r.URL.Path != "/token" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if f.fail != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.fail.status)
		fmt.Fprint(w, f.fail.body)
		return
	}
	oauthErr := func(code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		if r.PostForm.Get("client_id") != clientID || r.PostForm.Get("client_secret") != clientSecret {
			oauthErr("invalid_client", "Unauthorized")
			return
		}
		got, ok := f.codes[r.PostForm.Get("code")]
		if !ok {
			oauthErr("invalid_grant", "Malformed auth code.")
			return
		}
		delete(f.codes, r.PostForm.Get("code"))
		verifier := r.PostForm.Get("code_verifier")
		f.verifiers = append(f.verifiers, verifier)
		sum := sha256.Sum256([]byte(verifier))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != got[0] {
			oauthErr("invalid_grant", "Invalid code verifier.")
			return
		}
		if r.PostForm.Get("redirect_uri") != got[1] {
			oauthErr("redirect_uri_mismatch", "Bad Request")
			return
		}
		f.issued++
		f.writeToken(w, fmt.Sprintf("access-%d", f.issued), fmt.Sprintf("refresh-%d", f.issued))
	case "refresh_token":
		if r.PostForm.Get("client_id") != clientID || r.PostForm.Get("client_secret") != clientSecret {
			oauthErr("invalid_client", "Unauthorized")
			return
		}
		f.refreshTokens = append(f.refreshTokens, r.PostForm.Get("refresh_token"))
		f.issued++
		refresh := ""
		if f.rotate {
			refresh = fmt.Sprintf("refresh-%d", f.issued)
		}
		f.writeToken(w, fmt.Sprintf("access-%d", f.issued), refresh)
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		claims, err := f.verifyJWT(r.PostForm.Get("assertion"))
		if err != nil {
			oauthErr("invalid_grant", "Invalid JWT Signature.")
			return
		}
		f.assertions = append(f.assertions, claims)
		f.issued++
		f.writeToken(w, fmt.Sprintf("sa-access-%d", f.issued), "")
	default:
		oauthErr("unsupported_grant_type", "Invalid grant_type")
	}
}

func (f *fakeOAuth) writeToken(w http.ResponseWriter, access, refresh string) {
	body := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3599}
	if refresh != "" {
		body["refresh_token"] = refresh
	}
	if f.scope != "" {
		body["scope"] = f.scope
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}

// verifyJWT checks an RS256 assertion against the service account's public
// key and returns its claims.
func (f *fakeOAuth) verifyJWT(assertion string) (map[string]any, error) {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("not a JWT")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&f.key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		return nil, err
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	return claims, json.Unmarshal(payload, &claims)
}

// serviceAccountKey is a key JSON as the Cloud console issues it, pointing
// at the fake token endpoint.
func (f *fakeOAuth) serviceAccountKey() string {
	der, err := x509.MarshalPKCS8PrivateKey(f.key)
	if err != nil {
		f.t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "test-project", "private_key_id": "kid-1",
		"private_key": string(pemKey), "client_email": saEmail, "client_id": saClientID,
		"auth_uri": f.srv.URL + "/auth", "token_uri": f.tokenURL(),
	})
	return string(b)
}

// desktopClient is an OAuth client JSON of type "Desktop app".
func (f *fakeOAuth) desktopClient() string {
	b, _ := json.Marshal(map[string]any{"installed": map[string]any{
		"client_id": clientID, "project_id": "test-project", "client_secret": clientSecret,
		"auth_uri": f.srv.URL + "/auth", "token_uri": f.tokenURL(), "redirect_uris": []string{"http://localhost"},
	}})
	return string(b)
}

// setup writes files into a fresh directory and loads config.yaml from it.
func setup(t *testing.T, files map[string]string) (*config.Config, string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg, dir
}

// tokenJSON is a saved token.
func tokenJSON(access, refresh string, expiry time.Time) string {
	b, _ := json.Marshal(map[string]any{"access_token": access, "token_type": "Bearer", "refresh_token": refresh, "expiry": expiry})
	return string(b)
}

func fileMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}
