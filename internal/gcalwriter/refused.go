package gcalwriter

import (
	"errors"
	"net/http"

	"golang.org/x/oauth2"

	calsyncd "github.com/calsyncd/calsyncd"
)

// Reasons of a 403 that concern the account's authorisation as a whole
// (its token's scopes, the project's API access), not one calendar.
const (
	reasonInsufficientPermissions = "insufficientPermissions"
	reasonAccessNotConfigured     = "accessNotConfigured"
)

// CredentialsRefused implements calsyncd.CredentialsRefuser: Google refused
// the account itself — its token (401, or the token endpoint refused the
// grant) or what the token may do (403 insufficientPermissions,
// accessNotConfigured) — rather than one calendar (a 404, 403 forbidden or
// requiredAccessLevel) or one request.
func (e *Error) CredentialsRefused() bool {
	if e.Class != calsyncd.ClassAuth {
		return false
	}
	if e.Code == http.StatusUnauthorized || e.Reason == reasonInsufficientPermissions || e.Reason == reasonAccessNotConfigured {
		return true
	}
	var rerr *oauth2.RetrieveError
	return errors.As(e.Err, &rerr) && classifyRetrieve(rerr).Class == calsyncd.ClassAuth
}

var _ calsyncd.CredentialsRefuser = (*Error)(nil)
