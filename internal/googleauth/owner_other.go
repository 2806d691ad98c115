//go:build !unix

package googleauth

import "io/fs"

// statOwner knows no owners where files have none in the Unix sense: every
// token file is taken to be the process's own.
func statOwner(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }
