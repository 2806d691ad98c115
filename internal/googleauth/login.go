package googleauth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/calsyncd/calsyncd/internal/config"
)

// DefaultLoginTimeout is how long Login waits for the browser.
const DefaultLoginTimeout = 5 * time.Minute

// LoginOptions tune Login.
type LoginOptions struct {
	// Out receives the instructions and the URL to open.
	Out io.Writer
	// Timeout bounds the wait for the browser (default DefaultLoginTimeout).
	Timeout time.Duration
	// Port is the loopback port to listen on; 0 picks a free one. A fixed
	// port helps through an SSH tunnel (ssh -L PORT:127.0.0.1:PORT).
	Port int
	// Listener, when set, is used instead of listening on 127.0.0.1:Port
	// (tests). Login closes it.
	Listener net.Listener
	// OpenURL, when set, is called with the authorisation URL once the
	// listener is ready (a browser launcher, or a test playing the browser).
	OpenURL func(authURL string)
	// Transport carries the token request (default http.DefaultTransport).
	Transport http.RoundTripper

	// owners replaces the system's users and files' owners (tests).
	owners *owners
}

// Login runs the installed-app loopback flow for a person's account: it
// listens on 127.0.0.1, prints the URL to open, checks the state Google
// sends back, exchanges the code with its PKCE verifier, and saves the token
// (0600, atomically) at the account's token file, whose path it returns.
// Run as root, it keeps the file its owner's (see ownerOf); run as anyone
// else, it refuses another user's file before it starts.
func Login(ctx context.Context, cfg *config.Config, account string, opts LoginOptions) (string, error) {
	acct, conf, err := loginClient(cfg, account)
	if err != nil {
		return "", err
	}
	opts = opts.withDefaults()
	o := systemOwners
	if opts.owners != nil {
		o = *opts.owners
	}
	tokenFile := TokenFile(cfg, acct)
	ln, err := loginListener(acct, tokenFile, o, opts)
	if err != nil {
		return "", err
	}
	defer ln.Close()

	conf.RedirectURL = "http://" + ln.Addr().String() + "/"
	state := rand.Text() // 26 base32 characters, 130 bits
	verifier := oauth2.GenerateVerifier()
	authURL := conf.AuthCodeURL(state,
		oauth2.AccessTypeOffline, // a refresh token, so the daemon can work unattended
		oauth2.ApprovalForce,     // Google only sends a refresh token on consent
		oauth2.S256ChallengeOption(verifier))
	tctx := context.WithValue(ctx, oauth2.HTTPClient, &http.Client{Transport: opts.Transport, Timeout: tokenRequestTimeout})

	cb := &callback{
		state: state,
		done:  make(chan error, 1),
		finish: func(code string) error {
			tok, err := conf.Exchange(tctx, code, oauth2.VerifierOption(verifier))
			if err != nil {
				return err
			}
			if err := checkGrant(tok); err != nil {
				return err
			}
			return saveToken(tokenFile, tok, o)
		},
	}
	defer serveCallback(ctx, ln, cb)()

	fmt.Fprintf(opts.Out, "To let calsyncd write to Google Calendar as you (account %s), open this URL in a browser on this machine:\n\n  %s\n\n", acct.Name, authURL)
	fmt.Fprintf(opts.Out, "Waiting for Google to send the browser back to %s (giving up in %s).\n", conf.RedirectURL, opts.Timeout)
	fmt.Fprintf(opts.Out, "On a remote machine, forward the port first: ssh -L %s:%s HOST\n", portOf(ln.Addr()), ln.Addr())
	if opts.OpenURL != nil {
		opts.OpenURL(authURL)
	}

	return awaitLogin(ctx, cfg, acct.Name, cb, opts.Timeout, tokenFile)
}

// loginClient is the account a login is for and its OAuth client: only an
// account of the configuration whose credentials are an OAuth client (a
// person's) logs in.
func loginClient(cfg *config.Config, account string) (config.Account, *oauth2.Config, error) {
	acct, ok := cfg.AccountByName(account)
	if !ok {
		return acct, nil, &Error{Account: account, Op: "login", Err: errors.New("no such account in the configuration"),
			Hint: "name one of the accounts listed under accounts: in " + cfg.Path}
	}
	if acct.CredentialsFile == "" {
		return acct, nil, &Error{Account: acct.Name, Op: "login", Err: errors.New("credentials_file is not set"),
			Hint: "download an OAuth client JSON (Desktop app) from the Google Cloud console and set credentials_file to it"}
	}
	key, err := readCredentials(acct)
	if err != nil {
		return acct, nil, err
	}
	if key.kind != KindUser {
		return acct, nil, &Error{Account: acct.Name, Op: "login", Err: errors.New("the account uses a service-account key"),
			Hint: "service accounts need no login; share the calendars with the service account instead"}
	}
	conf, err := userConfig(acct, key.data)
	return acct, conf, err
}

func (opts LoginOptions) withDefaults() LoginOptions {
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultLoginTimeout
	}
	if opts.Transport == nil {
		opts.Transport = http.DefaultTransport
	}
	return opts
}

// loginListener is where Google sends the browser back: opts.Listener, or
// 127.0.0.1 on opts.Port. A token file the process may not replace is
// refused first, before the browser is sent anywhere: a token saved by the
// wrong user would lock the service out.
func loginListener(acct config.Account, tokenFile string, o owners, opts LoginOptions) (net.Listener, error) {
	if _, err := ownerOf(tokenFile, o); err != nil {
		var foreign *ForeignFileError
		errors.As(err, &foreign)
		if opts.Listener != nil {
			opts.Listener.Close()
		}
		return nil, &Error{Account: acct.Name, Op: "login", Err: err, Hint: foreign.Hint()}
	}
	if opts.Listener != nil {
		return opts.Listener, nil
	}
	// 127.0.0.1, not localhost: the answer must not go to whatever
	// "localhost" resolves to, nor to another interface.
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", opts.Port))
	if err != nil {
		return nil, &Error{Account: acct.Name, Op: "login", Err: err}
	}
	return ln, nil
}

// serveCallback serves Google's redirect to cb on ln until the returned
// func stops it.
func serveCallback(ctx context.Context, ln net.Listener, cb *callback) func() {
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", cb)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(ln)
	}()
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		<-served
	}
}

// awaitLogin waits for the browser to come back, for the timeout, or for
// ctx, and returns the token file written.
func awaitLogin(ctx context.Context, cfg *config.Config, account string, cb *callback, timeout time.Duration, tokenFile string) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-cb.done:
		if err != nil {
			return "", &Error{Account: account, Op: "login", Err: err, Hint: "run `" + loginCommand(cfg.Path, account) + "` again"}
		}
		return tokenFile, nil
	case <-timer.C:
		return "", &Error{Account: account, Op: "login", Err: fmt.Errorf("no answer from the browser within %s", timeout),
			Hint: "run `" + loginCommand(cfg.Path, account) + "` again and open the URL it prints"}
	case <-ctx.Done():
		return "", &Error{Account: account, Op: "login", Err: ctx.Err()}
	}
}

// checkGrant refuses a token the daemon could not live with: without a
// refresh token it dies within the hour, and Google's consent screen lets a
// person untick scopes.
func checkGrant(tok *oauth2.Token) error {
	if tok.RefreshToken == "" {
		return errors.New("Google sent no refresh token; remove calsyncd's access at https://myaccount.google.com/permissions and log in again")
	}
	granted, _ := tok.Extra("scope").(string)
	if granted == "" {
		// RFC 6749 §5.1: omitted when it is the scope requested.
		return nil
	}
	have := strings.Fields(granted)
	var missing []string
	for _, s := range Scopes {
		if !slices.Contains(have, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("not every permission was granted (missing %s); log in again and allow all of them", strings.Join(missing, ", "))
	}
	return nil
}

// callback is the loopback page Google redirects the browser to.
type callback struct {
	state  string
	finish func(code string) error

	mu       sync.Mutex
	finished bool
	done     chan error
}

func (cb *callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	// A request without our state is not Google's answer to our request
	// (a stale tab, or a page trying to plant its own code): refuse it and
	// keep waiting for the real one.
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(cb.state)) != 1 {
		http.Error(w, "calsyncd: this answer does not belong to the login in progress (state mismatch)", http.StatusBadRequest)
		return
	}
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.finished {
		http.Error(w, "calsyncd: this login is already finished", http.StatusConflict)
		return
	}
	var err error
	switch {
	case q.Get("error") != "":
		err = fmt.Errorf("Google did not authorise calsyncd: %s", q.Get("error"))
	case q.Get("code") == "":
		http.Error(w, "calsyncd: the answer carries no code", http.StatusBadRequest)
		return
	default:
		err = cb.finish(q.Get("code"))
	}
	cb.finished = true
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "<!doctype html><title>calsyncd</title><p>calsyncd was not authorised: %s</p><p>See the terminal for what to do.</p>\n", html.EscapeString(loginFailure(err)))
	} else {
		fmt.Fprint(w, "<!doctype html><title>calsyncd</title><p>calsyncd is authorised. You can close this tab.</p>\n")
	}
	cb.done <- err
}

// loginFailure is the error for the browser page: the code, not the whole
// token endpoint response.
func loginFailure(err error) string {
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) {
		return describeRetrieve(rerr)
	}
	return err.Error()
}

func portOf(a net.Addr) string {
	_, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "PORT"
	}
	return port
}
