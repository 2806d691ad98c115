package gcalfake

import (
	"net/http"
	"slices"
	"strconv"

	calendar "google.golang.org/api/calendar/v3"
)

// roleRank orders access roles as calendarList's minAccessRole does.
var roleRank = map[Role]int{RoleFreeBusyReader: 1, RoleReader: 2, RoleWriter: 3, RoleOwner: 4}

// listCalendars serves calendarList.list: the calendars the user may see
// (any role but none), ordered by id with the primary one first, each
// with the user's accessRole, filtered by minAccessRole and paged
// (maxResults at most 250, default 100, as Google's).
func (s *Server) listCalendars(r *http.Request) (any, *APIError) {
	q := r.URL.Query()
	limit := 100
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, errInvalid("Invalid value for maxResults.")
		}
		limit = min(n, 250)
	}
	_, offset, apiErr := paging(map[string][]string{"pageToken": q["pageToken"]})
	if apiErr != nil {
		return nil, apiErr
	}
	minRank := 0
	if v := q.Get("minAccessRole"); v != "" {
		rank, ok := roleRank[Role(v)]
		if !ok {
			return nil, errInvalid("Invalid value for minAccessRole.")
		}
		minRank = rank
	}
	user := userOf(r)
	primary := s.calendarIDLocked(user, "primary")
	var items []*calendar.CalendarListEntry
	for _, cal := range s.calendars {
		role := s.roleLocked(cal.id, user)
		if role == RoleNone || roleRank[role] < minRank {
			continue
		}
		items = append(items, &calendar.CalendarListEntry{
			Kind:       "calendar#calendarListEntry",
			Etag:       `"` + cal.id + `"`,
			Id:         cal.id,
			Summary:    cal.summary,
			TimeZone:   cal.timeZone,
			AccessRole: string(role),
			Primary:    cal.id == primary,
		})
	}
	slices.SortFunc(items, func(a, b *calendar.CalendarListEntry) int {
		switch {
		case a.Primary != b.Primary && a.Primary:
			return -1
		case a.Primary != b.Primary:
			return 1
		case a.Id < b.Id:
			return -1
		case a.Id > b.Id:
			return 1
		}
		return 0
	})
	if offset > len(items) {
		return nil, errInvalid("Invalid page token.")
	}
	end := min(offset+limit, len(items))
	out := &calendar.CalendarList{Kind: "calendar#calendarList", Etag: `"calendarList"`, Items: items[offset:end]}
	if out.Items == nil {
		out.Items = []*calendar.CalendarListEntry{}
	}
	if end < len(items) {
		out.NextPageToken = pageToken(end)
	} else {
		out.NextSyncToken = pageToken(len(items))
	}
	return out, nil
}
