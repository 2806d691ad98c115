package googleauth

import (
	"fmt"
	"io/fs"
	"os"
	"runtime"

	"github.com/calsyncd/calsyncd/internal/config"
)

// Problem is a key or token file that someone other than its owner can
// read or change.
type Problem struct {
	Account string
	// What is "credentials" or "token".
	What string
	Path string
	Mode fs.FileMode
}

func (p Problem) String() string {
	return fmt.Sprintf("account %s: %s file %s is accessible to group or others (mode %04o); run chmod 600 %s",
		p.Account, p.What, p.Path, p.Mode.Perm(), p.Path)
}

// CheckPermissions lists every account's key and token files that are open
// to group or others. A file that does not exist is not a problem here:
// Load reports it, with what to do.
func CheckPermissions(cfg *config.Config) []Problem {
	if runtime.GOOS == "windows" {
		// Unix permission bits mean nothing there.
		return nil
	}
	var out []Problem
	check := func(account, what, path string) {
		if path == "" {
			return
		}
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			return
		}
		if fi.Mode().Perm()&0o077 != 0 {
			out = append(out, Problem{Account: account, What: what, Path: path, Mode: fi.Mode().Perm()})
		}
	}
	for _, name := range cfg.AccountNames() {
		acct, _ := cfg.AccountByName(name)
		check(name, "credentials", acct.CredentialsFile)
		if acct.CredentialsFile != "" {
			check(name, "token", TokenFile(cfg, acct))
		}
	}
	return out
}
