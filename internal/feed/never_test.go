package feed

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/teambition/rrule-go"
)

// neverFeed is a feed of n events per rule, each rule's events one day
// apart (distinct DTSTARTs: no verdict is reused between them).
func neverFeed(rules []string, n int) []byte {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n")
	for r, rule := range rules {
		for i := range n {
			start := time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC).AddDate(0, 0, i)
			fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:r%d-%d\r\nDTSTART;TZID=Europe/Berlin:%s\r\nDURATION:PT1H\r\nRRULE:%s\r\nSUMMARY:rule %d\r\nEND:VEVENT\r\n",
				r, i, start.Format("20060102T150405"), rule, r)
		}
	}
	b.WriteString("BEGIN:VEVENT\r\nUID:single\r\nDTSTART:20260301T100000Z\r\nSUMMARY:single\r\nEND:VEVENT\r\n")
	b.WriteString("END:VCALENDAR\r\n")
	return []byte(b.String())
}

// TestNeverMatchingRulesRefused: a rule that can produce no occurrence
// is refused with a warning (the event keeps its first occurrence, as
// for any rule that cannot be expanded), without rrule-go's walk to the
// year 9999 (or its endless loop, for a sub-daily INTERVAL that never
// reaches its BYHOUR); the days walked to find that out are counted and
// bounded; every other event of the feed is read as before.
func TestNeverMatchingRulesRefused(t *testing.T) {
	never := []string{
		"FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=30",
		"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=31",
		"FREQ=MONTHLY;BYMONTHDAY=-30;BYMONTH=2",
		"FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=31;UNTIL=20300101T000000Z",
		"FREQ=YEARLY;BYYEARDAY=366;BYMONTH=1",
		"FREQ=MONTHLY;BYDAY=MO;BYSETPOS=6",
		"FREQ=MONTHLY;BYDAY=MO;BYSETPOS=-6",
		"FREQ=YEARLY;BYMONTH=2;BYDAY=MO;BYSETPOS=6",
		"FREQ=WEEKLY;BYDAY=MO,TU;BYSETPOS=3",
		"FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29", // from 2026: never a leap year
		"FREQ=MONTHLY;INTERVAL=12;BYMONTH=2",             // from January: only Januaries
		"FREQ=HOURLY;INTERVAL=2;BYHOUR=1",                // from 08:00: even hours only
		"FREQ=MINUTELY;INTERVAL=2;BYMINUTE=1",
		"FREQ=SECONDLY;INTERVAL=10;BYSECOND=5",
		"FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29;BYDAY=SU",
	}
	may := []string{
		"FREQ=WEEKLY;BYDAY=MO",
		"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
		"FREQ=MONTHLY;BYDAY=MO;BYSETPOS=5",
		"FREQ=MONTHLY;BYDAY=MO;BYSETPOS=-5",
		"FREQ=MONTHLY;BYDAY=-1FR;BYSETPOS=-1",
		"FREQ=YEARLY;BYMONTH=2;BYDAY=5MO",
		"FREQ=MONTHLY;BYMONTHDAY=31",
		"FREQ=HOURLY;INTERVAL=5;BYHOUR=1",
		"FREQ=MINUTELY;INTERVAL=7;BYMINUTE=3",
		"FREQ=DAILY;INTERVAL=3;BYMONTHDAY=1",
		"FREQ=YEARLY;BYWEEKNO=53",
	}
	const perRule = 3
	rules := append(append([]string(nil), never...), may...)
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"no window", Options{Now: now}},
		{"window", Options{Now: now, WindowPast: 365 * 24 * time.Hour, WindowFuture: 2 * 365 * 24 * time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parseWith(bytesSource(neverFeed(rules, perRule)), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			cal := p.cal
			warned := map[string]string{}
			for _, w := range cal.Warnings {
				warned[w.UID] = w.Message
			}
			byUID := map[string]*Event{}
			for i := range cal.Events {
				byUID[cal.Events[i].UID] = &cal.Events[i]
			}
			for r, rule := range rules {
				for i := range perRule {
					uid := fmt.Sprintf("r%d-%d", r, i)
					ev, msg := byUID[uid], warned[uid]
					if r < len(never) {
						if ev == nil || ev.Series != nil || len(ev.Recurrence) != 0 {
							t.Errorf("%s (%s): want a single event, got %+v", uid, rule, ev)
						}
						if !strings.Contains(msg, "can never produce an occurrence") {
							t.Errorf("%s (%s): warning %q", uid, rule, msg)
						}
						continue
					}
					if msg != "" {
						t.Errorf("%s (%s): unexpected warning %q", uid, rule, msg)
					}
					if ev != nil && ev.Series == nil {
						t.Errorf("%s (%s): series lost", uid, rule)
					}
				}
			}
			if byUID["single"] == nil {
				t.Error("the single event was lost")
			}
			// Each refused rule walks one 400-year cycle at most, outside
			// the free days every rule has.
			spent := maxRuleDays - p.ruleDays
			if limit := len(never) * perRule * (cycleDays + 1); spent > limit {
				t.Errorf("walked %d days over the budget, more than %d", spent, limit)
			}
		})
	}
}

// TestNeverMatchingBudget: a feed of many rules that match nothing spends
// the feed's budget, not more, and the rules after it that match soon are
// still read.
func TestNeverMatchingBudget(t *testing.T) {
	const n = 60
	rules := []string{"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", "FREQ=WEEKLY;BYDAY=TU"}
	p, err := parseWith(bytesSource(neverFeed(rules, n)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.ruleDays < 0 {
		t.Errorf("budget overspent: %d", p.ruleDays)
	}
	if p.ruleDays != 0 {
		t.Errorf("%d never-matching rules left %d days of the budget: the test needs more", n, p.ruleDays)
	}
	series, refused := 0, 0
	for _, ev := range p.cal.Events {
		switch {
		case strings.HasPrefix(ev.UID, "r1-") && ev.Series != nil:
			series++
		case strings.HasPrefix(ev.UID, "r0-") && ev.Series == nil:
			refused++
		}
	}
	if series != n || refused != n {
		t.Errorf("%d weekly series kept, %d never-matching refused; want %d each", series, refused, n)
	}
}

// TestNeverMatchingVerdictReused: a feed that repeats one rule and
// DTSTART walks it once.
func TestNeverMatchingVerdictReused(t *testing.T) {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n")
	for i := range 60 {
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:m%d\r\nDTSTART:20260105T080000Z\r\nRRULE:FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=30\r\nEND:VEVENT\r\n", i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	p, err := parseWith(bytesSource([]byte(b.String())), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if spent := maxRuleDays - p.ruleDays; spent > cycleDays+1-freeRuleDays {
		t.Errorf("60 copies of one rule walked %d days over the free ones; want one walk (%d)", spent, cycleDays+1-freeRuleDays)
	}
	if len(p.cal.Events) != 60 || len(p.cal.Warnings) != 60 {
		t.Errorf("%d events, %d warnings; want 60 each", len(p.cal.Events), len(p.cal.Warnings))
	}
}

// BenchmarkNeverMatchesWalk walks a whole 400-year cycle for rules that
// match no day, each exercising another part of the day test: the month
// and month-day sets, the nth weekdays, and the BYSETPOS count.
func BenchmarkNeverMatchesWalk(b *testing.B) {
	start := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		opt  rrule.ROption
	}{
		{"bymonthday", rrule.ROption{Freq: rrule.DAILY, Bymonth: []int{2}, Bymonthday: []int{30}}},
		{"nth-weekday", rrule.ROption{Freq: rrule.MONTHLY, Bymonth: []int{2}, Byweekday: []rrule.Weekday{rrule.MO.Nth(6)}}},
		{"bysetpos", rrule.ROption{Freq: rrule.MONTHLY, Byweekday: []rrule.Weekday{rrule.MO}, Bysetpos: []int{6}}},
	} {
		tc.opt.Dtstart, tc.opt.Wkst = start, rrule.MO
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				budget := cycleDays
				if neverMatchesDay(tc.opt, &budget) == "" {
					b.Fatal("the rule matched a day")
				}
			}
		})
	}
}
