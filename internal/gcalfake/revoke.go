package gcalfake

import (
	"net/http"
	"strings"
)

// Revoke makes every request made with the bearer token answer 401, as
// Google does once a person revokes calsyncd's access or a token is
// otherwise no longer valid (a quotaUser does not change whose token it
// is). Reinstate undoes it.
func (s *Server) Revoke(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.revoked == nil {
		s.revoked = map[string]bool{}
	}
	s.revoked[token] = true
}

// Reinstate accepts the token again (the person logged in anew).
func (s *Server) Reinstate(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.revoked, token)
}

// refusedLocked answers 401 to a request whose bearer token was revoked.
func (s *Server) refusedLocked(r *http.Request) *APIError {
	if len(s.revoked) == 0 {
		return nil
	}
	if tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "); s.revoked[tok] {
		s.stats.Faults++
		return errAuth()
	}
	return nil
}
