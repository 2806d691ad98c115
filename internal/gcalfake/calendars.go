package gcalfake

// calendarLocked is the calendar a request's id names for user; with
// AutoCreateCalendars an unknown one is created.
func (s *Server) calendarLocked(user, id string) (*calendarState, bool) {
	id = s.calendarIDLocked(user, id)
	cal, ok := s.calendars[id]
	if ok || !s.autoCreate || id == "" {
		return cal, ok
	}
	if id == "primary" {
		// Every user without a primary of their own shares this one.
		if s.primary == nil {
			s.primary = map[string]string{}
		}
		s.primary[""] = id
	}
	s.addLocked(Calendar{ID: id, TimeZone: s.autoZone})
	return s.calendars[id], true
}

// AddCalendar creates a calendar the API can write to.
func (s *Server) AddCalendar(id, timeZone string) {
	s.Add(Calendar{ID: id, TimeZone: timeZone})
}

// Calendar describes a calendar for Add.
type Calendar struct {
	ID string
	// Summary is its name (default: the id, as Google names a calendar
	// created without one after its owner).
	Summary string
	// TimeZone defaults to UTC.
	TimeZone string
	// Role is everyone's role on it (default owner): RoleReader or
	// RoleFreeBusyReader make a calendar the API cannot write to, as one
	// a person subscribed to or was shared read-only. Share refines it
	// per user.
	Role Role
}

// Add creates a calendar (replacing one of the same id).
func (s *Server) Add(c Calendar) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addLocked(c)
}

func (s *Server) addLocked(c Calendar) {
	if c.TimeZone == "" {
		c.TimeZone = "UTC"
	}
	if c.Summary == "" {
		c.Summary = c.ID
	}
	s.calendars[c.ID] = &calendarState{id: c.ID, summary: c.Summary, timeZone: c.TimeZone, events: map[string]*stored{}, opaque: map[string]opaqueRef{}}
	if c.Role != "" {
		if s.access == nil {
			s.access = accessRules{}
		}
		s.access[c.ID] = map[string]Role{"": c.Role}
	}
}

// SetPrimary makes calendarID (added with AddCalendar) user's primary
// calendar: the id "primary" names it in every request of the user, and
// calendars.get("primary") answers its own id, as Google answers the
// account's address. An empty user sets it for every user without one.
func (s *Server) SetPrimary(user, calendarID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.primary == nil {
		s.primary = map[string]string{}
	}
	s.primary[user] = calendarID
}

// calendarIDLocked is the calendar a request's id names for user.
func (s *Server) calendarIDLocked(user, id string) string {
	if id != "primary" {
		return id
	}
	if c, ok := s.primary[user]; ok {
		return c
	}
	if c, ok := s.primary[""]; ok {
		return c
	}
	return id
}
