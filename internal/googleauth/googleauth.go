// Package googleauth turns a configured Google account into an authenticated
// client for the Calendar API, and keeps its OAuth tokens: a service-account
// key (optionally with domain-wide delegation), or a person's OAuth token
// obtained once with the installed-app loopback flow and refreshed from then
// on, each refresh persisted so a restart needs no new login.
package googleauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"golang.org/x/oauth2/jwt"
	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	"github.com/calsyncd/calsyncd/internal/config"
)

// Scopes are the only OAuth scopes calsyncd asks for. calendar.events covers
// every events call the writer makes (insert, update, delete, get, list,
// instances); calendars.get, with which the writer tells "this calendar does
// not exist" from other 404s, is not among its methods, and the narrowest
// scope that allows it is calendar.calendars.readonly (the calendar's title
// and time zone, nothing else). Neither lets calsyncd share, create or delete
// calendars. README "Authorising calsyncd" explains the choice.
var Scopes = []string{calendar.CalendarEventsScope, calendar.CalendarCalendarsReadonlyScope}

// ListScope lets `calsyncd calendars` read the account's calendar list
// (calendarList.list; no other scope above covers it). `auth login` asks
// for it besides Scopes but does not insist: without it, only that
// command fails. A service account asks for it only with
// Options.ListCalendars, so a domain-wide delegation authorised for Scopes
// alone keeps syncing.
const ListScope = calendar.CalendarCalendarlistReadonlyScope

// tokenRequestTimeout bounds one request to Google's token endpoint, which
// otherwise would hang a write for as long as the endpoint does.
const tokenRequestTimeout = 30 * time.Second

// Kind is how an account authenticates.
type Kind string

// Kinds of account.
const (
	// KindNone talks to an emulator (google.endpoint) without credentials.
	KindNone Kind = "none"
	// KindServiceAccount uses a service-account key.
	KindServiceAccount Kind = "service_account"
	// KindUser uses a person's OAuth token, obtained with `auth login`.
	KindUser Kind = "user"
)

// Identity says who an account acts as. It holds nothing secret.
type Identity struct {
	Account string
	Kind    Kind
	// Email is the service account's address (KindServiceAccount).
	Email string
	// Subject is the user impersonated through domain-wide delegation.
	Subject string
	// ClientID is the OAuth client's id; for a service account, the id that
	// domain-wide delegation is granted to. It is public.
	ClientID string
	// CredentialsFile and TokenFile are the files the account reads.
	CredentialsFile string
	TokenFile       string
	// emulator: KindNone because an endpoint was given (not for want of
	// credentials).
	emulator bool
}

func (id Identity) String() string {
	switch id.Kind {
	case KindServiceAccount:
		if id.Subject != "" {
			return fmt.Sprintf("service account %s acting as %s (domain-wide delegation)", id.Email, id.Subject)
		}
		return "service account " + id.Email
	case KindUser:
		return "OAuth user token (client " + id.ClientID + ")"
	}
	if id.CredentialsFile == "" && !id.emulator {
		return "no credentials (credentials_file is not set)"
	}
	return "unauthenticated (emulator endpoint)"
}

// Options tune Load.
type Options struct {
	// Transport carries the API's requests and the token endpoint's
	// (default: a clone of http.DefaultTransport).
	Transport http.RoundTripper
	// Logger receives warnings, such as a refreshed token that could not be
	// saved (default slog.Default()).
	Logger *slog.Logger
	// KeepInMemory: a token refreshed is used by this process only and
	// never written to the token file (a dry-run changes no byte of the
	// state directory).
	KeepInMemory bool
	// ListCalendars: a service account's tokens also carry ListScope.
	ListCalendars bool

	// owners replaces the system's users and files' owners (tests).
	owners *owners
}

// Credentials are a loaded account, ready to authenticate requests.
type Credentials struct {
	Identity
	// TokenSource yields access tokens; nil for KindNone. Its errors that a
	// person must fix are *Error (wrapping the *oauth2.RetrieveError).
	TokenSource oauth2.TokenSource

	endpoint  string
	transport http.RoundTripper
	token     *oauth2.Token // as read from TokenFile (KindUser)
	persist   *persistingSource
}

// Load reads an account's credentials (and its OAuth token) and returns them
// ready to use. Nothing is fetched from Google yet: the first request does
// that. Every failure a person must fix is an *Error that says what to do.
func Load(ctx context.Context, cfg *config.Config, account string, opts Options) (*Credentials, error) {
	c, err := load(ctx, cfg, account, opts)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// load is Load, but on failure it also returns what it learnt of the
// identity, for Inspect.
func load(ctx context.Context, cfg *config.Config, account string, opts Options) (*Credentials, error) {
	acct, ok := cfg.AccountByName(account)
	if !ok {
		return &Credentials{Identity: Identity{Account: account}}, &Error{Account: account, Op: "load",
			Err: errors.New("no such account in the configuration"), Hint: "name one of the accounts listed under accounts: in " + cfg.Path}
	}
	if opts.Transport == nil {
		opts.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	o := systemOwners
	if opts.owners != nil {
		o = *opts.owners
	}
	c := &Credentials{
		Identity:  Identity{Account: acct.Name, Kind: KindNone, CredentialsFile: acct.CredentialsFile},
		endpoint:  acct.Endpoint,
		transport: opts.Transport,
	}
	if acct.CredentialsFile == "" {
		if acct.Endpoint != "" {
			c.emulator = true
			return c, nil
		}
		return c, &Error{Account: acct.Name, Op: "load", Err: errors.New("credentials_file is not set"),
			Hint: "set credentials_file to a service-account key or an OAuth client (Desktop app) JSON; see README \"Authorising calsyncd\""}
	}
	key, err := readCredentials(acct)
	if err != nil {
		return c, err
	}
	// Token requests outlive any one caller: they are bounded by their own
	// timeout, so a shutdown that lets in-flight writes finish can still
	// refresh.
	tctx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient,
		&http.Client{Transport: opts.Transport, Timeout: tokenRequestTimeout})
	switch key.kind {
	case KindServiceAccount:
		return c, c.useServiceAccount(tctx, cfg, acct, key, opts)
	case KindUser:
		return c, c.useUser(tctx, cfg, acct, key, opts, o)
	}
	return c, nil
}

// useServiceAccount makes c a service account's, from its key.
func (c *Credentials) useServiceAccount(tctx context.Context, cfg *config.Config, acct config.Account, key credentialsKey, opts Options) error {
	conf, err := serviceAccountConfig(acct, key.data)
	if err != nil {
		return err
	}
	if opts.ListCalendars {
		conf.Scopes = append(conf.Scopes, ListScope)
	}
	c.Kind, c.Email, c.Subject, c.ClientID = KindServiceAccount, conf.Email, conf.Subject, key.clientID
	c.TokenSource = &failureSource{id: c.Identity, configPath: cfg.Path, src: conf.TokenSource(tctx)}
	return nil
}

// useUser makes c a person's, from the OAuth client and the token `auth
// login` saved, which c saves again whenever it is refreshed.
func (c *Credentials) useUser(tctx context.Context, cfg *config.Config, acct config.Account, key credentialsKey, opts Options, o owners) error {
	c.Kind, c.TokenFile = KindUser, TokenFile(cfg, acct)
	conf, err := userConfig(acct, key.data)
	if err != nil {
		return err
	}
	c.ClientID = conf.ClientID
	tok, err := readToken(c.TokenFile, o.readFile)
	if errors.Is(err, fs.ErrPermission) {
		return &Error{Account: acct.Name, Op: "read token", Err: err, Hint: unreadableHint(c.TokenFile, o)}
	}
	if err != nil {
		return &Error{Account: acct.Name, Op: "read token", Err: err, Hint: loginHint(cfg.Path, acct.Name)}
	}
	if tok.RefreshToken == "" {
		// Without one the token dies within the hour and nothing can
		// renew it; better to say so now than at the first write.
		return &Error{Account: acct.Name, Op: "read token", Err: errors.New(c.TokenFile + " holds no refresh token"),
			Hint: loginHint(cfg.Path, acct.Name)}
	}
	c.token = tok
	c.persist = newPersistingSource(func(t *oauth2.Token) oauth2.TokenSource { return conf.TokenSource(tctx, t) },
		c.TokenFile, tok, opts.Logger.With("account", acct.Name), o)
	c.persist.inMemory = opts.KeepInMemory
	c.TokenSource = &failureSource{id: c.Identity, configPath: cfg.Path, src: c.persist}
	return nil
}

// HTTPClient is an http.Client that authenticates every request (or none,
// for KindNone). Token failures reach the caller inside *url.Error, with the
// *Error and *oauth2.RetrieveError still in the chain.
func (c *Credentials) HTTPClient() *http.Client {
	if c.TokenSource == nil {
		return &http.Client{Transport: c.transport}
	}
	return &http.Client{Transport: &refusalTransport{src: c.TokenSource, base: c.transport}}
}

// invalidator is a token source that can be told Google refused a token.
type invalidator interface{ Invalidate(refused *oauth2.Token) }

// refusalTransport authenticates each request with the source's token, as
// oauth2.Transport does, and tells the source when Google answers 401 to
// it, so that the next request (the writer tries once more after a 401)
// carries a token refreshed or saved by a new login, not the refused one.
type refusalTransport struct {
	src  oauth2.TokenSource
	base http.RoundTripper
}

func (t *refusalTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := t.src.Token()
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	r := req.Clone(req.Context())
	tok.SetAuthHeader(r)
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		if inv, ok := t.src.(invalidator); ok {
			inv.Invalidate(tok)
		}
	}
	return resp, err
}

// ClientOptions configure calendar.NewService for this account. The client
// is given as an http.Client (not option.WithTokenSource) because the
// library's token adapter rebuilds token errors and drops our *Error, with its
// advice, from the chain.
func (c *Credentials) ClientOptions() []option.ClientOption {
	opts := []option.ClientOption{option.WithHTTPClient(c.HTTPClient())}
	if c.endpoint != "" {
		opts = append(opts, option.WithEndpoint(c.endpoint))
	}
	return opts
}

// QuotaUser is the user to charge quota to: with domain-wide delegation the
// writer passes googleapi.QuotaUser(c.QuotaUser()) on every call, so the
// per-user limits are those of the impersonated user. "" otherwise.
func (c *Credentials) QuotaUser() string { return c.Subject }

// TokenFile is where an account's OAuth token lives: its token_file, or
// <state_dir>/token-<account>.json.
func TokenFile(cfg *config.Config, acct config.Account) string {
	if acct.TokenFile != "" {
		return acct.TokenFile
	}
	name := acct.Name
	if name == "" {
		name = config.DefaultAccount
	}
	return filepath.Join(cfg.StateDir, "token-"+name+".json")
}

type credentialsKey struct {
	kind Kind
	data []byte
	// clientID is a service account's OAuth client id, which domain-wide
	// delegation is granted to.
	clientID string
}

// readCredentials reads the credentials file and tells which kind it is.
// Only the two kinds calsyncd supports are accepted: Google's libraries also
// accept external-account JSON, which can make them fetch arbitrary URLs.
func readCredentials(acct config.Account) (credentialsKey, error) {
	data, err := os.ReadFile(acct.CredentialsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return credentialsKey{}, &Error{Account: acct.Name, Op: "read credentials", Err: fmt.Errorf("%s does not exist", acct.CredentialsFile),
			Hint: "check credentials_file, or download the service-account key or OAuth client JSON again from the Google Cloud console"}
	}
	if err != nil {
		return credentialsKey{}, &Error{Account: acct.Name, Op: "read credentials", Err: err,
			Hint: "make the file readable by the user calsyncd runs as (and by no one else)"}
	}
	var probe struct {
		Type      string          `json:"type"`
		ClientID  string          `json:"client_id"`
		Installed json.RawMessage `json:"installed"`
		Web       json.RawMessage `json:"web"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		// The decoder's message can quote the file; keep only its kind.
		return credentialsKey{}, &Error{Account: acct.Name, Op: "read credentials",
			Err:  fmt.Errorf("%s is not valid JSON", acct.CredentialsFile),
			Hint: "credentials_file must be a service-account key or an OAuth client JSON downloaded from the Google Cloud console"}
	}
	switch {
	case probe.Type == "service_account":
		return credentialsKey{kind: KindServiceAccount, data: data, clientID: probe.ClientID}, nil
	case probe.Type == "" && (probe.Installed != nil || probe.Web != nil):
		return credentialsKey{kind: KindUser, data: data}, nil
	}
	kind := probe.Type
	if kind == "" {
		kind = "unknown"
	}
	return credentialsKey{}, &Error{Account: acct.Name, Op: "read credentials",
		Err:  fmt.Errorf("%s holds %s credentials", acct.CredentialsFile, kind),
		Hint: "use a service-account key (type service_account) or an OAuth client of type Desktop app"}
}

func serviceAccountConfig(acct config.Account, data []byte) (*jwt.Config, error) {
	conf, err := google.JWTConfigFromJSON(data, Scopes...)
	if err != nil {
		return nil, &Error{Account: acct.Name, Op: "read credentials", Err: err,
			Hint: "download a new JSON key for the service account"}
	}
	// Domain-wide delegation: Google issues the token for this user.
	conf.Subject = acct.Impersonate
	return conf, nil
}

func userConfig(acct config.Account, data []byte) (*oauth2.Config, error) {
	if acct.Impersonate != "" {
		return nil, &Error{Account: acct.Name, Op: "read credentials",
			Err:  errors.New("impersonate needs a service-account key, not an OAuth client"),
			Hint: "remove impersonate, or point credentials_file at a service-account key with domain-wide delegation"}
	}
	// Only a login's consent screen reads these; a refresh keeps what was
	// granted.
	conf, err := google.ConfigFromJSON(data, append(slices.Clone(Scopes), ListScope)...)
	if err != nil {
		return nil, &Error{Account: acct.Name, Op: "read credentials", Err: err,
			Hint: "download the OAuth client JSON (Desktop app) again from the Google Cloud console"}
	}
	if conf.Endpoint.AuthURL == "" {
		conf.Endpoint.AuthURL = google.Endpoint.AuthURL
	}
	if conf.Endpoint.TokenURL == "" {
		conf.Endpoint.TokenURL = google.Endpoint.TokenURL
	}
	// Google reads the client's id and secret from the form. Left unknown,
	// x/oauth2 would first try HTTP basic auth and send every failed refresh
	// twice.
	conf.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	return conf, nil
}
