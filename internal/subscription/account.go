package subscription

import (
	"context"
	"fmt"

	calsyncd "github.com/calsyncd/calsyncd"
)

// accounted is the account stage's result: the account's writer, and
// whether Google answered the credential check.
type accounted struct {
	writer  Writer
	checked bool
}

// checkAccount gets the writer of the subscription's Google account (a
// broken account fails this subscription alone) and asks Google whether it
// still takes the account's credentials, before the feed is read: a feed
// that has not changed writes nothing, and would otherwise never learn
// that a token was revoked. The request is shared by the account's passes
// that begin together; a rate limit on it is no verdict.
func (r *Runner) checkAccount(ctx context.Context, p pass) (accounted, *ending) {
	w, err := r.Writer(p.sub.AccountName())
	if err != nil {
		return accounted{}, stop(calsyncd.OutcomeFailed, err)
	}
	answered, err := w.CheckAccount(ctx, p.sub.ID, p.sub.Calendar)
	a := accounted{writer: w, checked: answered}
	if err != nil {
		return a, failed(ctx, p.refusedAccount(err))
	}
	return a, nil
}

// refusedError is Google refusing an account's credentials, with what the
// operator must do about it.
type refusedError struct {
	err  error
	hint string
}

func (e *refusedError) Error() string { return e.err.Error() + ": " + e.hint }
func (e *refusedError) Unwrap() error { return e.err }

// refusedAccount says what to do when Google refused the account's
// credentials; other errors (a calendar not found) are as they are.
func (p pass) refusedAccount(err error) error {
	if !calsyncd.CredentialsRefused(err) {
		return err
	}
	// Which kind the account is, googleauth knows (`auth status`); the
	// pass does not.
	name := p.sub.AccountName()
	hint := fmt.Sprintf("Google no longer takes the credentials of account %s (a revoked or expired token, a deleted key): "+
		"for a person's account run `calsyncd auth login --account %s`; for a service account give it a new key "+
		"(`calsyncd auth status` says which it is)", name, name)
	return &refusedError{err: err, hint: hint}
}
