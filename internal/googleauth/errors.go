package googleauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/oauth2"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
)

// Error is an authentication failure a person must fix: a missing or broken
// key or client file, no token, a refresh token Google revoked, a deleted
// service account. Hint says what to do. It never holds a token or a key.
//
// When it comes from the token endpoint, Err is (or wraps) the
// *oauth2.RetrieveError, so gcalwriter.ClassifyAt sees class auth through it.
type Error struct {
	Account string
	// Op is what failed: "load", "read credentials", "read token",
	// "fetch token", "login".
	Op string
	// Reason is the OAuth error code from the token endpoint, such as
	// "invalid_grant", when there was one.
	Reason string
	Err    error
	Hint   string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "googleauth: account %s: %s: ", e.Account, e.Op)
	var rerr *oauth2.RetrieveError
	switch {
	case errors.As(e.Err, &rerr):
		// RetrieveError's own text dumps the response body over several
		// lines; the code and Google's description are what people need.
		b.WriteString(describeRetrieve(rerr))
	case e.Err != nil:
		b.WriteString(e.Err.Error())
	}
	if e.Hint != "" {
		b.WriteString(" — ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorClass implements calsyncd.Classed: only a person can fix it.
func (e *Error) ErrorClass() calsyncd.ErrorClass { return calsyncd.ClassAuth }

// failureSource turns the token endpoint's definitive refusals into *Error
// with advice. Transient trouble (429, 5xx, the network) passes through
// unchanged: it is for the writer to retry, not for a person to fix.
type failureSource struct {
	id         Identity
	configPath string
	src        oauth2.TokenSource
}

// Invalidate passes a refused token on to a source that can start over.
func (s *failureSource) Invalidate(refused *oauth2.Token) {
	if inv, ok := s.src.(invalidator); ok {
		inv.Invalidate(refused)
	}
}

func (s *failureSource) Token() (*oauth2.Token, error) {
	tok, err := s.src.Token()
	if err == nil {
		return tok, nil
	}
	var rerr *oauth2.RetrieveError
	if !errors.As(err, &rerr) || transientRetrieve(rerr) {
		return nil, err
	}
	code, desc := retrieveCode(rerr)
	return nil, &Error{Account: s.id.Account, Op: "fetch token", Reason: code, Err: err,
		Hint: tokenHint(s.id, s.configPath, code, desc)}
}

func transientRetrieve(e *oauth2.RetrieveError) bool {
	if e.Response == nil {
		return false
	}
	c := e.Response.StatusCode
	return c == http.StatusTooManyRequests || c == http.StatusRequestTimeout || c >= 500
}

// retrieveCode is the OAuth error code and description. The service-account
// path (x/oauth2/jwt) does not parse them, so read the body when needed.
func retrieveCode(e *oauth2.RetrieveError) (code, desc string) {
	code, desc = e.ErrorCode, e.ErrorDescription
	if code == "" && len(e.Body) > 0 {
		var body struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(e.Body, &body) == nil {
			code, desc = body.Error, body.Description
		}
	}
	return code, desc
}

func describeRetrieve(e *oauth2.RetrieveError) string {
	code, desc := retrieveCode(e)
	s := "the Google token endpoint refused"
	if e.Response != nil {
		s += fmt.Sprintf(" (HTTP %d)", e.Response.StatusCode)
	}
	if code != "" {
		s += ": " + code
	}
	if desc != "" {
		if len(desc) > 200 {
			desc = desc[:200] + "…"
		}
		s += fmt.Sprintf(" (%s)", desc)
	}
	return s
}

// loginCommand is the command that gets a new token for the account.
func loginCommand(configPath, account string) string {
	if configPath == "" {
		configPath = "FILE"
	}
	cmd := "calsyncd auth login --config " + configPath
	if account != "" && account != config.DefaultAccount {
		cmd += " --account " + account
	}
	return cmd
}

func loginHint(configPath, account string) string {
	return "run `" + loginCommand(configPath, account) + "`"
}

func tokenHint(id Identity, configPath, code, desc string) string {
	if id.Kind == KindUser {
		switch code {
		case "invalid_grant":
			return "the refresh token was revoked or has expired (an OAuth client left in \"Testing\" publishing status gets refresh tokens that expire after 7 days): " +
				loginHint(configPath, id.Account)
		case "invalid_client", "unauthorized_client", "deleted_client":
			return "the OAuth client was deleted, disabled or its secret was reset: download its JSON again into " +
				id.CredentialsFile + ", then " + loginHint(configPath, id.Account)
		}
		return loginHint(configPath, id.Account)
	}
	newKey := "create a new key for " + id.Email + " in the Google Cloud console (IAM → Service accounts → Keys) and point credentials_file at it"
	switch {
	case code == "unauthorized_client" && id.Subject != "":
		return "domain-wide delegation is not authorised: in the Google Workspace Admin console (Security → API controls → Domain-wide delegation) add client id " +
			id.ClientID + " with the scopes " + strings.Join(Scopes, ",")
	case code == "invalid_grant" && id.Subject != "" && strings.Contains(strings.ToLower(desc), "email"):
		return "Google does not know the impersonated user " + id.Subject + ": check impersonate"
	case code == "invalid_grant":
		return "Google refused the service account's key (the service account or the key was deleted or disabled, or this machine's clock is wrong): " + newKey
	}
	return newKey
}
