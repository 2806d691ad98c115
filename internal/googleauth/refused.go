package googleauth

import calsyncd "github.com/calsyncd/calsyncd"

// CredentialsRefused implements calsyncd.CredentialsRefuser: every Error is
// an account that cannot authenticate (a key or token missing, unreadable
// or refused by Google), which a person must fix.
func (e *Error) CredentialsRefused() bool { return true }

var _ calsyncd.CredentialsRefuser = (*Error)(nil)
