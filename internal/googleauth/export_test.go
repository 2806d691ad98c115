package googleauth

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/oauth2"
)

// FakeOwners plays a machine for the token files: the process runs as
// EUID, Owner says who owns a file or directory (by its base name; ok false
// falls back to the real owner), Unreadable lists the base names the process
// may not read, and hand-overs (only root may make them) are recorded, not
// made.
type FakeOwners struct {
	EUID       int
	Owner      func(name string) (uid, gid int, ok bool)
	Unreadable map[string]bool

	mu      sync.Mutex
	chowned [][2]int
}

// Chowned is every (uid, gid) a file was handed to.
func (f *FakeOwners) Chowned() [][2]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][2]int(nil), f.chowned...)
}

func (f *FakeOwners) owners() *owners {
	return &owners{
		euid: func() int { return f.EUID },
		owner: func(fi fs.FileInfo) (int, int, bool) {
			if f.Owner != nil {
				if uid, gid, ok := f.Owner(fi.Name()); ok {
					return uid, gid, true
				}
			}
			return statOwner(fi)
		},
		name: func(uid int) string {
			if uid == 0 {
				return "root"
			}
			return "user" + strconv.Itoa(uid)
		},
		chown: func(_ *os.File, uid, gid int) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.chowned = append(f.chowned, [2]int{uid, gid})
			return nil
		},
		readFile: func(path string) ([]byte, error) {
			if f.Unreadable[filepath.Base(path)] {
				return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrPermission}
			}
			return os.ReadFile(path)
		},
	}
}

// WithOwners is opts on the machine f plays.
func WithOwners(opts Options, f *FakeOwners) Options {
	opts.owners = f.owners()
	return opts
}

// LoginWithOwners is opts on the machine f plays.
func LoginWithOwners(opts LoginOptions, f *FakeOwners) LoginOptions {
	opts.owners = f.owners()
	return opts
}

// WriteToken saves tok at path as a file of the process's own, the way a
// token file is there before a test.
func WriteToken(path string, tok *oauth2.Token) error {
	return writeToken(path, tok, nil, systemOwners)
}
