package googleauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
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

// ReadToken reads a token saved by saveToken.
func ReadToken(path string) (*oauth2.Token, error) { return readToken(path, os.ReadFile) }

func readToken(path string, readFile func(string) ([]byte, error)) (*oauth2.Token, error) {
	data, err := readFile(path)
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

// keepOwner is the owner, group and mode a saved token file keeps.
type keepOwner struct {
	uid, gid int
	mode     fs.FileMode
}

// writeToken saves tok at path, readable only by its owner, atomically: a
// crash leaves the old token or the new one, never half of one. The
// directory is created (0700) if needed. With keep nil the file is the
// process's own, whoever owned the one it replaces; the daemon, `auth
// login` and the commands that refresh a token save through saveToken,
// which keeps another user's file theirs.
func writeToken(path string, tok *oauth2.Token, keep *keepOwner, o owners) (err error) {
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
	mode := fs.FileMode(0o600)
	if keep != nil {
		// Handed over before the token is written: the file is never
		// anyone else's with the token in it.
		if err := o.chown(f, keep.uid, keep.gid); err != nil {
			return fmt.Errorf("googleauth: save token: keep its owner: %w", err)
		}
		mode = keep.mode
	}
	if err := f.Chmod(mode); err != nil {
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

// owners is what reading and saving a token need to know of the machine:
// whom the process runs as, who owns a file and what they are called, how
// to hand a file over, and what the process may read. Tests replace it to
// play root, or a user who does not own the token.
type owners struct {
	euid     func() int
	owner    func(fs.FileInfo) (uid, gid int, ok bool)
	name     func(uid int) string
	chown    func(f *os.File, uid, gid int) error
	readFile func(path string) ([]byte, error)
}

var systemOwners = owners{euid: os.Geteuid, owner: statOwner, name: userName, chown: (*os.File).Chown, readFile: os.ReadFile}

// ForeignFileError is a token file that belongs to another user, which this
// process may not replace: the new file would be its own and the owner,
// usually the service's user, could no longer read it.
type ForeignFileError struct {
	Path string
	// Owner names the file's owner ("calsyncd", or "uid 999" when the
	// system knows no name for it).
	Owner string
	UID   int
}

func (e *ForeignFileError) Error() string {
	return fmt.Sprintf("token file %s belongs to user %s, not to the user this command runs as", e.Path, e.Owner)
}

// Hint says what to do about it.
func (e *ForeignFileError) Hint() string { return runAsHint(e.Path, e.Owner) }

func runAsHint(path, owner string) string {
	return fmt.Sprintf("token file %s is owned by %s; run this command as %s (e.g. sudo -u %s calsyncd <command> --config FILE)",
		path, owner, owner, owner)
}

// userName names uid for people.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return u.Username
	}
	return "uid " + strconv.Itoa(uid)
}

// ownerOf finds who may replace the token file at path. A file of the
// process's own (or none, or one whose owner cannot be told) is saved as
// writeToken saves it with no keepOwner, nil. Root keeps another user's file theirs, with its
// group and mode, and a file it creates in a directory another user owns
// goes to that user: `auth login`, `auth status`, `check` or `sync` run with
// sudo must not leave the service a token it cannot read. Anyone else gets
// a *ForeignFileError for another user's file, and must not replace it.
func ownerOf(path string, o owners) (*keepOwner, error) {
	euid := o.euid()
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) && euid == 0 {
		dfi, derr := os.Stat(filepath.Dir(path))
		if derr != nil {
			return nil, nil
		}
		if uid, gid, ok := o.owner(dfi); ok && uid != 0 {
			return &keepOwner{uid: uid, gid: gid, mode: 0o600}, nil
		}
		return nil, nil
	}
	if err != nil {
		return nil, nil // the write reports it
	}
	uid, gid, ok := o.owner(fi)
	if !ok || uid == euid || euid < 0 {
		return nil, nil
	}
	if euid == 0 {
		return &keepOwner{uid: uid, gid: gid, mode: fi.Mode().Perm()}, nil
	}
	return nil, &ForeignFileError{Path: path, Owner: o.name(uid), UID: uid}
}

// saveToken saves tok at path as its owner would: see ownerOf. Nothing is
// written when that cannot be done (a *ForeignFileError).
func saveToken(path string, tok *oauth2.Token, o owners) error {
	keep, err := ownerOf(path, o)
	if err != nil {
		return err
	}
	return writeToken(path, tok, keep, o)
}

// unreadableHint says what to do about a token file that could not be read
// for lack of permission. Logging in again, the old advice, is wrong: the
// token is fine, it belongs to someone else.
func unreadableHint(path string, o owners) string {
	fi, err := os.Stat(path)
	for dir := path; err != nil && dir != filepath.Dir(dir); {
		// A directory on the way is closed to us: whoever owns it is who
		// can read the file.
		dir = filepath.Dir(dir)
		fi, err = os.Stat(dir)
	}
	if err != nil {
		return "make " + path + " readable by the user calsyncd runs as (and by no one else)"
	}
	uid, _, ok := o.owner(fi)
	switch {
	case !ok:
		return "make " + path + " readable by the user calsyncd runs as (and by no one else)"
	case uid == o.euid():
		return "the file is yours but not readable: chmod 600 " + path
	case uid == 0:
		me := o.name(o.euid())
		return fmt.Sprintf("token file %s is owned by root (a command run as root replaced it?): if calsyncd runs as %s, give it back with `sudo chown %s %s`; otherwise run this command as root",
			path, me, me, path)
	}
	return runAsHint(path, o.name(uid))
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
	owners    owners
	// inMemory: refreshed tokens are never saved (Options.KeepInMemory).
	inMemory bool

	mu    sync.Mutex
	src   oauth2.TokenSource
	saved oauth2.Token // the last token written (or read) at path
	// unsaved is why the last token handed out is not in the file, or nil.
	unsaved error
	// foreignTold: the log has said once that the file is another user's.
	foreignTold bool
}

// ErrKeptInMemory is why a refreshed token is not in its file when the
// command keeps tokens in memory (Options.KeepInMemory).
var ErrKeptInMemory = errors.New("this command keeps refreshed tokens in memory and changes no file")

func newPersistingSource(newSource func(*oauth2.Token) oauth2.TokenSource, path string, initial *oauth2.Token, log *slog.Logger, o owners) *persistingSource {
	return &persistingSource{newSource: newSource, src: newSource(initial), path: path, log: log, owners: o, saved: *initial}
}

// notSaved is why the last refreshed token is not in the file, or nil.
func (p *persistingSource) notSaved() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unsaved
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
	if p.inMemory {
		p.saved, p.unsaved = next, ErrKeptInMemory
		return tok, nil
	}
	err = saveToken(p.path, &next, p.owners)
	var foreign *ForeignFileError
	switch {
	case errors.As(err, &foreign):
		// Another user's file (the service's, and this is someone checking
		// on it): replacing it would lock its owner out. The token in hand
		// serves this process; the owner refreshes its own.
		if !p.foreignTold {
			p.foreignTold = true
			p.log.Warn("the refreshed OAuth token is used by this process only and not saved: its file belongs to another user",
				"file", p.path, "owner", foreign.Owner, "fix", "run this command as "+foreign.Owner)
		}
	case err != nil:
		// The token in hand still works; only a restart would suffer, and
		// failing this write would not help it. Warn once per token.
		p.log.Warn("could not save the refreshed OAuth token; after a restart a new login may be needed",
			"file", p.path, "error", err)
	}
	p.saved, p.unsaved = next, err
	return tok, nil
}
