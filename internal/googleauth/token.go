package googleauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// tokenFile is the saved form of an OAuth token: the same JSON shape as
// oauth2.Token (and Google's Go quickstart's token.json), without the
// response-only expires_in.
type tokenFile struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token"`
	Expiry       time.Time `json:"expiry,omitzero"`
}

// ReadToken reads a token saved by WriteToken.
func ReadToken(path string) (*oauth2.Token, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no token at %s", path)
	}
	if err != nil {
		return nil, err
	}
	var f tokenFile
	// The decoder's error could quote the file, which holds secrets.
	if json.Unmarshal(data, &f) != nil || (f.AccessToken == "" && f.RefreshToken == "") {
		return nil, fmt.Errorf("%s is not a token file", path)
	}
	return &oauth2.Token{AccessToken: f.AccessToken, TokenType: f.TokenType, RefreshToken: f.RefreshToken, Expiry: f.Expiry}, nil
}

// WriteToken saves tok at path, readable only by its owner, atomically: a
// crash leaves the old token or the new one, never half of one. The
// directory is created (0700) if needed.
func WriteToken(path string, tok *oauth2.Token) (err error) {
	data, err := json.MarshalIndent(tokenFile{
		AccessToken: tok.AccessToken, TokenType: tok.TokenType, RefreshToken: tok.RefreshToken, Expiry: tok.Expiry,
	}, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("googleauth: save token: %w", err)
	}
	// CreateTemp makes the file 0600 before a byte is written, so the token
	// is never readable by others, not even for a moment.
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("googleauth: save token: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("googleauth: save token: %w", err)
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("googleauth: save token: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("googleauth: save token: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("googleauth: save token: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("googleauth: save token: %w", err)
	}
	// The rename is durable only once the directory is.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// persistingSource saves every new token its source hands out. x/oauth2's
// refresher adopts a rotated refresh token in memory only; without this a
// restart would start from a refresh token Google has already replaced.
//
// It also picks up a login made while it runs: when its token fails and the
// file holds a refresh token it has not seen, it starts over from the file,
// so `calsyncd auth login` repairs a running daemon without a restart.
type persistingSource struct {
	newSource func(*oauth2.Token) oauth2.TokenSource
	path      string
	log       *slog.Logger

	mu    sync.Mutex
	src   oauth2.TokenSource
	saved oauth2.Token // the last token written (or read) at path
}

func newPersistingSource(newSource func(*oauth2.Token) oauth2.TokenSource, path string, initial *oauth2.Token, log *slog.Logger) *persistingSource {
	return &persistingSource{newSource: newSource, src: newSource(initial), path: path, log: log, saved: *initial}
}

// Invalidate is told that Google refused the access token in hand (a 401)
// though it has not expired: its grant was revoked, or replaced by a new
// login. The next Token starts over from the file when a new login saved
// a refresh token there, else refreshes now instead of handing out the
// refused token until it expires (up to an hour).
func (p *persistingSource) Invalidate(refused *oauth2.Token) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if refused == nil {
		return
	}
	if disk, err := ReadToken(p.path); err == nil && disk.RefreshToken != "" && disk.RefreshToken != p.saved.RefreshToken {
		p.log.Info("Google refused the access token; using the OAuth token saved by a new login", "file", p.path)
		p.src, p.saved = p.newSource(disk), *disk
		return
	}
	if refused.AccessToken != p.saved.AccessToken {
		return // refused earlier, already replaced
	}
	p.src = p.newSource(&oauth2.Token{RefreshToken: p.saved.RefreshToken, TokenType: p.saved.TokenType})
}

func (p *persistingSource) Token() (*oauth2.Token, error) {
	// Held across a refresh: the wrapped ReuseTokenSource serialises
	// refreshes anyway, and a valid token is handed out at once.
	p.mu.Lock()
	defer p.mu.Unlock()
	tok, err := p.src.Token()
	if err != nil {
		disk, rerr := ReadToken(p.path)
		if rerr != nil || disk.RefreshToken == "" || disk.RefreshToken == p.saved.RefreshToken {
			return nil, err
		}
		p.log.Info("using the OAuth token saved by a new login", "file", p.path)
		p.src, p.saved = p.newSource(disk), *disk
		if tok, err = p.src.Token(); err != nil {
			return nil, err
		}
	}
	if tok.AccessToken == p.saved.AccessToken && tok.RefreshToken == p.saved.RefreshToken {
		return tok, nil
	}
	next := oauth2.Token{AccessToken: tok.AccessToken, TokenType: tok.TokenType, RefreshToken: tok.RefreshToken, Expiry: tok.Expiry}
	if next.RefreshToken == "" {
		next.RefreshToken = p.saved.RefreshToken
	}
	if err := WriteToken(p.path, &next); err != nil {
		// The token in hand still works; only a restart would suffer, and
		// failing this write would not help it. Warn once per token.
		p.log.Warn("could not save the refreshed OAuth token; after a restart a new login may be needed",
			"file", p.path, "error", err)
	}
	p.saved = next
	return tok, nil
}
