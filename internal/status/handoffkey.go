package status

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// handOffKeyFile, in the state directory, holds the key a running daemon
// takes, without status.token, as the operator's word: `calsyncd sync`
// reads it to hand over a sync with its flags (--allow-deletes,
// --reconcile). Only those who can read the state directory can read it,
// and they can already write the database the daemon runs on; any other
// user of the machine gets an ordinary sync at most.
const handOffKeyFile = "status.key"

// writeHandOffKey makes a new key in dir (mode 0600, replaced whole).
func writeHandOffKey(dir string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("status: a hand-off key: %w", err)
	}
	key := hex.EncodeToString(b)
	f, err := os.CreateTemp(dir, "."+handOffKeyFile+"-*") // 0600
	if err != nil {
		return "", fmt.Errorf("status: writing the hand-off key: %w", err)
	}
	_, werr := f.WriteString(key + "\n")
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("status: writing the hand-off key: %w", err)
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, handOffKeyFile)); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("status: writing the hand-off key: %w", err)
	}
	return key, nil
}

// readHandOffKey is the running daemon's key, or "" when there is none
// this process may read.
func readHandOffKey(dir string) string {
	if dir == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(dir, handOffKeyFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// isKey reports whether an Authorization header carries key.
func isKey(header, key string) bool {
	return key != "" && subtle.ConstantTimeCompare([]byte(header), []byte("Bearer "+key)) == 1
}
