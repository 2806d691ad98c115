package googleauth

import (
	"context"
	"errors"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
)

// Status is what Inspect found out about an account. It holds nothing
// secret.
type Status struct {
	Identity
	// Token says, for people, whether the account can get a working access
	// token ("valid until …", "refreshed, valid until …", …).
	Token string
	// Expiry is the access token's, when one was seen.
	Expiry time.Time
	// Err is what must be fixed (an *Error with a hint), or nil.
	Err error
}

// Inspect loads an account and checks that it can authenticate. A service
// account fetches a token (proving the key works); a person's token is
// refreshed if it has expired, and the new one saved. No token is ever
// included in the result.
func Inspect(ctx context.Context, cfg *config.Config, account string, opts Options) Status {
	c, err := load(ctx, cfg, account, opts)
	st := Status{Identity: c.Identity, Err: err}
	if err != nil {
		st.Token = "unusable"
		return st
	}
	switch c.Kind {
	case KindNone:
		st.Token = "none needed: requests go unauthenticated to " + c.endpoint
		return st
	case KindUser:
		if c.token.Valid() {
			st.Expiry = c.token.Expiry
			st.Token = "access token valid until " + when(c.token.Expiry) + "; refresh token present"
			return st
		}
	}
	tok, err := c.TokenSource.Token()
	if err != nil {
		st.Token, st.Err = "cannot get an access token", err
		return st
	}
	st.Expiry = tok.Expiry
	switch c.Kind {
	case KindServiceAccount:
		st.Token = "Google issued an access token (valid until " + when(tok.Expiry) + ")"
	default:
		st.Token = "access token had expired; refreshed and saved, valid until " + when(tok.Expiry)
		var foreign *ForeignFileError
		if err := c.persist.notSaved(); errors.As(err, &foreign) {
			st.Token = "access token had expired; refreshed for this command only (valid until " + when(tok.Expiry) +
				"), not saved: " + foreign.Hint()
		} else if err != nil {
			st.Token = "access token had expired; refreshed (valid until " + when(tok.Expiry) + ") but could not be saved: " + err.Error()
		}
	}
	return st
}

func when(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.Local().Format(time.RFC3339)
}
