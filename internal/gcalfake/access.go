package gcalfake

import calendar "google.golang.org/api/calendar/v3"

// Role is what a user may do with a calendar, as Google names it in
// accessRole.
type Role string

// Roles the emulator models. Google also has writerWithoutPrivateAccess;
// what its holders get from each method is not documented, so it is not
// modelled.
const (
	// RoleNone: the calendar is not shared with the user; Google answers
	// 404 notFound, as for a calendar that does not exist.
	RoleNone Role = "none"
	// RoleReader may read the calendar and its events; every write is
	// refused with 403 requiredAccessLevel.
	RoleReader Role = "reader"
	// RoleFreeBusyReader sees only when the calendar is busy. The
	// emulator lists it (calendarList) and refuses its writes as a
	// reader's; its reads are not reduced to busy times.
	RoleFreeBusyReader Role = "freeBusyReader"
	RoleWriter         Role = "writer"
	RoleOwner          Role = "owner"
)

// accessRules are the roles users hold on calendars; a calendar without
// rules is everyone's to own (the emulator's default).
type accessRules map[string]map[string]Role // calendar → user ("" for everyone else) → role

// Share gives users (the bearer tokens, or the quotaUser, requests are
// made as) a role on a calendar; with no users, it sets the role of
// everyone without one of their own.
func (s *Server) Share(calendarID string, role Role, users ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.access == nil {
		s.access = accessRules{}
	}
	if s.access[calendarID] == nil {
		s.access[calendarID] = map[string]Role{}
	}
	if len(users) == 0 {
		s.access[calendarID][""] = role
	}
	for _, u := range users {
		s.access[calendarID][u] = role
	}
}

// roleLocked is user's role on the calendar.
func (s *Server) roleLocked(calendarID, user string) Role {
	rules := s.access[calendarID]
	if r, ok := rules[user]; ok && user != "" {
		return r
	}
	if r, ok := rules[""]; ok {
		return r
	}
	return RoleOwner
}

// permitLocked refuses what the user's role does not allow, as Google
// does: a calendar not shared with the user is not found, and a reader's
// writes are refused.
func (s *Server) permitLocked(op, user, calendarID string) *APIError {
	switch s.roleLocked(calendarID, user) {
	case RoleNone:
		return errNotFound()
	case RoleReader, RoleFreeBusyReader:
		if isWrite(op) {
			return errRequiredAccessLevel()
		}
	}
	return nil
}

// withRoleLocked fills in the accessRole of an events list (events.list
// and events.instances answer with it).
func (s *Server) withRoleLocked(body any, user, calendarID string) {
	if evs, ok := body.(*calendar.Events); ok {
		evs.AccessRole = string(s.roleLocked(calendarID, user))
	}
}

// errRequiredAccessLevel is Google's answer to a write by an account that
// may only read the calendar (as seen in the wild, e.g.
// phw198/OutlookGoogleCalendarSync#968, spatie/laravel-google-calendar#95).
func errRequiredAccessLevel() *APIError {
	return &APIError{Code: 403, Domain: "calendar", Reason: "requiredAccessLevel", Message: "You need to have writer access to this calendar."}
}
